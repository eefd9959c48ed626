//! Issue 19's bridge-robustness classes through the tools: path bounds,
//! trailing slashes on files, mount roots in patches, and keys a tool
//! would have ignored. Each runs on the host bridge and on a sandbox
//! mount table, and proves nothing on disk changed.

use std::sync::Arc;

use serde_json::json;
use talon_fs_bridge::{FsBridge, Mount, MountBridge};
use talon_tool_catalog::{Tool, ToolErrorCode, ToolErrorKind};
use talon_tools::{ApplyPatchTool, EditTool, ReadLimits, ReadTool, WriteTool};

use super::support::{Ws, call, fail, snapshot};

/// The four tools on `bridge`.
fn tools(bridge: Arc<dyn FsBridge>) -> Vec<Box<dyn Tool>> {
    vec![
        Box::new(ReadTool::new(bridge.clone(), ReadLimits::default())),
        Box::new(WriteTool::new(bridge.clone())),
        Box::new(EditTool::new(bridge.clone())),
        Box::new(ApplyPatchTool::new(bridge)),
    ]
}

/// A workspace with `a.txt` and `sub/`, as the host bridge and as a
/// sandbox table (`/workspace` rw, `/agent` ro).
fn bridges(ws: &Ws) -> Vec<(&'static str, Arc<dyn FsBridge>)> {
    ws.put("a.txt", "alpha\n");
    ws.put("sub/b.txt", "beta\n");
    std::fs::create_dir_all(ws.root().join("agent")).unwrap();
    let sandbox = MountBridge::new(
        vec![
            Mount::writable("/workspace", ws.ws()),
            Mount::read_only("/agent", ws.root().join("agent")),
        ],
        "/workspace",
    )
    .unwrap();
    vec![("host", ws.bridge.clone()), ("sandbox", Arc::new(sandbox))]
}

fn args_for(tool: &str, path: &str) -> serde_json::Value {
    match tool {
        "read" => json!({"path": path}),
        "write" => json!({"path": path, "content": "x"}),
        "edit" => json!({"path": path, "oldText": "alpha", "newText": "omega"}),
        _ => json!({"input": format!("*** Begin Patch\n*** Add File: {path}\n+x\n*** End Patch")}),
    }
}

#[tokio::test]
async fn paths_past_the_bounds_are_typed_input_errors_naming_path() {
    let ws = Ws::new();
    for (label, bridge) in bridges(&ws) {
        let before = ws.snapshot();
        for path in [
            "x".repeat(5000),
            format!("{}.txt", "n".repeat(300)),
            vec!["d"; 10_000].join("/"),
            vec!["d"; 300].join("/"),
        ] {
            for tool in tools(bridge.clone()) {
                let name = tool.spec().name.clone();
                let e = fail(tool.as_ref(), args_for(&name, &path)).await;
                let want = if name == "apply_patch" {
                    None
                } else {
                    Some("path")
                };
                assert_eq!(
                    e.code(),
                    ToolErrorCode::FsPathTooLong,
                    "{label} {name}: {e}"
                );
                assert_eq!(e.kind(), ToolErrorKind::Input);
                if want.is_some() {
                    assert_eq!(e.param(), want, "{label} {name}");
                }
                assert!(e.message().len() < 1000, "{label} {name}: bounded message");
            }
        }
        assert_eq!(ws.snapshot(), before, "{label}: no 10,000-level tree");
    }
}

#[tokio::test]
async fn a_trailing_slash_on_a_file_is_not_a_directory_in_every_tool() {
    let ws = Ws::new();
    for (label, bridge) in bridges(&ws) {
        let before = ws.snapshot();
        for tool in tools(bridge.clone()) {
            let name = tool.spec().name.clone();
            let path = "a.txt/";
            let args = match name.as_str() {
                "apply_patch" => {
                    json!({"input": "*** Begin Patch\n*** Update File: a.txt/\n@@\n-alpha\n+omega\n*** End Patch"})
                }
                _ => args_for(&name, path),
            };
            let e = fail(tool.as_ref(), args).await;
            assert_eq!(
                e.code(),
                ToolErrorCode::FsNotADirectory,
                "{label} {name}: {e}"
            );
        }
        let patch = ApplyPatchTool::new(bridge.clone());
        for input in [
            "*** Begin Patch\n*** Delete File: a.txt/\n*** End Patch",
            "*** Begin Patch\n*** Add File: new.txt/\n+x\n*** End Patch",
        ] {
            let e = fail(&patch, json!({"input": input})).await;
            assert_eq!(
                e.code(),
                ToolErrorCode::FsNotADirectory,
                "{label} {input}: {e}"
            );
        }
        assert_eq!(ws.snapshot(), before, "{label}");
        assert_eq!(ws.get("a.txt"), "alpha\n");
    }
}

