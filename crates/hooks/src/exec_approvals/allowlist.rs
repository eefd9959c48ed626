//! Allowlist entries and how a command is matched against them.

use regex::Regex;
use serde::{Deserialize, Serialize};

use crate::exec_approvals::shell::{Analysis, Segment, Word};

/// One allowlist entry of an agent (OpenClaw's `exec-approvals.json`
/// shape; Talon adds `args`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AllowlistEntry {
    /// A stable id (generated when Talon adds the entry).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// The program: a bare command-name glob (`rg`, `git*`), which matches
    /// only a command written without a `/`, or an absolute path glob
    /// (`/usr/bin/rg`, `/opt/**/bin/*`), which matches only a command
    /// written as that absolute path. `*` matches within one path
    /// component, `**` across components; no other wildcard exists.
    pub pattern: String,
    /// A regular expression (Rust `regex` syntax) the arguments, joined by
    /// single spaces, must match (use `^…$` to anchor). Every argument
    /// must then be exact (no glob or `$x` the shell would expand).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arg_pattern: Option<String>,
    /// Talon: the exact arguments (what `allow-always` records). Every
    /// argument must be exact.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub args: Option<Vec<String>>,
    /// Where the entry came from (`allow-always`, `cli`); absent for a
    /// hand-written entry.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// When it was added (Unix milliseconds).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub added_at: Option<u64>,
    /// OpenClaw bookkeeping, kept as found and not interpreted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_used_at: Option<serde_json::Value>,
    /// OpenClaw bookkeeping, kept as found and not interpreted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_used_command: Option<serde_json::Value>,
    /// OpenClaw bookkeeping, kept as found and not interpreted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_resolved_path: Option<serde_json::Value>,
}

impl AllowlistEntry {
    /// A hand-made entry for `pattern` with no argument restriction.
    pub fn new(pattern: impl Into<String>) -> Self {
        AllowlistEntry {
            id: None,
            pattern: pattern.into(),
            arg_pattern: None,
            args: None,
            source: None,
            added_at: None,
            last_used_at: None,
            last_used_command: None,
            last_resolved_path: None,
        }
    }
}

/// Why an allowlist entry is not accepted (the caller names the file and
/// key: [`ExecApprovalsError::Invalid`](crate::exec_approvals::ExecApprovalsError)).
#[derive(Debug, Clone, thiserror::Error)]
pub(crate) enum EntryError {
    /// The pattern is empty or blank.
    #[error("the pattern is empty")]
    EmptyPattern,
    /// The pattern starts with `~`.
    #[error("pattern {0:?} starts with `~`; write the absolute path (Talon does not expand `~`)")]
    Tilde(String),
    /// The pattern holds a character that is no wildcard Talon knows.
    #[error(
        "pattern {pattern:?} contains {found:?}; only `*` and `**` are wildcards (a name containing \
         these characters cannot be allowlisted)"
    )]
    Wildcard {
        /// The pattern.
        pattern: String,
        /// The refused character.
        found: char,
    },
    /// The pattern is a relative path.
    #[error("pattern {0:?} is a relative path; give a bare command name or an absolute path")]
    RelativePath(String),
    /// `argPattern` does not compile.
    #[error("argPattern {pattern:?} is not a valid regex: {source}")]
    ArgPattern {
        /// The expression.
        pattern: String,
        /// The regex error.
        source: regex::Error,
    },
    /// Both `argPattern` and `args` are given.
    #[error("give either argPattern or args, not both")]
    ArgsAndArgPattern,
}

/// Why a pattern is not accepted.
pub(crate) fn check_pattern(pattern: &str) -> Result<(), EntryError> {
    if pattern.trim().is_empty() {
        return Err(EntryError::EmptyPattern);
    }
    if pattern.starts_with('~') {
        return Err(EntryError::Tilde(pattern.to_owned()));
    }
    if let Some(c) = pattern
        .chars()
        .find(|c| matches!(c, '?' | '[' | ']' | '{' | '}' | '!') || c.is_control())
    {
        return Err(EntryError::Wildcard {
            pattern: pattern.to_owned(),
            found: c,
        });
    }
    if pattern.contains('/') && !pattern.starts_with('/') {
        return Err(EntryError::RelativePath(pattern.to_owned()));
    }
    Ok(())
}

/// An entry ready to match.
#[derive(Debug, Clone)]
pub(crate) struct CompiledEntry {
    pub(crate) entry: AllowlistEntry,
    glob: Vec<GlobToken>,
    is_path: bool,
    arg_regex: Option<Regex>,
}

impl CompiledEntry {
    /// Checks and compiles `entry`; the error says what is wrong.
    pub(crate) fn compile(entry: AllowlistEntry) -> Result<Self, EntryError> {
        check_pattern(&entry.pattern)?;
        let arg_regex = match &entry.arg_pattern {
            Some(p) => Some(Regex::new(p).map_err(|source| EntryError::ArgPattern {
                pattern: p.clone(),
                source,
            })?),
            None => None,
        };
        if entry.arg_pattern.is_some() && entry.args.is_some() {
            return Err(EntryError::ArgsAndArgPattern);
        }
        Ok(CompiledEntry {
            glob: compile_glob(&entry.pattern),
            is_path: entry.pattern.contains('/'),
            arg_regex,
            entry,
        })
    }

