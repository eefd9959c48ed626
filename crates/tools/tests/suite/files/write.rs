use std::os::unix::fs::PermissionsExt;
use std::sync::Arc;

use pretty_assertions::assert_eq;
use serde_json::json;
use talon_fs_bridge::{Mount, MountBridge};
use talon_tool_catalog::{ExecutionMode, Tool, ToolErrorCode};
use talon_tools::WriteTool;

use super::support::{Ws, call, fail};

#[tokio::test]
async fn creates_parents_and_reports_created() {
    let ws = Ws::new();
    let r = call(
        &ws.write_tool(),
        json!({"path": "deep/er/new.txt", "content": "  spaced\n\n"}),
    )
    .await
    .unwrap();
    // Content is written verbatim: not trimmed.
    assert_eq!(ws.get("deep/er/new.txt"), "  spaced\n\n");
    assert_eq!(r.details["created"], true);
    assert_eq!(r.details["bytes"], 10);
    assert_eq!(r.text(), "Created deep/er/new.txt (10 bytes).");
}

#[tokio::test]
async fn replaces_atomically_and_keeps_permissions() {
    let ws = Ws::new();
    ws.put("run.sh", "old\n");
    std::fs::set_permissions(
        ws.ws().join("run.sh"),
        std::fs::Permissions::from_mode(0o750),
    )
    .unwrap();
    let r = call(
        &ws.write_tool(),
        json!({"path": "run.sh", "content": "#!/bin/sh\n"}),
    )
    .await
    .unwrap();
    assert_eq!(r.details["created"], false);
    assert_eq!(ws.get("run.sh"), "#!/bin/sh\n");
    let mode = std::fs::metadata(ws.ws().join("run.sh"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o750);
    // No temp file is left behind.
    let names: Vec<String> = std::fs::read_dir(ws.ws())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, vec!["run.sh".to_owned()]);
}

#[tokio::test]
async fn empty_content_makes_an_empty_file() {
    let ws = Ws::new();
    let r = call(&ws.write_tool(), json!({"path": "e.txt", "content": ""}))
        .await
        .unwrap();
    assert_eq!(r.details["bytes"], 0);
    assert_eq!(ws.get("e.txt"), "");
}

#[tokio::test]
async fn bad_parameters_change_nothing() {
    let ws = Ws::new();
    ws.put("keep.txt", "keep\n");
    let before = ws.snapshot();
    let tool = ws.write_tool();
    let cases = [
        (json!({"content": "x"}), "path", "path required"),
        (json!({"path": "a.txt"}), "content", "content required"),
        (
            json!({"path": "a.txt", "content": 5}),
            "content",
            "content must be a string, got number",
        ),
        (
            json!({"path": "a.txt", "content": {"text": "x"}}),
            "content",
            "content must be a string, got object",
        ),
        (
            json!({"path": "a.txt", "content": null}),
            "content",
            "content required",
        ),
        (
            json!({"path": false, "content": "x"}),
            "path",
            "path must be a string, got boolean",
        ),
    ];
    for (args, param, needle) in cases {
        let e = fail(&tool, args.clone()).await;
        assert_eq!(e.param(), Some(param), "{args}: {e}");
        assert!(e.to_string().contains(needle), "{args}: {e}");
    }
    assert_eq!(ws.snapshot(), before);
}

#[tokio::test]
async fn writing_onto_a_directory_is_refused() {
    let ws = Ws::new();
    std::fs::create_dir(ws.ws().join("d")).unwrap();
    let e = fail(&ws.write_tool(), json!({"path": "d", "content": "x"})).await;
    assert_eq!(e.param(), Some("path"));
    assert!(
        matches!(
            e.code(),
            ToolErrorCode::FsNotAFile | ToolErrorCode::FsInvalidPath
        ),
        "{e}"
    );
    assert!(ws.ws().join("d").is_dir());
}

#[tokio::test]
async fn a_read_only_mount_refuses_writes_but_reads() {
    let tmp = tempfile::tempdir().unwrap();
    let rw = tmp.path().join("rw");
    let ro = tmp.path().join("ro");
    std::fs::create_dir(&rw).unwrap();
    std::fs::create_dir(&ro).unwrap();
    std::fs::write(ro.join("skill.md"), "# skill\n").unwrap();
    let bridge = MountBridge::new(
        vec![
            Mount::writable("/workspace", &rw),
            Mount::read_only("/skills", &ro),
        ],
        "/workspace",
    )
    .unwrap();
    let bridge: Arc<dyn talon_fs_bridge::FsBridge> = Arc::new(bridge);
    let write = WriteTool::new(bridge.clone());
    let e = fail(
        &write,
        json!({"path": "/skills/skill.md", "content": "pwned"}),
    )
    .await;
    assert_eq!(e.code(), ToolErrorCode::FsReadOnly, "{e}");
    assert_eq!(
        std::fs::read_to_string(ro.join("skill.md")).unwrap(),
        "# skill\n"
    );
    let read = talon_tools::ReadTool::new(bridge.clone(), talon_tools::ReadLimits::default());
    let r = call(&read, json!({"path": "/skills/skill.md"}))
        .await
        .unwrap();
    assert_eq!(r.text(), "# skill");
    let edit = talon_tools::EditTool::new(bridge.clone());
    let e = fail(
        &edit,
        json!({"path": "/skills/skill.md", "oldText": "skill", "newText": "x"}),
    )
    .await;
    assert_eq!(e.code(), ToolErrorCode::FsReadOnly, "{e}");
    let patch = talon_tools::ApplyPatchTool::new(bridge);
    let e = fail(
        &patch,
        json!({"input": "*** Begin Patch\n*** Add File: ok.txt\n+fine\n*** Delete File: /skills/skill.md\n*** End Patch"}),
    )
    .await;
    assert_eq!(e.code(), ToolErrorCode::FsReadOnly, "{e}");
    assert!(
        e.message().starts_with("`Delete File: /skills/skill.md`: "),
        "{e}"
    );
    // The first section was not written either.
    assert!(!rw.join("ok.txt").exists());
    assert!(ro.join("skill.md").exists());
}

