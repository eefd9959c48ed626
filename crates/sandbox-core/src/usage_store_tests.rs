#![allow(clippy::unwrap_used, clippy::expect_used)]

use pretty_assertions::assert_eq;

use super::*;

#[test]
fn uses_survive_a_new_store_and_are_throttled_per_busy_state() {
    let dir = tempfile::tempdir().unwrap();
    let key = SandboxKey::new("docker", "talon-sbx-a");
    let store = UsageStore::new(dir.path());
    assert!(store.read().unwrap().is_empty(), "no file yet");
    assert!(store.record_use(&key, 1_000_000, true).unwrap());
    assert!(
        !store.record_use(&key, 1_000_000 + 59_999, true).unwrap(),
        "same state within a minute is not written again"
    );
    assert!(
        store.record_use(&key, 1_000_000 + 1_000, false).unwrap(),
        "a change of the busy state is always written"
    );
    // A new store (a restarted process) reads what the first one wrote.
    let again = UsageStore::new(dir.path());
    let map = again.read().unwrap();
    assert_eq!(
        map.get(&key),
        Some(&UsageRecord {
            last_used_at_ms: 1_001_000,
            busy_at_ms: None
        })
    );
    assert!(dir.path().join("sandbox/usage.json").is_file());
    assert!(again.record_use(&key, 500, false).unwrap());
    assert_eq!(
        again.read().unwrap()[&key].last_used_at_ms,
        1_001_000,
        "an older use never moves the time back"
    );
    again.forget(&key).unwrap();
    assert!(again.read().unwrap().is_empty());
}

#[test]
fn a_busy_heartbeat_is_fresh_for_ten_minutes() {
    let record = UsageRecord {
        last_used_at_ms: 0,
        busy_at_ms: Some(1_000),
    };
    assert!(record.busy_at(1_000 + 599_999));
    assert!(!record.busy_at(1_000 + 600_000));
    assert!(!UsageRecord::default().busy_at(0));
}

#[test]
fn a_corrupt_file_is_an_error_and_is_left_alone() {
    let dir = tempfile::tempdir().unwrap();
    let store = UsageStore::new(dir.path());
    std::fs::create_dir_all(dir.path().join("sandbox")).unwrap();
    std::fs::write(store.path(), b"{ not json").unwrap();
    let err = store.read().unwrap_err().to_string();
    assert!(err.contains("is not valid"), "{err}");
    assert!(err.contains("usage.json"), "{err}");
    let key = SandboxKey::new("ssh", "x");
    assert!(store.record_use(&key, 1, false).is_err());
    assert_eq!(std::fs::read(store.path()).unwrap(), b"{ not json");
}
