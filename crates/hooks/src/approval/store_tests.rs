//! The store contract: the same assertions on every engine
//! (`on_each_engine!` at the end: modules `memory`, `sqlite` and, with the
//! `postgres` feature, `postgres`).

use std::time::Duration;

use pretty_assertions::assert_eq;
use serde_json::{Map, json};

use crate::approval::{
    ApprovalBinding, ApprovalDecision, ApprovalRequest, ApprovalScope, GrantKey, GrantStore,
    ResolveOutcome,
};
use crate::event::ApprovalSpec;

fn key(scope: ApprovalScope, value: &str, tool: &str) -> GrantKey {
    GrantKey {
        scope,
        scope_value: value.into(),
        plugin_id: "guard".into(),
        tool_name: tool.into(),
        fingerprint: "f".repeat(32),
    }
}

fn request(call: &str) -> ApprovalRequest {
    let mut params = Map::new();
    params.insert("command".into(), json!(format!("echo {call} \u{202e}")));
    ApprovalRequest::new(
        &ApprovalSpec {
            title: "Run".into(),
            description: "echo".into(),
            ..ApprovalSpec::default()
        },
        call,
        "exec",
        &params,
        "agent",
        "session",
        Duration::from_secs(60),
    )
}

fn grant_check_revoke_list<S: GrantStore>(store: S) {
    let a = key(ApprovalScope::Session, "s1", "exec");
    let b = key(ApprovalScope::Global, "", "write");
    assert!(!store.is_granted(&a).unwrap());
    store.grant(&a, "id-1").unwrap();
    store.grant(&b, "id-2").unwrap();
    assert!(store.is_granted(&a).unwrap());
    assert!(store.is_granted(&b).unwrap());
    for other in [
        key(ApprovalScope::Session, "s2", "exec"),
        key(ApprovalScope::Agent, "s1", "exec"),
        key(ApprovalScope::Session, "s1", "write"),
    ] {
        assert!(!store.is_granted(&other).unwrap(), "{other:?}");
    }
    assert_eq!(store.list().unwrap(), vec![a.clone(), b.clone()]);
    // Granting again keeps the original position.
    store.grant(&a, "id-3").unwrap();
    assert_eq!(store.list().unwrap(), vec![a.clone(), b.clone()]);
    assert!(store.revoke(&a).unwrap());
    assert!(!store.revoke(&a).unwrap());
    assert!(!store.is_granted(&a).unwrap());
    assert_eq!(store.list().unwrap(), vec![b]);
}

fn the_fingerprint_is_part_of_the_key<S: GrantStore>(store: S) {
    let info = key(ApprovalScope::Global, "", "exec");
    let other_question = GrantKey {
        fingerprint: "0".repeat(32),
        ..info.clone()
    };
    store.grant(&info, "id-1").unwrap();
    assert!(store.is_granted(&info).unwrap());
    assert!(!store.is_granted(&other_question).unwrap());
    store.grant(&other_question, "id-2").unwrap();
    store.grant(&info, "id-3").unwrap();
    assert_eq!(
        store.list().unwrap(),
        vec![info.clone(), other_question.clone()]
    );
    assert!(store.revoke(&info).unwrap());
    assert!(store.is_granted(&other_question).unwrap());
    assert_eq!(store.list().unwrap(), vec![other_question]);
}

fn a_pending_request_is_listed_whole_until_it_ends<S: GrantStore>(store: S) {
    let (first, second, third) = (request("c1"), request("c2"), request("c3"));
    for r in [&first, &second, &third] {
        assert!(store.add_pending(r).unwrap());
    }
    // Whole: the approver sees the parameters, escaped, wherever it is
    // listed.
    assert_eq!(
        store.pending().unwrap(),
        vec![first.clone(), second.clone(), third.clone()]
    );
    assert!(first.params_preview.contains("\\u202e"));
    assert_eq!(store.decision(&first.id).unwrap(), None);
    assert_eq!(
        store
            .decide(&second.id, ApprovalDecision::Deny, None)
            .unwrap(),
        ResolveOutcome::Applied
    );
    assert_eq!(
        store.finish(&third.id, ApprovalDecision::Timeout).unwrap(),
        ApprovalDecision::Timeout
    );
    assert_eq!(store.pending().unwrap(), vec![first.clone()]);
    assert_eq!(
        store.decision(&second.id).unwrap(),
        Some(ApprovalDecision::Deny)
    );
    assert_eq!(
        store.decision(&third.id).unwrap(),
        Some(ApprovalDecision::Timeout)
    );
}

fn an_approval_id_is_single_use<S: GrantStore>(store: S) {
    let r = request("c1");
    assert!(store.add_pending(&r).unwrap());
    assert!(!store.add_pending(&r).unwrap(), "a pending id reused");
    assert_eq!(store.pending().unwrap(), vec![r.clone()]);
    store
        .decide(&r.id, ApprovalDecision::AllowOnce, None)
        .unwrap();
    assert!(!store.add_pending(&r).unwrap(), "an ended id reused");
    assert_eq!(store.pending().unwrap(), vec![]);
}

