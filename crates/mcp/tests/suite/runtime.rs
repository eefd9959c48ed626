//! MCP tools in a run's table: policy as the `bundle-mcp` group, provider
//! schemas, and the same hook gate as built-in tools.

use std::sync::Arc;

use serde_json::json;
use talon_hooks::{
    BeforeToolCallEvent, BeforeToolCallHandler, BeforeToolCallResult, HookContext, Registration,
    ToolMatcher,
};
use talon_runtime::{InvokeOutcome, ModelToolCall, RunSpec, RuntimeBuilder};
use talon_tool_policy::config::ToolsConfig;
use talon_tool_policy::{PolicyConfig, RunContext};

use crate::support::{fixture_server, manager};

fn policy(allow: Option<&[&str]>, deny: &[&str]) -> PolicyConfig {
    PolicyConfig {
        tools: ToolsConfig {
            allow: allow.map(|a| a.iter().map(|s| (*s).to_owned()).collect()),
            deny: Some(deny.iter().map(|s| (*s).to_owned()).collect()),
            ..ToolsConfig::default()
        },
        ..PolicyConfig::default()
    }
}

struct Block;

#[async_trait::async_trait]
impl BeforeToolCallHandler for Block {
    async fn before_tool_call(
        &self,
        _e: &BeforeToolCallEvent,
        _c: &HookContext,
    ) -> Result<Option<BeforeToolCallResult>, talon_hooks::HookError> {
        Ok(Some(BeforeToolCallResult::block("no echo today")))
    }
}

#[tokio::test]
async fn mcp_tools_go_through_policy_schemas_and_the_gate() {
    let m = Arc::new(manager(json!({"fix": fixture_server(&[], json!({}))})));
    m.ensure_agent("main").await;

    // Default policy: offered and callable through the gate.
    let rt = RuntimeBuilder::new(PolicyConfig::default())
        .mcp_manager(Arc::clone(&m))
        .build()
        .unwrap();
    assert!(Arc::ptr_eq(rt.mcp_manager(), &m));
    let table = rt.assemble(RunSpec::new(RunContext::new("main")));
    assert!(table.contains("fix__echo") && table.contains("session_status"));
    let out = table
        .invoke(ModelToolCall::new(
            "c1",
            "fix__add",
            json!({"a": 1, "b": 2}),
        ))
        .await;
    let InvokeOutcome::Completed { result, .. } = out else {
        panic!("{out:?}")
    };
    assert_eq!(result.text(), "3");

    // `bundle-mcp` admits every MCP tool and nothing else; `group:plugins` too.
    for entry in ["bundle-mcp", "group:plugins"] {
        let rt = RuntimeBuilder::new(policy(Some(&[entry]), &[]))
            .mcp_manager(Arc::clone(&m))
            .build()
            .unwrap();
        let table = rt.assemble(RunSpec::new(RunContext::new("main")));
        let names = table.names();
        assert!(
            !names.is_empty() && names.iter().all(|n| n.starts_with("fix__")),
            "{entry}: {names:?}"
        );
    }
    // Denying `bundle-mcp` removes them all, and a call says why.
    let rt = RuntimeBuilder::new(policy(None, &["bundle-mcp"]))
        .mcp_manager(Arc::clone(&m))
        .build()
        .unwrap();
    let table = rt.assemble(RunSpec::new(RunContext::new("main")));
    assert!(table.names().iter().all(|n| !n.starts_with("fix__")));
    let out = table
        .invoke(ModelToolCall::new("c2", "fix__echo", json!({"text": "x"})))
        .await;
    assert!(!matches!(out, InvokeOutcome::Completed { .. }), "{out:?}");

    // Provider schemas: `$defs`/`$ref` are inlined for Gemini.
    let mut ctx = RunContext::new("main");
    ctx.model_provider = Some("google".to_owned());
    let rt = RuntimeBuilder::new(PolicyConfig::default())
        .mcp_manager(Arc::clone(&m))
        .build()
        .unwrap();
    let table = rt.assemble(RunSpec::new(ctx));
    let defs = table
        .definitions()
        .into_iter()
        .find(|d| d.name == "fix__defs")
        .unwrap();
    let text = defs.parameters.to_string();
    assert!(!text.contains("$ref") && !text.contains("$defs"), "{text}");
    assert_eq!(
        defs.parameters["properties"]["at"]["properties"]["x"]["type"],
        "number"
    );

    // The hook gate applies to MCP tools as to built-in ones.
    let mut builder = RuntimeBuilder::new(PolicyConfig::default()).mcp_manager(Arc::clone(&m));
    builder.hooks_mut().on_before_tool_call(
        Registration::new("guard").matcher(ToolMatcher::ids(["fix__echo"])),
        Arc::new(Block),
    );
    let rt = builder.build().unwrap();
    let table = rt.assemble(RunSpec::new(RunContext::new("main")));
    let out = table
        .invoke(ModelToolCall::new("c3", "fix__echo", json!({"text": "x"})))
        .await;
    assert!(
        matches!(&out, InvokeOutcome::Blocked(b) if b.reason == "no echo today"),
        "{out:?}"
    );
    let out = table
        .invoke(ModelToolCall::new(
            "c4",
            "fix__add",
            json!({"a": 2, "b": 2}),
        ))
        .await;
    assert!(matches!(out, InvokeOutcome::Completed { .. }));
    m.shutdown().await;
}

#[tokio::test]
async fn from_config_types_the_sections_and_starts_nothing_until_asked() {
    let dir = std::env::temp_dir();
    let text = json!({
        "mcp": {"servers": {"fix": fixture_server(&[], json!({}))}},
        "agents": {"list": [{"id": "ops", "mcp": {"servers": {"own": fixture_server(&["--label", "ops"], json!({}))}}}]}
    })
    .to_string();
    let loaded = talon_config::load_str(&text, "t.json").unwrap();
    let rt = RuntimeBuilder::from_config(&loaded.config, &dir)
        .unwrap()
        .build()
        .unwrap();
    // Nothing started yet: no MCP tools in the table.
    let table = rt.assemble(RunSpec::new(RunContext::new("ops")));
    assert!(table.names().iter().all(|n| !n.contains("__")));
    rt.mcp_manager().ensure_agent("ops").await;
    let table = rt.assemble(RunSpec::new(RunContext::new("ops")));
    assert!(table.contains("fix__echo") && table.contains("own__label"));
    let out = table
        .invoke(ModelToolCall::new("c", "own__label", json!({})))
        .await;
    let InvokeOutcome::Completed { result, .. } = out else {
        panic!("{out:?}")
    };
    assert_eq!(result.text(), "ops");
    let status = serde_json::to_value(rt.mcp_manager().status()).unwrap();
    assert_eq!(status["servers"][0]["state"], "ready");
    assert_eq!(status["servers"][1]["name"], "own");
    rt.mcp_manager().shutdown().await;

    let bad = json!({"mcp": {"servers": {"fix": {"command": "x", "timeoutMs": 0}}}}).to_string();
    assert!(talon_config::load_str(&bad, "t.json").is_err());
}
