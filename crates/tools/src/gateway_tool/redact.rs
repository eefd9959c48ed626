//! Secret redaction for `gateway config.get`.

use serde_json::{Map, Value};

/// What a redacted value is replaced with.
pub const REDACTED: &str = "__REDACTED__";

/// Split a key into lower-case words: `botToken` → `bot`, `token`;
/// `OPENAI_API_KEY` → `openai`, `api`, `key`.
fn words(key: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut prev_lower = false;
    for ch in key.chars() {
        if !ch.is_alphanumeric() {
            if !cur.is_empty() {
                out.push(std::mem::take(&mut cur));
            }
            prev_lower = false;
            continue;
        }
        if ch.is_uppercase() && prev_lower && !cur.is_empty() {
            out.push(std::mem::take(&mut cur));
        }
        prev_lower = ch.is_lowercase() || ch.is_ascii_digit();
        cur.extend(ch.to_lowercase());
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// Whether a config key names a secret (case-insensitive): anything
/// containing `secret`, `password`, `passwd`, `authorization`, `cookie`,
/// `apikey`/`api_key`, `privatekey`, `credential`; or with a word `token`,
/// `key`, `keys` or `bearer` (`botToken`, `OPENAI_API_KEY`). Counts like
/// `maxTokens` are not secrets.
pub fn is_secret_key(key: &str) -> bool {
    let lower = key.to_lowercase();
    let squashed: String = lower.chars().filter(|c| c.is_alphanumeric()).collect();
    const CONTAINS: [&str; 8] = [
        "secret",
        "password",
        "passwd",
        "authorization",
        "cookie",
        "apikey",
        "privatekey",
        "credential",
    ];
    if CONTAINS.iter().any(|needle| squashed.contains(needle)) {
        return true;
    }
    words(key)
        .iter()
        .any(|w| matches!(w.as_str(), "token" | "key" | "keys" | "bearer"))
}

/// A copy of `value` with every secret-named key's value replaced by
/// [`REDACTED`] (whatever its type), at any depth.
pub fn redact_secrets(value: &Value) -> Value {
    match value {
        Value::Object(map) => {
            let mut out = Map::with_capacity(map.len());
            for (k, v) in map {
                let redacted = if is_secret_key(k) && !v.is_null() {
                    Value::String(REDACTED.to_owned())
                } else {
                    redact_secrets(v)
                };
                out.insert(k.clone(), redacted);
            }
            Value::Object(out)
        }
        Value::Array(items) => Value::Array(items.iter().map(redact_secrets).collect()),
        other => other.clone(),
    }
}
