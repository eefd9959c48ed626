use std::time::Duration;

use pretty_assertions::assert_eq;
use serde_json::Map;

use super::*;
use crate::event::ApprovalSpec;

fn request(call_id: &str) -> ApprovalRequest {
    ApprovalRequest::new(
        &ApprovalSpec::default(),
        call_id,
        "exec",
        &Map::new(),
        "a",
        "s",
        Duration::from_secs(1),
    )
}

#[test]
fn an_id_is_single_use() {
    let mut ledger = PendingLedger::new(4);
    let r = request("c");
    assert!(ledger.insert(&r));
    assert!(!ledger.insert(&r), "pending id reused");
    assert_eq!(
        ledger.finish(&r.id, ApprovalDecision::Timeout),
        ApprovalDecision::Timeout
    );
    assert!(!ledger.insert(&r), "finished id reused");
}

#[test]
fn finished_ids_are_bounded() {
    let mut ledger = PendingLedger::new(2);
    let ids: Vec<String> = (0..3)
        .map(|i| {
            let r = request(&format!("c{i}"));
            assert!(ledger.insert(&r));
            r.id
        })
        .collect();
    for id in &ids {
        assert_eq!(
            ledger.decide(id, ApprovalDecision::Deny, None),
            ResolveOutcome::Applied
        );
    }
    // Only the two most recent ids are remembered.
    assert_eq!(
        ledger.decide(&ids[0], ApprovalDecision::Deny, None),
        ResolveOutcome::Unknown
    );
    assert_eq!(
        ledger.decide(&ids[2], ApprovalDecision::Deny, None),
        ResolveOutcome::AlreadyResolved
    );
    assert_eq!(ledger.finished.len(), 2);
    assert_eq!(ledger.finished_order.len(), 2);
}

#[test]
fn list_is_oldest_first() {
    let mut ledger = PendingLedger::new(8);
    let requests: Vec<ApprovalRequest> = (0..5).map(|i| request(&format!("c{i}"))).collect();
    for r in &requests {
        assert!(ledger.insert(r));
    }
    assert_eq!(ledger.list(), requests);
    ledger.finish(&requests[2].id, ApprovalDecision::Cancelled);
    let mut expected = requests.clone();
    expected.remove(2);
    assert_eq!(ledger.list(), expected);
}

#[test]
fn finishing_after_a_human_keeps_the_human_decision() {
    let mut ledger = PendingLedger::new(8);
    let r = request("c");
    assert!(ledger.insert(&r));
    assert_eq!(ledger.decision(&r.id), None);
    assert_eq!(
        ledger.decide(&r.id, ApprovalDecision::AllowOnce, None),
        ResolveOutcome::Applied
    );
    assert_eq!(
        ledger.finish(&r.id, ApprovalDecision::Timeout),
        ApprovalDecision::AllowOnce
    );
    assert_eq!(ledger.decision(&r.id), Some(ApprovalDecision::AllowOnce));
    // An id the ledger never saw ends with the fallback.
    assert_eq!(
        ledger.finish("nope", ApprovalDecision::Cancelled),
        ApprovalDecision::Cancelled
    );
}

#[test]
fn refusals_are_checked_in_order() {
    let binding = ApprovalBinding {
        call_id: "c".into(),
        params_hash: "h".into(),
    };
    let waiting = Entry::Waiting {
        call_id: "c",
        params_hash: "h",
        allowed: &[ApprovalDecision::Deny],
    };
    let cases = [
        (
            Entry::Missing,
            ApprovalDecision::Deny,
            None,
            Some(ResolveOutcome::Unknown),
        ),
        (
            Entry::Ended(ApprovalDecision::Deny),
            ApprovalDecision::Deny,
            None,
            Some(ResolveOutcome::AlreadyResolved),
        ),
        (
            Entry::Ended(ApprovalDecision::Timeout),
            ApprovalDecision::Deny,
            None,
            Some(ResolveOutcome::Unknown),
        ),
        (
            Entry::Waiting {
                call_id: "other",
                params_hash: "h",
                allowed: &[ApprovalDecision::Deny],
            },
            ApprovalDecision::AllowOnce,
            Some(&binding),
            Some(ResolveOutcome::Stale),
        ),
        (
            waiting,
            ApprovalDecision::AllowOnce,
            Some(&binding),
            Some(ResolveOutcome::NotAllowed),
        ),
        (
            waiting,
            ApprovalDecision::Timeout,
            None,
            Some(ResolveOutcome::NotAllowed),
        ),
        (waiting, ApprovalDecision::Deny, Some(&binding), None),
    ];
    for (entry, decision, binding, expected) in cases {
        assert_eq!(
            refusal(entry, decision, binding),
            expected,
            "{entry:?} {decision:?}"
        );
    }
}
