//! The CLI demo workspace in `fixtures/workspace` works with every tool
//! (on a copy, so the fixture stays as it is).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::json;
use talon_fs_bridge::{FsBridge, MountBridge};
use talon_tool_catalog::ContentBlock;
use talon_tools::{ApplyPatchTool, EditTool, ReadLimits, ReadTool};

use super::support::{call, fail};

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/workspace")
}

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let dest = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_tree(&entry.path(), &dest);
        } else {
            std::fs::copy(entry.path(), dest).unwrap();
        }
    }
}

#[tokio::test]
async fn the_demo_workspace_reads_edits_and_patches() {
    let tmp = tempfile::tempdir().unwrap();
    copy_tree(&fixture(), tmp.path());
    let bridge: Arc<dyn FsBridge> = Arc::new(MountBridge::host(tmp.path()).unwrap());
    let read = ReadTool::new(bridge.clone(), ReadLimits::default());
    let r = call(&read, json!({"path": "assets/dot.png"}))
        .await
        .unwrap();
    assert!(
        r.content.iter().any(
            |b| matches!(b, ContentBlock::Image { mime_type, .. } if mime_type == "image/png")
        )
    );
    let r = call(
        &read,
        json!({"path": "src/main.rs", "offset": 6, "limit": 1}),
    )
    .await
    .unwrap();
    assert!(
        r.text().starts_with("fn count(items: &[u32]) -> u32 {"),
        "{}",
        r.text()
    );

    let edit = EditTool::new(bridge.clone());
    let e = fail(&edit, json!({"path": "src/main.rs", "oldText": "    let total = 0;", "newText": "    let total = 1;"})).await;
    assert!(
        e.to_string()
            .contains("found 2 times in src/main.rs, at lines 2, 7"),
        "{e}"
    );

    let patch = ApplyPatchTool::new(bridge);
    call(
        &patch,
        json!({"input": "*** Begin Patch\n*** Update File: notes/todo.md\n@@ # To do\n-- write the parser\n+- write the parser (done)\n*** End Patch"}),
    )
    .await
    .unwrap();
    let todo = std::fs::read_to_string(tmp.path().join("notes/todo.md")).unwrap();
    assert!(
        todo.contains("- write the parser (done)\n- test the applier"),
        "{todo}"
    );
}
