//! `HostLauncher`: runs commands on the gateway host with `/bin/sh -c`, each
//! in its own contained process tree (a `talon-proc-tree` leaf: a cgroup, or
//! a labelled process group), confined to a workspace directory.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use talon_exec_env::{EnvPolicy, process_env};
use talon_proc_tree::{Leaf, Limits, Supervisor};
use talon_sandbox_core::{
    LaunchRequest, LaunchedProcess, LocalKill, ProcessLauncher, SandboxError, spawn_local,
};

/// The shell every command runs under.
const SHELL: &str = "/bin/sh";

/// Where the host environment a command inherits comes from.
#[derive(Debug, Clone)]
enum HostEnv {
    /// This process's environment, read at each launch.
    Process,
    /// A fixed list (embedders and tests).
    Fixed(Arc<Vec<(String, String)>>),
}

/// Runs commands on the host: `/bin/sh -c CMD` in its own contained
/// process tree (a [`Leaf`] of the [`Supervisor`]: the shared one unless
/// [`HostLauncher::with_supervisor`] gives another), with an environment
/// built by its [`EnvPolicy`] (the inherited base only: `inherit`, the
/// credential and Talon excludes, OpenClaw's lists; the default policy
/// unless [`HostLauncher::with_env_policy`] gives another) plus the
/// request's variables, in a working directory that must lie inside the
/// workspace root. Model API keys, the gateway token and every other
/// credential-looking variable of the host never reach the command.
///
/// A `PATH` in the request is prepended to the inherited `PATH` (the
/// launcher contract never lets a request replace it). Under a PTY the
/// command's stdin, stdout and stderr are the terminal's slave side; the
/// command has no controlling terminal (the launcher forks no session), so
/// `tty` and `isatty` work but job control and `/dev/tty` do not.
///
/// What it does NOT do: isolate anything. The workdir check only stops a
/// call from *starting* elsewhere; the command itself can `cd /`. Use a
/// sandbox backend for isolation.
///
/// A kill, a timeout, an abort and dropping the process handle end the
/// command's whole tree, including `setsid`, double-forked and daemonised
/// descendants; a command exiting does not end its daemons until its
/// handle is dropped.
#[derive(Debug, Clone)]
pub struct HostLauncher {
    root: PathBuf,
    env: HostEnv,
    policy: Arc<EnvPolicy>,
    supervisor: Option<Arc<Supervisor>>,
}

impl HostLauncher {
    /// A launcher confined to `workspace_root`, which must be an existing
    /// directory (it is resolved once, here, with symlinks followed).
    pub fn new(workspace_root: impl AsRef<Path>) -> Result<Self, SandboxError> {
        let given = workspace_root.as_ref();
        let root = std::fs::canonicalize(given).map_err(|e| {
            SandboxError::config(format!(
                "workspace root {} cannot be resolved: {e}",
                given.display()
            ))
            .with_source(e)
        })?;
        if !root.is_dir() {
            return Err(SandboxError::config(format!(
                "workspace root {} is not a directory",
                given.display()
            )));
        }
        Ok(HostLauncher {
            root,
            env: HostEnv::Process,
            policy: Arc::new(EnvPolicy::default()),
            supervisor: None,
        })
    }

    /// Builder: contain commands with `supervisor` instead of the shared
    /// one ([`Supervisor::shared`], started on first launch).
    pub fn with_supervisor(mut self, supervisor: Arc<Supervisor>) -> Self {
        self.supervisor = Some(supervisor);
        self
    }

    /// A new leaf for one command.
    fn leaf(&self) -> Result<Leaf, SandboxError> {
        let supervisor = match &self.supervisor {
            Some(supervisor) => Arc::clone(supervisor),
            None => Supervisor::shared().map_err(|e| io_error("cannot contain the command", e))?,
        };
        supervisor
            .leaf(&Limits::NONE)
            .map_err(|e| io_error("cannot contain the command", e))
    }

    /// Builder: build the inherited base with `policy` (the agent's
    /// `tools.exec.env`; its `set` variables are the caller's to add to
    /// each request).
    pub fn with_env_policy(mut self, policy: Arc<EnvPolicy>) -> Self {
        self.policy = policy;
        self
    }

