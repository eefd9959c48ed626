//! Applying the hunks of one `*** Update File` section to a file's text.
//!
//! Hunks apply in order, each searched for after the previous one. A
//! hunk's `@@` anchors are found first (each the first matching line after
//! the cursor); its expected lines (context and removed) must then match:
//! right after the last anchor's search start when it has anchors, exactly
//! once after the cursor when it has none, and at the very end for a hunk
//! marked `*** End of File`. Lines compare exactly, then (as the only fuzz)
//! ignoring trailing whitespace. A hunk that only adds lines goes after its
//! last anchor, or at the end of the file.

use super::common::{line_list, preview};
use talon_patch::{Hunk, HunkLine};

/// Why a hunk does not apply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum HunkFailure {
    /// An `@@` anchor line is not in the file (after the previous hunk).
    AnchorNotFound { anchor: String },
    /// The hunk's expected lines are not in the file; `first_line_at`
    /// lists where its first expected line occurs, as a hint.
    ContextNotFound { first_line_at: Vec<usize> },
    /// The expected lines occur several times (1-based start lines).
    Ambiguous { lines: Vec<usize> },
}

/// A hunk that does not apply: which one and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct HunkError {
    /// The hunk's label (number and first line).
    pub(crate) hunk: String,
    /// Why.
    pub(crate) failure: HunkFailure,
}

impl HunkError {
    /// The message, for a file named `path`.
    pub(crate) fn message(&self, path: &str) -> String {
        let what = format!("`Update File: {path}`, {}", self.hunk);
        match &self.failure {
            HunkFailure::AnchorNotFound { anchor } => format!(
                "{what}: its @@ line {} was not found in the file (after the previous hunk); it must be a line of the file, copied exactly",
                preview(anchor)
            ),
            HunkFailure::ContextNotFound { first_line_at } if first_line_at.is_empty() => {
                format!(
                    "{what}: context not found; its ` ` and `-` lines must match the file exactly (after the previous hunk); read the file again and rewrite the hunk"
                )
            }
            HunkFailure::ContextNotFound { first_line_at } => format!(
                "{what}: context not found; its first line matches line{} {} but the following ` `/`-` lines differ from the file; read those lines again and copy them exactly",
                if first_line_at.len() == 1 { "" } else { "s" },
                line_list(first_line_at, 8)
            ),
            HunkFailure::Ambiguous { lines } => format!(
                "{what}: ambiguous; its ` ` and `-` lines match {} places (lines {}); add more context lines or an `@@` line naming the enclosing function or section",
                lines.len(),
                line_list(lines, 12)
            ),
        }
    }
}

/// Whether two lines are the same, exactly or (when `loose`) up to
/// trailing whitespace.
fn same(a: &str, b: &str, loose: bool) -> bool {
    if loose {
        a.trim_end() == b.trim_end()
    } else {
        a == b
    }
}

/// Start indices `>= from` where `pattern` matches `lines`.
fn find_all(lines: &[&str], pattern: &[&str], from: usize, loose: bool) -> Vec<usize> {
    if pattern.is_empty() || pattern.len() > lines.len() {
        return Vec::new();
    }
    (from..=lines.len() - pattern.len())
        .filter(|&i| {
            pattern
                .iter()
                .zip(&lines[i..])
                .all(|(p, l)| same(l, p, loose))
        })
        .collect()
}

/// Matches of `pattern` from `from`: exact ones, or else loose ones.
fn find(lines: &[&str], pattern: &[&str], from: usize) -> Vec<usize> {
    let exact = find_all(lines, pattern, from, false);
    if exact.is_empty() {
        find_all(lines, pattern, from, true)
    } else {
        exact
    }
}

/// The file's text split into lines, with what it takes to put it back.
struct Lines<'a> {
    lines: Vec<&'a str>,
    crlf: bool,
    trailing_newline: bool,
}

