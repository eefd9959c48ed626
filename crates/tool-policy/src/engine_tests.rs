use std::collections::BTreeMap;

use pretty_assertions::assert_eq;

use super::*;
use crate::config::{
    GroupToolPolicyConfig, SandboxToolsSection, SubagentsToolsSection, ToolPolicyConfig,
};
use crate::subagent::{LEAF_SUBAGENT_EXTRA_DENY, LEAF_SUBAGENT_FIXED_DENY, SUBAGENT_DEFAULT_DENY};

fn s(v: &[&str]) -> Vec<String> {
    v.iter().map(|x| x.to_string()).collect()
}

fn engine(tools: ToolsConfig) -> PolicyEngine {
    PolicyEngine::new(&PolicyConfig {
        channels: Default::default(),
        tools,
        agents: BTreeMap::new(),
        agent_keys: Default::default(),
        plugins: None,
    })
    .unwrap()
}

fn universe() -> ToolUniverse {
    ToolUniverse::core()
        .with(ToolEntry::mcp("fs__read_file", "fs"))
        .with(ToolEntry::plugin("honcho_recall", "honcho"))
}

#[test]
fn no_config_allows_everything_in_order() {
    let out = engine(ToolsConfig::default()).evaluate(&RunContext::new("main"), &universe());
    assert_eq!(out.tools.len(), 44);
    assert_eq!(out.tools[0], "read");
    assert_eq!(out.layers.len(), crate::outcome::LAYER_IDS.len());
    let ids: Vec<&str> = out.layers.iter().map(|l| l.id.as_str()).collect();
    assert_eq!(ids, crate::outcome::LAYER_IDS);
}

#[test]
fn coding_profile_keeps_mcp_but_hides_plugin_tools() {
    let e = engine(ToolsConfig {
        profile: Some("coding".into()),
        ..Default::default()
    });
    let out = e.evaluate(&RunContext::new("main"), &universe());
    assert!(out.allows("fs__read_file"));
    assert!(!out.allows("honcho_recall"));
    assert!(!out.allows("browser"));
    let r = out.removed_by("honcho_recall").unwrap();
    assert_eq!(r.layer, "profile");
    assert_eq!(r.rule, "not in profile coding");
    assert_eq!(r.config_key, "tools.alsoAllow");

    let e = engine(ToolsConfig {
        profile: Some("coding".into()),
        also_allow: Some(s(&["honcho"])),
        ..Default::default()
    });
    assert!(
        e.evaluate(&RunContext::new("main"), &universe())
            .allows("honcho_recall")
    );
}

#[test]
fn full_profile_is_star() {
    let e = engine(ToolsConfig {
        profile: Some("full".into()),
        ..Default::default()
    });
    assert!(
        e.evaluate(&RunContext::new("main"), &universe())
            .allows("browser")
    );
}

#[test]
fn unknown_profile_is_an_error() {
    let err = PolicyEngine::new(&PolicyConfig {
        tools: ToolsConfig {
            profile: Some("codign".into()),
            ..Default::default()
        },
        ..Default::default()
    })
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "tools.profile: unknown tool profile `codign` (expected one of: minimal, coding, messaging, full)"
    );
}

#[test]
fn provider_model_key_wins_over_provider_key() {
    let mut by = BTreeMap::new();
    by.insert(
        "openai".to_string(),
        ProfiledPolicyConfig {
            deny: Some(s(&["exec"])),
            ..Default::default()
        },
    );
    by.insert(
        "openai/gpt-5".to_string(),
        ProfiledPolicyConfig {
            deny: Some(s(&["read"])),
            ..Default::default()
        },
    );
    let e = engine(ToolsConfig {
        by_provider: Some(by),
        ..Default::default()
    });
    let mut ctx = RunContext::new("main");
    ctx.model_provider = Some("OpenAI".into());
    ctx.model = Some("gpt-5".into());
    let out = e.evaluate(&ctx, &universe());
    assert!(out.allows("exec"));
    assert!(!out.allows("read"));
    assert_eq!(
        out.removed_by("read").unwrap().config_key,
        "tools.byProvider.openai/gpt-5.deny"
    );
    ctx.model = Some("gpt-4o".into());
    let out = e.evaluate(&ctx, &universe());
    assert!(!out.allows("exec"));
    assert_eq!(out.removed_by("exec").unwrap().layer, "global-provider");
}

