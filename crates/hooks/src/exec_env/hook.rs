//! The `resolve_exec_env` plugin hook: plugins contribute environment
//! variables to an exec call before it runs.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use serde::{Deserialize, Serialize};

use crate::HookContext;
use crate::error::HookError;
use crate::guard::run_guarded;
use talon_exec_env::{DroppedKey, filter_plugin_env, trim_key};

/// The default timeout of a `resolve_exec_env` handler (OpenClaw's default
/// for modifying hooks).
pub const DEFAULT_RESOLVE_EXEC_ENV_TIMEOUT: Duration = Duration::from_millis(15_000);

/// Where the exec call runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ExecHost {
    /// On the gateway host.
    Gateway,
    /// Inside a sandbox.
    Sandbox,
    /// On a paired node.
    Node,
}

/// What a `resolve_exec_env` handler receives.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ExecEnvEvent {
    /// The session the call belongs to.
    pub session_key: String,
    /// The tool name; always `"exec"`.
    pub tool_name: String,
    /// Where the call runs.
    pub host: ExecHost,
}

impl ExecEnvEvent {
    /// An event for an exec call in `session_key` running on `host`.
    pub fn new(session_key: impl Into<String>, host: ExecHost) -> Self {
        ExecEnvEvent {
            session_key: session_key.into(),
            tool_name: "exec".to_owned(),
            host,
        }
    }
}

/// A plugin's `resolve_exec_env` handler.
#[async_trait]
pub trait ResolveExecEnvHandler: Send + Sync {
    /// Returns the variables to add to the exec environment, or an error
    /// (the handler is then skipped).
    async fn resolve_exec_env(
        &self,
        event: &ExecEnvEvent,
        ctx: &HookContext,
    ) -> Result<BTreeMap<String, String>, HookError>;
}

/// The merged, filtered result of every `resolve_exec_env` handler.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ResolvedExecEnv {
    /// The variables that survived the host env policy; empty means none.
    pub env: BTreeMap<String, String>,
    /// The keys the policy dropped.
    pub dropped: Vec<DroppedKey>,
    /// The plugin ids whose handler failed, panicked or timed out, in run
    /// order.
    pub failed: Vec<String>,
}

#[derive(Clone)]
struct Registration {
    plugin_id: String,
    priority: i32,
    timeout: Duration,
    handler: Arc<dyn ResolveExecEnvHandler>,
}

/// The registered `resolve_exec_env` handlers, kept in run order (priority
/// descending, registration order for ties). Cloning shares the handlers.
#[derive(Default, Clone)]
pub struct ExecEnvHooks {
    registrations: Vec<Registration>,
}

impl fmt::Debug for ExecEnvHooks {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut list = f.debug_list();
        for r in &self.registrations {
            list.entry(&(r.plugin_id.as_str(), r.priority, r.timeout));
        }
        list.finish()
    }
}

impl ExecEnvHooks {
    /// Registers `handler` for `plugin_id`. `timeout` defaults to
    /// [`DEFAULT_RESOLVE_EXEC_ENV_TIMEOUT`].
    pub fn register(
        &mut self,
        plugin_id: impl Into<String>,
        priority: i32,
        timeout: Option<Duration>,
        handler: Arc<dyn ResolveExecEnvHandler>,
    ) {
        // Insert after every registration of equal or higher priority, so
        // ties keep registration order.
        let at = self
            .registrations
            .iter()
            .position(|r| r.priority < priority)
            .unwrap_or(self.registrations.len());
        self.registrations.insert(
            at,
            Registration {
                plugin_id: plugin_id.into(),
                priority,
                timeout: timeout.unwrap_or(DEFAULT_RESOLVE_EXEC_ENV_TIMEOUT),
                handler,
            },
        );
    }

    /// Whether no handler is registered.
    pub fn is_empty(&self) -> bool {
        self.registrations.is_empty()
    }

    /// Runs every handler in order and merges their maps (a later,
    /// lower-priority handler wins a key clash), then filters the result
    /// through the host env policy. A handler that errors, panics or times
    /// out is skipped and named in [`ResolvedExecEnv::failed`].
    pub async fn resolve(&self, event: &ExecEnvEvent, ctx: &HookContext) -> ResolvedExecEnv {
        let mut merged = BTreeMap::new();
        let mut failed = Vec::new();
        for r in &self.registrations {
            let failure =
                match run_guarded(r.handler.resolve_exec_env(event, ctx), Some(r.timeout)).await {
                    Ok(env) => {
                        // Keys are trimmed here so that " FOO" from one handler
                        // and "FOO" from a later one clash as the policy sees
                        // them, and the later handler wins.
                        for (key, value) in env {
                            let trimmed = trim_key(&key);
                            let key = if trimmed.is_empty() {
                                key.clone()
                            } else {
                                trimmed.to_owned()
                            };
                            merged.insert(key, value);
                        }
                        continue;
                    }
                    Err(failure) => failure.describe(),
                };
            tracing::warn!(
                plugin = %r.plugin_id,
                error = ?failure,
                "resolve_exec_env handler failed; skipped"
            );
            failed.push(r.plugin_id.clone());
        }
        let filtered = filter_plugin_env(merged);
        ResolvedExecEnv {
            env: filtered.env,
            dropped: filtered.dropped,
            failed,
        }
    }
}

#[cfg(test)]
#[path = "hook_tests.rs"]
mod tests;
