//! Pure logic of `edit`: exact replacements, each matched once against the
//! original text, applied together or not at all.

use super::common::{line_list, preview};

/// One replacement asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Replacement {
    /// The parameter its old text came from (`edits[0].oldText`, or
    /// `oldText` for the single-replacement form), for messages.
    pub(crate) param: String,
    /// The exact text to replace.
    pub(crate) old_text: String,
    /// Its replacement.
    pub(crate) new_text: String,
}

/// Why the replacements cannot be applied.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum EditError {
    /// `oldText` is empty.
    EmptyOldText { param: String },
    /// `oldText` occurs nowhere; `near` holds lines that look like its
    /// first line.
    NotFound {
        param: String,
        first_line: String,
        near: Vec<usize>,
        near_kind: NearKind,
    },
    /// `oldText` occurs more than once, starting at these lines.
    Ambiguous { param: String, lines: Vec<usize> },
    /// Two replacements touch the same text.
    Overlap {
        first: String,
        second: String,
        first_lines: (usize, usize),
        second_lines: (usize, usize),
    },
    /// The result equals the original.
    NoChange,
}

/// How the lines in a not-found hint were chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum NearKind {
    /// The first line of `oldText` matches these lines once trimmed.
    FirstLine,
    /// These lines are the most similar to the first line of `oldText`.
    Similar,
}

impl EditError {
    /// The parameter at fault (`path` for a no-op edit).
    pub(crate) fn param(&self) -> String {
        match self {
            EditError::EmptyOldText { param }
            | EditError::NotFound { param, .. }
            | EditError::Ambiguous { param, .. } => param.clone(),
            EditError::Overlap { second, .. } => second.clone(),
            EditError::NoChange => "newText".to_owned(),
        }
    }

    /// What went wrong, what was expected and how to fix it.
    pub(crate) fn message(&self, path: &str) -> String {
        match self {
            EditError::EmptyOldText { param } => format!(
                "{param} is empty; give the exact text to replace (to create or overwrite a whole file, use write)"
            ),
            EditError::NotFound {
                param,
                first_line,
                near,
                near_kind,
            } => {
                let mut m = format!(
                    "{param} was not found in {path}; it must match the file exactly, including whitespace and indentation."
                );
                match (near.is_empty(), near_kind) {
                    (true, _) => m.push_str(
                        " No line resembles its first line; read the file again before editing.",
                    ),
                    (false, NearKind::FirstLine) => m.push_str(&format!(
                        " Its first line {} appears at line{} {}; read around there and copy the text exactly.",
                        preview(first_line),
                        if near.len() == 1 { "" } else { "s" },
                        line_list(near, 8)
                    )),
                    (false, NearKind::Similar) => m.push_str(&format!(
                        " The lines most like its first line {} are {}; read them and copy the text exactly.",
                        preview(first_line),
                        line_list(near, 8)
                    )),
                }
                m
            }
            EditError::Ambiguous { param, lines } => format!(
                "{param} was found {} times in {path}, at lines {}; it must match exactly once, so include more surrounding lines to make it unique.",
                lines.len(),
                line_list(lines, 12)
            ),
            EditError::Overlap {
                first,
                second,
                first_lines,
                second_lines,
            } => format!(
                "{first} (lines {}-{}) and {second} (lines {}-{}) overlap in {path}; merge them into one edit.",
                first_lines.0, first_lines.1, second_lines.0, second_lines.1
            ),
            EditError::NoChange => format!(
                "the edits leave {path} unchanged (each newText equals its oldText); nothing was written."
            ),
        }
    }
}

/// The 1-based line of byte `at`.
fn line_of(text: &str, at: usize) -> usize {
    text.as_bytes()[..at]
        .iter()
        .filter(|b| **b == b'\n')
        .count()
        + 1
}

/// The start offsets of every occurrence of `needle` (overlapping ones
/// too, so `aa` in `aaa` counts twice).
fn occurrences(haystack: &str, needle: &str) -> Vec<usize> {
    let mut found = Vec::new();
    let mut from = 0;
    while let Some(i) = haystack[from..].find(needle) {
        found.push(from + i);
        let step = haystack[from + i..]
            .chars()
            .next()
            .map_or(1, char::len_utf8);
        from += i + step;
        if from > haystack.len() {
            break;
        }
    }
    found
}

