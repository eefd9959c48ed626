//! `SKILL.md` frontmatter, read the way OpenClaw reads it (facts §11.1;
//! `packages/markdown-core/src/frontmatter.ts`,
//! `src/skills/loading/frontmatter.ts`, `src/shared/frontmatter.ts`).
//!
//! Parsing never fails and never panics: whatever goes wrong becomes a
//! warning, and the worst case is an empty frontmatter.
//!
//! 1. The text is normalised (one leading BOM dropped, CRLF and CR → LF).
//! 2. The block is fenced by a first line `---` (optional trailing
//!    whitespace) and the next line that is `---` (optional trailing
//!    whitespace) or `---` at the end of the input. Without both fences
//!    there is no frontmatter and the body is the whole text.
//! 3. The block is read as YAML into a bounded tree ([`value`]), every
//!    top-level value stringified (`fields`); when YAML fails, a line parser
//!    takes over ([`block`]).
//! 4. The fields are interpreted: name, description, invocation policy,
//!    command dispatch, and the `metadata` manifest ([`manifest`]), whose
//!    install specs are validated as a filter.

mod block;
mod manifest;
mod value;

use crate::types::{ParsedSkillFile, SkillFrontmatter};

/// Longest name the Agent Skills rules allow.
const MAX_NAME_CHARS: usize = 64;
/// Longest description the Agent Skills rules allow.
const MAX_DESCRIPTION_CHARS: usize = 1024;
/// Longest value quoted back in a warning.
const MAX_QUOTED_CHARS: usize = 120;

/// Parse a `SKILL.md`. Never fails, never panics: problems are reported in
/// [`ParsedSkillFile::warnings`].
pub fn parse_skill_md(text: &str) -> ParsedSkillFile {
    let normalized = normalize(text);
    let mut warnings = Vec::new();
    let mut frontmatter = SkillFrontmatter {
        user_invocable: true,
        ..SkillFrontmatter::default()
    };
    let (block, body) = match split_fences(&normalized) {
        Fences::Found { block, body } => (block, body.to_owned()),
        Fences::Unterminated => {
            warnings.push(
                "frontmatter has an opening --- line but no closing --- line; the file is read as plain Markdown"
                    .to_owned(),
            );
            return ParsedSkillFile {
                frontmatter,
                body: normalized,
                warnings,
            };
        }
        Fences::Absent => {
            return ParsedSkillFile {
                frontmatter,
                body: normalized,
                warnings,
            };
        }
    };

    let parsed = if block.is_empty() {
        block::BlockFields::default()
    } else {
        block::parse_block(block, &mut warnings)
    };
    let fields = parsed.fields;

    frontmatter.name = trimmed(fields.get("name"));
    frontmatter.description = trimmed(fields.get("description"));
    frontmatter.user_invocable = invocation_flag(&fields, "user-invocable", true, &mut warnings);
    frontmatter.disable_model_invocation =
        invocation_flag(&fields, "disable-model-invocation", false, &mut warnings);
    frontmatter.command_dispatch = trimmed(fields.get("command-dispatch"));
    frontmatter.command_tool = trimmed(fields.get("command-tool"));
    frontmatter.command_arg_mode = trimmed(fields.get("command-arg-mode"));
    frontmatter.manifest = manifest::resolve_manifest(
        fields.get("metadata").map(String::as_str),
        parsed.structured.get("metadata").map(String::as_str),
        &mut warnings,
    );
    if let Some(name) = &frontmatter.name {
        name_warnings(name, &mut warnings);
    }
    if let Some(description) = &frontmatter.description {
        let chars = description.chars().count();
        if chars > MAX_DESCRIPTION_CHARS {
            warnings.push(format!(
                "description is {chars} characters long; the Agent Skills rules allow at most {MAX_DESCRIPTION_CHARS}"
            ));
        }
    }
    frontmatter.fields = fields;
    ParsedSkillFile {
        frontmatter,
        body,
        warnings,
    }
}

/// Drop one leading BOM; CRLF and lone CR become LF.
fn normalize(text: &str) -> String {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    text.replace("\r\n", "\n").replace('\r', "\n")
}

