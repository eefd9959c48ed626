//! `approvals.*`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// `approvals.list`'s answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ApprovalsListResponse {
    /// The pending approvals (id, session, tool, title, description,
    /// params preview, the exact command for `exec`, expiry).
    pub approvals: Vec<Value>,
}

/// `approvals.resolve`'s params.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ApprovalsResolveParams {
    /// The approval id.
    pub id: String,
    /// `allow-once`, `allow-always` or `deny`.
    pub decision: String,
    /// Bind the decision to this call (give `paramsHash` too).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call_id: Option<String>,
    /// Bind the decision to these params (give `callId` too).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub params_hash: Option<String>,
}

/// `approvals.resolve`'s answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ApprovalsResolveResponse {
    /// The approval id.
    pub id: String,
    /// What happened (`applied`, `unknown`, `already-resolved`,
    /// `binding-mismatch`, …).
    pub outcome: String,
    /// Whether the decision was applied.
    pub applied: bool,
}
