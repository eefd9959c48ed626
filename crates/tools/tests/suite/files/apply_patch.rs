use std::sync::Arc;

use pretty_assertions::assert_eq;
use serde_json::json;
use talon_tools::ApplyPatchTool;

use super::support::{FailingBridge, Ws, call, fail};

fn patch(body: &str) -> serde_json::Value {
    json!({ "input": format!("*** Begin Patch\n{body}\n*** End Patch\n") })
}

fn seeded() -> Ws {
    let ws = Ws::new();
    ws.put(
        "src/lib.rs",
        "pub fn a() -> u32 {\n    1\n}\n\npub fn b() -> u32 {\n    1\n}\n",
    );
    ws.put("old.txt", "obsolete\n");
    ws.put("notes/todo.md", "- one\n- two\n");
    ws
}

#[tokio::test]
async fn add_update_move_and_delete_in_one_patch() {
    let ws = seeded();
    let r = call(
        &ws.patch_tool(),
        patch(
            "*** Add File: docs/new.md\n+# New\n+\n+text\n\
             *** Update File: src/lib.rs\n@@ pub fn b() -> u32 {\n-    1\n+    2\n\
             *** Update File: notes/todo.md\n*** Move to: notes/done.md\n - one\n-- two\n+- two (done)\n\
             *** Delete File: old.txt",
        ),
    )
    .await
    .unwrap();
    assert_eq!(ws.get("docs/new.md"), "# New\n\ntext\n");
    assert_eq!(
        ws.get("src/lib.rs"),
        "pub fn a() -> u32 {\n    1\n}\n\npub fn b() -> u32 {\n    2\n}\n"
    );
    assert!(!ws.exists("notes/todo.md"));
    assert_eq!(ws.get("notes/done.md"), "- one\n- two (done)\n");
    assert!(!ws.exists("old.txt"));
    assert_eq!(
        r.text(),
        "Success. Updated the following files:\nA docs/new.md\nM src/lib.rs\nM notes/todo.md -> notes/done.md\nD old.txt"
    );
    let files = r.details["files"].as_array().unwrap();
    assert_eq!(files.len(), 4);
    assert_eq!(files[1]["action"], "update");
    assert_eq!(files[1]["firstChangedLine"], 6);
    assert_eq!(files[2]["movedTo"], "notes/done.md");
    assert!(files[1]["diff"].as_str().unwrap().contains("+    2"));
}

#[tokio::test]
async fn a_hunk_that_does_not_apply_leaves_every_file_untouched() {
    let ws = seeded();
    let before = ws.snapshot();
    let e = fail(
        &ws.patch_tool(),
        patch(
            "*** Add File: a.txt\n+a\n\
             *** Update File: notes/todo.md\n-- one\n+- 1\n\
             *** Update File: src/lib.rs\n@@ pub fn b() -> u32 {\n-    3\n+    4",
        ),
    )
    .await;
    assert_eq!(e.param(), Some("input"));
    let m = e.to_string();
    assert!(
        m.contains(
            "`Update File: src/lib.rs`, hunk 1 (`@@ pub fn b() -> u32 {`): context not found"
        ),
        "{m}"
    );
    assert_eq!(ws.snapshot(), before);
}

#[tokio::test]
async fn an_ambiguous_hunk_is_refused() {
    let ws = seeded();
    let before = ws.snapshot();
    let e = fail(
        &ws.patch_tool(),
        patch("*** Update File: src/lib.rs\n-    1\n+    9"),
    )
    .await;
    let m = e.to_string();
    assert!(m.contains("hunk 1 (`    1`): ambiguous"), "{m}");
    assert!(m.contains("lines 2, 6"), "{m}");
    assert_eq!(ws.snapshot(), before);
}

#[tokio::test]
async fn add_of_an_existing_file_and_update_or_delete_of_a_missing_one() {
    let ws = seeded();
    let before = ws.snapshot();
    let cases = [
        (
            "*** Add File: old.txt\n+new",
            "`Add File: old.txt`: the file already exists",
        ),
        (
            "*** Update File: ghost.txt\n-a\n+b",
            "`Update File: ghost.txt`: the file is missing",
        ),
        (
            "*** Delete File: ghost.txt",
            "`Delete File: ghost.txt`: the file is missing",
        ),
        (
            "*** Update File: old.txt\n*** Move to: notes/todo.md",
            "`Move to: notes/todo.md` (of `Update File: old.txt`): the destination already exists",
        ),
        (
            "*** Update File: old.txt\n-obsolete\n+x\n*** Delete File: ./old.txt",
            "names the same file as `Update File: old.txt`",
        ),
    ];
    for (body, needle) in cases {
        let e = fail(&ws.patch_tool(), patch(body)).await;
        assert_eq!(e.param(), Some("input"), "{body}");
        assert!(e.to_string().contains(needle), "{body}: {e}");
    }
    assert_eq!(ws.snapshot(), before);
}