/// JavaScript's `\s` without `\n` (the fences allow it after `---`).
pub(crate) fn is_js_space(c: char) -> bool {
    matches!(
        c,
        '\t' | '\u{b}' | '\u{c}' | '\r' | ' ' | '\u{a0}' | '\u{1680}' | '\u{2000}'
            ..='\u{200a}'
                | '\u{2028}'
                | '\u{2029}'
                | '\u{202f}'
                | '\u{205f}'
                | '\u{3000}'
                | '\u{feff}'
    )
}

/// Where the fences are.
#[derive(Debug, PartialEq, Eq)]
enum Fences<'a> {
    /// No opening fence.
    Absent,
    /// An opening fence and no closing one.
    Unterminated,
    /// The block between the fences and the text after the closing one.
    Found { block: &'a str, body: &'a str },
}

fn is_fence(line: &str) -> bool {
    line.strip_prefix("---")
        .is_some_and(|rest| rest.chars().all(is_js_space))
}

fn split_fences(text: &str) -> Fences<'_> {
    let Some((first, tail)) = text.split_once('\n') else {
        return Fences::Absent;
    };
    if !is_fence(first) {
        return Fences::Absent;
    }
    let mut start = 0;
    loop {
        let rest = tail.get(start..).unwrap_or("");
        let (line, next) = match rest.find('\n') {
            Some(end) => (rest.get(..end).unwrap_or(""), Some(start + end + 1)),
            None => (rest, None),
        };
        if is_fence(line) {
            let block = tail.get(..start.saturating_sub(1)).unwrap_or("");
            let body = next.and_then(|n| tail.get(n..)).unwrap_or("");
            return Fences::Found { block, body };
        }
        match next {
            Some(n) => start = n,
            None => return Fences::Unterminated,
        }
    }
}

fn trimmed(value: Option<&String>) -> Option<String> {
    value
        .map(|v| v.trim_matches(is_js_space).to_owned())
        .filter(|v| !v.is_empty())
}

/// OpenClaw's `parseBooleanValue`: true/1/yes/on, false/0/no/off, any case.
pub(crate) fn parse_bool(value: &str) -> Option<bool> {
    match value
        .trim_matches(is_js_space)
        .to_ascii_lowercase()
        .as_str()
    {
        "true" | "1" | "yes" | "on" => Some(true),
        "false" | "0" | "no" | "off" => Some(false),
        _ => None,
    }
}

fn invocation_flag(
    fields: &std::collections::BTreeMap<String, String>,
    key: &str,
    default: bool,
    warnings: &mut Vec<String>,
) -> bool {
    let Some(raw) = fields.get(key) else {
        return default;
    };
    if raw.trim_matches(is_js_space).is_empty() {
        return default;
    }
    parse_bool(raw).unwrap_or_else(|| {
        warnings.push(format!(
            "{key}: {} is not a boolean (true/false, yes/no, on/off, 1/0); using the default ({default})",
            quoted(raw)
        ));
        default
    })
}

/// The Agent Skills naming rules, as warnings.
fn name_warnings(name: &str, warnings: &mut Vec<String>) {
    let shown = quoted(name);
    if !name
        .chars()
        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
    {
        warnings.push(format!(
            "name {shown} should use only lowercase letters, digits and hyphens (Agent Skills naming rules)"
        ));
    }
    let chars = name.chars().count();
    if chars > MAX_NAME_CHARS {
        warnings.push(format!(
            "name {shown} is {chars} characters long; the Agent Skills rules allow at most {MAX_NAME_CHARS}"
        ));
    }
    if name.starts_with('-') || name.ends_with('-') {
        warnings.push(format!(
            "name {shown} must not start or end with a hyphen (Agent Skills naming rules)"
        ));
    }
    if name.contains("--") {
        warnings.push(format!(
            "name {shown} must not contain consecutive hyphens (Agent Skills naming rules)"
        ));
    }
}

/// A value quoted for a warning: control and invisible characters escaped,
/// cut to a readable length (skill files are untrusted; warnings reach
/// terminals and logs).
pub(crate) fn quoted(value: &str) -> String {
    let mut out = String::from("\"");
    for (i, c) in value.chars().enumerate() {
        if i == MAX_QUOTED_CHARS {
            out.push_str("\"…");
            return out;
        }
        out.extend(c.escape_debug());
    }
    out.push('"');
    out
}

#[cfg(test)]
#[path = "mod_tests.rs"]
mod tests;

#[cfg(test)]
#[path = "manifest_tests.rs"]
mod manifest_tests;
