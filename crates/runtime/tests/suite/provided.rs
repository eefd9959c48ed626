//! Which core tools this build provides, and the notice when a profile
//! removes an embedder's own tool.

#[cfg(feature = "sqlite-state")]
use std::collections::BTreeSet;
use std::sync::Arc;

use talon_runtime::{RunSpec, RuntimeBuilder, ToolSet};
#[cfg(feature = "sqlite-state")]
use talon_runtime::{missing_core_tools, provided_core_tools};
use talon_test_support::logs::LogCapture;
use talon_test_support::probe_tool::{ProbeTool, Reply};
#[cfg(feature = "sqlite-state")]
use talon_tool_catalog::CORE_TOOLS;

#[cfg(feature = "sqlite-state")]
use super::support::Refuse;
use talon_tool_policy::RunContext;

fn crm_tool() -> ProbeTool {
    ProbeTool::plugin(
        "crm_lookup",
        "crm",
        "Look a customer up",
        serde_json::json!({"type": "object", "properties": {}}),
        Reply::EchoParams,
    )
}

#[cfg(feature = "sqlite-state")]
#[test]
fn the_provided_list_is_exactly_what_the_built_in_families_offer() {
    let dir = tempfile::tempdir().unwrap();
    let service = talon_cron::CronService::open(
        &dir.path().join("talon.db"),
        Arc::new(Refuse),
        talon_cron::CronOptions::default(),
    )
    .unwrap();
    // A channel is configured so that `message` (offered only then) is
    // offered like every other provided tool; nothing is sent.
    let config = talon_config::load_str(
        r#"{ channels: { webhook: { url: "https://hooks.example/talon" } } }"#,
        "talon.json",
    )
    .unwrap()
    .config;
    let runtime = RuntimeBuilder::from_config(&config, dir.path())
        .unwrap()
        .cron_service(service)
        .build()
        .unwrap();
    let mut ctx = RunContext::new("main");
    ctx.sender_is_owner = Some(true);
    let table = runtime.assemble(RunSpec::new(ctx));
    let offered: BTreeSet<&str> = table
        .names()
        .into_iter()
        .filter(|n| talon_tool_catalog::is_core_tool(n))
        .collect();
    let provided: BTreeSet<&str> = provided_core_tools().into_iter().collect();
    assert_eq!(offered, provided);

    let missing = missing_core_tools();
    assert_eq!(missing.len() + provided.len(), CORE_TOOLS.len());
    assert!(missing.contains(&"canvas") && !missing.contains(&"exec"));
    assert_eq!(missing.contains(&"browser"), !cfg!(feature = "browser"));
}

#[test]
fn a_profile_that_removes_an_embedder_tool_says_which_layer_once() {
    let config = talon_config::load_str(r#"{ tools: { profile: "coding" } }"#, "talon.json")
        .unwrap()
        .config;
    let dir = tempfile::tempdir().unwrap();
    let runtime = RuntimeBuilder::from_config(&config, dir.path())
        .unwrap()
        .family(Arc::new(ToolSet::new("crm").with(Arc::new(crm_tool()))))
        .build()
        .unwrap();
    let (logs, _guard) = LogCapture::start();
    for _ in 0..3 {
        let table = runtime.assemble(RunSpec::new(RunContext::new("main")));
        assert!(!table.contains("crm_lookup"));
        assert_eq!(
            table.policy().removed_by("crm_lookup").map(|r| r.layer),
            Some("profile".to_owned())
        );
    }
    let text = logs.text();
    assert_eq!(logs.count("crm_lookup"), 1, "{text}");
    assert!(
        text.contains("family=\"crm\"") || text.contains("family=crm"),
        "{text}"
    );
    assert!(text.contains("tools.alsoAllow"), "{text}");
    assert!(text.contains("layer=profile"), "{text}");

    // An explicit deny is the operator's own word: no notice.
    let config = talon_config::load_str(r#"{ tools: { deny: ["crm_lookup"] } }"#, "talon.json")
        .unwrap()
        .config;
    let runtime = RuntimeBuilder::from_config(&config, dir.path())
        .unwrap()
        .family(Arc::new(ToolSet::new("crm").with(Arc::new(crm_tool()))))
        .build()
        .unwrap();
    let table = runtime.assemble(RunSpec::new(RunContext::new("main")));
    assert!(!table.contains("crm_lookup"));
    assert_eq!(logs.count("crm_lookup"), 1, "{}", logs.text());
}
