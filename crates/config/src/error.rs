//! Errors, problems and notices.

use std::fmt;
use std::path::PathBuf;

/// One problem found in a configuration file.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Issue {
    /// Where: dotted keys, `[i]` for array elements, `["…"]` for keys that
    /// need quoting (`agents.list[0].tools.allow[2]`,
    /// `tools.byProvider["openai/gpt-5"]`). Empty for the whole file.
    pub key_path: String,
    /// 1-based line (of the key for unknown keys, of the value otherwise).
    pub line: u32,
    /// 1-based column, counted in Unicode scalar values.
    pub column: u32,
    /// What is wrong and, where possible, how to fix it.
    pub message: String,
}

impl fmt::Display for Issue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.key_path.is_empty() {
            write!(f, "{}", self.message)
        } else {
            write!(f, "{}: {}", self.key_path, self.message)
        }
    }
}

/// Something worth telling the user that does not stop the file loading
/// (an ignored OpenClaw key, a section accepted without validation).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Notice {
    /// Where (same form as [`Issue::key_path`]).
    pub key_path: String,
    /// 1-based line.
    pub line: u32,
    /// What happened.
    pub message: String,
}

impl fmt::Display for Notice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}: {}: {}", self.line, self.key_path, self.message)
    }
}

/// Why a configuration could not be loaded.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// The file could not be read.
    #[error("cannot read config file {}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// The file is not JSON5.
    #[error("{origin}:{line}:{column}: {message}")]
    Syntax {
        /// The file (or other origin) name.
        origin: String,
        /// 1-based line.
        line: u32,
        /// 1-based column.
        column: u32,
        /// What was expected.
        message: String,
    },
    /// The file is JSON5 but not a valid configuration. Every problem found
    /// is listed.
    #[error("{}", DisplayIssues { origin, issues })]
    Invalid {
        /// The file (or other origin) name.
        origin: String,
        /// Every problem, in file order.
        issues: Vec<Issue>,
    },
    /// The file is larger than [`crate::MAX_CONFIG_BYTES`].
    #[error(
        "{origin}: the config file is {size} bytes; the limit is {limit} bytes (is this the right file?)"
    )]
    TooLarge {
        /// The file (or other origin) name.
        origin: String,
        /// Its size in bytes.
        size: u64,
        /// The limit in bytes.
        limit: u64,
    },
}

impl ConfigError {
    /// Every problem of an [`ConfigError::Invalid`]; empty for the other
    /// kinds.
    pub fn issues(&self) -> &[Issue] {
        match self {
            ConfigError::Invalid { issues, .. } => issues,
            ConfigError::Io { .. } | ConfigError::Syntax { .. } | ConfigError::TooLarge { .. } => {
                &[]
            }
        }
    }
}

/// `Result` with [`ConfigError`].
pub type Result<T> = std::result::Result<T, ConfigError>;

struct DisplayIssues<'a> {
    origin: &'a str,
    issues: &'a [Issue],
}

impl fmt::Display for DisplayIssues<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, issue) in self.issues.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            write!(
                f,
                "{}:{}:{}: {issue}",
                self.origin, issue.line, issue.column
            )?;
        }
        Ok(())
    }
}
