//! The browser tool through `ToolTable::invoke` from a real config: one
//! Chromium for the agent with its profile under the state dir, web_fetch's
//! SSRF rules on navigation, and stopped on request.

use serde_json::{Value, json};
use talon_runtime::{InvokeOutcome, ModelToolCall, RunSpec, RuntimeBuilder, provides_core_tool};
use talon_tool_policy::RunContext;

fn completed(out: &InvokeOutcome) -> Value {
    match out {
        InvokeOutcome::Completed { result, .. } => result.details.clone(),
        other => panic!("{other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_browser_runs_per_agent_behind_web_fetchs_rules() {
    assert!(provides_core_tool("browser"));
    assert!(
        std::path::Path::new("/usr/bin/chromium").exists(),
        "this test drives the real Chromium: install Debian's chromium (`cargo xtask media-install`)"
    );
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("ws")).unwrap();
    let loaded = talon_config::load_str(
        r#"{ agents: { defaults: { workspace: "./ws" } } }"#,
        "talon.json",
    )
    .unwrap();
    let state = dir.path().join("state");
    let runtime = RuntimeBuilder::from_config_in(&loaded.config, dir.path(), state.clone())
        .unwrap()
        .build()
        .unwrap();
    let mut ctx = RunContext::new("main");
    ctx.sender_is_owner = Some(true);
    let table = runtime.assemble(RunSpec::new(ctx));
    assert!(table.names().contains(&"browser"), "{:?}", table.names());

    let out = table
        .invoke(ModelToolCall::new(
            "c1",
            "browser",
            json!({"action": "open", "targetUrl": "http://169.254.169.254/latest/meta-data/"}),
        ))
        .await;
    match out {
        InvokeOutcome::Failed(e) => assert_eq!(e.code().as_str(), "web.metadata_blocked"),
        other => panic!("{other:?}"),
    }
    let status = completed(
        &table
            .invoke(ModelToolCall::new(
                "c2",
                "browser",
                json!({"action": "start"}),
            ))
            .await,
    );
    assert_eq!(status["running"], true);
    let profile = status["profileDir"].as_str().unwrap();
    assert!(
        std::path::Path::new(profile).starts_with(state.join("browser").join("main")),
        "{profile}"
    );
    let stopped = completed(
        &table
            .invoke(ModelToolCall::new(
                "c3",
                "browser",
                json!({"action": "stop"}),
            ))
            .await,
    );
    assert_eq!(stopped["stopped"], true);
}
