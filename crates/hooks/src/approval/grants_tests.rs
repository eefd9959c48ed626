use pretty_assertions::assert_eq;

use super::*;
use crate::approval::ApprovalScope;

fn key(scope: ApprovalScope, value: &str, tool: &str) -> GrantKey {
    GrantKey {
        scope,
        scope_value: value.into(),
        plugin_id: "guard".into(),
        tool_name: tool.into(),
        fingerprint: "f".repeat(32),
    }
}

#[test]
fn granting_again_updates_the_approval_id() {
    // The order and lookups are the store contract (`store_tests`); the
    // approval id is only visible on the memory store.
    let store = MemoryGrantStore::new();
    let a = key(ApprovalScope::Session, "s1", "exec");
    store.grant(&a, "id-1").unwrap();
    assert_eq!(store.approval_id(&a).as_deref(), Some("id-1"));
    store.grant(&a, "id-3").unwrap();
    assert_eq!(store.approval_id(&a).as_deref(), Some("id-3"));
}

#[test]
fn arc_store_shares_grants() {
    let store = Arc::new(MemoryGrantStore::new());
    let shared: Arc<dyn GrantStore> = store.clone();
    let a = key(ApprovalScope::Agent, "agent", "exec");
    shared.grant(&a, "id").unwrap();
    assert!(store.is_granted(&a).unwrap());
    assert_eq!(GrantStore::list(&shared).unwrap(), vec![a]);
}