#[tokio::test]
async fn malformed_patches_and_bad_parameters() {
    let ws = seeded();
    let before = ws.snapshot();
    let e = fail(&ws.patch_tool(), json!({})).await;
    assert_eq!(
        (e.param(), e.to_string().as_str()),
        (Some("input"), "input required")
    );
    let e = fail(&ws.patch_tool(), json!({"input": ["*** Begin Patch"]})).await;
    assert!(
        e.to_string().contains("input must be a string, got array"),
        "{e}"
    );
    let e = fail(
        &ws.patch_tool(),
        json!({"input": "--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n"}),
    )
    .await;
    assert!(
        e.to_string()
            .contains("patch line 1: the patch must start with `*** Begin Patch`"),
        "{e}"
    );
    let e = fail(&ws.patch_tool(), patch("*** Add File: x.txt\nno plus")).await;
    assert!(e.to_string().contains("patch line 3"), "{e}");
    assert_eq!(ws.snapshot(), before);
}

#[tokio::test]
async fn a_failed_write_midway_is_rolled_back() {
    let ws = seeded();
    let before = ws.snapshot();
    // Mutations: 1 add, 2 update, 3 delete (fails).
    let bridge = Arc::new(FailingBridge::new(ws.bridge.clone(), 3, 3));
    let tool = ApplyPatchTool::new(bridge.clone());
    let e = fail(
        &tool,
        patch(
            "*** Add File: fresh/new.txt\n+new\n\
             *** Update File: notes/todo.md\n-- two\n+- 2\n\
             *** Delete File: old.txt",
        ),
    )
    .await;
    let m = e.to_string();
    assert!(
        m.contains("failed at section 3 of 3 (`Delete File: old.txt`): injected failure")
            && e.code() == talon_tool_catalog::ToolErrorCode::FsIo,
        "{m}"
    );
    assert!(
        m.contains("The 2 changes already written were undone; no file was changed."),
        "{m}"
    );
    assert_eq!(e.status(), 500);
    // Files are back; only the parent directory the Add created remains.
    let mut after = ws.snapshot();
    after.remove(&ws.ws().join("fresh"));
    assert_eq!(after, before);
}

#[tokio::test]
async fn a_failed_rollback_is_reported() {
    let ws = seeded();
    // Mutation 1 (update) works, 2 (add) fails, 3 (the undo of 1) fails too.
    let bridge = Arc::new(FailingBridge::new(ws.bridge.clone(), 2, 3));
    let tool = ApplyPatchTool::new(bridge);
    let e = fail(
        &tool,
        patch("*** Update File: notes/todo.md\n-- two\n+- 2\n*** Add File: b.txt\n+b"),
    )
    .await;
    let m = e.to_string();
    assert!(
        m.contains("Undoing the changes already written failed for: notes/todo.md"),
        "{m}"
    );
    assert!(m.contains("may hold the patched content"), "{m}");
    // Honest: the file does hold the patched content.
    assert_eq!(ws.get("notes/todo.md"), "- one\n- 2\n");
}

#[tokio::test]
async fn trailing_whitespace_fuzz_and_end_of_file() {
    let ws = Ws::new();
    ws.put("t.txt", "keep   \nlast\n");
    call(
        &ws.patch_tool(),
        patch("*** Update File: t.txt\n keep\n-last\n+final\n*** End of File"),
    )
    .await
    .unwrap();
    assert_eq!(ws.get("t.txt"), "keep   \nfinal\n");
}

#[tokio::test]
async fn a_move_is_undone_when_a_later_section_fails() {
    let ws = seeded();
    let before = ws.snapshot();
    // Mutations: 1 write notes/done.md, 2 remove notes/todo.md, 3 delete (fails).
    let bridge = Arc::new(FailingBridge::new(ws.bridge.clone(), 3, 3));
    let tool = ApplyPatchTool::new(bridge);
    let e = fail(
        &tool,
        patch(
            "*** Update File: notes/todo.md\n*** Move to: notes/done.md\n-- two\n+- 2\n\
             *** Delete File: old.txt",
        ),
    )
    .await;
    assert!(e.to_string().contains("no file was changed"), "{e}");
    assert_eq!(ws.snapshot(), before);
}