#[test]
fn agent_layers_and_agent_profile() {
    let mut agents = BTreeMap::new();
    agents.insert(
        "ops".to_string(),
        AgentToolsConfig {
            profile: Some("minimal".into()),
            also_allow: Some(s(&["read"])),
            ..Default::default()
        },
    );
    agents.insert(
        "dev".to_string(),
        AgentToolsConfig {
            deny: Some(s(&["write"])),
            ..Default::default()
        },
    );
    let e = PolicyEngine::new(&PolicyConfig {
        channels: Default::default(),
        tools: ToolsConfig {
            profile: Some("coding".into()),
            ..Default::default()
        },
        agents,
        agent_keys: Default::default(),
        plugins: None,
    })
    .unwrap();
    let ops = e.evaluate(&RunContext::new("ops"), &ToolUniverse::core());
    assert_eq!(ops.tools, s(&["read", "session_status"]));
    let dev = e.evaluate(&RunContext::new("dev"), &ToolUniverse::core());
    assert!(!dev.allows("write"));
    assert!(
        dev.allows("apply_patch"),
        "v7.2: denying write leaves apply_patch"
    );
    let r = dev.removed_by("write").unwrap();
    assert_eq!(
        (r.layer.as_str(), r.config_key.as_str()),
        ("agent", "agents.dev.tools.deny")
    );
}

#[test]
fn group_and_sender_layers() {
    let mut by_sender = BTreeMap::new();
    by_sender.insert(
        "alice".to_string(),
        ToolPolicyConfig {
            deny: Some(s(&["read"])),
            ..Default::default()
        },
    );
    let mut groups = BTreeMap::new();
    groups.insert(
        "*".to_string(),
        GroupToolPolicyConfig {
            deny: Some(s(&["exec"])),
            tools_by_sender: Some(by_sender),
            ..Default::default()
        },
    );
    let mut senders = BTreeMap::new();
    senders.insert(
        "*".to_string(),
        ToolPolicyConfig {
            deny: Some(s(&["write"])),
            ..Default::default()
        },
    );
    let e = engine(ToolsConfig {
        groups: Some(groups),
        tools_by_sender: Some(senders),
        ..Default::default()
    });

    let mut ctx = RunContext::new("main");
    ctx.group_id = Some("g1".into());
    ctx.sender_id = Some("alice".into());
    let out = e.evaluate(&ctx, &ToolUniverse::core());
    assert_eq!(out.removed_by("exec").unwrap().layer, "group");
    assert_eq!(out.removed_by("read").unwrap().layer, "sender");
    assert!(
        out.allows("write"),
        "the group's sender policy wins over the global one"
    );

    ctx.group_id = None;
    let out = e.evaluate(&ctx, &ToolUniverse::core());
    assert!(out.allows("exec") && out.allows("read") && !out.allows("write"));
}

#[test]
fn sandbox_layer_only_when_sandboxed() {
    let e = engine(ToolsConfig {
        sandbox: Some(SandboxToolsSection {
            tools: Some(ToolPolicyConfig {
                deny: Some(s(&["exec"])),
                ..Default::default()
            }),
        }),
        ..Default::default()
    });
    let mut ctx = RunContext::new("main");
    assert!(e.evaluate(&ctx, &universe()).allows("exec"));
    ctx.sandboxed = true;
    let out = e.evaluate(&ctx, &universe());
    let r = out.removed_by("exec").unwrap();
    assert_eq!(
        (r.layer.as_str(), r.rule.as_str(), r.config_key.as_str()),
        ("sandbox", "deny exec", "tools.sandbox.tools.deny")
    );
    // The default sandbox allow list removes web tools and MCP tools.
    assert!(!out.allows("web_fetch"));
    assert!(!out.allows("fs__read_file"));
    assert!(out.allows("image"));
}

