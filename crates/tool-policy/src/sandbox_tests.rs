use pretty_assertions::assert_eq;

use super::*;
use crate::config::{SandboxToolsSection, ToolPolicyConfig};

fn tools_with(policy: ToolPolicyConfig) -> ToolsConfig {
    ToolsConfig {
        sandbox: Some(SandboxToolsSection {
            tools: Some(policy),
        }),
        ..ToolsConfig::default()
    }
}

fn s(v: &[&str]) -> Vec<String> {
    v.iter().map(|x| x.to_string()).collect()
}

#[test]
fn defaults() {
    let p = resolve_sandbox_tool_policy(&ToolsConfig::default(), None, "main");
    assert_eq!(p.allow, s(DEFAULT_SANDBOX_TOOL_ALLOW));
    assert_eq!(p.deny, s(DEFAULT_SANDBOX_TOOL_DENY));
    assert_eq!(p.deny_key, "tools.sandbox.tools.deny");
    assert_eq!(p.allow_source, ListSource::Default);
}

#[test]
fn explicit_empty_allow_stays_empty() {
    let p = resolve_sandbox_tool_policy(
        &tools_with(ToolPolicyConfig {
            allow: Some(vec![]),
            ..Default::default()
        }),
        None,
        "main",
    );
    assert!(p.allow.is_empty());
    // Defaults stay denied: an empty allow names nothing explicitly.
    assert_eq!(p.deny, s(DEFAULT_SANDBOX_TOOL_DENY));
    // And the compiled policy allows nothing (OpenClaw: everything).
    let compiled = p.compile();
    for tool in ["read", "exec", "web_fetch"] {
        assert_ne!(
            compiled.decide(&crate::universe::ToolEntry::core(tool)),
            crate::policy::Verdict::Allow,
            "{tool}"
        );
    }
}

#[test]
fn explicit_allow_lifts_default_deny() {
    let p = resolve_sandbox_tool_policy(
        &tools_with(ToolPolicyConfig {
            allow: Some(s(&["exec", "browser"])),
            ..Default::default()
        }),
        None,
        "main",
    );
    assert!(!p.deny.contains(&"browser".to_string()));
    assert!(p.deny.contains(&"cron".to_string()));
    // image is appended when neither allowed nor denied.
    assert_eq!(p.allow, s(&["exec", "browser", "image"]));

    let p = resolve_sandbox_tool_policy(
        &tools_with(ToolPolicyConfig {
            allow: Some(s(&["*"])),
            ..Default::default()
        }),
        None,
        "main",
    );
    assert!(p.deny.is_empty());

    let p = resolve_sandbox_tool_policy(
        &tools_with(ToolPolicyConfig {
            also_allow: Some(s(&["group:automation"])),
            ..Default::default()
        }),
        None,
        "main",
    );
    assert!(!p.deny.contains(&"cron".to_string()));
    assert!(!p.deny.contains(&"gateway".to_string()));
    assert!(p.allow.contains(&"group:automation".to_string()));
    assert!(p.allow.contains(&"exec".to_string()));
}

#[test]
fn configured_deny_replaces_defaults_and_agent_wins_wholesale() {
    let tools = tools_with(ToolPolicyConfig {
        deny: Some(s(&["exec"])),
        allow: Some(s(&["read"])),
        ..Default::default()
    });
    let agent = AgentToolsConfig {
        sandbox: Some(SandboxToolsSection {
            tools: Some(ToolPolicyConfig {
                allow: Some(s(&["write"])),
                ..Default::default()
            }),
        }),
        ..Default::default()
    };
    let p = resolve_sandbox_tool_policy(&tools, Some(&agent), "ops");
    assert_eq!(p.allow, s(&["write", "image"]));
    assert_eq!(p.deny, s(&["exec"]));
    assert_eq!(p.allow_key, "agents.ops.tools.sandbox.tools.allow");
    assert_eq!(p.deny_key, "tools.sandbox.tools.deny");
}

#[test]
fn sandbox_classifier_has_no_write_rule() {
    let tools = tools_with(ToolPolicyConfig {
        allow: Some(s(&["write"])),
        ..Default::default()
    });
    let compiled = resolve_sandbox_tool_policy(&tools, None, "main").compile();
    assert_eq!(
        compiled.decide(&ToolEntry::core("apply_patch")),
        crate::policy::Verdict::NotAllowed
    );
}

#[test]
fn classify_deny_first_then_allow() {
    let tools = ToolsConfig::default();
    let policy = resolve_sandbox_tool_policy(&tools, None, "main");
    let browser = policy.classify("browser");
    assert!(browser.blocked_by_deny && !browser.blocked_by_allow);
    let web = policy.classify("web_fetch");
    assert!(!web.blocked_by_deny && web.blocked_by_allow);
    assert!(!policy.classify("EXEC").blocked());
}