fn the_first_decision_wins<S: GrantStore>(store: S) {
    let r = request("c1");
    assert!(store.add_pending(&r).unwrap());
    assert_eq!(
        store
            .decide(&r.id, ApprovalDecision::AllowOnce, Some(&r.binding()))
            .unwrap(),
        ResolveOutcome::Applied
    );
    for decision in [ApprovalDecision::Deny, ApprovalDecision::AllowAlways] {
        assert_eq!(
            store.decide(&r.id, decision, None).unwrap(),
            ResolveOutcome::AlreadyResolved
        );
    }
    // The timeout that comes after keeps the human's decision.
    assert_eq!(
        store.finish(&r.id, ApprovalDecision::Timeout).unwrap(),
        ApprovalDecision::AllowOnce
    );
    assert_eq!(
        store.decision(&r.id).unwrap(),
        Some(ApprovalDecision::AllowOnce)
    );
}

fn a_decision_after_the_timeout_is_late<S: GrantStore>(store: S) {
    let r = request("c1");
    assert!(store.add_pending(&r).unwrap());
    assert_eq!(
        store.finish(&r.id, ApprovalDecision::Timeout).unwrap(),
        ApprovalDecision::Timeout
    );
    assert_eq!(
        store
            .decide(&r.id, ApprovalDecision::AllowOnce, Some(&r.binding()))
            .unwrap(),
        ResolveOutcome::Unknown
    );
    assert_eq!(
        store.decision(&r.id).unwrap(),
        Some(ApprovalDecision::Timeout)
    );
    // An id that was never issued.
    assert_eq!(
        store
            .decide("no-such-id", ApprovalDecision::Deny, None)
            .unwrap(),
        ResolveOutcome::Unknown
    );
    assert_eq!(store.decision("no-such-id").unwrap(), None);
    assert_eq!(
        store
            .finish("no-such-id", ApprovalDecision::Cancelled)
            .unwrap(),
        ApprovalDecision::Cancelled
    );
}

fn stale_and_not_allowed_decisions_change_nothing<S: GrantStore>(store: S) {
    let mut r = request("c1");
    r.allowed_decisions = vec![ApprovalDecision::AllowOnce, ApprovalDecision::Deny];
    assert!(store.add_pending(&r).unwrap());
    let wrong_call = ApprovalBinding {
        call_id: "c2".into(),
        params_hash: r.params_hash.clone(),
    };
    let wrong_hash = ApprovalBinding {
        call_id: r.call_id.clone(),
        params_hash: "0".repeat(64),
    };
    for binding in [&wrong_call, &wrong_hash] {
        assert_eq!(
            store
                .decide(&r.id, ApprovalDecision::AllowOnce, Some(binding))
                .unwrap(),
            ResolveOutcome::Stale
        );
    }
    for decision in [
        ApprovalDecision::AllowAlways,
        ApprovalDecision::Timeout,
        ApprovalDecision::Cancelled,
    ] {
        assert_eq!(
            store.decide(&r.id, decision, None).unwrap(),
            ResolveOutcome::NotAllowed,
            "{decision:?}"
        );
    }
    assert_eq!(store.pending().unwrap(), vec![r.clone()]);
    assert_eq!(store.decision(&r.id).unwrap(), None);
    assert_eq!(
        store
            .decide(&r.id, ApprovalDecision::Deny, Some(&r.binding()))
            .unwrap(),
        ResolveOutcome::Applied
    );
}

fn ending_records_an_audit_row_without_trouble<S: GrantStore>(store: S) {
    let r = request("c1");
    // Answered by a grant: no pending entry, one audit row.
    store
        .record_decision(&r, ApprovalDecision::AllowAlways)
        .unwrap();
    let asked = request("c2");
    assert!(store.add_pending(&asked).unwrap());
    store
        .decide(&asked.id, ApprovalDecision::Deny, None)
        .unwrap();
    store
        .record_decision(&asked, ApprovalDecision::Deny)
        .unwrap();
    assert_eq!(store.pending().unwrap(), vec![]);
    // Ended and recorded: still a duplicate, not a new request.
    assert_eq!(
        store
            .decide(&asked.id, ApprovalDecision::Deny, None)
            .unwrap(),
        ResolveOutcome::AlreadyResolved
    );
    // Nothing a recovery would deny.
    assert_eq!(store.recover_pending().unwrap(), Vec::<String>::new());
}

crate::approval::test_engines::on_each_engine!(sync:
    grant_check_revoke_list,
    the_fingerprint_is_part_of_the_key,
    a_pending_request_is_listed_whole_until_it_ends,
    an_approval_id_is_single_use,
    the_first_decision_wins,
    a_decision_after_the_timeout_is_late,
    stale_and_not_allowed_decisions_change_nothing,
    ending_records_an_audit_row_without_trouble,
);
