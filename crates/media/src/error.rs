//! The crate's error type and how it reaches the model.

use talon_tool_catalog::{ToolError, ToolErrorCode};

/// What went wrong in a media tool.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The input file is malformed, encrypted or not of the expected type.
    #[error("{path}: {reason}")]
    Invalid {
        /// The workspace path.
        path: String,
        /// What is wrong and how to fix it.
        reason: String,
    },
    /// An input or output is over a limit.
    #[error("{what} is {actual}, over the limit of {limit}; {hint}")]
    TooLarge {
        /// What was measured (`report.pdf`, `pages`, `text`).
        what: String,
        /// The measured size.
        actual: u64,
        /// The limit.
        limit: u64,
        /// How to stay under it.
        hint: String,
    },
    /// The engine binary is not installed.
    #[error("`{program}` is not installed (looked in PATH); install Debian's `{package}` package")]
    EngineMissing {
        /// The binary.
        program: String,
        /// The Debian package that brings it.
        package: String,
    },
    /// The engine ran and failed.
    #[error("`{program}` failed: {message}")]
    EngineFailed {
        /// The binary.
        program: String,
        /// Its exit and first stderr line.
        message: String,
    },
    /// The engine ran past its time limit.
    #[error("`{program}` ran past its {seconds}s limit and was killed")]
    Timeout {
        /// The binary.
        program: String,
        /// The limit.
        seconds: u64,
    },
    /// No provider is configured for this tool.
    #[error("{tool}: no provider configured; set `{config_key}` to a provider model to enable it")]
    NoProvider {
        /// The tool.
        tool: String,
        /// The config key that selects a provider.
        config_key: String,
    },
    /// The call was aborted.
    #[error("aborted")]
    Aborted,
    /// A private temp directory could not be made or used.
    #[error("temporary files: {0}")]
    Io(String),
}

/// `Result` with this crate's [`Error`].
pub type Result<T> = std::result::Result<T, Error>;

impl Error {
    /// The typed tool error code of this error.
    pub fn code(&self) -> ToolErrorCode {
        match self {
            Error::Invalid { .. } => ToolErrorCode::MediaInvalid,
            Error::TooLarge { .. } => ToolErrorCode::MediaTooLarge,
            Error::EngineMissing { .. } => ToolErrorCode::MediaEngineMissing,
            Error::EngineFailed { .. } | Error::Io(_) => ToolErrorCode::MediaEngineFailed,
            Error::Timeout { .. } => ToolErrorCode::MediaTimeout,
            Error::NoProvider { .. } => ToolErrorCode::MediaNoProvider,
            Error::Aborted => ToolErrorCode::Aborted,
        }
    }

    /// The error as the model sees it; `param` names the argument an input
    /// error is about.
    pub fn into_tool_error(self, param: &str) -> ToolError {
        let code = self.code();
        let config_key = match &self {
            Error::NoProvider { config_key, .. } => Some(config_key.clone()),
            _ => None,
        };
        let e = ToolError::new(code, self.to_string());
        let e = match config_key {
            Some(key) => e.with_detail("configKey", key),
            None => e,
        };
        if e.is_input() { e.with_param(param) } else { e }
    }
}
