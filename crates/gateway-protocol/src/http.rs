//! The HTTP surface's bodies: `POST /tools/invoke` (OpenClaw's request and
//! response) and the error envelope every HTTP endpoint answers with.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::types::tools::CallResult;

/// The `POST /tools/invoke` request body.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct HttpInvokeRequest {
    /// The tool.
    pub tool: String,
    /// Shorthand for `args.action` (an explicit `args.action` wins).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub action: Option<String>,
    /// The tool's arguments (an object; absent or `null` is `{}`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub args: Option<Value>,
    /// The session (default: `main`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_key: Option<String>,
    /// The caller's id for the call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
}

/// The `error` member of an HTTP error body.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct HttpErrorDetail {
    /// `unauthorized`, `forbidden`, `invalid_request`, `not_found`,
    /// `unavailable`, `internal`, or for a call that did not complete
    /// `tool_error`, `timeout`, `cancelled`, `blocked`.
    #[serde(rename = "type")]
    pub kind: String,
    /// A failed call: its error code (as `errorCode`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<String>,
    /// What went wrong and how to fix it.
    pub message: String,
}

/// An HTTP error answer that is not a call's: `{"ok": false, "error"}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct HttpError {
    /// Always `false`.
    pub ok: bool,
    /// What went wrong.
    pub error: HttpErrorDetail,
}

impl HttpError {
    /// An error body.
    pub fn new(kind: &str, message: impl Into<String>) -> Self {
        HttpError {
            ok: false,
            error: HttpErrorDetail {
                kind: kind.to_owned(),
                code: None,
                message: message.into(),
            },
        }
    }
}

/// `POST /tools/invoke` for a completed call (HTTP 200).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct HttpInvokeOk {
    /// Always `true`.
    pub ok: bool,
    /// The tool's result (`content` blocks and `details`).
    pub result: Value,
    /// The gateway's call id.
    pub call_id: String,
    /// Whether the output was cut to the output cap.
    pub truncated: bool,
}

/// `POST /tools/invoke` for a call that was blocked or failed: the call's
/// result with `ok: false` and the error (HTTP status from the outcome:
/// 404 for a tool the policy removed, 403 for another block, 4xx/5xx by
/// error kind).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct HttpInvokeFailure {
    /// The call.
    #[serde(flatten)]
    pub call: CallResult,
    /// Always `false`.
    pub ok: bool,
    /// The error.
    pub error: HttpErrorDetail,
}
