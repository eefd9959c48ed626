//! A sandboxed run with `sandbox.backend: "ssh"`: its exec and file tools
//! act on the remote workspace copy over a real sshd (a throwaway one on
//! a loopback port, started here; `cargo xtask sshd-install` installs it).

use serde_json::json;
use talon_runtime::{InvokeOutcome, ModelToolCall, RunSpec, RuntimeBuilder};
use talon_tool_policy::RunContext;

#[tokio::test]
async fn sandboxed_runs_act_on_their_ssh_host() {
    let dir = tempfile::Builder::new()
        .prefix("rtssh")
        .tempdir_in("/tmp")
        .unwrap();
    let d = dir.path();
    let sshd = talon_test_support::sshd::Sshd::start().unwrap();
    let (port, user) = (sshd.port, sshd.user.clone());
    let (key, known_hosts) = (sshd.client_key(), sshd.known_hosts());
    std::fs::create_dir_all(d.join("ws")).unwrap();
    std::fs::write(d.join("ws/seed.txt"), "from the host").unwrap();
    let config = format!(
        r#"{{ agents: {{ defaults: {{ workspace: "./ws", sandbox: {{ mode: "all", backend: "ssh",
            workspaceAccess: "rw", ssh: {{ host: "127.0.0.1", port: {port}, user: "{user}",
            identityFile: "{key}", knownHostsFile: "{known_hosts}",
            workspaceRoot: "{d}/remote" }} }} }} }} }}"#,
        d = d.display(),
        key = key.display(),
        known_hosts = known_hosts.display()
    );
    let loaded = talon_config::load_str(&config, "talon.json").unwrap();
    let rt = RuntimeBuilder::from_config(&loaded.config, d)
        .unwrap()
        .build()
        .unwrap();
    // No `sandboxed` on the context: mode "all" in the config decides.
    let ctx = RunContext::new("main");
    let table = rt.assemble(RunSpec::new(ctx));

    let out = table
        .invoke(ModelToolCall::new(
            "c1",
            "exec",
            json!({ "command": "pwd; cat seed.txt; echo made-remote > made.txt" }),
        ))
        .await;
    let printed = match &out {
        InvokeOutcome::Completed { result, .. } => result.text(),
        other => panic!("the ssh-sandboxed exec failed: {other:?}"),
    };
    let remote_ws = format!("{}/remote/", d.display());
    assert!(printed.contains(&remote_ws), "{printed}");
    assert!(printed.contains("from the host"), "{printed}");
    // rw: the change came back to the host workspace.
    assert_eq!(
        std::fs::read_to_string(d.join("ws/made.txt")).unwrap(),
        "made-remote\n"
    );

    // File tools work on the remote copy, relative to its workdir.
    let out = table
        .invoke(ModelToolCall::new(
            "c2",
            "write",
            json!({ "path": "notes.md", "content": "via write" }),
        ))
        .await;
    assert!(matches!(out, InvokeOutcome::Completed { .. }), "{out:?}");
    assert_eq!(
        std::fs::read_to_string(d.join("ws/notes.md")).unwrap(),
        "via write"
    );
    let out = table
        .invoke(ModelToolCall::new(
            "c3",
            "read",
            json!({ "path": "/etc/hostname" }),
        ))
        .await;
    match out {
        InvokeOutcome::Failed(e) => assert!(e.to_string().contains("outside"), "{e}"),
        other => panic!("a path outside the remote copy was read: {other:?}"),
    }
}
