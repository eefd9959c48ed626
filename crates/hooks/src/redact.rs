//! Failure-log redaction: what a failed tool call's parameters look like in
//! the log.
//!
//! A failed call is logged as one line,
//! `[tools] <name> failed: <message> raw_params=<preview>`, plus
//! ` effective_params=<preview>` when hook-adjusted parameters differ. The
//! previews are redacted first: for `exec` (and its alias `bash`) the
//! command is replaced by a summary (type, length and a short hash) and the
//! env values are omitted, as OpenClaw's `sanitizeExecFailureParamsForLog`
//! does; for every tool, values under secret-looking keys become
//! `"[redacted]"`.

use serde_json::{Map, Value, json};
use talon_tool_catalog::normalize_tool_name;

use talon_canonical_json::sha256_hex;

/// The maximum number of characters (code points) of a parameter preview,
/// before the trailing `…`.
pub const PARAMS_PREVIEW_MAX_CHARS: usize = 600;

/// The value every exec env entry is replaced with.
pub const OMITTED_EXEC_ENV_VALUE: &str = "[omitted exec env value]";

/// The value a non-object exec `env` is replaced with.
pub const OMITTED_EXEC_ENV: &str = "[omitted exec env]";

/// The value a secret-looking key's value is replaced with.
pub const REDACTED: &str = "[redacted]";

/// How many hex characters of the SHA-256 a summary keeps.
const SUMMARY_HASH_CHARS: usize = 16;

/// The exec parameters that hold the command.
const EXEC_COMMAND_KEYS: [&str; 2] = ["command", "cmd"];

/// Substrings that make a key secret-looking, matched against the key
/// lowercased with `_`, `-`, `.` and spaces removed.
const SECRET_KEY_MARKERS: [&str; 8] = [
    "token",
    "password",
    "passwd",
    "secret",
    "apikey",
    "authorization",
    "cookie",
    "privatekey",
];

/// Redacts exec parameters for a failure log, as OpenClaw's
/// `sanitizeExecFailureParamsForLog` does.
///
/// A JSON string that parses to an object is parsed first. Anything that
/// is still not an object becomes a summary with the reason
/// `"exec params may contain command credentials"`. In an object,
/// `command` and `cmd` become a summary with the reason
/// `"exec command may contain credentials"`, `env` keeps its keys (sorted)
/// with every value omitted, and every other key is kept verbatim.
pub fn sanitize_exec_failure_params(params: &Value) -> Value {
    if let Value::String(text) = params
        && let Ok(parsed @ Value::Object(_)) = serde_json::from_str::<Value>(text)
    {
        return sanitize_exec_failure_params(&parsed);
    }
    let Value::Object(map) = params else {
        return summarize(params, "exec params may contain command credentials");
    };
    let mut out = Map::new();
    for (key, field) in map {
        let value = if EXEC_COMMAND_KEYS.contains(&key.as_str()) {
            summarize(field, "exec command may contain credentials")
        } else if key == "env" {
            omit_env_values(field)
        } else {
            field.clone()
        };
        out.insert(key.clone(), value);
    }
    Value::Object(out)
}

/// `{omitted, reason, type, chars, sha256}` for a value that must not be
/// logged. `chars` counts UTF-16 code units of the serialised value (as
/// JavaScript's `length` does) and `sha256` is the first 16 hex characters
/// of its SHA-256.
fn summarize(value: &Value, reason: &str) -> Value {
    let serialized = serialize_params(value);
    let mut hash = sha256_hex(&serialized);
    hash.truncate(SUMMARY_HASH_CHARS);
    json!({
        "omitted": true,
        "reason": reason,
        "type": kind(value),
        "chars": serialized.encode_utf16().count(),
        "sha256": hash,
    })
}

/// The JavaScript `typeof` of a JSON value, with `array` and `null` told
/// apart (the catalog's `json_type` gives exactly these names).
fn kind(value: &Value) -> &'static str {
    talon_tool_catalog::params::json_type(value)
}

/// The exec `env` with its keys sorted (UTF-16 order) and every value
/// omitted; a non-object env is omitted whole.
fn omit_env_values(env: &Value) -> Value {
    let Value::Object(map) = env else {
        return Value::String(OMITTED_EXEC_ENV.to_owned());
    };
    let mut keys: Vec<&String> = map.keys().collect();
    keys.sort_by(|a, b| a.encode_utf16().cmp(b.encode_utf16()));
    let out: Map<String, Value> = keys
        .into_iter()
        .map(|k| (k.clone(), Value::String(OMITTED_EXEC_ENV_VALUE.to_owned())))
        .collect();
    Value::Object(out)
}

