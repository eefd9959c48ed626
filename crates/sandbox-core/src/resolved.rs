//! One agent's sandbox configuration, everything applied:
//! [`ResolvedSandboxConfig`].

use std::path::{Path, PathBuf};

use talon_tool_policy::config::{AgentToolsConfig, ToolsConfig};
use talon_tool_policy::{SandboxMode, SandboxToolPolicy, resolve_sandbox_tool_policy};

use crate::docker_config::{DockerOrigins, DockerSettings};
use crate::main_session::MainSession;
use crate::prune::PruneSettings;
use crate::sandbox_config::{SandboxConfig, SandboxScope, WorkspaceAccess};
use crate::ssh_config::SshSettings;

/// The backend used when none is configured.
pub const DEFAULT_SANDBOX_BACKEND: &str = "docker";
/// The directory under the state dir holding per-scope sandbox workspaces.
pub const SANDBOXES_DIR_NAME: &str = "sandboxes";
/// The defaults' sandbox key.
pub const DEFAULTS_SANDBOX_KEY: &str = "agents.defaults.sandbox";

/// What [`ResolvedSandboxConfig::resolve`] reads.
#[derive(Debug, Clone, Copy)]
pub struct SandboxInputs<'a> {
    /// The agent id (lowercased by the caller).
    pub agent_id: &'a str,
    /// `agents.defaults.sandbox`.
    pub defaults: Option<&'a SandboxConfig>,
    /// The agent's own `sandbox` block.
    pub agent: Option<&'a SandboxConfig>,
    /// The agent's config key (`agents.list[2]`, `agents.entries.ops`),
    /// for findings; `None` when the agent is not configured.
    pub agent_key: Option<&'a str>,
    /// The state directory (`~/.talon`, `$TALON_STATE_DIR`).
    pub state_dir: &'a Path,
    /// The home directory, for `~/` in `workspaceRoot`.
    pub home: Option<&'a Path>,
    /// The `tools` section (for `tools.sandbox.tools`).
    pub tools: &'a ToolsConfig,
    /// The agent's `tools` block (for its `tools.sandbox.tools`).
    pub agent_tools: Option<&'a AgentToolsConfig>,
}

/// One agent's sandbox settings after the agent's block, the defaults and
/// the built-in defaults are applied.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResolvedSandboxConfig {
    /// The agent.
    pub agent_id: String,
    /// When sessions are sandboxed.
    pub mode: SandboxMode,
    /// The key `mode` came from (`agents.list[0].sandbox.mode`), `None`
    /// for the built-in default.
    pub mode_key: Option<String>,
    /// What one sandbox is shared by.
    pub scope: SandboxScope,
    /// How the sandbox sees the agent workspace.
    pub workspace_access: WorkspaceAccess,
    /// The backend id.
    pub backend: String,
    /// The key `backend` came from (`agents.list[0].sandbox.backend`),
    /// `None` for the built-in default.
    pub backend_key: Option<String>,
    /// Which session is the agent's main one (`session.mainKey`,
    /// `session.scope`): what `non-main` compares against.
    pub main_session: MainSession,
    /// Where per-scope sandbox workspaces live.
    pub workspace_root: PathBuf,
    /// The Docker settings (the agent's block ignored for `shared`).
    pub docker: DockerSettings,
    /// Where each Docker value came from.
    pub docker_origins: DockerOrigins,
    /// The SSH backend settings (the agent's block ignored for `shared`).
    pub ssh: SshSettings,
    /// The sandbox tool policy.
    pub tool_policy: SandboxToolPolicy,
    /// When its sandboxes are pruned (the agent's block ignored for
    /// `shared`).
    pub prune: PruneSettings,
    /// Talon's state directory the configuration was resolved with
    /// (`None` for `/`): security validation keeps every mount out of it
    /// except the sandbox workspaces Talon manages there.
    pub state_dir: Option<PathBuf>,
    /// The agent's config key (`agents.list[2]`), when the agent is
    /// configured: what findings about its workspace name.
    pub agent_key: Option<String>,
    /// The config file the configuration was loaded from, when the caller
    /// said ([`ResolvedSandboxConfig::with_config_file`]): no mount may be
    /// or cover it.
    pub config_file: Option<PathBuf>,
}

fn layered<T>(
    agent: Option<&SandboxConfig>,
    defaults: Option<&SandboxConfig>,
    field: impl Fn(&SandboxConfig) -> Option<T>,
) -> Option<T> {
    agent.and_then(&field).or_else(|| defaults.and_then(&field))
}

/// Expand `~/` against `home`; a relative path is taken relative to
/// `base`.
pub(crate) fn expand_path(raw: &str, home: Option<&Path>, base: &Path) -> PathBuf {
    let raw = raw.trim();
    if raw == "~"
        && let Some(home) = home
    {
        return home.to_path_buf();
    }
    if let (Some(rest), Some(home)) = (raw.strip_prefix("~/"), home) {
        return home.join(rest);
    }
    let path = Path::new(raw);
    if path.is_absolute() {
        path.to_path_buf()
    } else {
        base.join(path)
    }
}

