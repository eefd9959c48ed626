//! A runtime built without some of its cargo features: what a config that
//! asks for a part left out gets (`cargo test -p talon-runtime
//! --no-default-features` runs these; a default build has every part).

#[cfg(any(not(feature = "docker"), not(feature = "web"), not(feature = "mcp")))]
use talon_runtime::{InvokeOutcome, ModelToolCall, RunSpec, Runtime, RuntimeBuilder};
#[cfg(any(not(feature = "docker"), not(feature = "web")))]
use talon_tool_policy::RunContext;

#[cfg(any(not(feature = "docker"), not(feature = "web")))]
fn runtime(text: &str, dir: &std::path::Path) -> Runtime {
    let loaded = talon_config::load_str(text, "talon.json").unwrap();
    RuntimeBuilder::from_config(&loaded.config, dir)
        .unwrap()
        .build()
        .unwrap()
}

#[cfg(not(feature = "docker"))]
#[tokio::test]
async fn a_sandboxed_run_without_the_docker_feature_fails_closed_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("ws")).unwrap();
    let rt = runtime(
        r#"{ agents: { defaults: { workspace: "./ws", sandbox: { mode: "all", backend: "docker" } } } }"#,
        dir.path(),
    );
    let backends = rt.sandbox_backends().unwrap().ids();
    assert!(!backends.iter().any(|b| b == "docker"), "{backends:?}");
    let table = rt.assemble(RunSpec::new(RunContext::new("main")));
    assert!(table.sandbox().sandboxed);
    for (tool, args) in [
        (
            "exec",
            serde_json::json!({ "command": "touch host-was-used" }),
        ),
        (
            "write",
            serde_json::json!({ "path": "host-was-used", "content": "x" }),
        ),
    ] {
        let out = table.invoke(ModelToolCall::new("c1", tool, args)).await;
        let InvokeOutcome::Failed(e) = &out else {
            panic!("{tool} ran without its sandbox: {out:?}");
        };
        let message = e.to_string();
        assert!(message.contains("`docker` cargo feature"), "{message}");
        assert!(
            message.contains("does not fall back to the host"),
            "{message}"
        );
        // The suggested backend is one this build has.
        assert!(message.contains(r#"such as "local""#), "{message}");
    }
    assert!(!dir.path().join("ws/host-was-used").exists());
}

#[cfg(not(feature = "web"))]
#[tokio::test]
async fn a_web_tool_without_the_web_feature_is_not_offered_and_its_call_names_it() {
    let dir = tempfile::tempdir().unwrap();
    let rt = runtime(
        r#"{ tools: { web: { fetch: { enabled: true } } } }"#,
        dir.path(),
    );
    let table = rt.assemble(RunSpec::new(RunContext::new("main")));
    assert!(!table.contains("web_fetch") && !table.contains("web_search"));
    let out = table
        .invoke(ModelToolCall::new(
            "c1",
            "web_fetch",
            serde_json::json!({ "url": "https://example.com/" }),
        ))
        .await;
    let InvokeOutcome::Failed(e) = &out else {
        panic!("{out:?}");
    };
    assert_eq!(e.code(), talon_tool_catalog::ToolErrorCode::ToolUnknown);
    assert!(e.to_string().contains("`web` cargo feature"), "{e}");
}

#[cfg(not(feature = "mcp"))]
#[test]
fn configured_mcp_servers_without_the_mcp_feature_are_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let build = |text: &str| {
        let loaded = talon_config::load_str(text, "talon.json").unwrap();
        RuntimeBuilder::from_config(&loaded.config, dir.path())
    };
    let err =
        build(r#"{ mcp: { servers: { time: { command: "mcp-server-time" } } } }"#).unwrap_err();
    assert!(
        matches!(
            &err,
            talon_runtime::Error::FeatureDisabled { feature: "mcp", .. }
        ),
        "{err:?}"
    );
    let message = err.to_string();
    assert!(message.contains("mcp.servers"), "{message}");
    assert!(message.contains("time"), "{message}");
    assert!(message.contains("`mcp` cargo feature"), "{message}");

    // An agent's own servers count too; disabled servers ask for nothing.
    let err = build(
        r#"{ agents: { list: [{ id: "ops", mcp: { servers: { git: { command: "git-mcp" } } } }] } }"#,
    )
    .unwrap_err();
    assert!(err.to_string().contains("agent `ops`"), "{err}");
    build(r#"{ mcp: { servers: { time: { command: "t", enabled: false } } } }"#).unwrap();
}
