//! Opaque ids without an extra dependency: time, a process counter and the
//! standard library's per-process random hasher keys.

use std::hash::{BuildHasher, Hasher};
use std::sync::atomic::{AtomicU64, Ordering};

static COUNTER: AtomicU64 = AtomicU64::new(0);

/// A new id `<prefix>_<16 hex digits>`, unique within and (with
/// overwhelming probability) across processes.
pub fn new_id(prefix: &str) -> String {
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    let mut h = std::hash::RandomState::new().build_hasher();
    h.write_u128(nanos);
    h.write_u64(n);
    h.write_u32(std::process::id());
    format!("{prefix}_{:016x}", h.finish())
}
