//! `ExecConfig`: the `tools.exec` keys Talon honours.

use std::time::Duration;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use talon_exec_env::{AgentExecEnvConfig, EnvConfigError, EnvPolicy, ExecEnvConfig};
use talon_hooks::exec_approvals::{ExecAsk, ExecPolicy, ExecSecurity};

/// OpenClaw's default yield window before a command is backgrounded.
pub const DEFAULT_BACKGROUND_MS: u64 = 10_000;
/// OpenClaw's default command timeout.
pub const DEFAULT_TIMEOUT_SEC: u64 = 1_800;
/// Talon's default ceiling for a call's own `timeout`.
pub const DEFAULT_MAX_TIMEOUT_SEC: u64 = 10_800;
/// OpenClaw's default retention of finished background sessions (30 min).
pub const DEFAULT_CLEANUP_MS: u64 = 1_800_000;
/// OpenClaw's default in-memory output cap (`PI_BASH_MAX_OUTPUT_CHARS`).
pub const DEFAULT_MAX_OUTPUT_BYTES: u64 = 200_000;

/// The range OpenClaw clamps a yield window to; Talon rejects values
/// outside it instead.
pub const YIELD_MS_RANGE: (u64, u64) = (10, 120_000);
/// The range OpenClaw clamps the finished-session TTL to (1 min to 3 h).
const CLEANUP_MS_RANGE: (u64, u64) = (60_000, 10_800_000);
/// The output cap range.
const MAX_OUTPUT_RANGE: (u64, u64) = (1_024, 64 * 1024 * 1024);

/// The `tools.exec` section (OpenClaw key names, camelCase). Unknown keys
/// are an error; OpenClaw keys Talon does not implement (`host`, `node`,
/// `pathPrepend`, `safeBins`, `notifyOnExit`, `applyPatch`, ...) are
/// unknown here on purpose, so a config that relies on them fails loudly
/// instead of being half-honoured. `security` and `ask` are enforced by the
/// gate (`talon_hooks::exec_approvals`), not by the tool.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
pub struct ExecConfig {
    /// Milliseconds a command may run in the foreground before it becomes
    /// a background session (the default of the call's `yieldMs`);
    /// 10..=120000, default 10000.
    pub background_ms: u64,
    /// Default timeout of a command in seconds (a call's `timeout` wins);
    /// default 1800.
    pub timeout_sec: u64,
    /// Talon-only: the largest `timeout` a call may ask for, in seconds;
    /// default 10800.
    pub max_timeout_sec: u64,
    /// How long a finished background session is kept for `process`
    /// before it is forgotten, in milliseconds; 60000..=10800000 (OpenClaw's
    /// bounds), default 1800000.
    pub cleanup_ms: u64,
    /// Talon-only (OpenClaw reads `PI_BASH_MAX_OUTPUT_CHARS` from the
    /// environment): how many bytes of a command's output are kept, half
    /// from the start and half from the end; default 200000.
    pub max_output_bytes: u64,
    /// Which commands may run: `deny` (none), `allowlist` (only those on
    /// the agent's allowlist in `<state dir>/exec-approvals.json`) or
    /// `full` (all; the default).
    pub security: ExecSecurity,
    /// When a human is asked: `off` (never; the default), `on-miss` (a
    /// command not on the allowlist, with `security: allowlist`) or
    /// `always`.
    pub ask: ExecAsk,
    /// How every child environment is built (host and sandboxed `exec`,
    /// stdio MCP servers, command hooks): `inherit` (`core`, the default;
    /// `all`; `none`), `exclude` patterns, `includeOnly` patterns and `set`
    /// variables. The built-in credential excludes and Talon's own
    /// variables always apply.
    #[serde(skip_serializing_if = "is_default_env")]
    pub env: ExecEnvConfig,
}

fn is_default_env(env: &ExecEnvConfig) -> bool {
    *env == ExecEnvConfig::default()
}

