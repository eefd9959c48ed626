//! The frontmatter block → `key → string` map, following OpenClaw's
//! `packages/markdown-core/src/frontmatter.ts`: YAML first, the line parser
//! when YAML fails, keys only the line parser saw merged in.

use std::collections::BTreeMap;

use super::value::{Node, ParseError, parse_yaml, to_compact_json, write_json_string};
use super::{is_js_space, quoted};

/// The stringified fields of one block.
#[derive(Debug, Default)]
pub(crate) struct BlockFields {
    /// Every key with its stringified value.
    pub(crate) fields: BTreeMap<String, String>,
    /// For keys whose raw line text won over a structured YAML value (the
    /// inline-`:` rule), the compact JSON of that YAML value.
    pub(crate) structured: BTreeMap<String, String>,
}

/// Parse one frontmatter block (the text between the fences).
pub(crate) fn parse_block(block: &str, warnings: &mut Vec<String>) -> BlockFields {
    let fallback = parse_lines(block);
    let error = match parse_yaml_once(block, &fallback) {
        Ok(parsed) => return parsed,
        Err(error) => error,
    };
    // OpenClaw's second chance: a `description:` whose plain value contains
    // `: ` (very common in hand-written skills) is re-quoted and retried.
    let error = match normalize_freeform_description(block) {
        Some(recovered) => match parse_yaml_once(&recovered, &fallback) {
            Ok(parsed) => return parsed,
            Err(error) => error,
        },
        None => error,
    };
    warnings.push(format!(
        "frontmatter is not valid YAML ({}); read it with the line parser instead",
        quoted(&error.to_string())
    ));
    BlockFields {
        fields: fallback,
        structured: BTreeMap::new(),
    }
}

fn parse_yaml_once(
    block: &str,
    fallback: &BTreeMap<String, String>,
) -> Result<BlockFields, ParseError> {
    let normalized = normalize_unindented_flow_continuations(block);
    let entries = match parse_yaml(&normalized)? {
        Node::Map(entries) => entries,
        // Only comments (or nothing): an empty mapping.
        Node::Null => Vec::new(),
        Node::Bool(_) | Node::Int(_) | Node::Float(_) | Node::Str(_) | Node::Seq(_) => {
            return Err(ParseError::NotMapping);
        }
    };
    let inline_colon_keys: Vec<&str> = normalized
        .split('\n')
        .filter_map(split_key_line)
        .filter(|(_, value)| value.contains(':'))
        .map(|(key, _)| key)
        .collect();

    let mut out = BlockFields::default();
    for (raw_key, value) in &entries {
        let key = raw_key.trim();
        if key.is_empty() {
            continue;
        }
        let Some((text, structured)) = coerce(value) else {
            continue;
        };
        match fallback.get(key) {
            Some(raw_line) if structured && inline_colon_keys.contains(&key) => {
                out.fields.insert(key.to_owned(), raw_line.clone());
                out.structured.insert(key.to_owned(), text);
            }
            Some(_) | None => {
                out.fields.insert(key.to_owned(), text);
            }
        }
    }
    for (key, value) in fallback {
        out.fields
            .entry(key.clone())
            .or_insert_with(|| value.clone());
    }
    Ok(out)
}

/// A top-level value as a string: strings trimmed, numbers and booleans as
/// text, null skipped, lists and maps as compact JSON (`true` = structured).
fn coerce(value: &Node) -> Option<(String, bool)> {
    match value {
        Node::Null => None,
        Node::Str(s) => Some((s.trim().to_owned(), false)),
        Node::Bool(_) | Node::Int(_) | Node::Float(_) => value.scalar_text().map(|t| (t, false)),
        Node::Seq(_) | Node::Map(_) => Some((to_compact_json(value), true)),
    }
}

/// `^([\w-]+):\s*(.*)$` on one line: the key and the rest, trimmed.
pub(crate) fn split_key_line(line: &str) -> Option<(&str, &str)> {
    let key_len = line.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '-'))?;
    let (key, rest) = line.split_at_checked(key_len)?;
    let value = rest.strip_prefix(':')?;
    if key.is_empty() {
        return None;
    }
    Some((key, value.trim_matches(is_js_space)))
}

fn starts_with_hspace(line: &str) -> bool {
    line.starts_with([' ', '\t'])
}

