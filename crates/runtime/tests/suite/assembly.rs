//! `assemble`: order, policy, schemas, laziness, timings, allowlist.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use pretty_assertions::assert_eq;
use serde_json::json;
use talon_runtime::{RunSpec, RuntimeBuilder, ToolSet};
use talon_tool_policy::config::ToolsConfig;
use talon_tool_policy::{PolicyConfig, RunContext};

use super::support::{LazyFamily, echo_plugin, echo_tool};

fn policy(tools: ToolsConfig) -> PolicyConfig {
    PolicyConfig {
        tools,
        ..PolicyConfig::default()
    }
}

fn coding_set() -> ToolSet {
    ToolSet::new("coding")
        .with(Arc::new(echo_tool("read")))
        .with(Arc::new(echo_tool("write")))
        .with(Arc::new(echo_tool("edit")))
        .with(Arc::new(echo_plugin(
            "lint",
            "linter",
            json!({"type": "object", "properties": {"file": {"type": "string", "minLength": 1}}}),
        )))
}

#[test]
fn tables_are_deterministic_and_follow_policy() {
    let runtime = RuntimeBuilder::new(policy(ToolsConfig {
        deny: Some(vec!["edit".into()]),
        ..ToolsConfig::default()
    }))
    .family(Arc::new(coding_set()))
    .build()
    .unwrap();
    let a = runtime.assemble(RunSpec::new(RunContext::new("main")));
    let b = runtime.assemble(RunSpec::new(RunContext::new("main")));
    assert_eq!(a.names(), vec!["session_status", "read", "write", "lint"]);
    assert_eq!(a.names(), b.names());
    assert_eq!(a.definitions(), b.definitions());
    assert_eq!(
        a.effective_allowlist(),
        ["session_status", "read", "write", "lint"]
    );
    let why = a.policy().removed_by("edit").unwrap();
    assert_eq!(
        (why.layer.as_str(), why.config_key.as_str()),
        ("global", "tools.deny")
    );
}

#[test]
fn every_stage_is_timed() {
    let runtime = RuntimeBuilder::new(PolicyConfig::default())
        .family(Arc::new(coding_set()))
        .build()
        .unwrap();
    let table = runtime.assemble(RunSpec::new(RunContext::new("main")));
    let stages: Vec<&str> = table.timings().iter().map(|t| t.stage).collect();
    assert_eq!(
        stages,
        vec![
            "tool-families",
            "tool-policy",
            "workspace-policy",
            "schema-normalize",
            "tool-construct",
            "hook-wrap"
        ]
    );
}

#[test]
fn schemas_are_normalised_for_the_provider() {
    let runtime = RuntimeBuilder::new(PolicyConfig::default())
        .family(Arc::new(coding_set()))
        .build()
        .unwrap();
    let gemini = RunContext {
        model_provider: Some("google".into()),
        model: Some("gemini-2.5-pro".into()),
        ..RunContext::new("main")
    };
    let anthropic = RunContext {
        model_provider: Some("anthropic".into()),
        ..RunContext::new("main")
    };
    let lint = |ctx: RunContext| {
        runtime
            .assemble(RunSpec::new(ctx))
            .definitions()
            .into_iter()
            .find(|d| d.name == "lint")
            .unwrap()
            .parameters
    };
    assert_eq!(
        lint(gemini)["properties"]["file"],
        json!({"type": "string"}),
        "Gemini strips minLength"
    );
    assert_eq!(
        lint(anthropic)["properties"]["file"]["minLength"],
        1,
        "Anthropic keeps full JSON Schema"
    );
}

#[test]
fn lazy_families_are_built_on_first_use_only() {
    let built = Arc::new(AtomicUsize::new(0));
    let runtime = RuntimeBuilder::new(PolicyConfig::default())
        .family(Arc::new(LazyFamily {
            built: Arc::clone(&built),
        }))
        .build()
        .unwrap();
    let table = runtime.assemble(RunSpec::new(RunContext::new("main")));
    assert!(table.contains("exec") && table.contains("process"));
    assert_eq!(
        built.load(Ordering::SeqCst),
        0,
        "assembly constructed a lazy tool"
    );
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    for id in ["a", "b"] {
        let out = rt.block_on(table.invoke(talon_runtime::ModelToolCall::new(
            id,
            "bash",
            json!({"command": "ls"}),
        )));
        assert!(
            matches!(out, talon_runtime::InvokeOutcome::Completed { .. }),
            "{out:?}"
        );
    }
    assert_eq!(
        built.load(Ordering::SeqCst),
        1,
        "exec is built once, process never"
    );
}

#[test]
fn the_construction_plan_picks_families() {
    let runtime = RuntimeBuilder::new(PolicyConfig::default())
        .family(Arc::new(coding_set()))
        .build()
        .unwrap();
    let mut run = RunSpec::new(RunContext::new("main"));
    run.families = Some(vec!["status".into()]);
    assert_eq!(runtime.assemble(run).names(), vec!["session_status"]);
}

#[test]
fn a_second_family_offering_the_same_name_is_ignored() {
    let runtime = RuntimeBuilder::new(PolicyConfig::default())
        .family(Arc::new(
            ToolSet::new("first").with(Arc::new(echo_tool("read"))),
        ))
        .family(Arc::new(
            ToolSet::new("second").with(Arc::new(echo_plugin("READ", "evil", json!({})))),
        ))
        .build()
        .unwrap();
    let table = runtime.assemble(RunSpec::new(RunContext::new("main")));
    let read = table
        .definitions()
        .into_iter()
        .find(|d| d.name == "read")
        .unwrap();
    assert!(!read.description.contains("evil"));
}

#[test]
fn children_inherit_at_most_the_effective_allowlist() {
    let runtime = RuntimeBuilder::new(policy(ToolsConfig {
        profile: Some("coding".into()),
        ..ToolsConfig::default()
    }))
    .family(Arc::new(coding_set()))
    .build()
    .unwrap();
    let parent = runtime.assemble(RunSpec::new(RunContext::new("main")));
    let child_ctx = RunContext {
        inherited: Some(vec!["read".into()]),
        session_key: "agent:main:subagent:1".into(),
        ..RunContext::new("main")
    };
    let child = runtime.assemble(RunSpec::new(child_ctx));
    assert!(parent.effective_allowlist().len() > child.effective_allowlist().len());
    assert_eq!(child.effective_allowlist(), ["read"]);
}
