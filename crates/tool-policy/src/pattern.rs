//! Tool-name patterns with OpenClaw's glob semantics.
//!
//! After normalisation (trim, lowercase, aliases) a pattern is `*` (match
//! everything), a literal name (exact equality), or a glob in which `*`
//! matches any run of characters and every other character is literal.
//!
//! OpenClaw treats `?`, `[`, `{` and friends as literal characters; a user
//! who writes `exec?` almost certainly expects a wildcard, so Talon rejects
//! such entries at load time ([`validate_entry`]) instead of silently
//! matching nothing.

use talon_tool_catalog::normalize_tool_name;

/// A compiled pattern.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Pattern {
    /// `*`.
    All,
    /// A literal name.
    Exact(String),
    /// A glob: the literal pieces between `*`s, with whether it was anchored
    /// at the start and end.
    Glob {
        pieces: Vec<String>,
        anchored_start: bool,
        anchored_end: bool,
    },
}

impl Pattern {
    /// Compile an already-normalised, non-empty pattern.
    pub(crate) fn compile(normalised: &str) -> Pattern {
        if normalised == "*" {
            return Pattern::All;
        }
        if !normalised.contains('*') {
            return Pattern::Exact(normalised.to_owned());
        }
        let anchored_start = !normalised.starts_with('*');
        let anchored_end = !normalised.ends_with('*');
        let pieces = normalised
            .split('*')
            .filter(|p| !p.is_empty())
            .map(str::to_owned)
            .collect::<Vec<_>>();
        if pieces.is_empty() {
            return Pattern::All;
        }
        Pattern::Glob {
            pieces,
            anchored_start,
            anchored_end,
        }
    }

    /// Whether a normalised tool name matches.
    pub(crate) fn matches(&self, name: &str) -> bool {
        match self {
            Pattern::All => true,
            Pattern::Exact(s) => s == name,
            Pattern::Glob {
                pieces,
                anchored_start,
                anchored_end,
            } => glob_match(pieces, *anchored_start, *anchored_end, name),
        }
    }
}

fn glob_match(pieces: &[String], anchored_start: bool, anchored_end: bool, name: &str) -> bool {
    let mut rest = name;
    let last = pieces.len() - 1;
    for (i, piece) in pieces.iter().enumerate() {
        if i == 0 && anchored_start {
            match rest.strip_prefix(piece.as_str()) {
                Some(r) => rest = r,
                None => return false,
            }
            if i == last && anchored_end {
                return rest.is_empty();
            }
            continue;
        }
        if i == last && anchored_end {
            return rest.len() >= piece.len() && rest.ends_with(piece.as_str());
        }
        match rest.find(piece.as_str()) {
            Some(pos) => rest = &rest[pos + piece.len()..],
            None => return false,
        }
    }
    !anchored_end || rest.is_empty()
}

/// Why a policy entry was rejected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PatternError {
    /// The entry is empty or only whitespace.
    #[error("empty tool entry (remove it, or write a tool name, a `*` glob or a `group:` id)")]
    Empty,
    /// The entry has a glob character other than `*`.
    #[error(
        "`{entry}` uses `{ch}`, which is not a wildcard here: only `*` is (write e.g. `{suggestion}`)"
    )]
    UnsupportedWildcard {
        /// The entry as written.
        entry: String,
        /// The offending character.
        ch: char,
        /// A corrected entry.
        suggestion: String,
    },
    /// The entry has whitespace or control characters inside it.
    #[error("`{entry}` contains whitespace or a control character; tool names never do")]
    Whitespace {
        /// The entry as written.
        entry: String,
    },
    /// `group:` with nothing after it.
    #[error("`{entry}` names no group (e.g. `group:fs`, `group:runtime`, `group:plugins`)")]
    EmptyGroup {
        /// The entry as written.
        entry: String,
    },
}

/// Check one allow/deny entry as written in config.
pub fn validate_entry(entry: &str) -> Result<(), PatternError> {
    let trimmed = entry.trim();
    if trimmed.is_empty() {
        return Err(PatternError::Empty);
    }
    if trimmed.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(PatternError::Whitespace {
            entry: entry.to_owned(),
        });
    }
    if let Some(ch) = trimmed
        .chars()
        .find(|c| matches!(c, '?' | '[' | ']' | '{' | '}' | '!'))
    {
        let suggestion: String = trimmed
            .chars()
            .map(|c| {
                if matches!(c, '?' | '[' | ']' | '{' | '}' | '!') {
                    '*'
                } else {
                    c
                }
            })
            .collect::<String>()
            .split("**")
            .collect::<Vec<_>>()
            .join("*");
        return Err(PatternError::UnsupportedWildcard {
            entry: entry.to_owned(),
            ch,
            suggestion,
        });
    }
    let normalised = normalize_tool_name(trimmed);
    if normalised == "group:" {
        return Err(PatternError::EmptyGroup {
            entry: entry.to_owned(),
        });
    }
    Ok(())
}

#[cfg(test)]
#[path = "pattern_tests.rs"]
mod tests;
