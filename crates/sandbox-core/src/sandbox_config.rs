//! The sandbox section as written in the config file:
//! `agents.defaults.sandbox` and `agents.list[].sandbox`.
//!
//! These are the file forms (every field optional, OpenClaw's key names);
//! [`crate::ResolvedSandboxConfig`] is what they mean for one agent.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use talon_tool_policy::SandboxMode;

use crate::docker_config::DockerConfig;
use crate::prune::PruneConfig;
use crate::ssh_config::SshConfig;

/// What one sandbox is shared by.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum SandboxScope {
    /// One sandbox per session.
    Session,
    /// One sandbox per agent (the default).
    #[default]
    Agent,
    /// One sandbox for everything.
    Shared,
}

impl SandboxScope {
    /// The config spelling (`session`, `agent`, `shared`).
    pub fn as_str(self) -> &'static str {
        match self {
            SandboxScope::Session => "session",
            SandboxScope::Agent => "agent",
            SandboxScope::Shared => "shared",
        }
    }
}

/// How the sandbox sees the agent's workspace.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum WorkspaceAccess {
    /// Not at all: the sandbox works on its own copy, mounted read-only
    /// (the default).
    #[default]
    None,
    /// Read-only.
    Ro,
    /// Read-write.
    Rw,
}

impl WorkspaceAccess {
    /// The config spelling (`none`, `ro`, `rw`).
    pub fn as_str(self) -> &'static str {
        match self {
            WorkspaceAccess::None => "none",
            WorkspaceAccess::Ro => "ro",
            WorkspaceAccess::Rw => "rw",
        }
    }
}

/// The spelling of a [`SandboxMode`] in the config (`off`, `non-main`,
/// `all`).
pub fn mode_str(mode: SandboxMode) -> &'static str {
    match mode {
        SandboxMode::Off => "off",
        SandboxMode::NonMain => "non-main",
        SandboxMode::All => "all",
    }
}

/// `agents.defaults.sandbox` / `agents.list[].sandbox`: an agent's block
/// overrides the defaults field by field.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SandboxConfig {
    /// `off` (default), `non-main` or `all`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<SandboxMode>,
    /// The backend id (default `docker`; `local` (bubblewrap, no daemon);
    /// `ssh`; plugins add more).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backend: Option<String>,
    /// `session`, `agent` (default) or `shared`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<SandboxScope>,
    /// Legacy form of `scope`: `true` = `session`, `false` = `shared`.
    /// `scope` wins when both are set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub per_session: Option<bool>,
    /// `none` (default), `ro` or `rw`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workspace_access: Option<WorkspaceAccess>,
    /// Where per-scope sandbox workspaces live (default
    /// `<state dir>/sandboxes`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workspace_root: Option<String>,
    /// Docker backend settings.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub docker: Option<DockerConfig>,
    /// SSH backend settings.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ssh: Option<SshConfig>,
    /// The sandboxed browser (`enabled`, `autoStart`,
    /// `autoStartTimeoutMs`, ...): every key is checked at load by
    /// `talon-config` (`sections::sandbox_browser`), which refuses the keys
    /// Talon cannot honour.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub browser: Option<Value>,
    /// When idle or old sandboxes are removed (`idleHours`, `maxAgeDays`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prune: Option<PruneConfig>,
}
