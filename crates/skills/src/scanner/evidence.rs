//! Evidence formatting and literal-credential detection
//! (OpenClaw `scan-evidence.ts`).
//!
//! The OpenClaw pattern uses a negative lookahead and a backreference, which
//! the `regex` crate does not support. Here the token alternatives are one
//! regex whose trailing lookahead became an explicit "non-token character or
//! end of text" group, and the PEM private-key block is matched by a second
//! regex whose BEGIN/END labels and minimum body length (48 base64
//! characters) are checked in code.

use std::sync::LazyLock;

use regex::Regex;

use super::compile_pattern as compile;
use super::normalize::{clean_invisible, escape_invisible};

/// The evidence text used whenever a line contains a literal credential.
pub(crate) const REDACTED: &str = "[REDACTED CREDENTIAL]";

/// Evidence longer than this (in characters) is cut and gets `…`.
pub(crate) const MAX_EVIDENCE_CHARS: usize = 120;

/// Minimum number of base64 characters between the PEM BEGIN/END lines.
const PEM_MIN_BODY_CHARS: usize = 48;

/// Token-shaped credentials. OpenClaw's alternatives, plus AWS access key
/// ids (`AKIA…`), a Talon addition.
pub(crate) const SECRET_TOKEN_PATTERN: &str = concat!(
    r"\b(?:sk-(?:proj-|svcacct-)?[A-Za-z0-9_-]{32,}",
    r"|gh[pousr]_[A-Za-z0-9]{20,}",
    r"|github_pat_[A-Za-z0-9_]{20,}",
    r"|xox[baprs]-[A-Za-z0-9-]{20,}",
    r"|AIza[0-9A-Za-z_-]{35}",
    r"|AKIA[0-9A-Z]{16})",
    r"(?:[^A-Za-z0-9_-]|$)",
);

/// A PEM private-key block; labels and body length are checked in code.
pub(crate) const PEM_BLOCK_PATTERN: &str = concat!(
    r"-----BEGIN ([A-Z0-9 ]*PRIVATE KEY)-----\r?\n",
    r"((?:[A-Za-z0-9+/=]+\r?\n)+)",
    r"-----END ([A-Z0-9 ]*PRIVATE KEY)-----",
);

/// A PEM private-key header on its own (used to redact single lines).
pub(crate) const PEM_HEADER_PATTERN: &str = r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----";

static SECRET_TOKEN: LazyLock<Option<Regex>> =
    LazyLock::new(|| compile("literal-secret/token", SECRET_TOKEN_PATTERN));
static PEM_BLOCK: LazyLock<Option<Regex>> =
    LazyLock::new(|| compile("literal-secret/pem", PEM_BLOCK_PATTERN));
static PEM_HEADER: LazyLock<Option<Regex>> =
    LazyLock::new(|| compile("literal-secret/pem-header", PEM_HEADER_PATTERN));

/// Byte offset of the first literal credential in `text`, if any.
pub(crate) fn find_literal_secret(text: &str) -> Option<usize> {
    let token = SECRET_TOKEN
        .as_ref()
        .and_then(|re| re.find(text))
        .map(|m| m.start());
    let pem = PEM_BLOCK.as_ref().and_then(|re| {
        re.captures_iter(text).find_map(|caps| {
            let begin = caps.get(1)?.as_str();
            let end = caps.get(3)?.as_str();
            let body = caps.get(2)?.as_str();
            let body_chars = body.bytes().filter(|b| !matches!(b, b'\r' | b'\n')).count();
            if begin == end && body_chars >= PEM_MIN_BODY_CHARS {
                caps.get(0).map(|m| m.start())
            } else {
                None
            }
        })
    });
    match (token, pem) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// Whether a single line should be redacted: it holds a token credential or
/// opens a PEM private-key block.
pub(crate) fn line_has_secret(line: &str) -> bool {
    SECRET_TOKEN.as_ref().is_some_and(|re| re.is_match(line))
        || PEM_HEADER.as_ref().is_some_and(|re| re.is_match(line))
}

/// Evidence for a finding: the trimmed line, at most
/// [`MAX_EVIDENCE_CHARS`] characters plus `…`, with invisible and control
/// characters escaped (`\u{200b}`), or [`REDACTED`] when the line contains
/// a literal credential.
pub(crate) fn format_evidence(line: &str) -> String {
    if line_has_secret(&clean_invisible(line)) {
        return REDACTED.to_owned();
    }
    let escaped = escape_invisible(line.trim());
    let trimmed = escaped.as_str();
    match trimmed.char_indices().nth(MAX_EVIDENCE_CHARS) {
        Some((cut, _)) => format!("{}…", &trimmed[..cut]),
        None => trimmed.to_owned(),
    }
}

#[cfg(test)]
#[path = "evidence_tests.rs"]
mod tests;
