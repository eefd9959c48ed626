#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use super::*;

#[test]
fn entries_expire_after_the_ttl() {
    let cache = TtlCache::new(Duration::from_millis(40));
    cache.put("k".into(), 1);
    assert_eq!(cache.get("k"), Some(1));
    std::thread::sleep(Duration::from_millis(60));
    assert_eq!(cache.get("k"), None);
}

#[test]
fn zero_ttl_stores_nothing() {
    let cache = TtlCache::new(Duration::ZERO);
    cache.put("k".into(), 1);
    assert_eq!(cache.get("k"), None);
}

#[test]
fn size_is_bounded_and_the_oldest_goes_first() {
    let cache = TtlCache::new(Duration::from_secs(60));
    for i in 0..(MAX_ENTRIES + 5) {
        cache.put(format!("k{i}"), i);
    }
    assert_eq!(cache.get("k0"), None);
    assert_eq!(
        cache.get(&format!("k{}", MAX_ENTRIES + 4)),
        Some(MAX_ENTRIES + 4)
    );
    assert!(cache.entries.lock().unwrap().len() <= MAX_ENTRIES);
}
