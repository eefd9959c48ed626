//! One run's sandbox decision, taken in one place: [`resolve_run_sandbox`].
//!
//! The CLI (`talon policy …`, `talon tools call`, `talon sandbox
//! explain`), the gateway and every embedder reach this function (the
//! runtime calls it in [`crate::Runtime::assemble`]); nothing else decides
//! whether a run is sandboxed.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::{Value, json};
use talon_config::TalonConfig;
use talon_sandbox_core::{
    BUILT_IN_BACKENDS, ResolvedSandboxConfig, RuntimeStatus, explain_runtime_status, mode_str,
};
use talon_tool_policy::RunContext;

/// Whether one run is sandboxed, why, and the sandbox it gets: the
/// agent's mode, scope, backend, workspace access and sandbox tool policy
/// ([`RunSandbox::config`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunSandbox {
    /// Whether the run is sandboxed: the configuration says so, or the
    /// caller forced it.
    pub sandboxed: bool,
    /// Whether the caller forced a sandbox the configuration would not
    /// have given (`RunContext.sandboxed = true`).
    pub forced: bool,
    /// Why, in one sentence.
    pub reason: String,
    /// The configuration's answer and its inputs (mode, the key it came
    /// from, the main session key, the compared key).
    pub status: RuntimeStatus,
    /// The agent's sandbox settings, resolved once for this run.
    pub config: ResolvedSandboxConfig,
}

/// Decide whether the run described by `ctx` is sandboxed under `config`:
/// the agent's sandbox mode (`agents.list[].sandbox.mode` over
/// `agents.defaults.sandbox.mode`, default `off`) against its main session
/// (`session.mainKey`, `session.scope`; see
/// [`talon_sandbox_core::MainSession`]), tightened by
/// `ctx.sandboxed`.
///
/// A caller may only tighten: `ctx.sandboxed = true` forces the sandbox
/// on; `false` means "decide from the configuration". No field of a
/// [`RunContext`] or [`crate::RunSpec`] turns a configured sandbox off.
///
/// `state_dir` and `home` place the sandbox workspaces (a relative or
/// `~/` `workspaceRoot`), as [`TalonConfig::resolved_sandbox_config`].
///
/// ```
/// use std::path::Path;
/// use talon_tool_policy::RunContext;
///
/// let config = talon_config::load_str(
///     r#"{ agents: { defaults: { sandbox: { mode: "non-main" } } } }"#,
///     "talon.json",
/// )?
/// .config;
/// let mut ctx = RunContext::new("main");
/// ctx.session_key = "agent:main:telegram:group:42".into();
/// let decision = talon_runtime::resolve_run_sandbox(&config, &ctx, Path::new("/state"), None);
/// assert!(decision.sandboxed && !decision.forced);
///
/// ctx.session_key = "main".into();
/// assert!(!talon_runtime::resolve_run_sandbox(&config, &ctx, Path::new("/state"), None).sandboxed);
/// ctx.sandboxed = true; // forcing tightens
/// assert!(talon_runtime::resolve_run_sandbox(&config, &ctx, Path::new("/state"), None).forced);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn resolve_run_sandbox(
    config: &TalonConfig,
    ctx: &RunContext,
    state_dir: &Path,
    home: Option<&Path>,
) -> RunSandbox {
    let agent = ctx.agent_id.trim().to_lowercase();
    let resolved = config.resolved_sandbox_config(&agent, state_dir, home);
    let status = explain_runtime_status(&resolved, &ctx.session_key);
    let forced = ctx.sandboxed && !status.sandboxed;
    let reason = if forced {
        format!(
            "forced by the caller (RunContext.sandboxed / --sandboxed); the configuration alone would not sandbox it: {}",
            status.reason
        )
    } else {
        status.reason.clone()
    };
    RunSandbox {
        sandboxed: status.sandboxed || ctx.sandboxed,
        forced,
        reason,
        status,
        config: resolved,
    }
}

impl RunSandbox {
    /// The decision as the CLI's `--json` output and the gateway show it
    /// (`sandboxed`, `forced`, `reason`, `mode`, `modeKey`, `scope`,
    /// `backend`, `backendKey`, `workspaceAccess`, `sessionKey`,
    /// `mainSessionKey`, `comparableSessionKey`).
    pub fn summary(&self) -> Value {
        json!({
            "sandboxed": self.sandboxed,
            "forced": self.forced,
            "reason": self.reason,
            "agentId": self.config.agent_id,
            "sessionKey": self.status.session_key,
            "mainSessionKey": self.status.main_session_key,
            "comparableSessionKey": self.status.comparable_session_key,
            "mode": mode_str(self.config.mode),
            "modeKey": self.config.mode_key,
            "scope": self.config.scope.as_str(),
            "backend": self.config.backend,
            "backendKey": self.config.backend_key,
            "workspaceAccess": self.config.workspace_access.as_str(),
        })
    }

    /// The error a sandboxed run gets when its backend is not registered:
    /// which backend, the config key that chose it, what is registered and
    /// how to fix it. The run never falls back to the host.
    pub fn backend_missing_message(&self, registered: &[String]) -> String {
        let backend = self.config.backend.trim().to_lowercase();
        let key = self.config.backend_config_key();
        let available = if registered.is_empty() {
            "none".to_owned()
        } else {
            registered.join(", ")
        };
        let fix = if let Some(feature) = crate::cargo_features::missing_backend_feature(&backend) {
            format!(
                "{}, or register a \"{backend}\" backend with `RuntimeBuilder::sandbox_backend`",
                crate::cargo_features::enable_hint(feature)
            )
        } else if BUILT_IN_BACKENDS.contains(&backend.as_str()) {
            format!(
                "register it with `RuntimeBuilder::sandbox_backend` (the talon-sandbox-{backend} crate)"
            )
        } else {
            format!(
                "install and enable the plugin that provides the \"{backend}\" sandbox backend, or register it with `RuntimeBuilder::sandbox_backend`"
            )
        };
        // A registered backend to suggest ("docker" unless this build
        // left it out).
        let example = match crate::cargo_features::missing_backend_feature("docker") {
            Some(_) => registered.first().map_or("docker", String::as_str),
            None => "docker",
        };
        format!(
            "this run is sandboxed ({}), but sandbox backend \"{backend}\" (from {key}) is not registered (registered: {available}). To fix: {fix}, or set {key} to a registered backend such as \"{example}\". The run does not fall back to the host.",
            self.reason
        )
    }
}

/// What a runtime resolves sandbox decisions from: the configuration,
/// the state dir and the home dir.
#[derive(Debug, Clone)]
pub(crate) struct SandboxSource {
    pub(crate) config: Arc<TalonConfig>,
    pub(crate) state_dir: PathBuf,
    pub(crate) home: Option<PathBuf>,
}

impl SandboxSource {
    pub(crate) fn decide(&self, ctx: &RunContext) -> RunSandbox {
        resolve_run_sandbox(&self.config, ctx, &self.state_dir, self.home.as_deref())
    }
}
