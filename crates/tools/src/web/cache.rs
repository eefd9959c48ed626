//! A small TTL cache shared by the web tools (fetched pages, search
//! results).

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

/// Entries kept at most; the oldest goes first when full.
const MAX_ENTRIES: usize = 100;

/// Key → value with a time to live; a zero TTL turns it off.
#[derive(Debug)]
pub(crate) struct TtlCache<V> {
    ttl: Duration,
    /// Key → (stored at, insertion number, value).
    entries: Mutex<HashMap<String, (Instant, u64, V)>>,
    next: std::sync::atomic::AtomicU64,
}

impl<V: Clone> TtlCache<V> {
    pub(crate) fn new(ttl: Duration) -> Self {
        TtlCache {
            ttl,
            entries: Mutex::new(HashMap::new()),
            next: std::sync::atomic::AtomicU64::new(0),
        }
    }

    pub(crate) fn enabled(&self) -> bool {
        !self.ttl.is_zero()
    }

    /// The live value of `key`; an expired one is dropped.
    pub(crate) fn get(&self, key: &str) -> Option<V> {
        if !self.enabled() {
            return None;
        }
        let mut map = self.entries.lock().unwrap_or_else(PoisonError::into_inner);
        match map.get(key) {
            Some((at, _, v)) if at.elapsed() < self.ttl => Some(v.clone()),
            Some(_) => {
                map.remove(key);
                None
            }
            None => None,
        }
    }

    pub(crate) fn put(&self, key: String, value: V) {
        if !self.enabled() {
            return;
        }
        let mut map = self.entries.lock().unwrap_or_else(PoisonError::into_inner);
        let ttl = self.ttl;
        map.retain(|_, (at, _, _)| at.elapsed() < ttl);
        if map.len() >= MAX_ENTRIES
            && let Some(oldest) = map
                .iter()
                .min_by_key(|(_, (_, seq, _))| *seq)
                .map(|(k, _)| k.clone())
        {
            map.remove(&oldest);
        }
        let seq = self.next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        map.insert(key, (Instant::now(), seq, value));
    }
}

#[cfg(test)]
#[path = "cache_tests.rs"]
mod tests;
