//! The parameter digest: SHA-256 over a canonical JSON rendering, so the
//! same arguments give the same digest whatever their key order.

use std::fmt::Write as _;

use serde_json::Value;
use sha2::{Digest, Sha256};

/// SHA-256 (64 lowercase hex digits) of the canonical form of `params`:
/// compact JSON with object keys sorted by their UTF-8 bytes at every
/// depth. Equal values give equal digests regardless of key order, and the
/// journal never needs the parameters themselves.
///
/// ```
/// let a = serde_json::json!({"command": "ls", "cwd": "/tmp"});
/// let b = serde_json::json!({"cwd": "/tmp", "command": "ls"});
/// assert_eq!(talon_journal::params_digest(&a), talon_journal::params_digest(&b));
/// assert_eq!(talon_journal::params_digest(&a).len(), 64);
/// ```
pub fn params_digest(params: &Value) -> String {
    let mut hasher = Sha256::new();
    let mut canonical = String::new();
    write_canonical(params, &mut canonical);
    hasher.update(canonical.as_bytes());
    let digest = hasher.finalize();
    let mut hex = String::with_capacity(64);
    for byte in digest {
        // Writing to a String cannot fail.
        let _ = write!(hex, "{byte:02x}");
    }
    hex
}

/// Whether `s` looks like a digest from [`params_digest`].
pub(crate) fn is_digest(s: &str) -> bool {
    s.len() == 64 && s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

fn write_canonical(value: &Value, out: &mut String) {
    match value {
        Value::Null | Value::Bool(_) | Value::Number(_) | Value::String(_) => {
            out.push_str(&value.to_string());
        }
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_canonical(item, out);
            }
            out.push(']');
        }
        Value::Object(map) => {
            let mut entries: Vec<(&String, &Value)> = map.iter().collect();
            entries.sort_unstable_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
            out.push('{');
            for (i, (key, item)) in entries.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String(key.clone()).to_string());
                out.push(':');
                write_canonical(item, out);
            }
            out.push('}');
        }
    }
}

#[cfg(test)]
#[path = "digest_tests.rs"]
mod tests;
