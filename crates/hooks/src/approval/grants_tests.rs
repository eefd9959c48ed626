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
fn grant_check_revoke_list() {
    let store = MemoryGrantStore::new();
    let a = key(ApprovalScope::Session, "s1", "exec");
    let b = key(ApprovalScope::Global, "", "write");
    assert!(!store.is_granted(&a).unwrap());
    store.grant(&a, "id-1").unwrap();
    store.grant(&b, "id-2").unwrap();
    assert!(store.is_granted(&a).unwrap());
    assert!(
        !store
            .is_granted(&key(ApprovalScope::Session, "s2", "exec"))
            .unwrap()
    );
    assert_eq!(store.list().unwrap(), vec![a.clone(), b.clone()]);

    // Granting again keeps the original position and updates the id.
    store.grant(&a, "id-3").unwrap();
    assert_eq!(store.list().unwrap(), vec![a.clone(), b.clone()]);
    assert_eq!(store.approval_id(&a).as_deref(), Some("id-3"));

    assert!(store.revoke(&a).unwrap());
    assert!(!store.revoke(&a).unwrap());
    assert!(!store.is_granted(&a).unwrap());
    assert_eq!(store.list().unwrap(), vec![b]);
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

#[test]
fn the_fingerprint_is_part_of_the_key() {
    let store = MemoryGrantStore::new();
    let info = key(ApprovalScope::Global, "", "exec");
    let other_question = GrantKey {
        fingerprint: "0".repeat(32),
        ..info.clone()
    };
    store.grant(&info, "id-1").unwrap();
    assert!(store.is_granted(&info).unwrap());
    assert!(!store.is_granted(&other_question).unwrap());
    store.grant(&other_question, "id-2").unwrap();
    assert!(store.revoke(&info).unwrap());
    assert!(store.is_granted(&other_question).unwrap());
    assert_eq!(store.list().unwrap(), vec![other_question]);
}
