//! The audit's one error type.

/// What stops an audit from producing a report.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AuditError {
    /// The configuration loaded but does not compile into a tool policy:
    /// it is invalid, and the audit reports that error only.
    #[error("{origin}: invalid configuration: {message}")]
    InvalidConfig {
        /// Where the configuration came from.
        origin: String,
        /// The policy compiler's error (it names the key).
        message: String,
    },
    /// `--fix` could not inspect or change a file's mode.
    #[error("cannot {action} {path}: {source}")]
    Fix {
        /// What was being done (`stat`, `change the mode of`).
        action: &'static str,
        /// The file or directory.
        path: std::path::PathBuf,
        /// The operating system's error.
        #[source]
        source: std::io::Error,
    },
}

/// The audit's result type.
pub type Result<T, E = AuditError> = std::result::Result<T, E>;
