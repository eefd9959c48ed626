//! Call identity: the arguments hash, the run-id normalisation, the
//! known-poll classification and the unknown-tool name extraction.

use serde_json::{Map, Value};

use talon_canonical_json::hash_object;

/// The identity of a call: `<toolName>:<sha256 of the canonical params>`.
pub(crate) fn args_hash(tool_name: &str, params: &Map<String, Value>) -> String {
    format!("{tool_name}:{}", hash_object(params))
}

/// The run id with surrounding whitespace removed; blank counts as none.
pub(crate) fn normalize_run_id(run_id: Option<&str>) -> Option<&str> {
    run_id.map(str::trim).filter(|id| !id.is_empty())
}

/// The `action` parameter when it is a string.
pub(crate) fn params_action(params: &Map<String, Value>) -> Option<&str> {
    params.get("action").and_then(Value::as_str)
}

/// Whether the call is a known polling call: `command_status`, or
/// `process` with action `poll` or `log`.
pub(crate) fn is_known_poll_call(tool_name: &str, action: Option<&str>) -> bool {
    match tool_name {
        "command_status" => true,
        "process" => matches!(action, Some("poll" | "log")),
        _ => false,
    }
}

/// The missing tool named by an error message such as `unknown tool: X`,
/// `tool "X" not found` or `tool X is not available`, lower-cased. Mirrors
/// OpenClaw's two case-insensitive patterns; the name is a run of ASCII
/// letters, digits, `_`, `.` and `-`.
pub(crate) fn extract_unknown_tool_name(message: &str) -> Option<String> {
    let raw = message.trim();
    if raw.is_empty() {
        return None;
    }
    // ASCII lower-casing keeps every byte offset, so positions found in
    // `lower` are valid in `raw` too (and the result is lower-cased anyway).
    let lower = raw.to_ascii_lowercase();
    unknown_tool_prefix_match(&lower).or_else(|| tool_not_found_match(&lower))
}

fn is_name_byte(b: u8) -> bool {
    b.is_ascii_lowercase() || b.is_ascii_digit() || matches!(b, b'_' | b'.' | b'-')
}

fn is_quote(b: u8) -> bool {
    matches!(b, b'"' | b'\'')
}

/// Length of the run of whitespace at the start of `s`, in bytes.
fn whitespace_len(s: &str) -> usize {
    s.len() - s.trim_start().len()
}

/// Length of the run of name bytes at the start of `s`.
fn name_len(s: &str) -> usize {
    s.bytes().take_while(|b| is_name_byte(*b)).count()
}

/// Skips one optional quote, then reads a tool name. Returns the name and
/// the rest of the text after it.
fn quoted_name(s: &str) -> Option<(&str, &str)> {
    let s = match s.as_bytes().first() {
        Some(b) if is_quote(*b) => &s[1..],
        _ => s,
    };
    let len = name_len(s);
    (len > 0).then(|| (&s[..len], &s[len..]))
}

/// `unknown tool[:\s]+["']?(name)`.
fn unknown_tool_prefix_match(lower: &str) -> Option<String> {
    const NEEDLE: &str = "unknown tool";
    for (at, _) in lower.match_indices(NEEDLE) {
        let rest = &lower[at + NEEDLE.len()..];
        let sep = rest
            .char_indices()
            .find(|(_, c)| !(*c == ':' || c.is_whitespace()))
            .map_or(rest.len(), |(i, _)| i);
        if sep == 0 {
            continue;
        }
        if let Some((name, _)) = quoted_name(&rest[sep..]) {
            return Some(name.to_owned());
        }
    }
    None
}

/// `tool\s+["']?(name)["']?\s+(not found|is not available)`.
fn tool_not_found_match(lower: &str) -> Option<String> {
    for (at, _) in lower.match_indices("tool") {
        let rest = &lower[at + 4..];
        let ws = whitespace_len(rest);
        if ws == 0 {
            continue;
        }
        let Some((name, after)) = quoted_name(&rest[ws..]) else {
            continue;
        };
        let after = match after.as_bytes().first() {
            Some(b) if is_quote(*b) => &after[1..],
            _ => after,
        };
        let ws = whitespace_len(after);
        if ws == 0 {
            continue;
        }
        let tail = &after[ws..];
        if tail.starts_with("not found") || tail.starts_with("is not available") {
            return Some(name.to_owned());
        }
    }
    None
}

#[cfg(test)]
#[path = "hashing_tests.rs"]
mod tests;
