use pretty_assertions::assert_eq;
use serde_json::json;

use super::*;

#[test]
fn events_are_tagged_camel_case() {
    let resolved = ApprovalEvent::Resolved {
        id: "a1".into(),
        call_id: "c1".into(),
        decision: ApprovalDecision::AllowAlways,
    };
    assert_eq!(
        serde_json::to_value(&resolved).unwrap(),
        json!({"type": "resolved", "id": "a1", "callId": "c1", "decision": "allow-always"})
    );
    assert_eq!(resolved.method(), "approval.resolved");
    assert_eq!(resolved.approval_id(), "a1");
}

#[test]
fn requested_event_flattens_the_request() {
    let request = ApprovalRequest {
        id: "a2".into(),
        call_id: "c2".into(),
        params_hash: "h".into(),
        params_preview: r#"{"command":"ls"}"#.into(),
        tool_name: "exec".into(),
        plugin_id: "guard".into(),
        title: "t".into(),
        description: "d".into(),
        severity: crate::approval::ApprovalSeverity::Warning,
        scope: crate::approval::ApprovalScope::Agent,
        allowed_decisions: vec![ApprovalDecision::Deny],
        agent_id: "ag".into(),
        session_key: "sk".into(),
        timeout_ms: 10,
        created_at_ms: 20,
        command: None,
        env: None,
        command_display: None,
        env_display: None,
    };
    let event = ApprovalEvent::Requested(request);
    let value = serde_json::to_value(&event).unwrap();
    assert_eq!(
        value,
        json!({
            "type": "requested",
            "id": "a2",
            "callId": "c2",
            "paramsHash": "h",
            "paramsPreview": "{\"command\":\"ls\"}",
            "toolName": "exec",
            "pluginId": "guard",
            "title": "t",
            "description": "d",
            "severity": "warning",
            "scope": "agent",
            "allowedDecisions": ["deny"],
            "agentId": "ag",
            "sessionKey": "sk",
            "timeoutMs": 10,
            "createdAtMs": 20
        })
    );
    assert_eq!(event.method(), "approval.requested");
    let back: ApprovalEvent = serde_json::from_value(value).unwrap();
    assert_eq!(back, event);
}

#[test]
fn outcome_names() {
    let all = [
        (ResolveOutcome::Applied, "applied"),
        (ResolveOutcome::Unknown, "unknown"),
        (ResolveOutcome::AlreadyResolved, "already-resolved"),
        (ResolveOutcome::Stale, "stale"),
        (ResolveOutcome::NotAllowed, "not-allowed"),
        (ResolveOutcome::Unavailable, "unavailable"),
    ];
    for (outcome, name) in all {
        assert_eq!(outcome.as_str(), name);
        assert_eq!(serde_json::to_value(outcome).unwrap(), json!(name));
    }
}

#[test]
fn resolution_allows_only_allow_decisions() {
    assert!(ApprovalResolution::decided(ApprovalDecision::AllowOnce).allows());
    assert!(ApprovalResolution::decided(ApprovalDecision::AllowAlways).allows());
    for denied in [
        ApprovalDecision::Deny,
        ApprovalDecision::Timeout,
        ApprovalDecision::Cancelled,
    ] {
        assert!(!ApprovalResolution::decided(denied).allows());
    }
}
