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

/// A configured command hook (`tools.hooks`) that cannot run, found when
/// the active configuration was loaded.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct HookProblem {
    /// The hook's id (empty when the id itself is the problem).
    pub hook_id: String,
    /// Its hook point: `before_tool_call`, `after_tool_call` or
    /// `resolve_exec_env`.
    pub event: String,
    /// Stable code: `hook.missing_program`, `hook.not_executable`,
    /// `hook.bad_cwd` or `hook.bad_config`.
    pub code: String,
    /// Where in the configuration (`tools.hooks.beforeToolCall[0].command`).
    pub key_path: String,
    /// What is wrong, what it does to calls (a `before_tool_call` hook that
    /// cannot run blocks every call it matches) and how to fix it.
    pub message: String,
}

/// `health`'s answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct HealthResponse {
    /// Whether the gateway serves calls: `false` while draining.
    pub ok: bool,
    /// `ok`; `degraded` (serving, but a configured hook cannot run: see
    /// `hookProblems`); or `draining`.
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
    /// Every configured hook of the active configuration that cannot run,
    /// checked at start and at each reload (absent when there is none).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hook_problems: Vec<HookProblem>,
    /// Where the state is kept and, on a shared database, the fleet of
    /// gateways on it (absent from gateways that predate it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state: Option<StateStatus>,
}

/// Where a gateway keeps its state, and the fleet sharing it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct StateStatus {
    /// `sqlite` or `postgres`.
    pub backend: String,
    /// With `postgres`: `user@host:port/database` (never a password).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<String>,
    /// With `postgres`: this gateway's member id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub member_id: Option<String>,
    /// With `postgres`: every gateway registered on the database.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub members: Vec<FleetMember>,
    /// With `postgres`: the leases held now (`cron`: the timer owner).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub leases: Vec<FleetLease>,
    /// With `postgres`: why the fleet could not be read just now.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// One gateway of a fleet.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FleetMember {
    /// Its member id.
    pub id: String,
    /// Its host name.
    pub host: String,
    /// Its process id there.
    pub pid: u32,
    /// The address it listens on.
    pub listen: String,
    /// Its Talon version.
    pub version: String,
    /// When it joined (ms since the epoch, database clock).
    pub started_at_ms: i64,
    /// Its last heartbeat (ms since the epoch, database clock).
    pub heartbeat_at_ms: i64,
    /// Whether that heartbeat is recent enough for it to count as live.
    pub live: bool,
}

/// A lease held in the fleet.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FleetLease {
    /// The lease (`cron`, `maintenance`).
    pub name: String,
    /// The member holding it.
    pub holder: String,
    /// Its fencing token.
    pub token: i64,
    /// When it lapses unless renewed (ms since the epoch, database clock).
    pub expires_at_ms: i64,
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
