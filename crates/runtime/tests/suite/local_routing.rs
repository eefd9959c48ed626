//! A sandboxed run with `sandbox.backend: "local"`: its exec and file
//! tools act in a real bubblewrap sandbox over the agent workspace (no
//! daemon; `cargo xtask test` installs bubblewrap).

use serde_json::json;
use talon_runtime::{InvokeOutcome, ModelToolCall, RunSpec, RuntimeBuilder};
use talon_tool_policy::RunContext;

#[tokio::test]
async fn sandboxed_runs_act_in_a_local_bubblewrap_sandbox() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::create_dir_all(d.join("ws")).unwrap();
    std::fs::write(d.join("ws/seed.txt"), "from the host").unwrap();
    std::fs::write(d.join("outside.txt"), "host only").unwrap();
    let config = r#"{ agents: { defaults: { workspace: "./ws", sandbox: { mode: "all",
        backend: "local", workspaceAccess: "rw" } } } }"#;
    let loaded = talon_config::load_str(config, "talon.json").unwrap();
    let rt = RuntimeBuilder::from_config(&loaded.config, d)
        .unwrap()
        .build()
        .unwrap();
    let mut ctx = RunContext::new("main");
    ctx.sandboxed = true;
    let table = rt.assemble(RunSpec::new(ctx));

    let out = table
        .invoke(ModelToolCall::new(
            "c1",
            "exec",
            json!({ "command": format!(
                "pwd; cat seed.txt; echo made > made.txt; cat {}/outside.txt || echo no-host-file; \
                 ls /proc | grep -c '^[0-9]'",
                d.display()
            ) }),
        ))
        .await;
    let printed = match &out {
        InvokeOutcome::Completed { result, .. } => result.text(),
        other => panic!("the locally sandboxed exec failed: {other:?}"),
    };
    assert!(printed.contains("/workspace\n"), "{printed}");
    assert!(printed.contains("from the host"), "{printed}");
    assert!(printed.contains("no-host-file"), "{printed}");
    assert!(!printed.contains("host only"), "{printed}");
    assert_eq!(
        std::fs::read_to_string(d.join("ws/made.txt")).unwrap(),
        "made\n"
    );

    // File tools go through the bridge over the same mounts.
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
        other => panic!("a path outside the mounts was read: {other:?}"),
    }
}

/// Runs `exec` once in a sandboxed run under `config` (workspace `./ws`)
/// and returns what the call said; asserts nothing ran on the host.
async fn refused_exec(config: &str) -> String {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::create_dir_all(d.join("ws")).unwrap();
    let loaded = talon_config::load_str(config, "talon.json").unwrap();
    let rt = RuntimeBuilder::from_config(&loaded.config, d)
        .unwrap()
        .build()
        .unwrap();
    let mut ctx = RunContext::new("main");
    ctx.sandboxed = true;
    let table = rt.assemble(RunSpec::new(ctx));
    let out = table
        .invoke(ModelToolCall::new(
            "c1",
            "exec",
            json!({ "command": "echo ran > ran.txt" }),
        ))
        .await;
    assert!(
        !d.join("ws/ran.txt").exists(),
        "nothing may run on the host"
    );
    match &out {
        InvokeOutcome::Completed { result, .. } => result.text(),
        InvokeOutcome::Failed(e) => e.to_string(),
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn a_container_network_on_the_local_backend_fails_the_call_naming_the_key() {
    let text = refused_exec(
        r#"{ agents: { defaults: { workspace: "./ws", sandbox: { mode: "all",
        backend: "local", workspaceAccess: "rw", docker: { network: "my-compose-net" } } } } }"#,
    )
    .await;
    assert!(
        text.contains("agents.defaults.sandbox.docker.network"),
        "{text}"
    );
}

#[tokio::test]
async fn bridge_with_an_invalid_allowlist_fails_naming_the_allowlist_key() {
    let text = refused_exec(
        r#"{ agents: { defaults: { workspace: "./ws", sandbox: { mode: "all",
        backend: "local", workspaceAccess: "rw", docker: { network: "bridge" } } } },
        tools: { web: { fetch: { ssrfAllowlist: { cidrs: ["10.0.0.0/99"] } } } } }"#,
    )
    .await;
    assert!(
        text.contains("tools.web.fetch.ssrfAllowlist.cidrs"),
        "{text}"
    );
}

/// `browser` in a sandboxed run of `config` (workspace `./ws`): the
/// failure's code, after checking nothing was started on the host.
#[cfg(feature = "browser")]
async fn sandboxed_browser_refusal(config: &str) -> String {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::create_dir_all(d.join("ws")).unwrap();
    let loaded = talon_config::load_str(config, "talon.json").unwrap();
    let state = d.join("state");
    let rt = RuntimeBuilder::from_config_in(&loaded.config, d, state.clone())
        .unwrap()
        .build()
        .unwrap();
    let mut ctx = RunContext::new("main");
    ctx.sandboxed = true;
    ctx.sender_is_owner = Some(true);
    let table = rt.assemble(RunSpec::new(ctx));
    assert!(table.names().contains(&"browser"), "{:?}", table.names());
    let out = table
        .invoke(ModelToolCall::new(
            "c1",
            "browser",
            json!({ "action": "start" }),
        ))
        .await;
    // The host browser's profile dir was never made.
    assert!(!state.join("browser").join("main").exists());
    match out {
        InvokeOutcome::Failed(e) => e.code().as_str().to_owned(),
        other => panic!("a sandboxed browser started where it must not: {other:?}"),
    }
}

#[cfg(feature = "browser")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sandboxed_run_gets_the_sandbox_browser_or_a_typed_refusal() {
    // The local backend with no egress: the browser (run inside the
    // sandbox, where the start script sees no proxy) is not started.
    let code = sandboxed_browser_refusal(
        r#"{ tools: { sandbox: { tools: { allow: ["browser"] } } },
           agents: { defaults: { workspace: "./ws", sandbox: { mode: "all", backend: "local",
             workspaceAccess: "rw", browser: { enabled: true } } } } }"#,
    )
    .await;
    assert_eq!(code, "browser.sandbox_no_egress");
    // The Docker backend has no browser: refused before anything starts
    // (no container is made, so no Docker engine is needed here).
    let code = sandboxed_browser_refusal(
        r#"{ tools: { sandbox: { tools: { allow: ["browser"] } } },
           agents: { defaults: { workspace: "./ws", sandbox: { mode: "all", backend: "docker",
             browser: { enabled: true } } } } }"#,
    )
    .await;
    assert_eq!(code, "browser.sandbox_unsupported");
    // `sandbox.browser` not enabled: refused, never the host browser.
    let code = sandboxed_browser_refusal(
        r#"{ tools: { sandbox: { tools: { allow: ["browser"] } } },
           agents: { defaults: { workspace: "./ws", sandbox: { mode: "all", backend: "local",
             workspaceAccess: "rw" } } } }"#,
    )
    .await;
    assert_eq!(code, "browser.sandbox_unsupported");
}
