//! Errors building the web tools from their config.

/// Why a web tool could not be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum WebError {
    /// A config value is invalid.
    #[error("{key}: {message}")]
    Config {
        /// The config key, e.g. `tools.web.fetch.ssrfAllowlist.cidrs`.
        key: String,
        /// What is wrong and how to fix it.
        message: String,
    },
    /// The HTTP client could not be built.
    #[error("cannot build the HTTP client for {tool}: {message}")]
    Client {
        /// The tool.
        tool: &'static str,
        /// The client builder's error.
        message: String,
    },
}

impl WebError {
    pub(crate) fn config(key: impl Into<String>, message: impl Into<String>) -> Self {
        WebError::Config {
            key: key.into(),
            message: message.into(),
        }
    }
}

impl From<talon_egress::AllowlistError> for WebError {
    fn from(e: talon_egress::AllowlistError) -> Self {
        WebError::Config {
            key: e.key,
            message: e.message,
        }
    }
}