impl ResolvedSandboxConfig {
    /// Resolve one agent's sandbox: the agent's fields over
    /// `agents.defaults.sandbox` field by field, then the built-in defaults
    /// (mode `off`, scope `agent` — legacy `perSession` `true` = `session`,
    /// `false` = `shared` when no `scope` is set —, workspace access
    /// `none`, backend `docker`, workspace root `<state dir>/sandboxes`).
    ///
    /// A relative `workspaceRoot` is taken relative to the state dir.
    pub fn resolve(inputs: &SandboxInputs<'_>) -> Self {
        let SandboxInputs {
            agent_id,
            defaults,
            agent,
            agent_key,
            state_dir,
            home,
            tools,
            agent_tools,
        } = *inputs;
        let agent_sandbox_key = agent_key.map(|k| format!("{k}.sandbox"));
        let mode_key = match (agent.and_then(|a| a.mode), defaults.and_then(|d| d.mode)) {
            (Some(_), _) => agent_sandbox_key.as_ref().map(|k| format!("{k}.mode")),
            (None, Some(_)) => Some(format!("{DEFAULTS_SANDBOX_KEY}.mode")),
            (None, None) => None,
        };
        let mode = layered(agent, defaults, |s| s.mode).unwrap_or_default();
        let set_backend = |s: &SandboxConfig| {
            s.backend
                .as_ref()
                .map(|b| b.trim().to_owned())
                .filter(|b| !b.is_empty())
        };
        let backend_key = match (agent.and_then(set_backend), defaults.and_then(set_backend)) {
            (Some(_), _) => agent_sandbox_key.as_ref().map(|k| format!("{k}.backend")),
            (None, Some(_)) => Some(format!("{DEFAULTS_SANDBOX_KEY}.backend")),
            (None, None) => None,
        };
        let scope = match (
            layered(agent, defaults, |s| s.scope),
            layered(agent, defaults, |s| s.per_session),
        ) {
            (Some(scope), _) => scope,
            (None, Some(true)) => SandboxScope::Session,
            (None, Some(false)) => SandboxScope::Shared,
            (None, None) => SandboxScope::default(),
        };
        let workspace_access = layered(agent, defaults, |s| s.workspace_access).unwrap_or_default();
        let backend = layered(agent, defaults, set_backend)
            .unwrap_or_else(|| DEFAULT_SANDBOX_BACKEND.to_owned());
        let workspace_root = layered(agent, defaults, |s| {
            s.workspace_root
                .as_deref()
                .filter(|r| !r.trim().is_empty())
                .map(|r| expand_path(r, home, state_dir))
        })
        .unwrap_or_else(|| state_dir.join(SANDBOXES_DIR_NAME));

        let defaults_docker = defaults.and_then(|d| d.docker.as_ref());
        // With a shared scope, the agent's docker block is ignored.
        let agent_docker = match scope {
            SandboxScope::Shared => None,
            SandboxScope::Session | SandboxScope::Agent => agent.and_then(|a| a.docker.as_ref()),
        };
        let docker = DockerSettings::resolve(defaults_docker, agent_docker);
        let docker_origins = DockerOrigins::new(
            &format!("{DEFAULTS_SANDBOX_KEY}.docker"),
            defaults_docker,
            agent_sandbox_key
                .as_ref()
                .map(|k| format!("{k}.docker"))
                .as_deref(),
            agent_docker,
        );
        let agent_ssh = match scope {
            SandboxScope::Shared => None,
            SandboxScope::Session | SandboxScope::Agent => agent.and_then(|a| a.ssh.as_ref()),
        };
        let ssh = SshSettings::resolve(defaults.and_then(|d| d.ssh.as_ref()), agent_ssh);
        let agent_prune = match scope {
            SandboxScope::Shared => None,
            SandboxScope::Session | SandboxScope::Agent => agent.and_then(|a| a.prune.as_ref()),
        };
        let prune = PruneSettings::resolve(defaults.and_then(|d| d.prune.as_ref()), agent_prune);
        let tool_policy = resolve_sandbox_tool_policy(tools, agent_tools, agent_id);
        ResolvedSandboxConfig {
            agent_id: agent_id.to_owned(),
            mode,
            mode_key,
            scope,
            workspace_access,
            backend,
            backend_key,
            main_session: MainSession::default(),
            workspace_root,
            docker,
            docker_origins,
            ssh,
            tool_policy,
            prune,
            state_dir: (state_dir != Path::new("/")).then(|| state_dir.to_path_buf()),
            config_file: None,
            agent_key: agent_key.map(str::to_owned),
        }
    }

    /// Builder: the config file this configuration came from, protected
    /// from every mount like the state dir.
    #[must_use]
    pub fn with_config_file(mut self, config_file: Option<PathBuf>) -> Self {
        self.config_file = config_file;
        self
    }

    /// Builder: which session is the agent's main one (`session.mainKey`,
    /// `session.scope`; [`ResolvedSandboxConfig::resolve`] assumes the
    /// defaults, `main` and per-sender).
    #[must_use]
    pub fn with_main_session(mut self, main_session: MainSession) -> Self {
        self.main_session = main_session;
        self
    }

    /// The key to change the backend at: where it was set, else
    /// `agents.defaults.sandbox.backend`.
    pub fn backend_config_key(&self) -> String {
        self.backend_key
            .clone()
            .unwrap_or_else(|| format!("{DEFAULTS_SANDBOX_KEY}.backend"))
    }

    /// Whether the configuration sandboxes a session of this agent: `all`
    /// → yes, `off` → no, `non-main` → when the key is not the agent's
    /// main session ([`MainSession::is_main_session`]: trimmed,
    /// lowercased, main aliases canonicalised). Group, channel and DM
    /// sessions have keys of their own, so they are sandboxed in
    /// `non-main`.
    ///
    /// This is the configuration's answer only; a run can be forced into
    /// its sandbox on top of it (the runtime's `resolve_run_sandbox`).
    pub fn should_sandbox(&self, session_key: &str) -> bool {
        match self.mode {
            SandboxMode::Off => false,
            SandboxMode::All => true,
            SandboxMode::NonMain => !self
                .main_session
                .is_main_session(&self.agent_id, session_key),
        }
    }
}

#[cfg(test)]
#[path = "resolved_tests.rs"]
mod tests;
