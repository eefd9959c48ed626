use pretty_assertions::assert_eq;
use talon_sandbox_core::MainSession;

use super::*;

#[test]
fn main_aliases_are_main_under_the_configured_key() {
    let main = MainSession::new(Some("work"), false);
    for key in ["main", "work", "agent:ops:work", "agent:ops:main", " MAIN "] {
        assert_eq!(
            SessionKind::of(&main, "ops", key),
            SessionKind::Main,
            "{key}"
        );
    }
    // Another agent's main key is not this agent's main session.
    assert_eq!(
        SessionKind::of(&main, "ops", "agent:dev:work"),
        SessionKind::Other
    );
}

#[test]
fn global_scope_makes_global_the_main_session() {
    let main = MainSession::new(None, true);
    assert_eq!(SessionKind::of(&main, "ops", "global"), SessionKind::Main);
    assert_eq!(
        SessionKind::of(&main, "ops", "agent:ops:main"),
        SessionKind::Main
    );
}

#[test]
fn key_shapes_classify_as_openclaw_does() {
    let main = MainSession::default();
    let cases = [
        ("agent:ops:cron:job-1", SessionKind::Cron),
        ("cron:job-1:run:7", SessionKind::Cron),
        ("agent:ops:hook:abc", SessionKind::Hook),
        ("agent:ops:node-7", SessionKind::Node),
        ("node:7", SessionKind::Node),
        ("agent:ops:telegram:group:42", SessionKind::Group),
        ("agent:ops:discord:channel:9", SessionKind::Group),
        ("agent:ops:subagent:1f2e", SessionKind::Other),
        ("agent:ops:gw:xyz", SessionKind::Other),
        ("agent:ops:telegram:dm:5", SessionKind::Other),
    ];
    for (key, want) in cases {
        assert_eq!(SessionKind::of(&main, "ops", key), want, "{key}");
    }
}

#[test]
fn kinds_parse_by_name_and_unknown_names_are_none() {
    for k in SessionKind::ALL {
        assert_eq!(SessionKind::parse(&k.as_str().to_uppercase()), Some(k));
    }
    assert_eq!(SessionKind::parse("subagent"), None);
    assert_eq!(SessionKind::parse(""), None);
}

#[test]
fn agent_keys_split_and_display_without_their_prefix() {
    assert_eq!(split_agent_key("agent:ops:main"), Some(("ops", "main")));
    assert_eq!(
        split_agent_key("agent:ops:telegram:group:1"),
        Some(("ops", "telegram:group:1"))
    );
    assert_eq!(split_agent_key("agent::main"), None);
    assert_eq!(split_agent_key("agent:ops:"), None);
    assert_eq!(split_agent_key("main"), None);
    assert_eq!(display_key("agent:ops:cron:j"), "cron:j");
    assert_eq!(display_key("global"), "global");
}

#[test]
fn channels_come_from_the_kind_the_params_or_the_key() {
    assert_eq!(
        channel_of(SessionKind::Cron, "agent:a:cron:j", Some("x")),
        "internal"
    );
    assert_eq!(
        channel_of(SessionKind::Group, "agent:a:telegram:group:1", None),
        "telegram"
    );
    assert_eq!(
        channel_of(SessionKind::Other, "agent:a:gw:1", Some(" Slack ")),
        "slack"
    );
    assert_eq!(
        channel_of(SessionKind::Main, "agent:a:main", None),
        "unknown"
    );
}

#[test]
fn group_conversations_are_read_from_the_key() {
    use crate::group_conversation;
    let g = |k: &str| group_conversation(k);
    assert_eq!(
        g("agent:main:telegram:group:-100"),
        Some(("telegram".into(), "-100".into()))
    );
    assert_eq!(
        g("Agent:Main:Slack:Channel:C01ABC"),
        Some(("slack".into(), "C01ABC".into()))
    );
    assert_eq!(
        g("agent:main:subagent:telegram:group:-100:topic:5"),
        Some(("telegram".into(), "-100:topic:5".into()))
    );
    assert_eq!(g("telegram:group:7"), Some(("telegram".into(), "7".into())));
    for other in [
        "agent:main:main",
        "agent:main:group:7",
        "agent:main:gw:abc",
        "agent:main:telegram:dm:42",
        "agent:main:telegram:group:",
        "agent:main:telegram:group: ",
    ] {
        assert_eq!(g(other), None, "{other}");
    }
}
