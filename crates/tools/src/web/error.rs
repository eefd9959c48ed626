//! Errors building the web tools from their config, and the tool error of
//! an egress refusal.

use talon_egress::{BlockKind, SsrfBlocked};
use talon_tool_catalog::{ToolError, ToolErrorCode};

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
    /// A configured URL is one the egress guard refuses (a private or
    /// metadata `baseUrl` without the opt-in).
    #[error("{key}: {blocked}")]
    Blocked {
        /// The config key of the URL, e.g. `tools.web.search.brave.baseUrl`.
        key: String,
        /// The refusal: kind, code, reason and how to opt in.
        blocked: SsrfBlocked,
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
    /// The tool error every call of a tool that could not be built fails
    /// with: an egress refusal keeps its code (`web.ssrf_blocked`,
    /// `web.metadata_blocked`) and names the config key; anything else is
    /// an execution error with the message.
    pub fn into_tool_error(self) -> ToolError {
        match self {
            WebError::Blocked { key, blocked } => {
                let code = match blocked.kind {
                    BlockKind::Metadata => ToolErrorCode::WebMetadataBlocked,
                    _ => ToolErrorCode::WebSsrfBlocked,
                };
                ToolError::new(code, format!("{key}: {blocked}"))
                    .with_detail("egressCode", blocked.code())
                    .with_detail("configKey", key)
            }
            other => ToolError::execution(other.to_string()),
        }
    }

    #[cfg(feature = "web")]
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

/// The tool error of a refusal by the egress guard: `web.metadata_blocked`
/// for a cloud metadata endpoint, `web.ssrf_blocked` otherwise; the message
/// is the refusal's (code, reason, URL, how to opt in).
#[cfg(feature = "web")]
pub(crate) fn egress_refusal(tool: &str, blocked: SsrfBlocked) -> ToolError {
    tracing::warn!(tool, code = blocked.code(), reason = %blocked.reason, "refused by the egress guard");
    let code = match blocked.kind {
        BlockKind::Metadata => ToolErrorCode::WebMetadataBlocked,
        _ => ToolErrorCode::WebSsrfBlocked,
    };
    ToolError::new(code, blocked.to_string()).with_detail("egressCode", blocked.code())
}