#[test]
fn default_sandbox_deny_names_the_key_that_lifts_it() {
    let e = engine(ToolsConfig {
        sandbox: Some(SandboxToolsSection {
            tools: Some(ToolPolicyConfig {
                allow: Some(s(&["web_fetch"])),
                ..Default::default()
            }),
        }),
        ..Default::default()
    });
    let mut ctx = RunContext::new("main");
    ctx.sandboxed = true;
    let out = e.evaluate(&ctx, &universe());
    assert!(out.allows("web_fetch"));
    let r = out.removed_by("browser").unwrap();
    assert_eq!(r.rule, "default sandbox deny browser");
    assert_eq!(r.config_key, "tools.sandbox.tools.alsoAllow");
}

#[test]
fn owner_only_only_for_known_non_owners() {
    let e = engine(ToolsConfig::default());
    let mut ctx = RunContext::new("main");
    assert!(e.evaluate(&ctx, &universe()).allows("cron"));
    ctx.sender_is_owner = Some(false);
    let out = e.evaluate(&ctx, &universe());
    for t in ["cron", "gateway", "sessions", "nodes", "computer"] {
        assert_eq!(out.removed_by(t).unwrap().layer, "owner-only", "{t}");
    }
    assert!(out.allows("exec"));
}

#[test]
fn subagent_defaults_and_lifting() {
    let e = engine(ToolsConfig::default());
    let mut ctx = RunContext::new("main");
    ctx.subagent = Some(SubagentKind::Leaf);
    let out = e.evaluate(&ctx, &ToolUniverse::core());
    for t in SUBAGENT_DEFAULT_DENY.iter().chain(LEAF_SUBAGENT_EXTRA_DENY) {
        assert!(!out.allows(t), "{t}");
    }
    ctx.subagent = Some(SubagentKind::Orchestrator);
    let out = e.evaluate(&ctx, &ToolUniverse::core());
    assert!(out.allows("sessions_spawn"));
    assert_eq!(
        out.removed_by("cron").unwrap().rule,
        "default sub-agent deny cron"
    );

    let e = engine(ToolsConfig {
        subagents: Some(SubagentsToolsSection {
            tools: Some(ToolPolicyConfig {
                also_allow: Some(s(&["cron"])),
                deny: Some(s(&["exec"])),
                ..Default::default()
            }),
        }),
        ..Default::default()
    });
    let out = e.evaluate(&ctx, &ToolUniverse::core());
    assert!(out.allows("cron"));
    assert!(!out.allows("exec"));
    assert!(!out.allows("gateway"));
}

#[test]
fn a_leaf_subagent_never_gets_orchestration_tools_whatever_the_config_allows() {
    let lifting = ToolPolicyConfig {
        allow: Some(s(&["*"])),
        also_allow: Some(s(LEAF_SUBAGENT_FIXED_DENY)),
        ..Default::default()
    };
    let e = engine(ToolsConfig {
        subagents: Some(SubagentsToolsSection {
            tools: Some(lifting),
        }),
        ..Default::default()
    });
    let mut ctx = RunContext::new("main");
    ctx.subagent = Some(SubagentKind::Leaf);
    let out = e.evaluate(&ctx, &ToolUniverse::core());
    for t in LEAF_SUBAGENT_FIXED_DENY {
        assert!(!out.allows(t), "{t}");
        let removed = out.removed_by(t).unwrap();
        assert_eq!(removed.rule, format!("leaf sub-agent deny (fixed) {t}"));
        assert!(removed.config_key.contains("no key lifts"), "{removed:?}");
    }
    // The rest of the leaf's extra deny is lifted as configured.
    assert!(out.allows("sessions_list"));
    // An orchestrator keeps OpenClaw's rule: the explicit allow lifts them.
    ctx.subagent = Some(SubagentKind::Orchestrator);
    let out = e.evaluate(&ctx, &ToolUniverse::core());
    for t in LEAF_SUBAGENT_FIXED_DENY {
        assert!(out.allows(t), "{t}");
    }
}

