#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

use pretty_assertions::assert_eq;
use serde_json::json;
use talon_tool_policy::config::ToolsConfig;

use super::*;
use crate::resolved::SandboxInputs;
use crate::sandbox_config::SandboxConfig;

fn resolved(mode: &str) -> ResolvedSandboxConfig {
    let defaults: SandboxConfig = serde_json::from_value(json!({ "mode": mode })).unwrap();
    let tools = ToolsConfig::default();
    ResolvedSandboxConfig::resolve(&SandboxInputs {
        agent_id: "main",
        defaults: Some(&defaults),
        agent: None,
        agent_key: None,
        state_dir: Path::new("/s"),
        home: None,
        tools: &tools,
        agent_tools: None,
    })
}

#[test]
fn redaction() {
    assert_eq!(redact_session_key(""), "(unknown)");
    assert_eq!(redact_session_key("   "), "(unknown)");
    assert_eq!(redact_session_key("agent:main:x"), "(redacted)");
    assert_eq!(
        redact_session_key("agent:main:telegram:group:42"),
        "agent:…oup:42"
    );
    assert_eq!(
        redact_session_key("ab\ncdefghijklmnop\tq"),
        "ab\\ncde…mnop\\tq"
    );
    // Multi-byte characters are never split.
    assert_eq!(redact_session_key("ééééééxxxxxxxüüüüüü"), "éééééé…üüüüüü");
}

#[test]
fn runtime_status_reasons() {
    let s = explain_runtime_status(&resolved("non-main"), "agent:main:discord:channel:1");
    assert!(s.sandboxed);
    assert_eq!(s.mode, "non-main");
    assert_eq!(s.main_session_key, "agent:main:main");
    assert!(
        s.reason.contains("not the agent's main session"),
        "{}",
        s.reason
    );
    assert!(
        s.reason.contains("agents.defaults.sandbox.mode"),
        "{}",
        s.reason
    );
    let s = explain_runtime_status(&resolved("non-main"), " main ");
    assert!(!s.sandboxed);
    assert_eq!(s.comparable_session_key, "agent:main:main");
    assert!(
        s.reason.contains("is the agent's main session"),
        "{}",
        s.reason
    );
    let s = explain_runtime_status(&resolved("off"), "x");
    assert!(!s.sandboxed && s.reason.contains("\"off\""));
    let s = explain_runtime_status(&resolved("all"), "main");
    assert!(s.sandboxed && s.reason.contains("\"all\""));
}

#[test]
fn blocked_by_deny_message_lines() {
    let msg = format_blocked_tool_message(
        &resolved("non-main"),
        "agent:main:telegram:group:42",
        "browser",
    )
    .unwrap();
    assert_eq!(
        msg.lines().collect::<Vec<_>>(),
        vec![
            "Tool \"browser\" blocked by sandbox tool policy (mode=non-main).",
            "Session: agent:…oup:42",
            "Reason: deny list",
            "Fix:",
            "- agents.defaults.sandbox.mode=off (disable sandbox)",
            "- Remove \"browser\" from tools.sandbox.tools.deny.",
            "- Use the agent main session instead of a non-main session.",
            "- See: talon sandbox explain --session 'agent:main:telegram:group:42'",
        ]
    );
}

#[test]
fn blocked_by_allow_message_lines_and_quoting() {
    let msg = format_blocked_tool_message(&resolved("all"), "it's:a:session", "web_fetch").unwrap();
    assert_eq!(
        msg.lines().collect::<Vec<_>>(),
        vec![
            "Tool \"web_fetch\" blocked by sandbox tool policy (mode=all).",
            "Session: it's:a…ession",
            "Reason: allow list",
            "Fix:",
            "- agents.defaults.sandbox.mode=off (disable sandbox)",
            "- Add \"web_fetch\" to tools.sandbox.tools.allow (or set it to [] to allow all).",
            "- See: talon sandbox explain --session 'it'\\''s:a:session'",
        ]
    );
    // A key with control characters points at the agent instead.
    let msg =
        format_blocked_tool_message(&resolved("all"), "evil\nkey-is-long", "web_fetch").unwrap();
    assert!(
        msg.ends_with("- See: talon sandbox explain --agent 'main'"),
        "{msg}"
    );
    assert!(msg.contains("Session: evil\\nk…s-long"), "{msg}");
}

#[test]
fn no_message_when_not_sandboxed_or_not_blocked() {
    assert_eq!(
        format_blocked_tool_message(&resolved("off"), "x", "browser"),
        None
    );
    assert_eq!(
        format_blocked_tool_message(&resolved("non-main"), "main", "browser"),
        None
    );
    assert_eq!(
        format_blocked_tool_message(&resolved("all"), "x", "exec"),
        None
    );
    assert_eq!(shell_single_quote("a'b"), "'a'\\''b'");
}