#[tokio::test]
async fn apply_patch_cannot_delete_or_move_a_mount_root() {
    let ws = Ws::new();
    for (label, bridge) in bridges(&ws) {
        let before = ws.snapshot();
        let patch = ApplyPatchTool::new(bridge.clone());
        let root = bridge.cwd().to_owned();
        for target in [root.as_str(), ".", "sub/..", "./"] {
            let input = format!("*** Begin Patch\n*** Delete File: {target}\n*** End Patch");
            let e = fail(&patch, json!({"input": input})).await;
            assert_eq!(
                e.code(),
                ToolErrorCode::FsMountRoot,
                "{label} delete {target}: {e}"
            );
            assert!(e.message().contains("mount root"), "{e}");
            let input = format!(
                "*** Begin Patch\n*** Update File: a.txt\n*** Move to: {target}\n@@\n-alpha\n+omega\n*** End Patch"
            );
            let e = fail(&patch, json!({"input": input})).await;
            assert_eq!(
                e.code(),
                ToolErrorCode::FsMountRoot,
                "{label} move to {target}: {e}"
            );
            let input = format!("*** Begin Patch\n*** Add File: {target}\n+x\n*** End Patch");
            let e = fail(&patch, json!({"input": input})).await;
            assert_eq!(
                e.code(),
                ToolErrorCode::FsMountRoot,
                "{label} add {target}: {e}"
            );
        }
        if label == "sandbox" {
            let e = fail(
                &patch,
                json!({"input": "*** Begin Patch\n*** Delete File: /agent\n*** End Patch"}),
            )
            .await;
            assert!(
                matches!(
                    e.code(),
                    ToolErrorCode::FsMountRoot
                        | ToolErrorCode::FsNotAFile
                        | ToolErrorCode::FsReadOnly
                ),
                "{e}"
            );
        }
        assert_eq!(ws.snapshot(), before, "{label}");
        assert!(ws.ws().is_dir());
    }
}

#[tokio::test]
async fn unknown_keys_are_refused_naming_the_key_and_change_nothing() {
    let ws = Ws::new();
    for (label, bridge) in bridges(&ws) {
        let before = snapshot(&ws.root());
        let [read, write, edit, patch]: [Box<dyn Tool>; 4] =
            tools(bridge.clone()).try_into().ok().unwrap();
        let cases: Vec<(&dyn Tool, serde_json::Value, &str)> = vec![
            (
                read.as_ref(),
                json!({"path": "a.txt", "filename": "../outside/secret.txt"}),
                "filename",
            ),
            (
                read.as_ref(),
                json!({"path": "a.txt", "offset": 1, "lines": 5}),
                "lines",
            ),
            (
                write.as_ref(),
                json!({"path": "a.txt", "content": "x", "mode": "append"}),
                "mode",
            ),
            (
                write.as_ref(),
                json!({"file": "b.txt", "path": "a.txt", "content": "x"}),
                "file",
            ),
            (
                edit.as_ref(),
                json!({"path": "a.txt", "oldText": "alpha", "newText": "omega", "replaceAll": true}),
                "replaceAll",
            ),
            (
                edit.as_ref(),
                json!({"path": "a.txt", "edits": [{"oldText": "alpha", "newText": "omega", "path": "sub/b.txt"}]}),
                "edits[0].path",
            ),
            (
                patch.as_ref(),
                json!({"input": "*** Begin Patch\n*** Add File: z.txt\n+z\n*** End Patch", "workdir": "sub"}),
                "workdir",
            ),
        ];
        for (tool, args, key) in cases {
            let e = fail(tool, args.clone()).await;
            assert_eq!(
                e.code(),
                ToolErrorCode::InputUnknownParam,
                "{label} {args}: {e}"
            );
            assert_eq!(e.param(), Some(key), "{label} {args}");
            assert!(e.message().contains(key.rsplit('.').next().unwrap()), "{e}");
        }
        // Two spellings of the path that disagree.
        for tool in [read.as_ref(), write.as_ref()] {
            let e = fail(
                tool,
                json!({"path": "a.txt", "file_path": "sub/b.txt", "content": "x"}),
            )
            .await;
            assert_eq!(e.code(), ToolErrorCode::InputUnknownParam, "{label}: {e}");
        }
        assert_eq!(snapshot(&ws.root()), before, "{label}: nothing written");
    }
}

#[tokio::test]
async fn openclaw_spellings_keep_working() {
    let ws = Ws::new();
    for (label, bridge) in bridges(&ws) {
        let [read, write, edit, _patch]: [Box<dyn Tool>; 4] =
            tools(bridge.clone()).try_into().ok().unwrap();
        call(
            write.as_ref(),
            json!({"file_path": "c.txt", "content": "one\n"}),
        )
        .await
        .unwrap();
        call(
            write.as_ref(),
            json!({"filePath": "c.txt", "path": "c.txt", "content": "two\n"}),
        )
        .await
        .unwrap();
        let r = call(
            read.as_ref(),
            json!({"file_path": "c.txt", "offset": 1, "limit": 5}),
        )
        .await
        .unwrap();
        assert_eq!(r.text(), "two", "{label}");
        call(
            edit.as_ref(),
            json!({"file_path": "c.txt", "old_string": "two", "new_string": "three"}),
        )
        .await
        .unwrap();
        call(
            edit.as_ref(),
            json!({"path": "c.txt", "old_text": "three", "new_text": "four"}),
        )
        .await
        .unwrap();
        call(
            edit.as_ref(),
            json!({"path": "c.txt", "edits": [{"old_string": "four", "new_string": "five"}]}),
        )
        .await
        .unwrap();
        assert_eq!(ws.get("c.txt"), "five\n", "{label}");
        std::fs::remove_file(ws.ws().join("c.txt")).unwrap();
    }
}
