//! Every tool refuses paths that leave the workspace, and nothing outside
//! changes: `..`, an absolute path outside, a symlinked file and a
//! symlinked directory pointing outside, directly and inside patches.

use std::os::unix::fs::symlink;

use serde_json::{Value, json};
use talon_tool_catalog::Tool;

use super::support::{SECRET, Ws, fail};

fn with_links() -> Ws {
    let ws = Ws::new();
    ws.put("inside.txt", "inside\n");
    symlink(ws.outside().join("secret.txt"), ws.ws().join("link.txt")).unwrap();
    symlink(ws.outside(), ws.ws().join("linkdir")).unwrap();
    symlink("../outside/secret.txt", ws.ws().join("rel-link.txt")).unwrap();
    ws
}

/// The escaping spellings of the outside secret (and of a new file next
/// to it), with the codes the bridge may give.
fn hostile_paths(ws: &Ws) -> Vec<(String, String)> {
    let abs_secret = ws.outside().join("secret.txt").display().to_string();
    let abs_new = ws.outside().join("new.txt").display().to_string();
    vec![
        ("../outside/secret.txt".into(), "../outside/new.txt".into()),
        (abs_secret, abs_new),
        ("link.txt".into(), "linkdir/new.txt".into()),
        ("rel-link.txt".into(), "linkdir/deeper/new.txt".into()),
        (
            "linkdir/secret.txt".into(),
            "sub/../../outside/new.txt".into(),
        ),
        ("/etc/passwd".into(), "/tmp/talon-escape-test.txt".into()),
    ]
}

fn assert_refused(e: &talon_tool_catalog::ToolError, what: &str) {
    let m = e.to_string();
    assert!(
        matches!(
            e.code(),
            talon_tool_catalog::ToolErrorCode::FsEscape
                | talon_tool_catalog::ToolErrorCode::FsOutsideMounts
        ),
        "{what}: expected escape/outside-mounts, got {:?}: {m}",
        e.code()
    );
    assert!(!m.contains("TOP-SECRET"), "{what}: leaked {m}");
}

async fn expect_refusal(ws: &Ws, tool: &dyn Tool, args: Value) {
    let before = ws.snapshot();
    let e = fail(tool, args.clone()).await;
    assert_refused(&e, &format!("{} {args}", tool.spec().name));
    assert_eq!(
        ws.snapshot(),
        before,
        "{} {args} changed files",
        tool.spec().name
    );
    assert_eq!(
        std::fs::read(ws.outside().join("secret.txt")).unwrap(),
        SECRET
    );
}

#[tokio::test]
async fn read_refuses_every_escape() {
    let ws = with_links();
    for (existing, _) in hostile_paths(&ws) {
        expect_refusal(&ws, &ws.read_tool(), json!({ "path": existing })).await;
    }
}

#[tokio::test]
async fn write_refuses_every_escape() {
    let ws = with_links();
    for (existing, new) in hostile_paths(&ws) {
        expect_refusal(
            &ws,
            &ws.write_tool(),
            json!({ "path": existing, "content": "pwned" }),
        )
        .await;
        expect_refusal(
            &ws,
            &ws.write_tool(),
            json!({ "path": new, "content": "pwned" }),
        )
        .await;
    }
    assert!(!std::path::Path::new("/tmp/talon-escape-test.txt").exists());
}

#[tokio::test]
async fn edit_refuses_every_escape() {
    let ws = with_links();
    for (existing, _) in hostile_paths(&ws) {
        expect_refusal(
            &ws,
            &ws.edit_tool(),
            json!({ "path": existing, "oldText": "TOP", "newText": "pwned" }),
        )
        .await;
    }
}

#[tokio::test]
async fn apply_patch_refuses_every_escape() {
    let ws = with_links();
    for (existing, new) in hostile_paths(&ws) {
        let bodies = [
            format!("*** Add File: inside-new.txt\n+ok\n*** Add File: {new}\n+pwned"),
            format!("*** Update File: {existing}\n-TOP-SECRET\n+pwned"),
            format!("*** Delete File: {existing}"),
            format!("*** Update File: inside.txt\n*** Move to: {new}"),
        ];
        for body in bodies {
            let input = format!("*** Begin Patch\n{body}\n*** End Patch");
            expect_refusal(&ws, &ws.patch_tool(), json!({ "input": input })).await;
        }
    }
    assert!(!ws.exists("inside-new.txt"));
}