#[test]
fn inherited_is_an_exact_cap_and_empty_means_nothing() {
    let e = engine(ToolsConfig::default());
    let mut ctx = RunContext::new("main");
    ctx.inherited = Some(s(&["read", "EXEC"]));
    assert_eq!(
        e.evaluate(&ctx, &ToolUniverse::core()).tools,
        s(&["read", "exec"])
    );
    ctx.inherited = Some(vec![]);
    assert!(e.evaluate(&ctx, &ToolUniverse::core()).tools.is_empty());
}

#[test]
fn message_provider_and_trigger_prefilters() {
    let e = engine(ToolsConfig::default());
    let mut ctx = RunContext::new("main");
    ctx.message_provider = Some("node".into());
    let out = e.evaluate(&ctx, &ToolUniverse::core());
    assert_eq!(
        out.tools,
        s(&["web_search", "web_fetch", "canvas", "image", "tts"])
    );
    ctx.message_provider = Some("voice".into());
    assert!(!e.evaluate(&ctx, &ToolUniverse::core()).allows("tts"));
    let mut ctx = RunContext::new("main");
    ctx.trigger = Trigger::Memory;
    assert_eq!(
        e.evaluate(&ctx, &ToolUniverse::core()).tools,
        s(&["read", "write"])
    );
}

#[test]
fn model_provider_drops_names_it_would_reject() {
    let e = engine(ToolsConfig::default());
    let u = ToolUniverse::core().with(ToolEntry::mcp("srv__a.b", "srv"));
    let mut ctx = RunContext::new("main");
    ctx.model_provider = Some("openai".into());
    let out = e.evaluate(&ctx, &u);
    assert_eq!(out.removed_by("srv__a.b").unwrap().layer, "model-provider");
    ctx.model_provider = Some("google".into());
    assert!(e.evaluate(&ctx, &u).allows("srv__a.b"));
}

#[test]
fn check_normalises_and_treats_unknown_names_as_plugins() {
    let e = engine(ToolsConfig {
        allow: Some(s(&["group:plugins", "read"])),
        ..Default::default()
    });
    let ctx = RunContext::new("main");
    let c = e.check(&ctx, &ToolUniverse::core(), " BASH ");
    assert_eq!(c.tool, "exec");
    assert!(!c.allowed);
    assert_eq!(
        c.removed_by.unwrap().rule,
        "not in allow list [group:plugins, read]"
    );
    let c = e.check(&ctx, &ToolUniverse::core(), "my_plugin_tool");
    assert!(c.allowed);
    assert_eq!(c.removed_by, None);
}

#[test]
fn warnings_for_unknown_allow_entries() {
    let e = engine(ToolsConfig {
        allow: Some(s(&["read", "reaad", "zz_*"])),
        ..Default::default()
    });
    let out = e.explain(&RunContext::new("main"), &ToolUniverse::core());
    assert_eq!(
        out.warnings,
        vec!["tools: tools.allow allowlist contains unknown entries (reaad, zz_*). These entries won't match any tool unless the plugin is enabled.".to_string()]
    );
    let e = engine(ToolsConfig {
        allow: Some(s(&["honcho"])),
        ..Default::default()
    });
    let out = e.explain(&RunContext::new("main"), &universe());
    assert_eq!(
        out.warnings,
        vec!["tools: tools.allow allowlist contains only plugin entries; core tools will not be available.".to_string()]
    );
}

#[test]
fn unavailable_core_tools_are_reported_separately() {
    let e = engine(ToolsConfig {
        allow: Some(s(&["read", "browser"])),
        ..Default::default()
    });
    let u = ToolUniverse::new().with(ToolEntry::core("read"));
    let out = e.explain(&RunContext::new("main"), &u);
    assert_eq!(
        out.warnings,
        vec!["tools: tools.allow allowlist contains unknown entries (browser). These entries are shipped core tools but unavailable in the current runtime/provider/model/config.".to_string()]
    );
}

