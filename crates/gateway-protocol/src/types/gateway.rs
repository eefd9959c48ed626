//! `health` and `gateway.*`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// How the gateway contains the process trees it starts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Containment {
    /// `cgroup` or `process-group`.
    pub mode: String,
    /// With `process-group`: why cgroups are not used.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// `health`'s answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct HealthResponse {
    /// `false` while draining.
    pub ok: bool,
    /// `ok` or `draining`.
    pub status: String,
    /// The gateway's version.
    pub version: String,
    /// The active configuration generation.
    pub generation: u64,
    /// The configuration file (or `<built-in defaults>`).
    pub config_origin: String,
    /// Time since start.
    pub uptime_ms: u64,
    /// Open sessions.
    pub sessions: usize,
    /// Tool calls running.
    pub in_flight: u64,
    /// Subscribed runner connections.
    pub runners: usize,
    /// Approvals waiting for a decision.
    pub approvals_pending: usize,
    /// Calls the previous run left in flight, recorded as interrupted.
    pub interrupted_at_start: usize,
    /// Approvals the previous run left pending, denied at this start.
    pub approvals_denied_at_start: usize,
    /// Process-tree containment (`null` before the supervisor started).
    pub containment: Option<Containment>,
}

/// What a reload did (`gateway.reload`'s answer and the
/// `config.reloaded` notification).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ReloadReport {
    /// Whether the new config is active.
    pub ok: bool,
    /// The active generation after the attempt.
    pub generation: u64,
    /// Why it was rejected (the last good config stays active).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}
