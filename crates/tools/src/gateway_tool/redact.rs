//! Secret redaction for `gateway config.get`.

use std::sync::LazyLock;

use regex::Regex;
use serde_json::{Map, Value};

/// `scheme://user:password@` inside a string value.
static URL_PASSWORD_RE: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r"(?i)\b([a-z][a-z0-9+.-]*://[^/\s:@]*:)[^/\s@]+@").ok());

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
/// [`REDACTED`] (whatever its type), at any depth; passwords inside URLs
/// (`https://user:pw@host`) in any string are redacted too.
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
        Value::String(s) => match URL_PASSWORD_RE.as_ref() {
            Some(re) if re.is_match(s) => {
                Value::String(re.replace_all(s, format!("${{1}}{REDACTED}@")).into_owned())
            }
            _ => Value::String(s.clone()),
        },
        other => other.clone(),
    }
}
