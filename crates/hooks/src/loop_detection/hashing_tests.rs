use pretty_assertions::assert_eq;
use serde_json::json;

use super::*;
use crate::loop_detection::test_support::params;
use talon_canonical_json::sha256_hex;

#[test]
fn args_hash_is_tool_name_and_digest_of_canonical_params() {
    let a = params(json!({ "command": "ls", "opts": { "b": 1, "a": 2 } }));
    let b = params(json!({ "opts": { "a": 2, "b": 1 }, "command": "ls" }));
    assert_eq!(args_hash("exec", &a), args_hash("exec", &b));
    assert_eq!(
        args_hash("exec", &a),
        format!(
            "exec:{}",
            sha256_hex(r#"{"command":"ls","opts":{"a":2,"b":1}}"#)
        )
    );
    assert_ne!(args_hash("exec", &a), args_hash("read", &a));
    let c = params(json!({ "command": "ls -la" }));
    assert_ne!(args_hash("exec", &a), args_hash("exec", &c));
}

#[test]
fn run_ids_are_trimmed_and_blank_means_none() {
    assert_eq!(normalize_run_id(Some(" run-1 ")), Some("run-1"));
    assert_eq!(normalize_run_id(Some("   ")), None);
    assert_eq!(normalize_run_id(None), None);
}

#[test]
fn known_poll_calls() {
    assert!(is_known_poll_call("command_status", None));
    assert!(is_known_poll_call("process", Some("poll")));
    assert!(is_known_poll_call("process", Some("log")));
    assert!(!is_known_poll_call("process", Some("kill")));
    assert!(!is_known_poll_call("process", None));
    assert!(!is_known_poll_call("exec", Some("poll")));
    let p = params(json!({ "action": "poll", "sessionId": "s" }));
    assert_eq!(params_action(&p), Some("poll"));
    assert_eq!(params_action(&params(json!({ "action": 3 }))), None);
}

#[test]
fn extracts_unknown_tool_names() {
    let cases = [
        ("unknown tool: web_fetch", Some("web_fetch")),
        ("Unknown tool \"Browser.Open\"", Some("browser.open")),
        (
            "Error: unknown tool:   'my-tool' requested",
            Some("my-tool"),
        ),
        ("Tool web_search not found", Some("web_search")),
        ("tool 'canvas' not found in registry", Some("canvas")),
        ("The tool \"nodes\" is not available here", Some("nodes")),
        ("tool   cron    is not available", Some("cron")),
        ("unknown tools: x", None),
        ("Tool not found", None),
        ("tool foo was not found", None),
        ("permission denied", None),
        ("   ", None),
        ("", None),
    ];
    for (message, expected) in cases {
        assert_eq!(
            extract_unknown_tool_name(message).as_deref(),
            expected,
            "{message}"
        );
    }
}

#[test]
fn a_later_occurrence_can_match_when_an_earlier_one_does_not() {
    assert_eq!(
        extract_unknown_tool_name("tool, then: tool gateway not found").as_deref(),
        Some("gateway")
    );
    assert_eq!(
        extract_unknown_tool_name("unknown toolbox; unknown tool: foo").as_deref(),
        Some("foo")
    );
}