fn split(text: &str) -> Lines<'_> {
    let newlines = text.matches('\n').count();
    let crlf = newlines > 0 && text.matches("\r\n").count() == newlines;
    let trailing_newline = text.ends_with('\n');
    let body = text.strip_suffix('\n').unwrap_or(text);
    let mut lines: Vec<&str> = if text.is_empty() {
        Vec::new()
    } else {
        body.split('\n').collect()
    };
    if crlf {
        for l in &mut lines {
            *l = l.strip_suffix('\r').unwrap_or(l);
        }
    }
    Lines {
        lines,
        crlf,
        trailing_newline,
    }
}

/// Apply `hunks` to `original`. Line ends (LF or CRLF) and the presence of
/// a final newline are kept; an empty file gets one.
pub(crate) fn apply_hunks(original: &str, hunks: &[Hunk]) -> Result<String, HunkError> {
    let file = split(original);
    let lines = &file.lines;
    // (start, how many old lines, new lines)
    let mut replacements: Vec<(usize, usize, Vec<&str>)> = Vec::with_capacity(hunks.len());
    let mut cursor = 0;
    for hunk in hunks {
        let fail = |failure| HunkError {
            hunk: hunk.label(),
            failure,
        };
        for anchor in &hunk.anchors {
            let at = find(lines, &[anchor.as_str()], cursor);
            match at.first() {
                Some(&i) => cursor = i + 1,
                None => {
                    return Err(fail(HunkFailure::AnchorNotFound {
                        anchor: anchor.clone(),
                    }));
                }
            }
        }
        let old = hunk.old_lines();
        if old.is_empty() {
            let new = hunk.new_lines();
            let at = if hunk.anchors.is_empty() || hunk.end_of_file {
                lines.len()
            } else {
                cursor
            };
            replacements.push((at, 0, new));
            cursor = at;
            continue;
        }
        let mut matches = find(lines, &old, cursor);
        if matches.is_empty() && !hunk.anchors.is_empty() {
            // The hunk may repeat its anchor as its first context line.
            matches = find(lines, &old, cursor.saturating_sub(1));
        }
        let start = if hunk.end_of_file {
            match lines.len().checked_sub(old.len()) {
                Some(tail) if matches.contains(&tail) => tail,
                _ => return Err(fail(not_found(lines, &old, cursor))),
            }
        } else {
            match matches.as_slice() {
                [] => return Err(fail(not_found(lines, &old, cursor))),
                [only] => *only,
                [first, ..] if !hunk.anchors.is_empty() => *first,
                many => {
                    return Err(fail(HunkFailure::Ambiguous {
                        lines: many.iter().map(|i| i + 1).collect(),
                    }));
                }
            }
        };
        // Context lines keep the file's own text (its trailing whitespace
        // when the match was loose); removed lines go, added lines come in.
        let mut from_file = start;
        let mut kept = Vec::with_capacity(hunk.lines.len());
        for line in &hunk.lines {
            match line {
                HunkLine::Context(_) => {
                    kept.push(lines[from_file]);
                    from_file += 1;
                }
                HunkLine::Remove(_) => from_file += 1,
                HunkLine::Add(text) => kept.push(text.as_str()),
            }
        }
        replacements.push((start, old.len(), kept));
        cursor = start + old.len();
    }
    let mut out: Vec<&str> = Vec::with_capacity(lines.len() + 16);
    let mut at = 0;
    for (start, len, new) in &replacements {
        out.extend_from_slice(&lines[at..*start]);
        out.extend_from_slice(new);
        at = start + len;
    }
    out.extend_from_slice(&lines[at..]);
    let eol = if file.crlf { "\r\n" } else { "\n" };
    let mut text = out.join(eol);
    if !out.is_empty() && (file.trailing_newline || original.is_empty()) {
        text.push_str(eol);
    }
    Ok(text)
}

fn not_found(lines: &[&str], old: &[&str], cursor: usize) -> HunkFailure {
    let first_line_at = old
        .first()
        .map(|first| find(lines, &[*first], cursor))
        .unwrap_or_default()
        .into_iter()
        .map(|i| i + 1)
        .collect();
    HunkFailure::ContextNotFound { first_line_at }
}

#[cfg(test)]
#[path = "patch_apply_tests.rs"]
mod tests;
