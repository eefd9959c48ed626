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
