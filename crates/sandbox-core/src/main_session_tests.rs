use pretty_assertions::assert_eq;

use super::*;

#[test]
fn the_main_key_is_normalised() {
    assert_eq!(normalize_main_key(None), "main");
    assert_eq!(normalize_main_key(Some("  ")), "main");
    assert_eq!(normalize_main_key(Some(" Work ")), "work");
    assert_eq!(MainSession::default(), MainSession::new(None, false));
}

#[test]
fn aliases_of_the_default_main_session() {
    let m = MainSession::default();
    assert_eq!(m.main_session_key(" Main "), "agent:main:main");
    for key in [
        "",
        "  ",
        "main",
        "MAIN",
        " main ",
        "agent:main:main",
        "Agent:Main:Main",
    ] {
        assert!(m.is_main_session("main", key), "{key:?} is main");
        assert_eq!(m.comparable_session_key("main", key), "agent:main:main");
    }
    for key in [
        "agent:main:telegram:group:-100123",
        "agent:main:discord:channel:42",
        "agent:main:whatsapp:dm:+15550100",
        "agent:main:cron:job-1",
        "agent:main:subagent:abc",
        "agent:ops:main",
        "agent:main:work",
        "mainly",
        "global",
    ] {
        assert!(!m.is_main_session("main", key), "{key:?} is not main");
    }
    // Another agent's main session is its own.
    assert!(m.is_main_session("ops", "agent:ops:main"));
    assert!(m.is_main_session("ops", "main"));
    assert!(!m.is_main_session("ops", "agent:main:main"));
}

#[test]
fn a_custom_main_key() {
    let m = MainSession::new(Some("Work"), false);
    assert_eq!(m.main_session_key("main"), "agent:main:work");
    for key in [
        "",
        "main",
        "work",
        " WORK ",
        "agent:main:main",
        "agent:main:work",
    ] {
        assert!(m.is_main_session("main", key), "{key:?} is main");
    }
    for key in ["agent:main:telegram:group:1", "agent:ops:work", "global"] {
        assert!(!m.is_main_session("main", key), "{key:?} is not main");
    }
}

#[test]
fn the_global_scope() {
    let m = MainSession::new(None, true);
    assert_eq!(m.main_session_key("ops"), "global");
    for key in ["", "main", "global", " GLOBAL ", "agent:main:main"] {
        assert!(m.is_main_session("main", key), "{key:?} is main");
    }
    for key in [
        "agent:main:telegram:group:1",
        "agent:ops:main",
        "agent:main:work",
    ] {
        assert!(!m.is_main_session("main", key), "{key:?} is not main");
    }
}
