//! The backend contract: [`SandboxBackend`] turns a [`SandboxRequest`]
//! into a ready [`SandboxHandle`] (one scope's container or remote
//! workspace).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use talon_fs_bridge::FsBridge;

use crate::config_hash::{ConfigHashInputs, config_hash};
use crate::error::SandboxError;
use crate::mounts::{MountPlan, MountPlanInputs, mounted_workspace_dir};
use crate::process::{ExitStatus, ProcessLauncher};
use crate::resolved::ResolvedSandboxConfig;
use crate::scope::{container_name, scope_key, scope_workspace_dir};

/// What a script run in the sandbox printed and how it ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScriptOutput {
    /// Its stdout.
    pub stdout: Vec<u8>,
    /// Its stderr.
    pub stderr: Vec<u8>,
    /// How it ended.
    pub status: ExitStatus,
}

/// One ready sandbox.
#[async_trait::async_trait]
pub trait SandboxHandle: Send + Sync + std::fmt::Debug {
    /// The backend id (`docker`, `ssh`, ...).
    fn backend_id(&self) -> &str;

    /// The sandbox's name (container name, remote directory).
    fn name(&self) -> &str;

    /// The working directory commands start in (`/workspace`).
    fn workdir(&self) -> &str;

    /// What the sandbox offers beyond exec and files (`browser`, ...).
    fn capabilities(&self) -> &[String];

    /// Runs the `exec` / `process` tools' commands inside the sandbox.
    fn launcher(&self) -> Arc<dyn ProcessLauncher>;

    /// The file bridge for `read` / `write` / `edit` / `apply_patch`, when
    /// the backend has one.
    fn fs_bridge(&self) -> Option<Arc<dyn FsBridge>>;

    /// Run a POSIX shell script (`sh -c SCRIPT talon-sandbox ARGS...`) with
    /// optional stdin, killed (inside the sandbox) at `timeout`.
    async fn run_script(
        &self,
        script: &str,
        args: &[String],
        stdin: Option<Vec<u8>>,
        timeout: Duration,
    ) -> Result<ScriptOutput, SandboxError>;
}

/// Everything a backend needs to create or reuse the sandbox of one scope.
///
/// Build it with [`SandboxRequest::new`]; the fields are public so a
/// backend (and its tests) can read and adjust them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SandboxRequest {
    /// The agent's resolved sandbox configuration.
    pub config: ResolvedSandboxConfig,
    /// The session the sandbox is for (as given).
    pub session_key: String,
    /// The scope key (`agent:<id>`, the session key, `shared`).
    pub scope_key: String,
    /// The sandbox's name: `<containerPrefix><slug>` (at most 63 chars).
    pub sandbox_name: String,
    /// The scope's sandbox workspace dir (`<workspaceRoot>/<slug>`).
    pub workspace_dir: PathBuf,
    /// The agent's own workspace dir.
    pub agent_workspace_dir: PathBuf,
    /// What is mounted where.
    pub mount_plan: MountPlan,
    /// The config hash (stored on the sandbox; a mismatch recreates it).
    pub config_hash: String,
    /// Refuse to keep a running sandbox whose hash differs, even when it
    /// was used recently (restricted dispatch / delegation).
    pub require_current_config: bool,
}

impl SandboxRequest {
    /// Derive scope key, name, dirs, mount plan and config hash for
    /// `session_key` from the resolved config. `materialized_skills_root`
    /// is the scope's [`crate::materialized_skills_root`], filled by
    /// [`crate::mirror_skills`] beforehand: its `skills/` is mounted
    /// read-only at `<workdir>/.talon/sandbox-skills/skills` when it is a
    /// real directory. Backends call [`crate::prepare_sandbox_workspace`]
    /// with the request before the sandbox is used.
    pub fn new(
        config: ResolvedSandboxConfig,
        session_key: &str,
        agent_workspace_dir: &Path,
        materialized_skills_root: Option<&Path>,
    ) -> Self {
        let scope_key = scope_key(config.scope, &config.agent_id, session_key);
        let sandbox_name =
            container_name(&config.docker.container_prefix, config.scope, &scope_key);
        let workspace_dir = scope_workspace_dir(&config.workspace_root, config.scope, &scope_key);
        let mount_plan = MountPlan::build(&MountPlanInputs {
            access: config.workspace_access,
            workdir: &config.docker.workdir,
            sandbox_workspace_dir: &workspace_dir,
            agent_workspace_dir,
            materialized_skills_root,
            binds: &config.docker.binds,
        });
        let skill_mounts = mount_plan.read_only_skill_mounts();
        let config_hash = config_hash(&ConfigHashInputs {
            docker: &config.docker,
            workspace_access: config.workspace_access,
            workspace_dir: &mounted_workspace_dir(
                config.workspace_access,
                &workspace_dir,
                agent_workspace_dir,
            ),
            agent_workspace_dir,
            read_only_skill_mounts: &skill_mounts,
        });
        SandboxRequest {
            config,
            session_key: session_key.trim().to_owned(),
            scope_key,
            sandbox_name,
            workspace_dir,
            agent_workspace_dir: agent_workspace_dir.to_path_buf(),
            mount_plan,
            config_hash,
            require_current_config: false,
        }
    }

