//! `ToolError`: the two ways a tool call fails.

use serde::Serialize;

/// Why a tool call failed.
///
/// An input error names the parameter so the model can fix its call; an
/// execution failure is anything that went wrong after the input was
/// accepted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, Serialize)]
#[serde(tag = "kind", rename_all = "camelCase")]
#[non_exhaustive]
pub enum ToolError {
    /// The model's arguments were wrong.
    #[error("{message}")]
    Input {
        /// The parameter at fault, when one is.
        param: Option<String>,
        /// What was wrong and what was expected.
        message: String,
    },
    /// The caller is not allowed to do this.
    #[error("{message}")]
    Unauthorized {
        /// Why.
        message: String,
    },
    /// The call was aborted: its cancellation token fired.
    #[error("aborted: {reason}")]
    Aborted {
        /// Why it was aborted.
        reason: String,
    },
    /// The tool ran and failed.
    #[error("{message}")]
    Execution {
        /// What went wrong.
        message: String,
    },
}

impl ToolError {
    /// An input error about one parameter.
    pub fn input(param: impl Into<String>, message: impl Into<String>) -> Self {
        ToolError::Input {
            param: Some(param.into()),
            message: message.into(),
        }
    }

    /// An input error not tied to one parameter.
    pub fn invalid_arguments(message: impl Into<String>) -> Self {
        ToolError::Input {
            param: None,
            message: message.into(),
        }
    }

    /// An execution failure.
    pub fn execution(message: impl Into<String>) -> Self {
        ToolError::Execution {
            message: message.into(),
        }
    }

    /// The call was aborted, with why (a user abort, a timeout, shutdown,
    /// the loop detector's circuit breaker).
    pub fn aborted(reason: impl Into<String>) -> Self {
        ToolError::Aborted {
            reason: reason.into(),
        }
    }

    /// An authorization failure.
    pub fn unauthorized(message: impl Into<String>) -> Self {
        ToolError::Unauthorized {
            message: message.into(),
        }
    }

    /// The HTTP-like status OpenClaw attaches: 400 input, 403 unauthorized,
    /// 499 aborted, 500 execution.
    pub fn status(&self) -> u16 {
        match self {
            ToolError::Input { .. } => 400,
            ToolError::Unauthorized { .. } => 403,
            ToolError::Aborted { .. } => 499,
            ToolError::Execution { .. } => 500,
        }
    }

    /// The parameter at fault, if any.
    pub fn param(&self) -> Option<&str> {
        match self {
            ToolError::Input { param, .. } => param.as_deref(),
            _ => None,
        }
    }
}
