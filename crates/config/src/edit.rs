//! In-place edits of a config file's text that keep everything else
//! (comments, layout, quoting of other values) byte for byte: used by
//! `talon security audit --fix` to replace a plain-text secret with a
//! `${secret:NAME}` reference.

use crate::json5_spanned::parse;
use crate::spans::{Pos, Seg};

/// Why a string value cannot be replaced in place.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum EditError {
    /// The text is not a JSON5 document.
    #[error("the file is not valid JSON5 (line {line}, column {column})")]
    Syntax {
        /// Where.
        line: u32,
        /// Where.
        column: u32,
    },
    /// Nothing at that key path.
    #[error("no value at `{0}`")]
    Missing(String),
    /// The value there is not the expected string literal (changed since
    /// it was read, or written in a form this edit does not rewrite).
    #[error("the value at `{0}` is not the expected string literal; left unchanged")]
    Unexpected(String),
}

fn byte_offset(text: &str, pos: Pos) -> Option<usize> {
    let mut line = 1u32;
    let mut col = 1u32;
    for (i, c) in text.char_indices() {
        if line == pos.line && col == pos.column {
            return Some(i);
        }
        if c == '\n' {
            line += 1;
            col = 1;
        } else {
            col += 1;
        }
    }
    None
}

/// Where the string literal at `path` sits in `text`, when it decodes to
/// `expected`: the parsed span node's key position (for a member) and the
/// literal's byte range, quotes included.
struct Located {
    key: Option<usize>,
    start: usize,
    end: usize,
}

fn locate(text: &str, path: &[&str], expected: &str) -> Result<Located, EditError> {
    let shown = path.join(".");
    let parsed = parse(text).map_err(|e| EditError::Syntax {
        line: e.pos.line,
        column: e.pos.column,
    })?;
    let mut segs = Vec::with_capacity(path.len());
    let mut node = &parsed.value;
    for p in path {
        let seg = match (node, p.parse::<usize>()) {
            (serde_json::Value::Array(_), Ok(i)) => Seg::Index(i),
            _ => Seg::Key((*p).to_owned()),
        };
        node = match &seg {
            Seg::Index(i) => node.get(*i),
            Seg::Key(k) => node.get(k),
        }
        .ok_or_else(|| EditError::Missing(shown.clone()))?;
        segs.push(seg);
    }
    if node.as_str() != Some(expected) {
        return Err(EditError::Unexpected(shown));
    }
    let span = parsed
        .spans
        .lookup(&segs)
        .ok_or_else(|| EditError::Missing(shown.clone()))?;
    let start =
        byte_offset(text, span.value).ok_or_else(|| EditError::Unexpected(shown.clone()))?;
    let end = quoted_end(text, start).ok_or_else(|| EditError::Unexpected(shown.clone()))?;
    // The literal must decode to the value read (no surprise in between).
    let literal = parse(&text[start..end]).map_err(|_| EditError::Unexpected(shown.clone()))?;
    if literal.value.as_str() != Some(expected) {
        return Err(EditError::Unexpected(shown));
    }
    let key = match span.key {
        Some(pos) => Some(byte_offset(text, pos).ok_or(EditError::Unexpected(shown))?),
        None => None,
    };
    Ok(Located { key, start, end })
}

/// The byte just past the quoted literal starting at `start`, or `None`
/// when no quote starts there or it never closes.
fn quoted_end(text: &str, start: usize) -> Option<usize> {
    let quote = text[start..]
        .chars()
        .next()
        .filter(|c| *c == '"' || *c == '\'')?;
    let mut escaped = false;
    for (i, c) in text[start + 1..].char_indices() {
        if escaped {
            escaped = false;
        } else if c == '\\' {
            escaped = true;
        } else if c == quote {
            return Some(start + 1 + i + 1);
        }
    }
    None
}

/// Replace the string at `path` (object keys; an all-digit segment indexes
/// an array) with the JSON string `replacement`, only when it is a quoted
/// literal whose value is `expected`. Returns the new text; every byte
/// outside the literal is kept.
pub fn replace_string_value(
    text: &str,
    path: &[&str],
    expected: &str,
    replacement: &str,
) -> Result<String, EditError> {
    let at = locate(text, path, expected)?;
    let quoted = serde_json::Value::String(replacement.to_owned()).to_string();
    Ok(format!(
        "{}{}{}",
        &text[..at.start],
        quoted,
        &text[at.end..]
    ))
}

