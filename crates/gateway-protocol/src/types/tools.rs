//! `tools.*`, and the result of one call (shared with `POST /tools/invoke`).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// `tools.list`'s params.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ToolsListParams {
    /// The session whose table is listed.
    pub session_key: String,
    /// Also return the policy audit (every layer and what it removed) and
    /// the assembly timings.
    #[serde(default)]
    pub audit: bool,
}

/// One tool as the model sees it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ToolDescription {
    /// The tool's name.
    pub name: String,
    /// Its description.
    pub description: String,
    /// Its parameters' JSON Schema, in the session's provider dialect.
    pub parameters: Value,
}

/// `tools.list`'s answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ToolsListResponse {
    /// The session (its canonical key when a main-session alias was given).
    pub session_key: String,
    /// The configuration generation the table was built for.
    pub generation: u64,
    /// The tools, in table order.
    pub tools: Vec<ToolDescription>,
    /// With `audit`: the policy pipeline's report (layers, removals with
    /// rule and config key).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub audit: Option<Value>,
    /// With `audit`: how long assembling the table took, per step.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timings: Option<Value>,
}

/// `tools.invoke`'s params.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ToolsInvokeParams {
    /// The session the call runs in.
    pub session_key: String,
    /// The tool.
    pub tool_name: String,
    /// The caller's id for the call (default: the gateway's call id).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
    /// The tool's arguments (an object; `null` or absent is `{}`).
    #[serde(default, skip_serializing_if = "Value::is_null")]
    pub params: Value,
}

/// One finished call: `tools.invoke`'s answer, and the body of a
/// `POST /tools/invoke` that did not complete. Which members are present
/// depends on `status`: a completed call has `content` (and `details`,
/// `paramsRewritten`, `approval`), a blocked one `deniedReason` and
/// `reason` (and `layer`, `configKey`, `hookFailure`), a failed one
/// `error`, `errorClass` and `errorCode` (and `param`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CallResult {
    /// The gateway's call id (the journal key).
    pub call_id: String,
    /// The caller's tool call id.
    pub tool_call_id: String,
    /// The tool, normalised.
    pub tool: String,
    /// How the call ended: `ok`, `error`, `blocked`, `timeout`,
    /// `cancelled`, …
    pub status: String,
    /// Completed: the result's content blocks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<Vec<Value>>,
    /// Completed: the tool's structured details.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub details: Option<Value>,
    /// Completed: a hook rewrote the params before the call ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub params_rewritten: Option<bool>,
    /// Completed: the approval the call ran under.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approval: Option<Value>,
    /// Blocked: why (`tool-policy`, `hook`, `approval`, …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub denied_reason: Option<String>,
    /// Blocked: the sentence explaining the block and how to change it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Blocked by policy: the layer that removed the tool.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub layer: Option<String>,
    /// Blocked by policy: the config key of the rule.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config_key: Option<String>,
    /// Blocked because a hook failed: what failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hook_failure: Option<Value>,
    /// Failed: the error's message.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Failed: the error's kind (`input`, `unauthorized`, `timed-out`, …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_class: Option<String>,
    /// Failed: the error's stable machine code (`input.invalid`,
    /// `tool.unknown`, `fs.not_found`, …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_code: Option<String>,
    /// Failed on bad input: the parameter at fault.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub param: Option<String>,
    /// The output was cut to `gateway.limits.maxOutputBytes` (only
    /// present when `true`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub truncated: Option<bool>,
}

/// `tools.lookup`'s params: a call by the id its caller gave it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ToolsLookupParams {
    /// The session the call ran in (a main-session alias such as `main`
    /// is resolved as `tools.invoke` resolves it; the session need not be
    /// open any more).
    pub session_key: String,
    /// The `toolCallId` the caller gave `tools.invoke`.
    pub tool_call_id: String,
}

/// What the journal holds about a call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum RecordedStatus {
    /// Accepted and not ended yet.
    InFlight,
    /// The tool ran and returned a result.
    Ok,
    /// The tool ran (or tried to) and failed.
    Error,
    /// The gate refused the call; nothing ran.
    Blocked,
    /// The call ran out of time.
    Timeout,
    /// Cancelled by the caller or by shutdown.
    Cancelled,
    /// The gateway stopped while the call was in flight; it was not re-run.
    Interrupted,
}

/// One journalled call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RecordedCall {
    /// The gateway's call id.
    pub call_id: String,
    /// The session (canonical key).
    pub session_key: String,
    /// The tool.
    pub tool: String,
    /// The caller's id for the call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
    /// How it ended, or `inFlight`.
    pub status: RecordedStatus,
    /// The short, redacted summary of its end (an error, a block reason).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary: Option<String>,
    /// When it was accepted (Unix ms).
    pub started_at_ms: u64,
    /// When it ended (Unix ms).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ended_at_ms: Option<u64>,
    /// SHA-256 of its canonical parameters (never the parameters).
    pub params_digest: String,
}

/// `tools.lookup`'s answer: the session's calls with that `toolCallId`,
/// newest first (callers choose the id, so it may repeat); empty when the
/// journal holds none (never accepted, or removed by retention).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ToolsLookupResponse {
    /// The session the lookup resolved to.
    pub session_key: String,
    /// The calls.
    pub calls: Vec<RecordedCall>,
}