    /// Builder: take the host environment from `vars` instead of this
    /// process's environment (the policy still applies).
    pub fn with_host_env(mut self, vars: impl IntoIterator<Item = (String, String)>) -> Self {
        self.env = HostEnv::Fixed(Arc::new(vars.into_iter().collect()));
        self
    }

    /// The resolved workspace root.
    pub fn workspace_root(&self) -> &Path {
        &self.root
    }

    /// Resolves a requested workdir (relative to the root, or absolute) and
    /// refuses anything that resolves outside the root.
    fn resolve_workdir(&self, workdir: Option<&str>) -> Result<PathBuf, SandboxError> {
        let Some(raw) = workdir else {
            return Ok(self.root.clone());
        };
        if raw.contains('\0') {
            return Err(SandboxError::config(
                "workdir contains a NUL byte".to_owned(),
            ));
        }
        let joined = self.root.join(raw);
        let resolved = std::fs::canonicalize(&joined).map_err(|e| {
            SandboxError::config(format!(
                "workdir {raw:?} cannot be used: {e}; give a directory inside the workspace {}",
                self.root.display()
            ))
            .with_source(e)
        })?;
        if !resolved.starts_with(&self.root) {
            return Err(SandboxError::config(format!(
                "workdir {raw:?} resolves to {}, outside the workspace {}; give a directory inside it",
                resolved.display(),
                self.root.display()
            )));
        }
        if !resolved.is_dir() {
            return Err(SandboxError::config(format!(
                "workdir {raw:?} is not a directory"
            )));
        }
        Ok(resolved)
    }

    /// The environment of one command.
    fn environment(&self, request: &LaunchRequest) -> BTreeMap<String, String> {
        let mut env = match &self.env {
            HostEnv::Process => self.policy.inherited(process_env()),
            HostEnv::Fixed(vars) => self.policy.inherited(vars.iter().cloned()),
        };
        for (key, value) in &request.env {
            if key.eq_ignore_ascii_case("PATH") {
                let prepended = match env.get("PATH") {
                    Some(base) if !base.is_empty() => format!("{value}:{base}"),
                    _ => value.clone(),
                };
                env.insert("PATH".to_owned(), prepended);
            } else {
                env.insert(key.clone(), value.clone());
            }
        }
        env
    }
}

/// An error and its sources, `: `-separated.
fn chain(e: &dyn std::error::Error) -> String {
    let mut out = e.to_string();
    let mut source = e.source();
    while let Some(inner) = source {
        out.push_str(": ");
        out.push_str(&inner.to_string());
        source = inner.source();
    }
    out
}

/// `what` failed with `e` (its chain in the message, `e` as the source).
fn io_error(what: &str, e: impl std::error::Error + Send + Sync + 'static) -> SandboxError {
    SandboxError::exec(format!("{what}: {}", chain(&e))).with_source(e)
}

#[async_trait::async_trait]
impl ProcessLauncher for HostLauncher {
    fn id(&self) -> &str {
        "host"
    }

    fn host_workdir(&self, workdir: Option<&str>) -> Option<Result<PathBuf, SandboxError>> {
        Some(self.resolve_workdir(workdir))
    }

    async fn launch(&self, request: LaunchRequest) -> Result<LaunchedProcess, SandboxError> {
        if request.command.contains('\0') {
            return Err(SandboxError::config(
                "command contains a NUL byte".to_owned(),
            ));
        }
        let cwd = self.resolve_workdir(request.workdir.as_deref())?;
        let env = self.environment(&request);
        let leaf = self.leaf()?;
        let leaf_id = leaf.id().to_owned();
        // The leaf's command joins the leaf before `/bin/sh` runs, in a new
        // process group, with exactly `env` (plus the leaf label).
        let mut cmd = tokio::process::Command::from(leaf.command(
            SHELL,
            ["-c", request.command.as_str()],
            &env,
        ));
        cmd.current_dir(&cwd);
        // The leaf ends the whole tree on a kill or when the handle goes,
        // not when `/bin/sh` exits.
        let process = spawn_local(cmd, request.pty, LocalKill::Tree(leaf), SHELL)?;
        tracing::debug!(
            pid = process.control.pid(),
            leaf = leaf_id,
            pty = request.pty,
            "host exec started"
        );
        Ok(process)
    }
}

#[cfg(test)]
#[path = "host_launcher_tests.rs"]
mod tests;
