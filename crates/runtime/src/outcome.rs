//! A call's status, computed once from the typed outcome, and the one
//! mapping from it to every surface's wire codes.
//!
//! Nothing here reads message text or `details`: the status comes from the
//! [`ToolErrorKind`] of a failure and the [`ResultStatus`] of a result.

use serde::Serialize;
use talon_hooks::DeniedReason;
use talon_tool_catalog::{ResultStatus, ToolErrorKind};

use crate::table::InvokeOutcome;

/// How one call ended: the `status` of a `tools.invoke` result, the
/// journal outcome and the metrics label.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum CallStatus {
    /// The tool ran and its work succeeded.
    Ok,
    /// The call failed, or the tool ran and its work failed.
    Error,
    /// The call did not run (policy, hook, approval, loop detector).
    Blocked,
    /// The call or its work ran past a deadline.
    Timeout,
    /// The call was aborted.
    Cancelled,
}

impl CallStatus {
    /// Every status.
    pub const ALL: [CallStatus; 5] = [
        CallStatus::Ok,
        CallStatus::Error,
        CallStatus::Blocked,
        CallStatus::Timeout,
        CallStatus::Cancelled,
    ];

    /// The status as written on the wire: `ok`, `error`, `blocked`,
    /// `timeout`, `cancelled`.
    pub fn as_str(self) -> &'static str {
        match self {
            CallStatus::Ok => "ok",
            CallStatus::Error => "error",
            CallStatus::Blocked => "blocked",
            CallStatus::Timeout => "timeout",
            CallStatus::Cancelled => "cancelled",
        }
    }
}

impl std::fmt::Display for CallStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How every surface reports one outcome. Built only by
/// [`InvokeOutcome::wire`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WireCodes {
    /// The call's status (WebSocket `status`, journal, metrics).
    pub status: CallStatus,
    /// The HTTP status of `POST /tools/invoke`.
    pub http_status: u16,
    /// The HTTP body's `error.type`, for a call that did not complete:
    /// `tool_error`, `unauthorized`, `unavailable`, `timeout`,
    /// `cancelled`, `blocked` or `not_found`.
    pub http_error_type: Option<&'static str>,
    /// MCP `isError`: the call did not complete.
    pub mcp_is_error: bool,
    /// `errorClass` of a failed call: its [`ToolErrorKind`].
    pub error_class: Option<&'static str>,
}

impl InvokeOutcome {
    /// The call's status. A completed call takes its result's typed
    /// status (exec killed at its time limit is a timeout, a non-zero exit
    /// an error); a failure takes its error's kind.
    pub fn status(&self) -> CallStatus {
        match self {
            InvokeOutcome::Completed { result, .. } => match result.status {
                ResultStatus::Ok => CallStatus::Ok,
                ResultStatus::TimedOut => CallStatus::Timeout,
                // A new result status is not success.
                _ => CallStatus::Error,
            },
            InvokeOutcome::Blocked(_) => CallStatus::Blocked,
            InvokeOutcome::Failed(e) => match e.kind() {
                ToolErrorKind::Aborted => CallStatus::Cancelled,
                ToolErrorKind::TimedOut => CallStatus::Timeout,
                _ => CallStatus::Error,
            },
        }
    }

    /// The one mapping from an outcome to the WebSocket, HTTP and MCP
    /// codes.
    ///
    /// | outcome | status | HTTP | `error.type` | MCP `isError` |
    /// |---|---|---|---|---|
    /// | completed | from the result | 200 | — | no |
    /// | blocked by tool policy | blocked | 404 | `not_found` | yes |
    /// | blocked otherwise | blocked | 403 | `blocked` | yes |
    /// | input error | error | 400 | `tool_error` | yes |
    /// | unauthorized | error | 403 | `unauthorized` | yes |
    /// | aborted | cancelled | 503 | `cancelled` | yes |
    /// | timed out | timeout | 504 | `timeout` | yes |
    /// | unavailable | error | 503 | `unavailable` | yes |
    /// | execution | error | 500 | `tool_error` | yes |
    pub fn wire(&self) -> WireCodes {
        let status = self.status();
        let (http_status, http_error_type, error_class) = match self {
            InvokeOutcome::Completed { .. } => (200, None, None),
            InvokeOutcome::Blocked(b) if b.denied_reason == DeniedReason::ToolPolicy => {
                (404, Some("not_found"), None)
            }
            InvokeOutcome::Blocked(_) => (403, Some("blocked"), None),
            InvokeOutcome::Failed(e) => {
                let kind = e.kind();
                let (http, ty) = match kind {
                    ToolErrorKind::Input => (400, "tool_error"),
                    ToolErrorKind::Unauthorized => (403, "unauthorized"),
                    ToolErrorKind::Aborted => (503, "cancelled"),
                    ToolErrorKind::TimedOut => (504, "timeout"),
                    ToolErrorKind::Unavailable => (503, "unavailable"),
                    // Execution, and any kind added later.
                    _ => (500, "tool_error"),
                };
                (http, Some(ty), Some(kind.as_str()))
            }
        };
        WireCodes {
            status,
            http_status,
            http_error_type,
            mcp_is_error: !matches!(self, InvokeOutcome::Completed { .. }),
            error_class,
        }
    }
}

#[cfg(test)]
#[path = "outcome_tests.rs"]
mod tests;