/// Redacts a tool call's parameters for a failure log: the exec rules for
/// `exec` (and its alias `bash`), then, for every tool, every value under a
/// secret-looking key (`token`, `password`, `passwd`, `secret`,
/// `apikey`/`api_key`, `authorization`, `cookie`, `private_key`, any case)
/// becomes `"[redacted]"`, recursively. Null and boolean values are kept,
/// and so is a number under a key ending in `tokens` (a count such as
/// `max_tokens`). A string that holds a JSON object or array is parsed when
/// that is needed to redact it.
pub fn redact_params_for_log(tool_name: &str, params: &Value) -> Value {
    let mut value = if normalize_tool_name(tool_name) == "exec" {
        sanitize_exec_failure_params(params)
    } else {
        params.clone()
    };
    if let Value::String(text) = &value
        && let Ok(mut parsed @ (Value::Object(_) | Value::Array(_))) =
            serde_json::from_str::<Value>(text)
        && redact_secrets(&mut parsed)
    {
        return parsed;
    }
    redact_secrets(&mut value);
    value
}

/// Replaces secret-looking values in place; returns whether anything
/// changed.
fn redact_secrets(value: &mut Value) -> bool {
    let mut changed = false;
    match value {
        Value::Object(map) => {
            for (key, field) in map.iter_mut() {
                if is_secret_key(key) && must_redact(key, field) {
                    *field = Value::String(REDACTED.to_owned());
                    changed = true;
                } else {
                    changed |= redact_secrets(field);
                }
            }
        }
        Value::Array(items) => {
            for item in items {
                changed |= redact_secrets(item);
            }
        }
        Value::Null | Value::Bool(_) | Value::Number(_) | Value::String(_) => {}
    }
    changed
}

/// Whether the value under the secret-looking `key` must be replaced.
fn must_redact(key: &str, field: &Value) -> bool {
    match field {
        Value::Null | Value::Bool(_) => false,
        Value::Number(_) => !normalize_key(key).ends_with("tokens"),
        Value::String(s) => s != REDACTED && s != OMITTED_EXEC_ENV_VALUE,
        Value::Array(_) | Value::Object(_) => true,
    }
}

fn is_secret_key(key: &str) -> bool {
    let normalized = normalize_key(key);
    SECRET_KEY_MARKERS.iter().any(|m| normalized.contains(m))
}

/// The key lowercased with separators removed, so `API_KEY`, `api-key` and
/// `apiKey` all read `apikey`.
fn normalize_key(key: &str) -> String {
    key.chars()
        .filter(|c| !matches!(c, '_' | '-' | '.' | ' '))
        .flat_map(char::to_lowercase)
        .collect()
}

/// Serialises parameters the way OpenClaw's `serializeToolParams` does:
/// strings as they are, other primitives as text, everything else as
/// compact JSON.
fn serialize_params(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// A one-line preview of (already redacted) parameters: serialised,
/// trimmed, control characters replaced, whitespace runs collapsed to one
/// space, and capped at [`PARAMS_PREVIEW_MAX_CHARS`] code points with a
/// trailing `…` when cut. An empty preview reads `<empty>`.
pub fn params_preview(value: &Value) -> String {
    let cleaned = clean_for_console(&serialize_params(value));
    if cleaned.is_empty() {
        return "<empty>".to_owned();
    }
    match cleaned.char_indices().nth(PARAMS_PREVIEW_MAX_CHARS) {
        Some((cut, _)) => format!("{}…", &cleaned[..cut]),
        None => cleaned,
    }
}

/// Makes `text` safe for a single log line. Tab, CR and LF become spaces;
/// other control characters (C0, DEL, C1) and bidirectional overrides
/// become U+FFFD so that they stay visible without acting on a terminal;
/// whitespace runs collapse to one space and the ends are trimmed.
/// OpenClaw deletes the control characters instead.
fn clean_for_console(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut pending_space = false;
    for c in text.chars() {
        let c = if matches!(c, '\t' | '\n' | '\r') {
            ' '
        } else if crate::approval::is_unsafe_char(c) {
            '\u{FFFD}'
        } else {
            c
        };
        if c.is_whitespace() || c == '\u{FEFF}' {
            pending_space = true;
            continue;
        }
        if pending_space && !out.is_empty() {
            out.push(' ');
        }
        pending_space = false;
        out.push(c);
    }
    out
}

/// The log line for a failed tool call:
/// `[tools] <name> failed: <message> raw_params=<preview>`, plus
/// ` effective_params=<preview>` when the hook-adjusted parameters,
/// redacted, serialise differently from the redacted raw ones. The name is
/// normalised (`bash` reads `exec`) and the message is cleaned of control
/// characters.
pub fn failure_log_line(
    tool_name: &str,
    message: &str,
    raw_params: &Value,
    effective_params: Option<&Value>,
) -> String {
    let name = normalize_tool_name(tool_name);
    let raw = redact_params_for_log(&name, raw_params);
    let mut line = format!(
        "[tools] {} failed: {} raw_params={}",
        clean_for_console(&name),
        clean_for_console(message),
        params_preview(&raw)
    );
    if let Some(effective) = effective_params {
        let effective = redact_params_for_log(&name, effective);
        if serialize_params(&effective) != serialize_params(&raw) {
            line.push_str(" effective_params=");
            line.push_str(&params_preview(&effective));
        }
    }
    line
}

#[cfg(test)]
#[path = "redact_tests.rs"]
mod tests;
