//! The crate's error type and how it reaches the model.

use talon_egress::{BlockKind, SsrfBlocked};
use talon_tool_catalog::{ToolError, ToolErrorCode};

/// What went wrong in the browser tool.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum BrowserError {
    /// Chromium is missing, did not start, or went away.
    #[error("browser unavailable: {0}")]
    Unavailable(String),
    /// The DevTools connection closed under a call.
    #[error(
        "the browser closed its DevTools connection (it crashed or was stopped); call `start` again"
    )]
    Closed,
    /// Something ran past its time limit.
    #[error("{what} did not finish within {millis} ms")]
    Timeout {
        /// What was waited for.
        what: String,
        /// The limit.
        millis: u64,
    },
    /// The browser answered a call with an error.
    #[error("`{method}` failed: {message}")]
    Protocol {
        /// The DevTools method.
        method: String,
        /// The browser's message.
        message: String,
    },
    /// The egress guard refused a URL.
    #[error("{0}")]
    Blocked(SsrfBlocked),
    /// A page failed to load (network error, bad response).
    #[error("navigation to {url} failed: {reason}")]
    Navigation {
        /// The URL.
        url: String,
        /// Chromium's error text.
        reason: String,
    },
    /// The call's arguments are wrong.
    #[error("{message}")]
    Input {
        /// The parameter at fault.
        param: &'static str,
        /// What is wrong and how to fix it.
        message: String,
    },
    /// No such tab.
    #[error("no tab `{0}`; call `tabs` for the open tabs")]
    NoTab(String),
    /// No open tab at all.
    #[error("no tab is open; call `open` with a targetUrl")]
    NoCurrentTab,
    /// A ref that is not in the tab's latest snapshot.
    #[error(
        "unknown ref `{0}`: refs come from the tab's latest snapshot; take a new snapshot and use one of its refs"
    )]
    UnknownRef(String),
    /// A sandboxed run asked for a browser that cannot run in its sandbox
    /// (or for the host browser).
    #[error("{0}")]
    SandboxUnsupported(String),
    /// The sandbox has no egress proxy for the browser.
    #[error("{0}")]
    SandboxNoEgress(String),
    /// A local file operation (profile, uploads) failed.
    #[error("{0}")]
    Io(String),
    /// The call was aborted.
    #[error("aborted")]
    Aborted,
}

/// `Result` with [`BrowserError`].
pub type Result<T> = std::result::Result<T, BrowserError>;

impl BrowserError {
    /// An input error about `param`.
    pub fn input(param: &'static str, message: impl Into<String>) -> Self {
        BrowserError::Input {
            param,
            message: message.into(),
        }
    }

    /// The typed tool error code.
    pub fn code(&self) -> ToolErrorCode {
        match self {
            BrowserError::Unavailable(_) | BrowserError::Closed => {
                ToolErrorCode::BrowserUnavailable
            }
            BrowserError::Timeout { .. } => ToolErrorCode::BrowserTimeout,
            BrowserError::Protocol { .. }
            | BrowserError::Navigation { .. }
            | BrowserError::Io(_) => ToolErrorCode::BrowserFailed,
            BrowserError::Blocked(b) => match b.kind {
                BlockKind::Metadata => ToolErrorCode::WebMetadataBlocked,
                _ => ToolErrorCode::WebSsrfBlocked,
            },
            BrowserError::Input { .. } => ToolErrorCode::InputInvalid,
            BrowserError::NoTab(_) | BrowserError::NoCurrentTab => ToolErrorCode::BrowserNoTab,
            BrowserError::UnknownRef(_) => ToolErrorCode::BrowserUnknownRef,
            BrowserError::SandboxUnsupported(_) => ToolErrorCode::BrowserSandboxUnsupported,
            BrowserError::SandboxNoEgress(_) => ToolErrorCode::BrowserSandboxNoEgress,
            BrowserError::Aborted => ToolErrorCode::Aborted,
        }
    }

    /// The error as the model sees it.
    pub fn into_tool_error(self) -> ToolError {
        let code = self.code();
        let param = match &self {
            BrowserError::Input { param, .. } => Some(*param),
            BrowserError::NoTab(_) => Some("targetId"),
            BrowserError::UnknownRef(_) => Some("ref"),
            BrowserError::Blocked(_) => Some("targetUrl"),
            _ => None,
        };
        let egress = match &self {
            BrowserError::Blocked(b) => Some(b.code()),
            _ => None,
        };
        let mut e = ToolError::new(code, self.to_string());
        if let Some(c) = egress {
            e = e.with_detail("egressCode", c);
        }
        match param {
            Some(p) if e.is_input() => e.with_param(p),
            _ => e,
        }
    }
}
