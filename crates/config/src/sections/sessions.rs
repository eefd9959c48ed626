//! `tools.sessions` and `tools.agentToAgent`: what the session tools may
//! see and reach. The rule itself lives in `talon-sessions`
//! ([`talon_sessions::VisibilityPolicy`]); this is the configuration.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
pub use talon_sessions::{AgentToAgent, Visibility};

/// `tools.sessions`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SessionsToolsConfig {
    /// `self`, `tree` (the default: this session and the sessions it
    /// spawned), `agent` or `all` (another agent's sessions only through
    /// `tools.agentToAgent`). A sandboxed session is always held to its own
    /// tree.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub visibility: Option<Visibility>,
}
