//! The one canonical JSON rendering in Talon, and its SHA-256.
//!
//! Every hash or digest of tool parameters (the journal's
//! `params_digest`, loop detection's argument and outcome hashes, the
//! approval parameter hash and grant fingerprint) is taken over
//! [`canonical_json`], so two values that are equal as JSON hash the same
//! whatever their key order, and no two crates disagree on what "the same
//! parameters" means.
//!
//! The rendering:
//! - object keys sorted by UTF-16 code units at every depth (JavaScript's
//!   default sort and RFC 8785's order; for keys without characters above
//!   U+FFFF this is the same as sorting by UTF-8 bytes);
//! - no whitespace;
//! - strings escaped as `serde_json` escapes them (`\"`, `\\`, `\b`, `\f`,
//!   `\n`, `\r`, `\t`, other control characters as `\u00xx`; nothing else
//!   escaped);
//! - numbers as `serde_json` prints them: integers exactly, floats as the
//!   shortest text that reads back to the same `f64` (so `1` and `1.0` stay
//!   different texts, as they are different JSON numbers to `serde_json`).
//!
//! ```
//! use serde_json::json;
//! use talon_canonical_json::{canonical_json, hash_json};
//!
//! let a = json!({"b": [1, {"d": 2, "c": "x"}], "a": null});
//! let b = json!({"a": null, "b": [1, {"c": "x", "d": 2}]});
//! assert_eq!(canonical_json(&a), r#"{"a":null,"b":[1,{"c":"x","d":2}]}"#);
//! assert_eq!(hash_json(&a), hash_json(&b));
//! assert_eq!(hash_json(&a).len(), 64);
//! ```
#![deny(missing_docs)]

use std::cmp::Ordering;

use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

/// `value` rendered canonically (see the crate docs).
pub fn canonical_json(value: &Value) -> String {
    let mut out = String::new();
    write_value(value, &mut out);
    out
}

/// Lower-case hex SHA-256 (64 characters) of [`canonical_json`]`(value)`,
/// computed without building the string.
pub fn hash_json(value: &Value) -> String {
    let mut hasher = Sha256::new();
    write_value(value, &mut hasher);
    hex(&hasher.finalize())
}

/// [`hash_json`] of an object given as its map, without copying it into a
/// [`Value`].
pub fn hash_object(map: &Map<String, Value>) -> String {
    let mut hasher = Sha256::new();
    write_object(map, &mut hasher);
    hex(&hasher.finalize())
}

/// Lower-case hex SHA-256 (64 characters) of `bytes`.
pub fn sha256_hex(bytes: impl AsRef<[u8]>) -> String {
    hex(&Sha256::digest(bytes.as_ref()))
}

/// Where canonical text goes: a string, or straight into a hasher.
trait Sink {
    fn put(&mut self, text: &str);
}

impl Sink for String {
    fn put(&mut self, text: &str) {
        self.push_str(text);
    }
}

impl Sink for Sha256 {
    fn put(&mut self, text: &str) {
        self.update(text.as_bytes());
    }
}

fn write_value(value: &Value, out: &mut impl Sink) {
    match value {
        Value::Null => out.put("null"),
        Value::Bool(true) => out.put("true"),
        Value::Bool(false) => out.put("false"),
        Value::Number(n) => out.put(&n.to_string()),
        Value::String(s) => write_string(s, out),
        Value::Array(items) => {
            out.put("[");
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.put(",");
                }
                write_value(item, out);
            }
            out.put("]");
        }
        Value::Object(map) => write_object(map, out),
    }
}

fn write_object(map: &Map<String, Value>, out: &mut impl Sink) {
    let mut entries: Vec<(&String, &Value)> = map.iter().collect();
    entries.sort_unstable_by(|a, b| utf16_order(a.0, b.0));
    out.put("{");
    for (i, (key, item)) in entries.into_iter().enumerate() {
        if i > 0 {
            out.put(",");
        }
        write_string(key, out);
        out.put(":");
        write_value(item, out);
    }
    out.put("}");
}

/// Keys compare by UTF-16 code units; plain byte order when both are
/// ASCII (the same result, faster).
fn utf16_order(a: &str, b: &str) -> Ordering {
    if a.is_ascii() && b.is_ascii() {
        a.cmp(b)
    } else {
        a.encode_utf16().cmp(b.encode_utf16())
    }
}

/// A JSON string literal, escaped exactly as `serde_json` escapes it.
fn write_string(s: &str, out: &mut impl Sink) {
    out.put("\"");
    let mut start = 0;
    for (i, byte) in s.bytes().enumerate() {
        let escaped: Option<&str> = match byte {
            b'"' => Some("\\\""),
            b'\\' => Some("\\\\"),
            b'\n' => Some("\\n"),
            b'\r' => Some("\\r"),
            b'\t' => Some("\\t"),
            0x08 => Some("\\b"),
            0x0c => Some("\\f"),
            0x00..=0x1f => None,
            _ => continue,
        };
        // Every byte matched above is ASCII, so `i` is a char boundary.
        out.put(&s[start..i]);
        match escaped {
            Some(text) => out.put(text),
            None => out.put(&format!("\\u{byte:04x}")),
        }
        start = i + 1;
    }
    out.put(&s[start..]);
    out.put("\"");
}

fn hex(bytes: &[u8]) -> String {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        out.push(char::from(HEX[usize::from(b >> 4)]));
        out.push(char::from(HEX[usize::from(b & 0x0f)]));
    }
    out
}

#[cfg(test)]
mod tests;