fn plugins_engine(plugins: &str) -> PolicyEngine {
    PolicyEngine::new(&PolicyConfig {
        plugins: Some(serde_json::from_str(plugins).unwrap()),
        ..Default::default()
    })
    .unwrap()
}

fn plugin_universe() -> ToolUniverse {
    universe()
        .with(ToolEntry::plugin("crm_lookup", "crm"))
        .with(ToolEntry::plugin("crm_delete", "crm"))
}

#[test]
fn plugins_switches_remove_only_the_named_plugins_tools_and_say_which_key() {
    let ctx = RunContext::new("main");
    // Disabled: every plugin tool (MCP included), no core tool.
    let out = plugins_engine(r#"{"enabled": false}"#).explain(&ctx, &plugin_universe());
    for t in ["crm_lookup", "honcho_recall", "fs__read_file"] {
        let r = out.removed_by(t).unwrap();
        assert_eq!(
            (r.layer.as_str(), r.config_key.as_str()),
            ("plugins", "plugins.enabled")
        );
    }
    assert!(out.allows("read") && out.allows("exec"));

    // Deny by id.
    let out = plugins_engine(r#"{"deny": ["CRM"]}"#).evaluate(&ctx, &plugin_universe());
    assert!(!out.allows("crm_lookup") && !out.allows("crm_delete"));
    assert!(out.allows("honcho_recall") && out.allows("fs__read_file"));
    assert_eq!(
        out.removed_by("crm_delete").unwrap().config_key,
        "plugins.deny"
    );

    // Allow by id: others (MCP's bundle-mcp too) go.
    let out = plugins_engine(r#"{"allow": ["crm"]}"#).evaluate(&ctx, &plugin_universe());
    assert!(out.allows("crm_lookup") && out.allows("read"));
    assert!(!out.allows("honcho_recall") && !out.allows("fs__read_file"));
    let r = out.removed_by("honcho_recall").unwrap();
    assert_eq!(r.config_key, "plugins.allow");
    assert_eq!(r.rule, "plugin honcho not in plugins.allow [crm]");

    // An entry disabled, and an entry's own policy: that plugin only.
    let out = plugins_engine(
        r#"{"entries": {"honcho": {"enabled": false}, "crm": {"tools": {"deny": ["crm_delete", "read"]}}}}"#,
    )
    .evaluate(&ctx, &plugin_universe());
    assert_eq!(
        out.removed_by("honcho_recall").unwrap().config_key,
        "plugins.entries.honcho.enabled"
    );
    let r = out.removed_by("crm_delete").unwrap();
    assert_eq!(r.config_key, "plugins.entries.crm.tools.deny");
    assert!(out.allows("crm_lookup"));
    assert!(
        out.allows("read"),
        "a plugin's policy never reaches core tools"
    );

    let out = plugins_engine(r#"{"entries": {"crm": {"tools": {"allow": ["crm_lookup"]}}}}"#)
        .evaluate(&ctx, &plugin_universe());
    assert!(out.allows("crm_lookup") && !out.allows("crm_delete") && out.allows("honcho_recall"));
    assert_eq!(
        out.removed_by("crm_delete").unwrap().config_key,
        "plugins.entries.crm.tools.allow"
    );
}

#[test]
fn the_plugins_layer_is_reported_only_when_configured() {
    let ctx = RunContext::new("main");
    let out = plugins_engine("{}").evaluate(&ctx, &plugin_universe());
    assert!(out.layers.iter().any(|l| l.id == crate::PLUGINS_LAYER_ID));
    assert_eq!(out.tools.len(), plugin_universe().tools().len());
    let out = engine(ToolsConfig::default()).evaluate(&ctx, &plugin_universe());
    assert!(!out.layers.iter().any(|l| l.id == crate::PLUGINS_LAYER_ID));
}
