//! Name patterns: `*` is the only wildcard, matching is case-insensitive.

use std::fmt;

use serde::Serialize;

/// Why a pattern was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PatternError {
    /// The pattern is empty (or only whitespace).
    #[error("the pattern is empty; give a variable name, with `*` as the only wildcard")]
    Empty,
    /// The pattern holds a character that is neither part of a variable
    /// name nor `*` (`?`, `[`, `{`, `!` would match literally and so match
    /// nothing, which would silently drop the restriction).
    #[error(
        "the pattern {pattern:?} contains {found:?}; use letters, digits, `_` and `*` (the only wildcard)"
    )]
    BadChar {
        /// The pattern as written.
        pattern: String,
        /// The first refused character.
        found: char,
    },
}

/// A variable-name pattern such as `*TOKEN*` or `LC_*`: `*` matches any run
/// of characters (also none), everything else matches itself ignoring
/// ASCII case.
#[derive(Clone, PartialEq, Eq, Hash, Serialize)]
#[serde(into = "String")]
pub struct NamePattern {
    /// The pattern, uppercased.
    upper: String,
}

impl NamePattern {
    /// Parses `pattern` (surrounding whitespace ignored).
    pub fn parse(pattern: &str) -> Result<Self, PatternError> {
        let trimmed = pattern.trim();
        if trimmed.is_empty() {
            return Err(PatternError::Empty);
        }
        if let Some(found) = trimmed
            .chars()
            .find(|c| !(c.is_ascii_alphanumeric() || *c == '_' || *c == '*'))
        {
            return Err(PatternError::BadChar {
                pattern: pattern.to_owned(),
                found,
            });
        }
        Ok(NamePattern {
            upper: trimmed.to_ascii_uppercase(),
        })
    }

    /// A pattern known to be valid (the built-in lists).
    pub(crate) fn builtin(pattern: &'static str) -> Self {
        NamePattern {
            upper: pattern.to_ascii_uppercase(),
        }
    }

    /// The pattern as matched (uppercased).
    pub fn as_str(&self) -> &str {
        &self.upper
    }

    /// Whether `name` matches, ignoring ASCII case.
    pub fn matches(&self, name: &str) -> bool {
        wildcard_match(self.upper.as_bytes(), name.to_ascii_uppercase().as_bytes())
    }
}

impl fmt::Debug for NamePattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "NamePattern({})", self.upper)
    }
}

impl fmt::Display for NamePattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.upper)
    }
}

impl From<NamePattern> for String {
    fn from(p: NamePattern) -> String {
        p.upper
    }
}

/// Whether `name` matches any of `patterns`.
pub(crate) fn any_match(patterns: &[NamePattern], name: &str) -> bool {
    patterns.iter().any(|p| p.matches(name))
}

/// `*`-only wildcard matching in O(pattern × name) time without recursion:
/// on a mismatch, resume after the last `*`, letting it swallow one more
/// byte.
fn wildcard_match(pattern: &[u8], name: &[u8]) -> bool {
    let (mut p, mut n) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while n < name.len() {
        match pattern.get(p) {
            Some(b'*') => {
                star = Some((p, n));
                p += 1;
            }
            Some(&c) if c == name[n] => {
                p += 1;
                n += 1;
            }
            _ => match star {
                Some((sp, sn)) => {
                    p = sp + 1;
                    n = sn + 1;
                    star = Some((sp, sn + 1));
                }
                None => return false,
            },
        }
    }
    pattern[p..].iter().all(|&c| c == b'*')
}

#[cfg(test)]
#[path = "pattern_tests.rs"]
mod tests;
