//! OpenClaw's `plugins` switches on an embedder's plugin tool families:
//! a disabled, denied or not-allowed plugin's tools are absent from the
//! table, a plugin's own policy narrows that plugin only, and a call of a
//! removed tool names the `plugins` layer and the key to change.

use std::sync::Arc;

use serde_json::json;
use talon_hooks::DeniedReason;
use talon_runtime::{InvokeOutcome, ModelToolCall, RunSpec, Runtime, RuntimeBuilder, ToolSet};
use talon_test_support::probe_tool::{Probe, ProbeTool, Reply};
use talon_tool_policy::RunContext;

fn plugin_tool(name: &str, plugin: &str, probe: &Arc<Probe>) -> Arc<ProbeTool> {
    Arc::new(
        ProbeTool::plugin(
            name,
            plugin,
            "a plugin tool",
            json!({"type": "object", "properties": {}}),
            Reply::EchoParams,
        )
        .with_probe(probe),
    )
}

fn runtime(config: &str, probe: &Arc<Probe>, dir: &std::path::Path) -> Runtime {
    let config = talon_config::load_str(config, "talon.json").unwrap().config;
    RuntimeBuilder::from_config(&config, dir)
        .unwrap()
        .family(Arc::new(
            ToolSet::new("crm")
                .with(plugin_tool("crm_lookup", "crm", probe))
                .with(plugin_tool("crm_delete", "crm", probe)),
        ))
        .family(Arc::new(ToolSet::new("honcho").with(plugin_tool(
            "honcho_recall",
            "honcho",
            probe,
        ))))
        .build()
        .unwrap()
}

fn names(runtime: &Runtime) -> Vec<String> {
    let table = runtime.assemble(RunSpec::new(RunContext::new("main")));
    table.names().into_iter().map(str::to_owned).collect()
}

#[test]
fn without_plugins_every_family_tool_is_offered() {
    let dir = tempfile::tempdir().unwrap();
    let probe = Arc::new(Probe::default());
    let offered = names(&runtime("{}", &probe, dir.path()));
    for t in ["crm_lookup", "crm_delete", "honcho_recall", "read"] {
        assert!(offered.iter().any(|n| n == t), "{t} missing in {offered:?}");
    }
}

#[test]
fn plugin_switches_remove_whole_families_and_leave_core_tools() {
    let dir = tempfile::tempdir().unwrap();
    let probe = Arc::new(Probe::default());
    let cases: [(&str, &[&str], &[&str]); 3] = [
        (
            "{ plugins: { enabled: false } }",
            &["read"],
            &["crm_lookup", "crm_delete", "honcho_recall"],
        ),
        (
            r#"{ plugins: { allow: ["crm"] } }"#,
            &["read", "crm_lookup", "crm_delete"],
            &["honcho_recall"],
        ),
        (
            r#"{ plugins: { allow: ["crm", "honcho"], deny: ["crm"] } }"#,
            &["read", "honcho_recall"],
            &["crm_lookup", "crm_delete"],
        ),
    ];
    for (config, present, absent) in cases {
        let offered = names(&runtime(config, &probe, dir.path()));
        for t in present {
            assert!(offered.iter().any(|n| n == t), "{config}: {t} missing");
        }
        for t in absent {
            assert!(!offered.iter().any(|n| n == t), "{config}: {t} offered");
        }
    }
}

#[tokio::test]
async fn a_plugin_entry_narrows_its_own_tools_and_a_blocked_call_names_the_key() {
    let dir = tempfile::tempdir().unwrap();
    let probe = Arc::new(Probe::default());
    let runtime = runtime(
        r#"{ plugins: { entries: {
              crm: { tools: { deny: ["crm_delete", "read"] } },
              honcho: { enabled: false },
            } } }"#,
        &probe,
        dir.path(),
    );
    let table = runtime.assemble(RunSpec::new(RunContext::new("main")));
    assert!(table.contains("crm_lookup"));
    assert!(
        table.contains("read"),
        "a plugin's policy never reaches core tools"
    );
    assert!(!table.contains("crm_delete") && !table.contains("honcho_recall"));

    let removed = table.policy().removed_by("honcho_recall").unwrap();
    assert_eq!(removed.layer, "plugins");
    assert_eq!(removed.config_key, "plugins.entries.honcho.enabled");

    let out = table
        .invoke(ModelToolCall::new("c1", "crm_delete", json!({})))
        .await;
    let InvokeOutcome::Blocked(b) = &out else {
        panic!("{out:?}")
    };
    assert_eq!(b.denied_reason, DeniedReason::ToolPolicy);
    assert_eq!(b.source.as_deref(), Some("plugins"));
    assert_eq!(
        b.config_key.as_deref(),
        Some("plugins.entries.crm.tools.deny")
    );
    assert_eq!(probe.count(), 0, "the removed tool never ran");

    let out = table
        .invoke(ModelToolCall::new("c2", "crm_lookup", json!({})))
        .await;
    assert!(matches!(out, InvokeOutcome::Completed { .. }), "{out:?}");
    assert_eq!(probe.count(), 1);
}

/// The plugin switches are enforced, so they cannot be dropped: the old
/// `acceptUnenforced: ["plugins"]` acknowledgement matches nothing and is
/// an error, and a restriction still unenforced (`plugins.slots`) is
/// refused at load.
#[test]
fn a_plugin_restriction_is_never_dropped() {
    let err = talon_config::load_str(
        r#"{ acceptUnenforced: ["plugins"], plugins: { deny: ["crm"] } }"#,
        "talon.json",
    )
    .unwrap_err()
    .to_string();
    assert!(err.contains("names no restriction"), "{err}");
    let err = talon_config::load_str(
        r#"{ plugins: { slots: { memory: "none" } } }"#,
        "talon.json",
    )
    .unwrap_err()
    .to_string();
    assert!(err.contains("plugins.slots"), "{err}");
}
