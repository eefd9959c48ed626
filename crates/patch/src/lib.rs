//! Parser of the patch format OpenAI models emit for `apply_patch`:
//!
//! ```text
//! *** Begin Patch
//! *** Add File: path          every following line starts with `+`
//! *** Delete File: path
//! *** Update File: path
//! *** Move to: new/path       optional, right after Update File
//! @@ optional context line    starts a hunk; several @@ lines narrow it
//!  context / -removed / +added
//! *** End of File             optional: the hunk ends at the file's end
//! *** End Patch
//! ```
//!
//! A heredoc wrapper (`<<'EOF'` ... `EOF`, with or without a leading
//! `apply_patch`) and a trailing `\r` on each line are tolerated. Paths are
//! taken as written; the bridge resolves them.
//!
//! ```
//! let patch = talon_patch::parse_patch(
//!     "*** Begin Patch\n*** Delete File: old.txt\n*** End Patch",
//! )
//! .unwrap();
//! assert_eq!(patch.ops.len(), 1);
//! ```
#![deny(missing_docs)]

/// How a message quotes text it was given: the first 80 characters, in
/// backticks, with `…` when more was cut.
pub fn preview(s: &str) -> String {
    let mut p: String = s.chars().take(80).collect();
    if s.chars().count() > 80 {
        p.push('…');
    }
    format!("`{p}`")
}

/// A parsed patch: its file operations in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Patch {
    /// The file sections, in patch order.
    pub ops: Vec<FileOp>,
}

/// One file section.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FileOp {
    /// Create a file that must not exist yet.
    Add {
        /// The file, as written in the patch.
        path: String,
        /// Its content: the `+` lines without their `+`, each ending in a
        /// newline.
        content: String,
    },
    /// Remove a file that must exist.
    Delete {
        /// The file, as written in the patch.
        path: String,
    },
    /// Change a file (and possibly move it).
    Update {
        /// The file, as written in the patch.
        path: String,
        /// `*** Move to:`: where the changed file ends up.
        move_to: Option<String>,
        /// Its hunks, in order.
        hunks: Vec<Hunk>,
    },
}

/// One line of a hunk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HunkLine {
    /// Kept as is (` ` prefix, or an empty line).
    Context(String),
    /// Removed (`-`).
    Remove(String),
    /// Added (`+`).
    Add(String),
}

/// One `@@` hunk of an Update File section.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hunk {
    /// 1-based number within its file section.
    pub number: usize,
    /// The `@@` anchor lines, outermost first (may be empty).
    pub anchors: Vec<String>,
    /// Its lines.
    pub lines: Vec<HunkLine>,
    /// `*** End of File` followed it: it must match at the file's end.
    pub end_of_file: bool,
}

impl Hunk {
    /// The lines the hunk expects in the file (context and removed).
    pub fn old_lines(&self) -> Vec<&str> {
        self.lines
            .iter()
            .filter_map(|l| match l {
                HunkLine::Context(s) | HunkLine::Remove(s) => Some(s.as_str()),
                HunkLine::Add(_) => None,
            })
            .collect()
    }

    /// The lines the hunk leaves in the file (context and added).
    pub fn new_lines(&self) -> Vec<&str> {
        self.lines
            .iter()
            .filter_map(|l| match l {
                HunkLine::Context(s) | HunkLine::Add(s) => Some(s.as_str()),
                HunkLine::Remove(_) => None,
            })
            .collect()
    }

    /// How messages name the hunk: its number and first anchor or
    /// expected line.
    pub fn label(&self) -> String {
        let first = self
            .anchors
            .first()
            .map(|a| format!("@@ {a}"))
            .or_else(|| self.old_lines().first().map(|l| (*l).to_owned()));
        match first {
            Some(f) => format!("hunk {} ({})", self.number, preview(&f)),
            None => format!("hunk {}", self.number),
        }
    }
}

/// A patch that does not follow the format.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError {
    /// The 1-based line of the patch text at fault.
    pub line: usize,
    /// What is wrong and what was expected.
    pub message: String,
}

impl std::error::Error for ParseError {}

impl std::fmt::Display for ParseError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "patch line {}: {}", self.line, self.message)
    }
}

const BEGIN: &str = "*** Begin Patch";
const END: &str = "*** End Patch";
const ADD: &str = "*** Add File:";
const DELETE: &str = "*** Delete File:";
const UPDATE: &str = "*** Update File:";
const MOVE: &str = "*** Move to:";
const EOF_MARK: &str = "*** End of File";