/// Strip one pair of matching surrounding quotes.
pub(crate) fn strip_quotes(value: &str) -> &str {
    for quote in ['"', '\''] {
        if value.starts_with(quote) && value.ends_with(quote) {
            return value.get(1..value.len().saturating_sub(1)).unwrap_or("");
        }
    }
    value
}

/// The line parser: `key: value` lines (quotes stripped); a key with an empty
/// value followed by indented lines takes those lines, joined.
pub(crate) fn parse_lines(block: &str) -> BTreeMap<String, String> {
    let lines: Vec<&str> = block.split('\n').collect();
    let mut result = BTreeMap::new();
    let mut i = 0;
    while let Some(line) = lines.get(i) {
        if let Some((key, raw)) = split_key_line(line) {
            let value = if raw.is_empty() && lines.get(i + 1).is_some_and(|l| starts_with_hspace(l))
            {
                let mut continuation = Vec::new();
                while let Some(next) = lines.get(i + 1) {
                    if !next.is_empty() && !starts_with_hspace(next) {
                        break;
                    }
                    continuation.push(*next);
                    i += 1;
                }
                continuation.join("\n").trim_matches(is_js_space).to_owned()
            } else {
                strip_quotes(raw).to_owned()
            };
            if !value.is_empty() {
                result.insert(key.to_owned(), value);
            }
        }
        i += 1;
    }
    result
}

/// Bracket balance of a line, ignoring brackets inside quotes.
fn flow_balance_delta(line: &str) -> i64 {
    let mut delta = 0i64;
    let mut quote: Option<char> = None;
    let mut escaped = false;
    for c in line.chars() {
        if escaped {
            escaped = false;
            continue;
        }
        if let Some(q) = quote {
            if c == '\\' {
                escaped = true;
            } else if c == q {
                quote = None;
            }
            continue;
        }
        match c {
            '"' | '\'' => quote = Some(c),
            '{' | '[' => delta += 1,
            '}' | ']' => delta -= 1,
            _ => {}
        }
    }
    delta
}

/// `key:` followed by an unindented `{`/`[` flow block (JSON pasted under a
/// key): indent the flow block so YAML reads it as the key's value.
fn normalize_unindented_flow_continuations(block: &str) -> String {
    let mut lines: Vec<String> = block.split('\n').map(str::to_owned).collect();
    let mut index = 0;
    while index + 1 < lines.len() {
        let bare_key = lines
            .get(index)
            .and_then(|l| split_key_line(l))
            .is_some_and(|(_, value)| value.is_empty());
        let flow_next = lines.get(index + 1).is_some_and(|next| {
            !next.is_empty()
                && !starts_with_hspace(next)
                && next.trim_start_matches(is_js_space).starts_with(['[', '{'])
        });
        if bare_key && flow_next {
            let mut balance = 0i64;
            let mut cursor = index + 1;
            while let Some(line) = lines.get_mut(cursor) {
                line.insert_str(0, "  ");
                balance += flow_balance_delta(line);
                if balance <= 0 {
                    index = cursor;
                    break;
                }
                cursor += 1;
            }
        }
        index += 1;
    }
    lines.join("\n")
}

/// Whether a raw value is a block-scalar header (`|`, `>-`, `|2+`, …).
fn is_block_scalar_header(value: &str) -> bool {
    let mut chars = value.chars();
    if !matches!(chars.next(), Some('|' | '>')) {
        return false;
    }
    let rest: Vec<char> = chars.collect();
    matches!(
        rest.as_slice(),
        [] | ['+' | '-'] | ['1'..='9'] | ['1'..='9', '+' | '-'] | ['+' | '-', '1'..='9']
    )
}

/// Re-quote a free-form `description:` value, or `None` when there is
/// nothing to re-quote.
fn normalize_freeform_description(block: &str) -> Option<String> {
    let mut lines: Vec<String> = block.split('\n').map(str::to_owned).collect();
    let position = lines.iter().position(|line| {
        ["description:", "\"description\":", "'description':"]
            .iter()
            .any(|prefix| line.starts_with(prefix))
    })?;
    let line = lines.get_mut(position)?;
    let (_, raw) = line.split_once(':')?;
    let raw = raw.trim_matches(is_js_space);
    if raw.is_empty() || is_block_scalar_header(raw) {
        return None;
    }
    let mut replacement = String::from("description: ");
    write_json_string(strip_quotes(raw), &mut replacement);
    if *line == replacement {
        return None;
    }
    *line = replacement;
    Some(lines.join("\n"))
}