    /// Whether this entry allows the simple command `argv`.
    pub(crate) fn matches(&self, argv: &[Word]) -> bool {
        let Some((program, args)) = argv.split_first() else {
            return false;
        };
        if !program.exact {
            return false;
        }
        let name = program.text.as_str();
        let name_ok = if self.is_path {
            is_normal_absolute(name) && glob_match(&self.glob, name)
        } else {
            !name.contains('/') && glob_match(&self.glob, name)
        };
        if !name_ok {
            return false;
        }
        if let Some(expected) = &self.entry.args {
            return args.len() == expected.len()
                && args
                    .iter()
                    .zip(expected)
                    .all(|(a, e)| a.exact && &a.text == e);
        }
        if let Some(re) = &self.arg_regex {
            if !args.iter().all(|a| a.exact) {
                return false;
            }
            let joined = args
                .iter()
                .map(|a| a.text.as_str())
                .collect::<Vec<_>>()
                .join(" ");
            return re.is_match(&joined);
        }
        true
    }
}

/// How a command fared against an allowlist.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AllowlistEvaluation {
    /// Every segment is a simple command and each matches an entry.
    pub satisfied: bool,
    /// The simple commands no entry matched (program and arguments).
    pub misses: Vec<Vec<Word>>,
    /// Why the command cannot be analysed, if it cannot.
    pub opaque: Option<crate::exec_approvals::shell::OpaqueReason>,
}

/// Match every segment of `analysis` against `entries`.
pub(crate) fn evaluate(analysis: &Analysis, entries: &[CompiledEntry]) -> AllowlistEvaluation {
    let mut misses = Vec::new();
    for segment in &analysis.segments {
        if let Segment::Command { argv } = segment
            && !entries.iter().any(|e| e.matches(argv))
        {
            misses.push(argv.clone());
        }
    }
    let opaque = analysis.opaque_reason();
    AllowlistEvaluation {
        satisfied: analysis.is_complete() && misses.is_empty(),
        misses,
        opaque,
    }
}

/// The entry `allow-always` records for a simple command that missed: the
/// program exactly as written and its exact arguments. `None` when that
/// cannot be expressed (an inexact argument, or a program name containing
/// a wildcard or a character patterns refuse).
pub(crate) fn entry_for_miss(argv: &[Word]) -> Option<AllowlistEntry> {
    let (program, args) = argv.split_first()?;
    if !program.exact
        || program.text.contains('*')
        || check_pattern(&program.text).is_err()
        || (program.text.contains('/') && !is_normal_absolute(&program.text))
        || !args.iter().all(|a| a.exact)
    {
        return None;
    }
    let mut entry = AllowlistEntry::new(program.text.clone());
    entry.args = Some(args.iter().map(|a| a.text.clone()).collect());
    Some(entry)
}

/// An absolute path with no empty, `.` or `..` component and no trailing
/// `/`, so what it names does not depend on the working directory or on
/// how the path is spelled.
fn is_normal_absolute(path: &str) -> bool {
    let Some(rest) = path.strip_prefix('/') else {
        return false;
    };
    !rest.is_empty()
        && rest
            .split('/')
            .all(|c| !c.is_empty() && c != "." && c != "..")
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum GlobToken {
    Char(char),
    /// `*`: any run of characters other than `/`.
    Star,
    /// `**`: any run of characters.
    DoubleStar,
}

fn compile_glob(pattern: &str) -> Vec<GlobToken> {
    let mut out = Vec::new();
    let mut chars = pattern.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '*' {
            if chars.peek() == Some(&'*') {
                while chars.peek() == Some(&'*') {
                    chars.next();
                }
                out.push(GlobToken::DoubleStar);
            } else {
                out.push(GlobToken::Star);
            }
        } else {
            out.push(GlobToken::Char(c));
        }
    }
    out
}

/// Case-sensitive glob match (dynamic programming, linear memory).
fn glob_match(glob: &[GlobToken], text: &str) -> bool {
    let text: Vec<char> = text.chars().collect();
    // reach[j]: the glob prefix matched so far can end at text[..j].
    let mut reach = vec![false; text.len() + 1];
    reach[0] = true;
    for token in glob {
        let mut next = vec![false; text.len() + 1];
        match token {
            GlobToken::Char(c) => {
                for j in 0..text.len() {
                    if reach[j] && text[j] == *c {
                        next[j + 1] = true;
                    }
                }
            }
            GlobToken::Star | GlobToken::DoubleStar => {
                let crosses = *token == GlobToken::DoubleStar;
                for j in 0..=text.len() {
                    if reach[j] || (j > 0 && next[j - 1] && (crosses || text[j - 1] != '/')) {
                        next[j] = true;
                    }
                }
            }
        }
        reach = next;
    }
    reach[text.len()]
}

#[cfg(test)]
#[path = "allowlist_tests.rs"]
mod tests;
