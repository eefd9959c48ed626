//! Safe MCP tool names: `<server>__<tool>` in `[A-Za-z0-9_-]`, letter
//! first, server part at most 30 characters, whole name at most 64, unique
//! case-insensitively (OpenClaw's `agent-bundle-mcp-names.ts`).

use std::collections::HashSet;

/// Between the server and the tool part.
pub const TOOL_NAME_SEPARATOR: &str = "__";
/// The longest server part.
pub const MAX_SERVER_NAME_CHARS: usize = 30;
/// The longest whole name.
pub const MAX_TOOL_NAME_CHARS: usize = 64;
/// The server part used when a server name sanitises to nothing, and the
/// prefix of one that does not start with a letter.
pub const SERVER_FALLBACK: &str = "mcp";
/// The tool part used when a tool name sanitises to nothing, and the
/// prefix of one that does not start with a letter.
pub const TOOL_FALLBACK: &str = "tool";

/// Sanitise one name fragment: trim; every UTF-16 code unit outside
/// `[A-Za-z0-9_-]` becomes `-` (so an astral character becomes `--`);
/// empty → `fallback`; not starting with an ASCII letter →
/// `<fallback>-<fragment>`. The result is ASCII.
pub fn sanitize_fragment(raw: &str, fallback: &str) -> String {
    let mut out = String::with_capacity(raw.len());
    for c in raw.trim().chars() {
        if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
            out.push(c);
        } else {
            for _ in 0..c.len_utf16() {
                out.push('-');
            }
        }
    }
    if out.is_empty() {
        return fallback.to_owned();
    }
    if !out.starts_with(|c: char| c.is_ascii_alphabetic()) {
        return format!("{fallback}-{out}");
    }
    out
}

/// `s` cut to at most `max` characters (the input is ASCII, so bytes).
fn truncate(s: &str, max: usize) -> &str {
    s.get(..max.min(s.len())).unwrap_or(s)
}

/// Safe server names for servers in declaration order: sanitised, cut to
/// 30 characters, and made unique case-insensitively with `-2`, `-3`, …
/// (the base cut so the suffix still fits in 30). `used` holds the
/// lowercased names already taken and receives the new ones.
pub fn safe_server_names(names: &[&str], used: &mut HashSet<String>) -> Vec<String> {
    names
        .iter()
        .map(|raw| {
            let base = sanitize_fragment(raw, SERVER_FALLBACK);
            let base = truncate(&base, MAX_SERVER_NAME_CHARS).to_owned();
            let mut candidate = base.clone();
            let mut n = 2usize;
            while used.contains(&candidate.to_ascii_lowercase()) {
                let suffix = format!("-{n}");
                let keep = MAX_SERVER_NAME_CHARS.saturating_sub(suffix.len());
                candidate = format!("{}{suffix}", truncate(&base, keep));
                n += 1;
            }
            used.insert(candidate.to_ascii_lowercase());
            candidate
        })
        .collect()
}

/// The safe name of one tool of `safe_server` (a name from
/// [`safe_server_names`]): the tool part sanitised and cut to the budget
/// `max(1, 64 - len(server) - 2)`; on a case-insensitive clash with
/// `reserved`, the part is cut to `budget - len("-N")` and `-N` appended,
/// N from 2. The result is added to `reserved` (lowercased).
pub fn safe_tool_name(safe_server: &str, raw_tool: &str, reserved: &mut HashSet<String>) -> String {
    let budget = MAX_TOOL_NAME_CHARS
        .saturating_sub(safe_server.len() + TOOL_NAME_SEPARATOR.len())
        .max(1);
    let fragment = sanitize_fragment(raw_tool, TOOL_FALLBACK);
    let mut part = truncate(&fragment, budget).to_owned();
    if part.is_empty() {
        part = TOOL_FALLBACK.to_owned();
    }
    let mut name = format!("{safe_server}{TOOL_NAME_SEPARATOR}{part}");
    let mut n = 2usize;
    while reserved.contains(&name.to_ascii_lowercase()) {
        let suffix = format!("-{n}");
        let keep = budget.saturating_sub(suffix.len());
        name = format!(
            "{safe_server}{TOOL_NAME_SEPARATOR}{}{suffix}",
            truncate(&fragment, keep)
        );
        n += 1;
    }
    reserved.insert(name.to_ascii_lowercase());
    name
}

/// Whether `name` is a valid materialised tool name: non-empty, at most
/// 64 characters of `[A-Za-z0-9_-]`, starting with an ASCII letter.
pub fn is_valid_tool_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= MAX_TOOL_NAME_CHARS
        && name.starts_with(|c: char| c.is_ascii_alphabetic())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

#[cfg(test)]
#[path = "names_tests.rs"]
mod tests;
