//! `tools.fs`: how far the host file tools may reach.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// `tools.fs` (and an agent's `tools.fs`, which overrides it key by key).
///
/// OpenClaw's key name. Talon defaults `workspaceOnly` to `true`: on the
/// host, `read`, `write`, `edit` and `apply_patch` are confined to the
/// agent's workspace root (resolved beneath it by the kernel, so `..`,
/// absolute paths and symlinks cannot leave it). `false` lets them reach
/// any host path the process can, still through the same bridge.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct FsToolsConfig {
    /// Confine host file tools to the workspace (default `true`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workspace_only: Option<bool>,
}

impl FsToolsConfig {
    /// The effective `workspaceOnly` of an agent: the agent's value, else
    /// the global one, else `true`.
    pub fn workspace_only(global: Option<&FsToolsConfig>, agent: Option<&FsToolsConfig>) -> bool {
        agent
            .and_then(|a| a.workspace_only)
            .or_else(|| global.and_then(|g| g.workspace_only))
            .unwrap_or(true)
    }
}
