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
    let mut table = PendingTable::new(4);
    let r = request("c");
    let (tx, _rx) = oneshot::channel();
    assert!(table.insert(r.clone(), tx));
    let (tx, _rx2) = oneshot::channel();
    assert!(!table.insert(r.clone(), tx), "pending id reused");
    assert!(table.finish(&r.id, ApprovalDecision::Timeout));
    let (tx, _rx3) = oneshot::channel();
    assert!(!table.insert(r, tx), "finished id reused");
}

#[test]
fn finished_ids_are_bounded() {
    let mut table = PendingTable::new(2);
    let ids: Vec<String> = (0..3)
        .map(|i| {
            let r = request(&format!("c{i}"));
            let (tx, _rx) = oneshot::channel();
            let id = r.id.clone();
            assert!(table.insert(r, tx));
            id
        })
        .collect();
    for id in &ids {
        assert_eq!(
            table.resolve(id, ApprovalDecision::Deny, None),
            ResolveOutcome::Unknown,
            "the receivers were dropped, so nothing was applied"
        );
    }
    // Only the two most recent ids are remembered.
    assert_eq!(
        table.resolve(&ids[0], ApprovalDecision::Deny, None),
        ResolveOutcome::Unknown
    );
    assert_eq!(
        table.resolve(&ids[2], ApprovalDecision::Deny, None),
        ResolveOutcome::AlreadyResolved
    );
    assert_eq!(table.finished.len(), 2);
    assert_eq!(table.finished_order.len(), 2);
}

#[test]
fn list_is_oldest_first() {
    let mut table = PendingTable::new(8);
    let mut receivers = Vec::new();
    let requests: Vec<ApprovalRequest> = (0..5).map(|i| request(&format!("c{i}"))).collect();
    for r in &requests {
        let (tx, rx) = oneshot::channel();
        receivers.push(rx);
        assert!(table.insert(r.clone(), tx));
    }
    assert_eq!(table.list(), requests);
    assert!(table.finish(&requests[2].id, ApprovalDecision::Cancelled));
    let mut expected = requests.clone();
    expected.remove(2);
    assert_eq!(table.list(), expected);
}