/// Lines that look like the first non-blank line of `old`.
fn nearest(original: &str, old: &str) -> (String, Vec<usize>, NearKind) {
    let first = old
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or_default()
        .to_owned();
    if first.is_empty() {
        return (first, Vec::new(), NearKind::FirstLine);
    }
    let same: Vec<usize> = original
        .lines()
        .enumerate()
        .filter(|(_, l)| l.trim() == first)
        .map(|(i, _)| i + 1)
        .collect();
    if !same.is_empty() {
        return (first, same, NearKind::FirstLine);
    }
    // Rank lines by character similarity; bounded so a huge file stays cheap.
    let mut scored: Vec<(f32, usize)> = original
        .lines()
        .take(10_000)
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty() && l.len() <= 400)
        .map(|(i, l)| {
            let ratio = similar::TextDiff::from_chars(l.trim(), first.as_str()).ratio();
            (ratio, i + 1)
        })
        .filter(|(r, _)| *r >= 0.6)
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    let mut near: Vec<usize> = scored.into_iter().take(3).map(|(_, l)| l).collect();
    near.sort_unstable();
    (first, near, NearKind::Similar)
}

/// A located replacement.
struct Located<'r> {
    start: usize,
    end: usize,
    new_text: std::borrow::Cow<'r, str>,
    param: &'r str,
}

/// Apply every replacement to `original`: each `oldText` must occur exactly
/// once in the original text and no two may overlap. A file with CRLF line
/// ends also matches an `oldText` written with LF ends (its `newText` then
/// gets CRLF ends too).
pub(crate) fn apply_edits(original: &str, edits: &[Replacement]) -> Result<String, EditError> {
    let crlf = original.contains("\r\n");
    let mut located = Vec::with_capacity(edits.len());
    for edit in edits {
        if edit.old_text.is_empty() {
            return Err(EditError::EmptyOldText {
                param: edit.param.clone(),
            });
        }
        let mut old = std::borrow::Cow::Borrowed(edit.old_text.as_str());
        let mut new = std::borrow::Cow::Borrowed(edit.new_text.as_str());
        let mut hits = occurrences(original, &old);
        if hits.is_empty() && crlf && old.contains('\n') && !old.contains('\r') {
            let converted = old.replace('\n', "\r\n");
            let converted_hits = occurrences(original, &converted);
            if !converted_hits.is_empty() {
                hits = converted_hits;
                old = std::borrow::Cow::Owned(converted);
                new = std::borrow::Cow::Owned(new.replace("\r\n", "\n").replace('\n', "\r\n"));
            }
        }
        match hits.as_slice() {
            [] => {
                let (first_line, near, near_kind) = nearest(original, &edit.old_text);
                return Err(EditError::NotFound {
                    param: edit.param.clone(),
                    first_line,
                    near,
                    near_kind,
                });
            }
            [start] => located.push(Located {
                start: *start,
                end: start + old.len(),
                new_text: new,
                param: &edit.param,
            }),
            many => {
                return Err(EditError::Ambiguous {
                    param: edit.param.clone(),
                    lines: many.iter().map(|at| line_of(original, *at)).collect(),
                });
            }
        }
    }
    located.sort_by_key(|l| (l.start, l.end));
    for pair in located.windows(2) {
        let (a, b) = (&pair[0], &pair[1]);
        if b.start < a.end {
            let span = |l: &Located<'_>| {
                (
                    line_of(original, l.start),
                    line_of(original, l.end.saturating_sub(1).max(l.start)),
                )
            };
            return Err(EditError::Overlap {
                first: a.param.to_owned(),
                second: b.param.to_owned(),
                first_lines: span(a),
                second_lines: span(b),
            });
        }
    }
    let mut out = String::with_capacity(original.len());
    let mut at = 0;
    for l in &located {
        out.push_str(&original[at..l.start]);
        out.push_str(&l.new_text);
        at = l.end;
    }
    out.push_str(&original[at..]);
    if out == original {
        return Err(EditError::NoChange);
    }
    Ok(out)
}

#[cfg(test)]
#[path = "edit_match_tests.rs"]
mod tests;
