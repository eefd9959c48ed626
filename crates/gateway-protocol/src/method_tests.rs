#![allow(clippy::unwrap_used, clippy::expect_used)]

use pretty_assertions::assert_eq;
use serde_json::json;

use super::*;
use crate::frame::{INVALID_PARAMS, METHOD_NOT_FOUND};

#[test]
fn every_method_has_one_name_and_a_scope() {
    assert_eq!(MethodName::ALL.len(), 36);
    let mut names: Vec<&str> = MethodName::ALL.iter().map(|m| m.as_str()).collect();
    names.sort_unstable();
    let before = names.len();
    names.dedup();
    assert_eq!(before, names.len(), "a wire name is declared twice");
    for m in MethodName::ALL {
        assert_eq!(MethodName::from_name(m.as_str()), Some(*m));
        assert_eq!(required_scope(m.as_str()), Some(m.scope()));
        assert!(!m.doc().is_empty(), "{m} has no doc");
    }
}

#[test]
fn least_privilege_rules() {
    // Reading never needs more than read-only: every listing, status and
    // lookup is read-only.
    for m in MethodName::ALL {
        let verb = m.as_str().rsplit('.').next().unwrap_or_default();
        let reads = matches!(
            verb,
            "health"
                | "get"
                | "lookup"
                | "list"
                | "status"
                | "runs"
                | "prompt"
                | "explain"
                | "audit"
        );
        if reads {
            assert_eq!(m.scope(), Scope::ReadOnly, "{m} only reads");
        } else {
            assert!(m.scope() > Scope::ReadOnly, "{m} changes something");
        }
    }
    // Side effects on the caller's own sessions need runner; administering
    // needs operator; no method needs owner as such.
    assert!(
        MethodName::ALL.iter().all(|m| m.scope() != Scope::Owner),
        "owner is a capability, not a method level"
    );
    let cases = [
        ("health", Scope::ReadOnly),
        ("config.get", Scope::ReadOnly),
        ("tools.list", Scope::ReadOnly),
        ("tools.invoke", Scope::Runner),
        ("sessions.create", Scope::Runner),
        ("sessions.close", Scope::Runner),
        ("approvals.list", Scope::ReadOnly),
        ("approvals.resolve", Scope::Operator),
        ("cron.list", Scope::ReadOnly),
        ("cron.add", Scope::Operator),
        ("cron.update", Scope::Operator),
        ("cron.remove", Scope::Operator),
        ("cron.run", Scope::Operator),
        ("cron.wake", Scope::Operator),
        ("tasks.cancel", Scope::Operator),
        ("sandbox.recreate", Scope::Operator),
        ("runner.subscribe", Scope::Runner),
        ("runner.complete", Scope::Runner),
        ("gateway.reload", Scope::Operator),
        // The audit only reads (config, file modes, the cron store, skill
        // files) and never shows a secret's value, like `config.get`.
        ("security.audit", Scope::ReadOnly),
    ];
    for (method, scope) in cases {
        assert_eq!(required_scope(method), Some(scope), "{method}");
    }
    assert_eq!(required_scope("tools.delete"), None);
    assert_eq!(required_scope("Health"), None, "names are case-sensitive");
}

#[test]
fn a_marker_type_agrees_with_its_row() {
    assert_eq!(methods::ToolsInvoke::NAME, "tools.invoke");
    assert_eq!(methods::ToolsInvoke::METHOD, MethodName::ToolsInvoke);
    assert_eq!(methods::ToolsInvoke::SCOPE, MethodName::ToolsInvoke.scope());
    assert_eq!(methods::GatewayReload::SCOPE, Scope::Operator);
}

#[test]
fn unknown_method_is_method_not_found() {
    let e = Request::parse("no.such.method", json!({})).unwrap_err();
    assert_eq!(e.code, METHOD_NOT_FOUND);
    assert_eq!(e.message, "no method `no.such.method`");
}

#[test]
fn bad_params_name_the_method_and_the_field() {
    let e = Request::parse("tools.list", json!({"sessionKey": "s1", "bogus": 1})).unwrap_err();
    assert_eq!(e.code, INVALID_PARAMS);
    assert_eq!(
        e.message,
        "tools.list: invalid params: unknown field `bogus`, expected `sessionKey` or `audit`"
    );
    let e = Request::parse("tools.invoke", json!({"toolName": "read"})).unwrap_err();
    assert_eq!(
        e.message,
        "tools.invoke: invalid params: missing field `sessionKey`"
    );
    let e =
        Request::parse("runner.complete", json!({"runId": "r", "status": "maybe"})).unwrap_err();
    assert_eq!(e.code, INVALID_PARAMS);
    assert!(
        e.message
            .starts_with("runner.complete: invalid params: unknown variant `maybe`"),
        "{}",
        e.message
    );
}

#[test]
fn params_decode_typed_and_null_is_empty() {
    let r = Request::parse(
        "tools.invoke",
        json!({"sessionKey": "s", "toolName": "read", "params": {"path": "a"}}),
    )
    .unwrap();
    let Request::ToolsInvoke(p) = &r else {
        panic!("decoded as {r:?}")
    };
    assert_eq!(p.params, json!({"path": "a"}));
    assert_eq!(p.tool_call_id, None);
    let r = Request::parse("sessions.create", Value::Null).unwrap();
    assert_eq!(r, Request::SessionsCreate(SessionParams::default()));
    // A method without params ignores whatever it is sent, as before.
    let r = Request::parse("health", json!({"anything": [1]})).unwrap();
    assert_eq!(r, Request::Health(NoParams));
    // `id` is an alias of `jobId`.
    let r = Request::parse("cron.get", json!({"id": "job-1"})).unwrap();
    assert_eq!(
        r,
        Request::CronGet(CronJobRef {
            job_id: "job-1".into()
        })
    );
}

#[test]
fn params_round_trip_through_the_wire() {
    let p = ToolsInvokeParams {
        session_key: "main".into(),
        tool_name: "read".into(),
        tool_call_id: Some("c1".into()),
        params: json!({"path": "x"}),
    };
    let v = serde_json::to_value(&p).unwrap();
    assert_eq!(
        v,
        json!({"sessionKey": "main", "toolName": "read", "toolCallId": "c1", "params": {"path": "x"}})
    );
    let back = Request::parse(methods::ToolsInvoke::NAME, v).unwrap();
    assert_eq!(back, Request::ToolsInvoke(p));
    assert_eq!(serde_json::to_value(NoParams).unwrap(), json!({}));
}

/// The scopes are a chain; `agent` (the former runner name) still parses
/// and deserialises as `runner`; only `owner` and `operator` are the owner.
#[test]
fn scopes_chain_and_agent_is_runner() {
    assert!(Scope::Operator.covers(Scope::Owner));
    assert!(Scope::Owner.covers(Scope::Runner));
    assert!(!Scope::Runner.covers(Scope::Owner));
    assert_eq!(Scope::parse("agent"), Some(Scope::Runner));
    assert_eq!(
        serde_json::from_str::<Scope>("\"agent\"").unwrap(),
        Scope::Runner
    );
    assert_eq!(serde_json::to_string(&Scope::Runner).unwrap(), "\"runner\"");
    let owners: Vec<Scope> = Scope::ALL.into_iter().filter(|s| s.is_owner()).collect();
    assert_eq!(owners, vec![Scope::Owner, Scope::Operator]);
}
