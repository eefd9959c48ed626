use std::collections::HashSet;
use std::time::Duration;

use pretty_assertions::assert_eq;
use serde_json::{Map, Value, json};

use super::*;

fn params(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        other => panic!("not an object: {other}"),
    }
}

fn spec() -> ApprovalSpec {
    ApprovalSpec {
        title: "Run command".into(),
        description: "Allow this exec tool call?".into(),
        ..ApprovalSpec::default()
    }
}

#[test]
fn new_fills_defaults() {
    let p = params(json!({"command": "ls", "cwd": "/tmp"}));
    let request = ApprovalRequest::new(
        &spec(),
        "call-1",
        "exec",
        &p,
        "agent-a",
        "session-s",
        Duration::from_secs(120),
    );
    let expected = ApprovalRequest {
        id: request.id.clone(),
        call_id: "call-1".into(),
        params_hash: hash_json(&json!({"cwd": "/tmp", "command": "ls"})),
        tool_name: "exec".into(),
        plugin_id: "unknown".into(),
        title: "Run command".into(),
        description: "Allow this exec tool call?".into(),
        severity: ApprovalSeverity::Info,
        scope: ApprovalScope::Session,
        allowed_decisions: vec![
            ApprovalDecision::AllowOnce,
            ApprovalDecision::AllowAlways,
            ApprovalDecision::Deny,
        ],
        agent_id: "agent-a".into(),
        session_key: "session-s".into(),
        timeout_ms: 120_000,
        created_at_ms: request.created_at_ms,
    };
    assert_eq!(request, expected);
    assert!(request.created_at_ms > 1_600_000_000_000);
    assert_eq!(request.timeout(), Duration::from_secs(120));
}

#[test]
fn new_takes_the_spec_fields() {
    let spec = ApprovalSpec {
        scope: Some(ApprovalScope::Agent),
        severity: Some(ApprovalSeverity::Critical),
        timeout_ms: Some(5_000),
        allowed_decisions: Some(vec![
            ApprovalDecision::Deny,
            ApprovalDecision::Timeout,
            ApprovalDecision::AllowOnce,
            ApprovalDecision::Deny,
            ApprovalDecision::Cancelled,
        ]),
        plugin_id: Some("guard".into()),
        ..spec()
    };
    let request = ApprovalRequest::new(
        &spec,
        "c",
        "exec",
        &Map::new(),
        "a",
        "s",
        Duration::from_secs(1),
    );
    assert_eq!(request.scope, ApprovalScope::Agent);
    assert_eq!(request.severity, ApprovalSeverity::Critical);
    assert_eq!(request.timeout_ms, 5_000);
    assert_eq!(request.plugin_id, "guard");
    assert_eq!(
        request.allowed_decisions,
        vec![ApprovalDecision::Deny, ApprovalDecision::AllowOnce]
    );
}

#[test]
fn broker_only_or_empty_allowed_decisions_fall_back_to_all_user_decisions() {
    for allowed in [vec![], vec![ApprovalDecision::Timeout]] {
        let spec = ApprovalSpec {
            allowed_decisions: Some(allowed),
            plugin_id: Some(String::new()),
            ..spec()
        };
        let request = ApprovalRequest::new(&spec, "c", "t", &Map::new(), "a", "s", Duration::ZERO);
        assert_eq!(
            request.allowed_decisions,
            ApprovalDecision::USER_DECISIONS.to_vec()
        );
        assert_eq!(request.plugin_id, "unknown");
    }
}

#[test]
fn params_hash_ignores_key_order_and_tracks_values() {
    let make = |v: Value| {
        ApprovalRequest::new(&spec(), "c", "t", &params(v), "a", "s", Duration::ZERO).params_hash
    };
    let a = make(json!({"a": 1, "b": {"x": [1, 2], "y": null}}));
    let b = make(json!({"b": {"y": null, "x": [1, 2]}, "a": 1}));
    let c = make(json!({"a": 2, "b": {"x": [1, 2], "y": null}}));
    assert_eq!(a, b);
    assert_ne!(a, c);
    assert_eq!(a.len(), 64);
}

#[test]
fn ids_are_unique_128_bit_hex() {
    let ids: HashSet<String> = (0..2_000).map(|_| new_approval_id()).collect();
    assert_eq!(ids.len(), 2_000);
    for id in &ids {
        assert_eq!(id.len(), 32);
        assert!(
            id.bytes()
                .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase())
        );
    }
}

#[test]
fn grant_key_follows_the_scope() {
    let mut request = ApprovalRequest::new(
        &spec(),
        "c",
        "exec",
        &Map::new(),
        "agent-a",
        "sess",
        Duration::ZERO,
    );
    request.plugin_id = "guard".into();
    let key = |scope, value: &str| GrantKey {
        scope,
        scope_value: value.into(),
        plugin_id: "guard".into(),
        tool_name: "exec".into(),
    };
    assert_eq!(request.grant_key(), key(ApprovalScope::Session, "sess"));
    request.scope = ApprovalScope::Agent;
    assert_eq!(request.grant_key(), key(ApprovalScope::Agent, "agent-a"));
    request.scope = ApprovalScope::Global;
    assert_eq!(request.grant_key(), key(ApprovalScope::Global, ""));
}

#[test]
fn keys_without_a_scope_value_are_not_rememberable() {
    let key = |scope, value: &str| GrantKey {
        scope,
        scope_value: value.into(),
        plugin_id: "p".into(),
        tool_name: "t".into(),
    };
    assert!(!key(ApprovalScope::Session, "").is_rememberable());
    assert!(!key(ApprovalScope::Agent, "").is_rememberable());
    assert!(key(ApprovalScope::Session, "s").is_rememberable());
    assert!(key(ApprovalScope::Global, "").is_rememberable());
}

#[test]
fn serialises_in_camel_case_and_round_trips() {
    let request = ApprovalRequest::new(
        &spec(),
        "call-1",
        "exec",
        &params(json!({"command": "ls"})),
        "a",
        "s",
        Duration::from_millis(1_500),
    );
    let value = serde_json::to_value(&request).unwrap();
    let object = value.as_object().unwrap();
    for key in [
        "id",
        "callId",
        "paramsHash",
        "toolName",
        "pluginId",
        "allowedDecisions",
        "agentId",
        "sessionKey",
        "timeoutMs",
        "createdAtMs",
    ] {
        assert!(object.contains_key(key), "missing {key}");
    }
    assert_eq!(
        value["allowedDecisions"],
        json!(["allow-once", "allow-always", "deny"])
    );
    assert_eq!(value["scope"], json!("session"));
    let back: ApprovalRequest = serde_json::from_value(value).unwrap();
    assert_eq!(back, request);
    assert_eq!(
        request.binding(),
        ApprovalBinding {
            call_id: "call-1".into(),
            params_hash: request.params_hash.clone(),
        }
    );
}
