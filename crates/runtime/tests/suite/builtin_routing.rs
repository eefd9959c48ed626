//! The built-in tools of a runtime made from a config: where they act.
//! Host runs act in the agent's workspace; sandboxed runs act in their
//! Docker container (the real engine and the test image from
//! `cargo xtask docker-up`) and never fall back to the host.

use serde_json::json;
use talon_runtime::{InvokeOutcome, ModelToolCall, RunSpec, Runtime, RuntimeBuilder};
#[cfg(feature = "docker")]
use talon_test_support::docker::RemoveMatching;
use talon_tool_catalog::{ToolError, ToolErrorCode};
use talon_tool_policy::RunContext;

fn runtime(text: &str, dir: &std::path::Path) -> Runtime {
    let loaded = talon_config::load_str(text, "talon.json").unwrap();
    RuntimeBuilder::from_config(&loaded.config, dir)
        .unwrap()
        .build()
        .unwrap()
}

fn text(out: &InvokeOutcome) -> String {
    match out {
        InvokeOutcome::Completed { result, .. } => result.text(),
        other => panic!("expected a result, got {other:?}"),
    }
}

fn error(out: &InvokeOutcome) -> &ToolError {
    match out {
        InvokeOutcome::Failed(e) => e,
        other => panic!("expected a failure, got {other:?}"),
    }
}

#[tokio::test]
async fn host_runs_act_in_the_agent_workspace() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    std::fs::create_dir_all(&ws).unwrap();
    std::fs::write(ws.join("a.txt"), "from the workspace").unwrap();
    std::fs::write(dir.path().join("secret.txt"), "outside").unwrap();
    let rt = runtime(
        r#"{ agents: { defaults: { workspace: "./ws" } } }"#,
        dir.path(),
    );
    let table = rt.assemble(RunSpec::new(RunContext::new("main")));
    for tool in [
        "read",
        "write",
        "edit",
        "apply_patch",
        "exec",
        "process",
        "gateway",
    ] {
        assert!(table.contains(tool), "{tool} missing from a host run");
    }
    // The web tools come with the `web` cargo feature.
    for tool in ["web_fetch", "web_search"] {
        assert_eq!(table.contains(tool), cfg!(feature = "web"), "{tool}");
    }
    let out = table
        .invoke(ModelToolCall::new("c1", "read", json!({ "path": "a.txt" })))
        .await;
    assert_eq!(text(&out), "from the workspace");
    let out = table
        .invoke(ModelToolCall::new(
            "c2",
            "read",
            json!({ "path": "../secret.txt" }),
        ))
        .await;
    assert_eq!(
        error(&out).code(),
        ToolErrorCode::FsOutsideMounts,
        "{out:?}"
    );
    let out = table
        .invoke(ModelToolCall::new(
            "c3",
            "exec",
            json!({ "command": "cat a.txt" }),
        ))
        .await;
    assert!(text(&out).contains("from the workspace"), "{out:?}");
}

#[tokio::test]
async fn a_sandboxed_run_without_its_backend_fails_instead_of_using_the_host() {
    let dir = tempfile::tempdir().unwrap();
    let rt = runtime(
        r#"{ agents: { defaults: { workspace: "./ws", sandbox: { mode: "all", backend: "openshell" } } } }"#,
        dir.path(),
    );
    // No `sandboxed` on the context: mode "all" in the config decides.
    let ctx = RunContext::new("main");
    let table = rt.assemble(RunSpec::new(ctx));
    let out = table
        .invoke(ModelToolCall::new(
            "c1",
            "exec",
            json!({ "command": "touch host-was-used" }),
        ))
        .await;
    let message = error(&out).to_string();
    assert!(message.contains("openshell"), "{message}");
    assert!(!dir.path().join("ws/host-was-used").exists());
}

#[cfg(feature = "docker")]
#[tokio::test]
async fn sandboxed_runs_act_in_their_docker_container() {
    let dir = tempfile::tempdir().unwrap();
    let agent = format!("rt-routing-{}", std::process::id());
    let config = format!(
        r#"{{ agents: {{ defaults: {{ workspace: "./ws", sandbox: {{ mode: "all", workspaceAccess: "rw",
            workspaceRoot: "{root}", docker: {{ image: "talon-sandbox-test:busybox" }} }} }},
            list: [{{ id: "{agent}" }}] }} }}"#,
        root = dir.path().join("sandboxes").display(),
    );
    std::fs::create_dir_all(dir.path().join("ws")).unwrap();
    let _cleanup = RemoveMatching(format!("label=talon.sessionKey=agent:{agent}"));
    let rt = runtime(&config, dir.path());
    // No `sandboxed` on the context: mode "all" in the config decides.
    let ctx = RunContext::new(agent.clone());
    let table = rt.assemble(RunSpec::new(ctx));

    let out = table
        .invoke(ModelToolCall::new(
            "c1",
            "exec",
            json!({ "command": "pwd; echo made-inside > inside.txt; cat /proc/1/cmdline | tr '\\0' ' '" }),
        ))
        .await;
    let printed = match &out {
        InvokeOutcome::Completed { result, .. } => result.text(),
        other => panic!(
            "the sandboxed exec failed — is the engine up (`cargo xtask docker-up`)? {other:?}"
        ),
    };
    assert!(printed.contains("/workspace"), "{printed}");
    // PID 1 is the container's init, not the host's.
    assert!(printed.contains("sleep"), "{printed}");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("ws/inside.txt")).unwrap(),
        "made-inside\n"
    );

    // The file tools go through the container's mount table.
    let out = table
        .invoke(ModelToolCall::new(
            "c2",
            "read",
            json!({ "path": "/workspace/inside.txt" }),
        ))
        .await;
    assert_eq!(text(&out).trim_end(), "made-inside");
    let out = table
        .invoke(ModelToolCall::new(
            "c3",
            "read",
            json!({ "path": "/etc/hostname" }),
        ))
        .await;
    assert_eq!(
        error(&out).code(),
        ToolErrorCode::FsOutsideMounts,
        "{out:?}"
    );

    // The backend lists the container by its labels and removes it.
    let docker = rt.sandbox_backends().unwrap().get("docker").unwrap();
    let mine: Vec<_> = docker
        .list_owned()
        .await
        .unwrap()
        .into_iter()
        .filter(|o| o.scope_key.as_deref() == Some(&format!("agent:{agent}")))
        .collect();
    assert_eq!(mine.len(), 1, "{mine:?}");
    docker.remove(&mine[0].name).await.unwrap();
}
