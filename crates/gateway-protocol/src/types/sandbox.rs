//! `sandbox.*`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A tool the sandbox policy removed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SandboxRemoval {
    /// The policy layer.
    pub layer: String,
    /// The removal (tool, rule, config key).
    pub removal: Value,
}

/// `sandbox.explain`'s answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SandboxExplainResponse {
    /// The session.
    pub session_key: String,
    /// Its agent.
    pub agent_id: String,
    /// Whether its calls run in a sandbox.
    pub sandboxed: bool,
    /// Why (the runtime's sandbox decision, summarised).
    pub decision: Value,
    /// The agent's resolved sandbox settings.
    pub sandbox: Value,
    /// Tools the sandbox tool policy removed.
    pub removed_by_sandbox_policy: Vec<SandboxRemoval>,
    /// The exec environment policy of this session's runs: inherit mode,
    /// exclude patterns, the names of configured and inherited variables
    /// (never values); `{"error": …}` when the agent's section is invalid.
    pub exec_env: Value,
}

/// A backend that could not be listed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct SandboxBackendError {
    /// The backend id (`docker`, `ssh`, `local`).
    pub backend: String,
    /// What went wrong.
    pub error: String,
}

/// `sandbox.list`'s answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SandboxListResponse {
    /// The sandboxes Talon owns on every backend.
    pub sandboxes: Vec<Value>,
    /// Backends that could not be listed.
    pub errors: Vec<SandboxBackendError>,
}

/// `sandbox.recreate`'s params.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SandboxRecreateParams {
    /// The sandbox's name (as `sandbox.list` shows it).
    pub name: String,
    /// The backend (needed when more than one is configured).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backend: Option<String>,
}

/// `sandbox.recreate`'s answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct SandboxRecreateResponse {
    /// The removed sandbox.
    pub removed: String,
    /// Its backend.
    pub backend: String,
    /// What happens next.
    pub note: String,
}
