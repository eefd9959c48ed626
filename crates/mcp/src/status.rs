//! `McpStatus`: what the gateway's `mcp.status` reports.

use serde::Serialize;

use crate::config::Transport;

/// The life-cycle state of one server.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum ServerState {
    /// Configured, not started yet (servers start on first use).
    Idle,
    /// Starting or initialising.
    Starting,
    /// Initialised and listed.
    Ready,
    /// Its connection was lost; the next use restarts it (with backoff).
    Restarting,
    /// The last start failed (see `lastError`); the next use retries after
    /// the backoff.
    Failed,
    /// Stopped by a shutdown.
    Stopped,
    /// `enabled: false`.
    Disabled,
}

/// One server of one agent.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ServerStatus {
    /// The agent whose server this is.
    pub agent: String,
    /// The configured name.
    pub name: String,
    /// The name's safe form (the prefix of its tools).
    pub safe_name: String,
    /// stdio or streamable HTTP.
    pub transport: Transport,
    /// The state.
    pub state: ServerState,
    /// How many tools it lists.
    pub tool_count: usize,
    /// The last start or listing error, if any.
    pub last_error: Option<String>,
    /// How many times it was restarted after it had run.
    pub restarts: u32,
    /// How many `tools/list` rounds were made (pages followed count once).
    pub list_requests: u64,
}

/// Every server the manager has instantiated, agent by agent, each
/// agent's servers in declaration order.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct McpStatus {
    /// The servers.
    pub servers: Vec<ServerStatus>,
}