/// Replace the object member at `path` (whose value must be the string
/// literal `expected`) with the member `new_key: replacement`, keeping the
/// key's quoting style and every byte outside the member: used to turn a
/// plain-text `token` into its `tokenSha256`. `new_key` must be a plain
/// identifier (ASCII letters, digits, `_`, `$`).
pub fn replace_string_member(
    text: &str,
    path: &[&str],
    expected: &str,
    new_key: &str,
    replacement: &str,
) -> Result<String, EditError> {
    let shown = path.join(".");
    let unexpected = || EditError::Unexpected(shown.clone());
    let plain = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '$';
    if new_key.is_empty() || !new_key.chars().all(plain) {
        return Err(unexpected());
    }
    let at = locate(text, path, expected)?;
    let key_start = at.key.ok_or_else(unexpected)?;
    let old_key = path.last().ok_or_else(unexpected)?;
    let (key_end, quote) = match quoted_end(text, key_start) {
        Some(end) => {
            let decoded = parse(&text[key_start..end]).map_err(|_| unexpected())?;
            if decoded.value.as_str() != Some(*old_key) {
                return Err(unexpected());
            }
            (end, &text[key_start..=key_start])
        }
        None => {
            let len = text[key_start..]
                .find(|c: char| !plain(c))
                .unwrap_or(text.len() - key_start);
            if &text[key_start..key_start + len] != *old_key {
                return Err(unexpected());
            }
            (key_start + len, "")
        }
    };
    if key_end > at.start {
        return Err(unexpected());
    }
    let quoted = serde_json::Value::String(replacement.to_owned()).to_string();
    Ok(format!(
        "{}{quote}{new_key}{quote}{}{quoted}{}",
        &text[..key_start],
        &text[key_end..at.start],
        &text[at.end..]
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_member_is_renamed_in_its_own_quoting_and_every_other_byte_kept() {
        let text = "{\n  gateway: { auth: { tokens: [\n    { id: 'a', token: 'abc' /* x */, scope: 'owner' },\n    { \"token\" :\t\"d\\u0065f\", scope: 'runner' },\n  ] } },\n}\n";
        let out = replace_string_member(
            text,
            &["gateway", "auth", "tokens", "0", "token"],
            "abc",
            "tokenSha256",
            "h1",
        )
        .unwrap();
        assert_eq!(out, text.replace("token: 'abc'", "tokenSha256: \"h1\""));
        let out = replace_string_member(
            &out,
            &["gateway", "auth", "tokens", "1", "token"],
            "def",
            "tokenSha256",
            "h2",
        )
        .unwrap();
        assert_eq!(
            out,
            text.replace("token: 'abc'", "tokenSha256: \"h1\"")
                .replace("\"token\" :\t\"d\\u0065f\"", "\"tokenSha256\" :\t\"h2\"")
        );
        // Done already, or the value changed: nothing is touched.
        assert!(matches!(
            replace_string_member(
                &out,
                &["gateway", "auth", "tokens", "0", "token"],
                "abc",
                "tokenSha256",
                "h1"
            ),
            Err(EditError::Missing(_))
        ));
        assert!(matches!(
            replace_string_member(
                text,
                &["gateway", "auth", "tokens", "0", "token"],
                "zzz",
                "tokenSha256",
                "h1"
            ),
            Err(EditError::Unexpected(_))
        ));
        // An array element has no key to rename.
        assert!(matches!(
            replace_string_member("{ a: ['x'] }", &["a", "0"], "x", "b", "y"),
            Err(EditError::Unexpected(_))
        ));
        assert!(
            replace_string_member(
                text,
                &["gateway", "auth", "tokens", "0", "token"],
                "abc",
                "bad key",
                "h"
            )
            .is_err()
        );
    }

    #[test]
    fn a_literal_is_replaced_and_every_other_byte_kept() {
        let text = "// keep me\n{\n  mcp: { servers: { gh: { headers: { Authorization: 'Bearer x\\'y' /* c */ } } } },\n  agents: { list: [{ id: \"a\", mcp: { servers: { s: { env: { K: \"v\" } } } } }] },\n}\n";
        let out = replace_string_value(
            text,
            &["mcp", "servers", "gh", "headers", "Authorization"],
            "Bearer x'y",
            "${secret:gh}",
        )
        .unwrap();
        assert_eq!(out, text.replace("'Bearer x\\'y'", "\"${secret:gh}\""));
        let out = replace_string_value(
            &out,
            &["agents", "list", "0", "mcp", "servers", "s", "env", "K"],
            "v",
            "${secret:s}",
        )
        .unwrap();
        assert!(out.contains("K: \"${secret:s}\""), "{out}");
        assert!(out.starts_with("// keep me\n") && out.contains("/* c */"));
        assert_eq!(
            replace_string_value(
                &out,
                &["mcp", "servers", "gh", "headers", "Authorization"],
                "Bearer x'y",
                "z"
            ),
            Err(EditError::Unexpected(
                "mcp.servers.gh.headers.Authorization".to_owned()
            ))
        );
        assert!(matches!(
            replace_string_value(&out, &["mcp", "nope"], "v", "z"),
            Err(EditError::Missing(_))
        ));
    }
}
