#![allow(clippy::unwrap_used)]

use axum::http::HeaderMap;
use serde_json::json;

use super::*;

fn posted(v: serde_json::Value) -> Posted {
    classify(&Bytes::from(v.to_string()))
}

#[test]
fn only_plain_tool_calls_take_the_direct_path() {
    assert_eq!(
        posted(json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
            "params": {"name": "echo", "arguments": {"a": 1}}})),
        Posted::Call {
            id: json!(7),
            name: "echo".into(),
            arguments: json!({"a": 1})
        }
    );
    assert_eq!(
        posted(
            json!({"jsonrpc": "2.0", "id": "x", "method": "tools/call", "params": {"name": "echo"}})
        ),
        Posted::Call {
            id: json!("x"),
            name: "echo".into(),
            arguments: json!(null)
        }
    );
    for other in [
        // a progress token or task augmentation needs rmcp's stream
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "echo", "_meta": {"progressToken": 3}}}),
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "echo", "task": {}}}),
        // malformed: left to rmcp's own errors
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": 5}}),
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "echo", "arguments": [1]}}),
        json!({"jsonrpc": "2.0", "id": null, "method": "tools/call", "params": {"name": "echo"}}),
        json!({"jsonrpc": "1.0", "id": 1, "method": "tools/call", "params": {"name": "echo"}}),
        json!({"jsonrpc": "2.0", "method": "tools/call", "params": {"name": "echo"}}),
        // batches and other methods
        json!([{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "echo"}}]),
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}),
    ] {
        assert_eq!(posted(other.clone()), Posted::Other, "{other}");
    }
    assert_eq!(
        posted(
            json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
            "params": {"requestId": 7, "reason": "x"}})
        ),
        Posted::Cancelled(json!(7))
    );
}

#[test]
fn the_body_must_be_declared_json() {
    let mut h = HeaderMap::new();
    assert!(!sends_json(&h));
    for (value, ok) in [
        ("application/json", true),
        ("Application/JSON; charset=utf-8", true),
        ("text/plain", false),
        ("application/json-seq", false),
        ("application/x-www-form-urlencoded", false),
    ] {
        h.insert(header::CONTENT_TYPE, value.parse().unwrap());
        assert_eq!(sends_json(&h), ok, "{value}");
    }
    // Two Content-Type headers: ambiguous, so rmcp decides.
    h.insert(header::CONTENT_TYPE, "application/json".parse().unwrap());
    h.append(header::CONTENT_TYPE, "text/plain".parse().unwrap());
    assert!(!sends_json(&h));
}

#[test]
fn a_client_must_accept_json() {
    let mut h = HeaderMap::new();
    assert!(!accepts_json(&h));
    h.insert(header::ACCEPT, "text/event-stream".parse().unwrap());
    assert!(!accepts_json(&h));
    h.insert(
        header::ACCEPT,
        "application/json;q=0.9, text/event-stream".parse().unwrap(),
    );
    assert!(accepts_json(&h));
}

#[test]
fn cancelling_reaches_only_the_named_call_of_that_session() {
    let inflight = InFlight::default();
    let a = CancellationToken::new();
    let b = CancellationToken::new();
    let _ra = inflight.register("s1", &json!(1), a.clone());
    let rb = inflight.register("s2", &json!(1), b.clone());
    inflight.cancel("s1", &json!("1"));
    assert!(!a.is_cancelled(), "a string id is not the number id");
    inflight.cancel("s1", &json!(1));
    assert!(a.is_cancelled() && !b.is_cancelled());
    drop(rb);
    inflight.cancel("s2", &json!(1));
    assert!(!b.is_cancelled(), "an ended call is no longer registered");
}

#[test]
fn only_requests_rmcp_would_admit_take_the_direct_path() {
    let allowed = vec![
        "localhost".to_owned(),
        "127.0.0.1".to_owned(),
        "::1".to_owned(),
    ];
    let with = |pairs: &[(&str, &str)]| {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.insert(
                axum::http::HeaderName::from_bytes(k.as_bytes()).unwrap(),
                v.parse().unwrap(),
            );
        }
        h
    };
    assert!(transport_checks_pass(
        &with(&[("host", "127.0.0.1:8080")]),
        &allowed
    ));
    assert!(transport_checks_pass(
        &with(&[("host", "LOCALHOST")]),
        &allowed
    ));
    assert!(transport_checks_pass(
        &with(&[("host", "[::1]:9")]),
        &allowed
    ));
    assert!(!transport_checks_pass(
        &with(&[("host", "evil.example")]),
        &allowed
    ));
    assert!(!transport_checks_pass(&with(&[]), &allowed));
    assert!(!transport_checks_pass(
        &with(&[("host", "127.0.0.1"), ("origin", "http://127.0.0.1")]),
        &allowed
    ));
    // An empty list turns the host check off, as it does for rmcp; an
    // Origin still sends the request to rmcp.
    assert!(transport_checks_pass(
        &with(&[("host", "evil.example")]),
        &[]
    ));
    assert!(!transport_checks_pass(&with(&[("origin", "null")]), &[]));
}