fn err(line: usize, message: impl Into<String>) -> ParseError {
    ParseError {
        line,
        message: message.into(),
    }
}

/// The heredoc tag of a first line like `<<'EOF'` or `apply_patch <<EOF`.
fn heredoc_tag(line: &str) -> Option<&str> {
    let rest = line.trim();
    let rest = rest
        .strip_prefix("apply_patch")
        .map_or(rest, str::trim_start);
    let tag = rest.strip_prefix("<<")?.trim();
    let tag = tag.trim_matches(|c| c == '\'' || c == '"');
    (!tag.is_empty() && tag.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')).then_some(tag)
}

/// Parse patch text.
pub fn parse_patch(input: &str) -> Result<Patch, ParseError> {
    // (1-based line number, text without a trailing '\r')
    let mut lines: Vec<(usize, &str)> = input
        .split('\n')
        .enumerate()
        .map(|(i, l)| (i + 1, l.strip_suffix('\r').unwrap_or(l)))
        .collect();
    while lines.last().is_some_and(|(_, l)| l.trim().is_empty()) {
        lines.pop();
    }
    let first_content = lines.iter().position(|(_, l)| !l.trim().is_empty());
    let Some(first_content) = first_content else {
        return Err(err(
            1,
            "the patch is empty; it must start with `*** Begin Patch`",
        ));
    };
    lines.drain(..first_content);
    if let Some(tag) = lines.first().and_then(|(_, l)| heredoc_tag(l)) {
        let tag = tag.to_owned();
        if lines.last().is_some_and(|(_, l)| l.trim() == tag) {
            lines.remove(0);
            lines.pop();
        }
    }
    let Some(&(begin_no, begin)) = lines.first() else {
        return Err(err(
            1,
            "the patch is empty; it must start with `*** Begin Patch`",
        ));
    };
    if begin.trim() != BEGIN {
        return Err(err(
            begin_no,
            format!(
                "the patch must start with `{BEGIN}`, got {}",
                preview(begin)
            ),
        ));
    }
    let Some(&(end_no, end)) = lines.last() else {
        return Err(err(begin_no, format!("missing `{END}`")));
    };
    if lines.len() < 2 || end.trim() != END {
        return Err(err(
            end_no,
            format!("the patch must end with `{END}`, got {}", preview(end)),
        ));
    }
    let body = &lines[1..lines.len() - 1];
    let mut ops = Vec::new();
    let mut i = 0;
    while i < body.len() {
        let (no, line) = body[i];
        let header = line.trim_end();
        if header.trim().is_empty() {
            i += 1;
            continue;
        }
        if let Some(path) = header.strip_prefix(ADD) {
            let path = section_path(no, path, "Add File")?;
            i += 1;
            let mut content_lines: Vec<&str> = Vec::new();
            let mut blank_run = 0;
            while i < body.len() && !body[i].1.starts_with("*** ") {
                let (n, l) = body[i];
                if let Some(text) = l.strip_prefix('+') {
                    content_lines.extend(std::iter::repeat_n("", blank_run));
                    blank_run = 0;
                    content_lines.push(text);
                } else if l.trim().is_empty() {
                    blank_run += 1;
                } else {
                    return Err(err(
                        n,
                        format!(
                            "in `Add File: {path}` every content line must start with `+`, got {}",
                            preview(l)
                        ),
                    ));
                }
                i += 1;
            }
            let mut content = content_lines.join("\n");
            if !content_lines.is_empty() {
                content.push('\n');
            }
            ops.push(FileOp::Add { path, content });
        } else if let Some(path) = header.strip_prefix(DELETE) {
            let path = section_path(no, path, "Delete File")?;
            ops.push(FileOp::Delete { path });
            i += 1;
        } else if let Some(path) = header.strip_prefix(UPDATE) {
            let path = section_path(no, path, "Update File")?;
            i += 1;
            let mut move_to = None;
            if let Some(&(mno, mline)) = body.get(i)
                && let Some(dest) = mline.trim_end().strip_prefix(MOVE)
            {
                move_to = Some(section_path(mno, dest, "Move to")?);
                i += 1;
            }
            let (hunks, next) = parse_hunks(body, i, &path)?;
            i = next;
            if hunks.is_empty() && move_to.is_none() {
                return Err(err(
                    no,
                    format!(
                        "`Update File: {path}` has no hunks; add `@@` hunks with ` `, `-` and `+` lines, or a `*** Move to:` line"
                    ),
                ));
            }
            ops.push(FileOp::Update {
                path,
                move_to,
                hunks,
            });
        } else {
            return Err(err(
                no,
                format!(
                    "expected `{ADD} <path>`, `{UPDATE} <path>`, `{DELETE} <path>` or `{END}`, got {}",
                    preview(line)
                ),
            ));
        }
    }
    if ops.is_empty() {
        return Err(err(
            begin_no,
            "the patch has no file sections (`*** Add File:`, `*** Update File:` or `*** Delete File:`)",
        ));
    }
    Ok(Patch { ops })
}

fn section_path(line: usize, raw: &str, what: &str) -> Result<String, ParseError> {
    let path = raw.trim();
    if path.is_empty() {
        return Err(err(
            line,
            format!("`*** {what}:` needs a path after the colon"),
        ));
    }
    Ok(path.to_owned())
}

/// Parse the hunks of an Update File section starting at `body[i]`;
/// returns them and the index of the first line after the section.
fn parse_hunks(
    body: &[(usize, &str)],
    mut i: usize,
    path: &str,
) -> Result<(Vec<Hunk>, usize), ParseError> {
    let mut hunks: Vec<Hunk> = Vec::new();
    let mut current = HunkBuilder::new(1, body.get(i).map_or(0, |(n, _)| *n));
    while i < body.len() {
        let (no, line) = body[i];
        let trimmed = line.trim_end();
        if trimmed == EOF_MARK {
            current.hunk.end_of_file = true;
            current.close(&mut hunks, path)?;
            current = HunkBuilder::new(hunks.len() + 1, no + 1);
            i += 1;
            continue;
        }
        if line.starts_with("*** ") {
            break;
        }
        if let Some(anchor) = line.strip_prefix("@@") {
            if !current.hunk.lines.is_empty() {
                current.close(&mut hunks, path)?;
                current = HunkBuilder::new(hunks.len() + 1, no);
            } else if current.hunk.anchors.is_empty() {
                current.start = no;
            }
            let anchor = anchor.trim();
            if !anchor.is_empty() {
                current.hunk.anchors.push(anchor.to_owned());
            }
            i += 1;
            continue;
        }
        let parsed = if let Some(rest) = line.strip_prefix(' ') {
            HunkLine::Context(rest.to_owned())
        } else if let Some(rest) = line.strip_prefix('-') {
            HunkLine::Remove(rest.to_owned())
        } else if let Some(rest) = line.strip_prefix('+') {
            HunkLine::Add(rest.to_owned())
        } else if line.trim().is_empty() {
            current.blank_tail += 1;
            current.hunk.lines.push(HunkLine::Context(String::new()));
            i += 1;
            continue;
        } else {
            return Err(err(
                no,
                format!(
                    "unexpected line in {} of `Update File: {path}`: {}; hunk lines start with ` ` (context), `-` (remove) or `+` (add)",
                    current.hunk.label(),
                    preview(line)
                ),
            ));
        };
        current.blank_tail = 0;
        current.hunk.lines.push(parsed);
        i += 1;
    }
    current.close(&mut hunks, path)?;
    Ok((hunks, i))
}

/// A hunk being read.
struct HunkBuilder {
    hunk: Hunk,
    /// The patch line it starts at.
    start: usize,
    /// How many of its last lines were empty lines without a prefix (taken
    /// as blank context; dropped when they end the hunk, since trailing
    /// context changes nothing and is often just spacing).
    blank_tail: usize,
}

impl HunkBuilder {
    fn new(number: usize, start: usize) -> Self {
        HunkBuilder {
            hunk: Hunk {
                number,
                anchors: Vec::new(),
                lines: Vec::new(),
                end_of_file: false,
            },
            start,
            blank_tail: 0,
        }
    }

    fn close(self, hunks: &mut Vec<Hunk>, path: &str) -> Result<(), ParseError> {
        let HunkBuilder {
            mut hunk,
            start,
            blank_tail,
        } = self;
        let keep = hunk.lines.len() - blank_tail;
        if !hunk.end_of_file {
            hunk.lines.truncate(keep);
        }
        if hunk.lines.is_empty() {
            if hunk.anchors.is_empty() && !hunk.end_of_file {
                return Ok(());
            }
            return Err(err(
                start,
                format!(
                    "{} of `Update File: {path}` has no ` `, `-` or `+` lines",
                    hunk.label()
                ),
            ));
        }
        hunk.number = hunks.len() + 1;
        hunks.push(hunk);
        Ok(())
    }
}

#[cfg(test)]
#[path = "lib_tests.rs"]
mod tests;
