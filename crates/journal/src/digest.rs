//! The parameter digest: SHA-256 over Talon's one canonical JSON
//! rendering (`talon-canonical-json`), so the same arguments give the same
//! digest whatever their key order, and the same digest the gate's hashes
//! use.

use serde_json::Value;

/// SHA-256 (64 lowercase hex digits) of the canonical form of `params`:
/// compact JSON with object keys sorted at every depth (by UTF-16 code
/// units, see [`talon_canonical_json`]). Equal values give equal digests
/// regardless of key order, and the journal never needs the parameters
/// themselves.
///
/// Digests written before the canonical module was shared sorted keys by
/// UTF-8 bytes; the two orders differ only for object keys that mix
/// characters U+E000–U+FFFF with characters above U+FFFF, so every other
/// stored digest is unchanged.
///
/// ```
/// let a = serde_json::json!({"command": "ls", "cwd": "/tmp"});
/// let b = serde_json::json!({"cwd": "/tmp", "command": "ls"});
/// assert_eq!(talon_journal::params_digest(&a), talon_journal::params_digest(&b));
/// assert_eq!(talon_journal::params_digest(&a).len(), 64);
/// ```
pub fn params_digest(params: &Value) -> String {
    talon_canonical_json::hash_json(params)
}

/// Whether `s` looks like a digest from [`params_digest`].
pub(crate) fn is_digest(s: &str) -> bool {
    s.len() == 64 && s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

#[cfg(test)]
#[path = "digest_tests.rs"]
mod tests;