#[test]
fn spec_is_serial_with_the_catalog_schema() {
    let ws = Ws::new();
    let tool = ws.write_tool();
    assert_eq!(tool.spec().execution_mode, ExecutionMode::Serial);
    assert_eq!(
        tool.spec().parameters["required"],
        json!(["path", "content"])
    );
}

#[tokio::test]
async fn an_aborted_call_changes_nothing() {
    use talon_tool_catalog::{ABORTED_REASON, CancellationToken, ToolCall, ToolContext, ToolError};
    let ws = Ws::new();
    ws.put("a.txt", "alpha\n");
    let before = ws.snapshot();
    let abort = CancellationToken::new();
    abort.cancel();
    let ctx = ToolContext::new("main", "agent:main:main");
    let calls: [(Box<dyn Tool>, serde_json::Value); 4] = [
        (
            Box::new(ws.write_tool()),
            json!({"path": "b.txt", "content": "x"}),
        ),
        (
            Box::new(ws.edit_tool()),
            json!({"path": "a.txt", "oldText": "alpha", "newText": "beta"}),
        ),
        (
            Box::new(ws.patch_tool()),
            json!({"input": "*** Begin Patch\n*** Add File: c.txt\n+c\n*** End Patch"}),
        ),
        (Box::new(ws.read_tool()), json!({"path": "a.txt"})),
    ];
    for (tool, args) in calls {
        let call = ToolCall {
            id: "c".into(),
            name: tool.spec().name.clone(),
            params: super::support::params(args),
        };
        let e = tool.execute(&call, &ctx, &abort).await.unwrap_err();
        // A tool cannot know why its token fired; the runtime that
        // cancelled the run puts the reason in (tests/suite/invoke.rs).
        assert_eq!(e, ToolError::aborted(ABORTED_REASON));
    }
    assert_eq!(ws.snapshot(), before);
}

#[tokio::test]
async fn append_adds_to_the_end_and_creates_a_missing_file() {
    let ws = Ws::new();
    ws.put("log.md", "one\n");
    let r = call(
        &ws.write_tool(),
        json!({"path": "log.md", "content": "two\n", "append": true}),
    )
    .await
    .unwrap();
    assert_eq!(ws.get("log.md"), "one\ntwo\n");
    assert_eq!(r.details["appended"], true);
    assert_eq!(r.details["created"], false);
    assert_eq!(r.text(), "Appended 4 bytes to log.md (now 8 bytes).");
    let r = call(
        &ws.write_tool(),
        json!({"path": "new/log.md", "content": "first\n", "append": "true"}),
    )
    .await
    .unwrap();
    assert_eq!(ws.get("new/log.md"), "first\n");
    assert_eq!(r.details["created"], true);
    let e = fail(
        &ws.write_tool(),
        json!({"path": "log.md", "content": "x", "append": "sometimes"}),
    )
    .await;
    assert_eq!(e.param(), Some("append"));
    assert_eq!(ws.get("log.md"), "one\ntwo\n");
}

#[tokio::test]
async fn an_append_only_write_refuses_to_replace() {
    let ws = Ws::new();
    ws.put("memory/today.md", "kept\n");
    let tool = WriteTool::new(ws.bridge.clone()).append_only();
    for args in [
        json!({"path": "memory/today.md", "content": "gone"}),
        json!({"path": "memory/today.md", "content": "gone", "append": false}),
    ] {
        let e = fail(&tool, args).await;
        assert_eq!(e.code(), ToolErrorCode::WriteAppendOnly);
        assert!(e.message().contains("append: true"), "{}", e.message());
    }
    assert_eq!(ws.get("memory/today.md"), "kept\n");
    call(
        &tool,
        json!({"path": "memory/today.md", "content": "added\n", "append": true}),
    )
    .await
    .unwrap();
    assert_eq!(ws.get("memory/today.md"), "kept\nadded\n");
}