    /// The container workdir the configuration names
    /// (`sandbox.docker.workdir`, `/workspace` by default): where commands
    /// start in a backend whose sandbox mounts the workspace at that path
    /// (Docker, local). It is the default of [`SandboxBackend::workdir`];
    /// ask the backend, not the request, where a sandbox's commands start
    /// (a remote backend keeps its copy elsewhere).
    pub fn config_workdir(&self) -> &str {
        &self.config.docker.workdir
    }

    /// The bind roots security validation allows: the scope's sandbox
    /// workspace dir and the agent workspace dir.
    pub fn allowed_bind_roots(&self) -> Vec<PathBuf> {
        vec![self.workspace_dir.clone(), self.agent_workspace_dir.clone()]
    }
}

/// A sandbox a backend created and still owns (found by its labels only).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct OwnedSandbox {
    /// The backend id.
    pub backend_id: String,
    /// The container / remote sandbox name.
    pub name: String,
    /// The scope key it was created for (its label).
    pub scope_key: Option<String>,
    /// The config hash it was created with (its label).
    pub config_hash: Option<String>,
    /// The image, when the backend knows it.
    pub image: Option<String>,
    /// Whether it is running.
    pub running: bool,
    /// When it was created (ms since the epoch).
    pub created_at_ms: Option<u64>,
    /// When it was last used (ms since the epoch), when known.
    pub last_used_at_ms: Option<u64>,
}

impl OwnedSandbox {
    /// A sandbox known by backend and name only; set the other fields.
    pub fn new(backend_id: &str, name: &str) -> Self {
        OwnedSandbox {
            backend_id: backend_id.to_owned(),
            name: name.to_owned(),
            scope_key: None,
            config_hash: None,
            image: None,
            running: false,
            created_at_ms: None,
            last_used_at_ms: None,
        }
    }
}

/// A sandbox backend (Docker, SSH, a plugin's): creates or reuses the
/// sandbox of a scope, and lists / removes the sandboxes it owns for
/// `talon sandbox ls|rm|recreate`.
#[async_trait::async_trait]
pub trait SandboxBackend: Send + Sync + std::fmt::Debug {
    /// The backend id (`docker`, `ssh`, ...), as in
    /// `agents.*.sandbox.backend`.
    fn id(&self) -> &str;

    /// What its sandboxes offer beyond exec and files (`browser`, ...).
    fn capabilities(&self) -> &[String] {
        &[]
    }

    /// Where the sandbox of `request` starts its commands and resolves
    /// relative file paths, known before it is ensured (the runtime shows
    /// it and hands it to lazy handles). The default is the configured
    /// container workdir ([`SandboxRequest::config_workdir`]), right for a
    /// backend that mounts the workspace there; a backend that keeps a
    /// copy elsewhere (SSH's `<workspaceRoot>/<name>/workspace`) answers
    /// with that path. It must equal the ensured handle's
    /// [`SandboxHandle::workdir`].
    fn workdir(&self, request: &SandboxRequest) -> String {
        request.config_workdir().to_owned()
    }

    /// Create the sandbox for `request` (or reuse it when its config hash
    /// matches; see the backend's docs for its recreate policy), start it,
    /// and hand out its handle. Implementations validate the request with
    /// [`crate::validate_sandbox_security`] before creating anything.
    async fn ensure(
        &self,
        request: &SandboxRequest,
    ) -> Result<Arc<dyn SandboxHandle>, SandboxError>;

    /// The sandboxes this backend owns (by label, never by name alone).
    async fn list_owned(&self) -> Result<Vec<OwnedSandbox>, SandboxError>;

    /// Remove one owned sandbox by name (force-stop first). Refuses a name
    /// it does not own.
    async fn remove(&self, name: &str) -> Result<(), SandboxError>;
}

#[cfg(test)]
#[path = "backend_tests.rs"]
mod tests;