impl ExecConfig {
    /// The exec policy, with `agent` (an agent's `tools.exec`) overriding
    /// key by key.
    pub fn policy(&self, agent: Option<&AgentExecConfig>) -> ExecPolicy {
        ExecPolicy::new(
            agent.and_then(|a| a.security).unwrap_or(self.security),
            agent.and_then(|a| a.ask).unwrap_or(self.ask),
        )
    }

    /// The environment policy, with `agent` (an agent's `tools.exec`)
    /// layered over `env` (see [`AgentExecEnvConfig`]). Fails only on a
    /// section that did not pass validation (a loaded config has none).
    pub fn env_policy(&self, agent: Option<&AgentExecConfig>) -> Result<EnvPolicy, EnvConfigError> {
        EnvPolicy::from_config(&self.env, agent.and_then(|a| a.env.as_ref()))
    }
}

/// An agent's `tools.exec` (`agents.list[].tools.exec`): the exec policy
/// keys, each overriding the global one.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AgentExecConfig {
    /// See [`ExecConfig::security`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub security: Option<ExecSecurity>,
    /// See [`ExecConfig::ask`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ask: Option<ExecAsk>,
    /// Layered over [`ExecConfig::env`]: `inherit` replaces it, `exclude`
    /// adds to it, `includeOnly` applies as well, `set` merges over it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub env: Option<AgentExecEnvConfig>,
}

impl Default for ExecConfig {
    fn default() -> Self {
        ExecConfig {
            background_ms: DEFAULT_BACKGROUND_MS,
            timeout_sec: DEFAULT_TIMEOUT_SEC,
            max_timeout_sec: DEFAULT_MAX_TIMEOUT_SEC,
            cleanup_ms: DEFAULT_CLEANUP_MS,
            max_output_bytes: DEFAULT_MAX_OUTPUT_BYTES,
            security: ExecSecurity::Full,
            ask: ExecAsk::Off,
            env: ExecEnvConfig::default(),
        }
    }
}

/// A `tools.exec` value out of range.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("tools.exec.{key} is {value}: {expected}")]
pub struct ExecConfigError {
    /// The key (camelCase, under `tools.exec`).
    pub key: &'static str,
    /// The value given.
    pub value: u64,
    /// What is accepted.
    pub expected: String,
}

fn check_range(
    key: &'static str,
    value: u64,
    (min, max): (u64, u64),
) -> Result<(), ExecConfigError> {
    if value < min || value > max {
        return Err(ExecConfigError {
            key,
            value,
            expected: format!("must be between {min} and {max}"),
        });
    }
    Ok(())
}

impl ExecConfig {
    /// Checks every value's range (call after deserialising).
    pub fn validate(&self) -> Result<(), ExecConfigError> {
        check_range("backgroundMs", self.background_ms, YIELD_MS_RANGE)?;
        check_range("maxTimeoutSec", self.max_timeout_sec, (1, 7 * 24 * 3600))?;
        check_range("timeoutSec", self.timeout_sec, (1, self.max_timeout_sec)).map_err(
            |mut e| {
                e.expected = format!(
                    "must be between 1 and tools.exec.maxTimeoutSec ({})",
                    self.max_timeout_sec
                );
                e
            },
        )?;
        check_range("cleanupMs", self.cleanup_ms, CLEANUP_MS_RANGE)?;
        check_range("maxOutputBytes", self.max_output_bytes, MAX_OUTPUT_RANGE)?;
        Ok(())
    }

    /// The default yield window.
    pub fn background(&self) -> Duration {
        Duration::from_millis(self.background_ms)
    }

    /// The default timeout.
    pub fn timeout(&self) -> Duration {
        Duration::from_secs(self.timeout_sec)
    }

    /// The retention of finished background sessions.
    pub fn cleanup(&self) -> Duration {
        Duration::from_millis(self.cleanup_ms)
    }
}
