//! Where a run's file and shell tools act: the agent's host workspace, or
//! the sandbox of the run's scope. A sandboxed run never falls back to the
//! host: when its sandbox cannot be described or reached, its file and
//! shell tools fail with the reason.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use talon_config::TalonConfig;
use talon_fs_bridge::{FsBridge, Mount, MountBridge};
use talon_sandbox_core::{
    ProcessLauncher, SandboxBackendRegistry, SandboxError, SandboxHandle, SandboxRequest,
    UsageStore,
};
use talon_tool_catalog::ToolError;
use talon_tools::HostLauncher;

use super::sandbox_skills::{RefreshingBridge, RefreshingLauncher, SandboxSkills, SkillsRefresher};
use crate::run::RunSpec;
use crate::sandbox_decision::{RunSandbox, resolve_run_sandbox};
use crate::target::{LazySandbox, LazySandboxBridge, LazySandboxLauncher};

/// The file bridge and the process launcher of one run.
#[derive(Debug, Clone)]
pub(crate) struct RunTarget {
    pub(crate) bridge: Arc<dyn FsBridge>,
    pub(crate) launcher: Arc<dyn ProcessLauncher>,
    /// The sandbox's name, for a sandboxed run (the browser runs one
    /// Chromium per sandbox).
    #[cfg_attr(not(feature = "browser"), allow(dead_code))]
    pub(crate) sandbox_name: Option<String>,
}

/// Resolves runs to targets, caching host bridges per workspace and
/// sandboxes per sandbox name.
pub(crate) struct Targets {
    config: Arc<TalonConfig>,
    config_dir: PathBuf,
    /// The config file, once the builder knows it
    /// ([`crate::RuntimeBuilder::config_file`]): every sandbox request
    /// carries it, so no mount can reach the policy that confines it.
    pub(crate) config_file: Arc<std::sync::OnceLock<PathBuf>>,
    state_dir: PathBuf,
    home: Option<PathBuf>,
    backends: Arc<SandboxBackendRegistry>,
    /// What `${secret:NAME}` in `tools.exec.env.set` reads (empty when no
    /// value holds a reference).
    exec_secrets: talon_config::secrets::SecretStore,
    /// Host targets by workspace, `workspaceOnly` and agent (the agent's
    /// exec environment policy is part of its launcher).
    hosts: Mutex<HashMap<(PathBuf, bool, String), RunTarget>>,
    sandboxes: Mutex<HashMap<String, RunTarget>>,
    /// The target of each (agent, session, workspace override, effective
    /// sandbox decision):
    /// several tools of one run (and later runs of the session) ask for
    /// it, and working it out resolves the sandbox config and its hash.
    runs: Mutex<HashMap<RunKey, RunTarget>>,
}

/// What decides a run's target.
type RunKey = (String, String, Option<PathBuf>, bool);

/// Above this many remembered runs the memo starts over (it is a cache:
/// the host and sandbox maps keep the shared bridges and sandboxes).
const MAX_REMEMBERED_RUNS: usize = 4096;

impl std::fmt::Debug for Targets {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Targets")
            .field("state_dir", &self.state_dir)
            .field("backends", &self.backends.ids())
            .finish_non_exhaustive()
    }
}

impl Targets {
    pub(crate) fn new(
        config: Arc<TalonConfig>,
        config_dir: PathBuf,
        state_dir: PathBuf,
        home: Option<PathBuf>,
        backends: Arc<SandboxBackendRegistry>,
        exec_secrets: talon_config::secrets::SecretStore,
    ) -> Self {
        Targets {
            config,
            config_dir,
            config_file: Arc::default(),
            state_dir,
            home,
            backends,
            exec_secrets,
            hosts: Mutex::new(HashMap::new()),
            sandboxes: Mutex::new(HashMap::new()),
            runs: Mutex::new(HashMap::new()),
        }
    }

    /// The agent workspace of `run`: `RunSpec.workspace`, else the agent's
    /// configured one (a relative path is relative to the config file's
    /// directory), else (as OpenClaw) `<state dir>/workspace` for the
    /// default agent and `<state dir>/workspace-<id>` for the others.
    pub(crate) fn workspace(&self, run: &RunSpec) -> PathBuf {
        run.workspace.clone().unwrap_or_else(|| {
            self.config.agent_workspace_dir(
                &run.context.agent_id,
                &self.config_dir,
                &self.state_dir,
            )
        })
    }

    /// Whether `run` is sandboxed (the decision taken at assembly, or the
    /// same decision taken now for a run never assembled).
    #[cfg(feature = "sqlite-state")]
    pub(crate) fn sandboxed(&self, run: &RunSpec) -> bool {
        match run.sandbox() {
            Some(d) => d.sandboxed,
            None => {
                resolve_run_sandbox(
                    &self.config,
                    &run.context,
                    &self.state_dir,
                    self.home.as_deref(),
                )
                .sandboxed
            }
        }
    }

    /// The target of `run`, by the sandbox decision the runtime took for
    /// it at assembly (a run that was never assembled gets the same
    /// decision from [`resolve_run_sandbox`] here).
    pub(crate) fn for_run(&self, run: &RunSpec) -> Result<RunTarget, ToolError> {
        let decided;
        let decision = match run.sandbox() {
            Some(d) => d,
            None => {
                decided = resolve_run_sandbox(
                    &self.config,
                    &run.context,
                    &self.state_dir,
                    self.home.as_deref(),
                );
                &decided
            }
        };
        let key = (
            run.context.agent_id.clone(),
            run.context.session_key.clone(),
            run.workspace.clone(),
            decision.sandboxed,
        );
        if let Some(hit) = self.runs.lock().ok().and_then(|m| m.get(&key).cloned()) {
            return Ok(hit);
        }
        let target = if decision.sandboxed {
            self.sandbox(run, decision)?
        } else {
            self.host(run)?
        };
        if let Ok(mut map) = self.runs.lock() {
            if map.len() >= MAX_REMEMBERED_RUNS {
                map.clear();
            }
            map.insert(key, target.clone());
        }
        Ok(target)
    }

    /// The `sandbox.browser` settings of `agent_id`.
    #[cfg(feature = "browser")]
    pub(crate) fn sandbox_browser(
        &self,
        agent_id: &str,
    ) -> Result<
        talon_config::sections::sandbox_browser::SandboxBrowserSettings,
        talon_config::sections::sandbox_browser::SandboxBrowserError,
    > {
        self.config.sandbox_browser(agent_id)
    }

    /// The exec environment policy of `agent_id` (`tools.exec.env` with the
    /// agent's layered over it, its `set` references expanded).
    pub(crate) fn env_policy(
        &self,
        agent_id: &str,
    ) -> Result<Arc<talon_exec_env::EnvPolicy>, ToolError> {
        self.config
            .exec_env_policy_expanded(Some(agent_id), &self.exec_secrets)
            .map(Arc::new)
            .map_err(|e| ToolError::execution(format!("tools.exec.env.{e}")))
    }

    fn host(&self, run: &RunSpec) -> Result<RunTarget, ToolError> {
        let workspace = self.workspace(run);
        let only = self.config.fs_workspace_only(&run.context.agent_id);
        let key = (workspace.clone(), only, run.context.agent_id.clone());
        if let Some(hit) = self.hosts.lock().ok().and_then(|m| m.get(&key).cloned()) {
            return Ok(hit);
        }
        std::fs::create_dir_all(&workspace).map_err(|e| {
            ToolError::execution(format!(
                "the agent workspace {} cannot be created: {e} (set agents.defaults.workspace or pass --workspace)",
                workspace.display()
            ))
        })?;
        let bridge = host_bridge(&workspace, only)?;
        let launcher = HostLauncher::new(&workspace)
            .map_err(|e| ToolError::execution(e.to_string()))?
            .with_env_policy(self.env_policy(&run.context.agent_id)?);
        let target = RunTarget {
            bridge: Arc::new(bridge),
            launcher: Arc::new(launcher),
            sandbox_name: None,
        };
        if let Ok(mut map) = self.hosts.lock() {
            map.insert(key, target.clone());
        }
        Ok(target)
    }

    fn sandbox(&self, run: &RunSpec, decision: &RunSandbox) -> Result<RunTarget, ToolError> {
        let resolved =
            decision
                .config
                .clone()
                .with_config_file(self.config_file.get().cloned().or_else(|| {
                    // Without `RuntimeBuilder::config_file`, the file Talon's
                    // front ends would load (`TALON_CONFIG`, else
                    // `talon.json` in the state directory) is protected all the same.
                    talon_config::resolve_config_path(None)
                        .path()
                        .map(std::path::Path::to_path_buf)
                }));
        let backend = self.backends.get(&resolved.backend).ok_or_else(|| {
            ToolError::execution(decision.backend_missing_message(&self.backends.ids()))
        })?;
        let workspace = self.workspace(run);
        std::fs::create_dir_all(&workspace).map_err(|e| {
            ToolError::execution(format!(
                "the agent workspace {} cannot be created: {e}",
                workspace.display()
            ))
        })?;
        // The agent's eligible skills, mirrored read-only into the scope's
        // materialised root before the mount plan looks for it.
        let scope_key = talon_sandbox_core::scope_key(
            resolved.scope,
            &resolved.agent_id,
            &run.context.session_key,
        );
        let skills = SandboxSkills {
            config: Arc::clone(&self.config),
            config_dir: self.config_dir.clone(),
            state_dir: self.state_dir.clone(),
            home: self.home.clone(),
            workspace: workspace.clone(),
            root: talon_sandbox_core::materialized_skills_root(
                &self.state_dir,
                resolved.scope,
                &scope_key,
            ),
        };
        skills.refresh();
        let refresher = Arc::new(SkillsRefresher::new(skills.clone()));
        let request = SandboxRequest::new(
            resolved,
            &run.context.session_key,
            &workspace,
            Some(&skills.root),
        );
        // The backend's answer: the container workdir, or a remote
        // backend's workspace copy (`ssh`).
        let workdir = backend.workdir(&request);
        let name = request.sandbox_name.clone();
        if let Some(hit) = self
            .sandboxes
            .lock()
            .ok()
            .and_then(|m| m.get(&name).cloned())
        {
            return Ok(hit);
        }
        let request = Arc::new(request);
        let ensure_refresher = Arc::clone(&refresher);
        let backend_id = backend.id().to_owned();
        let lazy = Arc::new(LazySandbox::new(
            backend_id,
            &name,
            workdir,
            Arc::new(UsageStore::new(&self.state_dir)),
            Box::new(move || {
                let backend = Arc::clone(&backend);
                let request = Arc::clone(&request);
                let refresher = Arc::clone(&ensure_refresher);
                Box::pin(async move {
                    // Refreshed before every ensure (first use, and after
                    // the sandbox was gone); unchanged skills copy nothing.
                    refresher.refresh().await;
                    let handle: Result<Arc<dyn SandboxHandle>, SandboxError> =
                        backend.ensure(&request).await;
                    handle
                })
            }),
        ));
        // The skills mirror is also refreshed (when due) as the run works.
        let target = RunTarget {
            bridge: Arc::new(RefreshingBridge {
                inner: Arc::new(LazySandboxBridge(Arc::clone(&lazy))),
                refresher: Arc::clone(&refresher),
            }),
            launcher: Arc::new(RefreshingLauncher {
                inner: Arc::new(LazySandboxLauncher(lazy)),
                refresher,
            }),
            sandbox_name: Some(name.clone()),
        };
        if let Ok(mut map) = self.sandboxes.lock() {
            map.insert(name, target.clone());
        }
        Ok(target)
    }
}

/// The host bridge: the workspace only (`tools.fs.workspaceOnly`, the
/// default), or the whole host filesystem with the workspace as the
/// directory relative paths start from.
fn host_bridge(workspace: &Path, workspace_only: bool) -> Result<MountBridge, ToolError> {
    let bridge = if workspace_only {
        MountBridge::host(workspace)
    } else {
        let cwd = std::fs::canonicalize(workspace)
            .map_err(|e| ToolError::execution(format!("{}: {e}", workspace.display())))?;
        MountBridge::new(vec![Mount::writable("/", "/")], &cwd.to_string_lossy())
    };
    bridge.map_err(|e| ToolError::execution(e.to_string()))
}

/// Resolves a host run's exec `workdir` through the run's own launcher,
/// so an exec approval is pinned to the directory the command would start
/// in ([`talon_hooks::exec_approvals::ExecWorkdir`]).
#[derive(Debug)]
pub(crate) struct HostWorkdir {
    pub(crate) targets: Arc<Targets>,
    pub(crate) run: RunSpec,
}

impl talon_hooks::exec_approvals::ExecWorkdir for HostWorkdir {
    fn resolve(
        &self,
        workdir: Option<&str>,
    ) -> Result<PathBuf, talon_hooks::exec_approvals::ExecPinError> {
        let failed = |reason: String| talon_hooks::exec_approvals::ExecPinError::Workdir { reason };
        let target = self
            .targets
            .for_run(&self.run)
            .map_err(|e| failed(e.to_string()))?;
        match target.launcher.host_workdir(workdir) {
            Some(Ok(dir)) => Ok(dir),
            Some(Err(e)) => Err(failed(e.to_string())),
            None => Err(failed(format!(
                "the run's commands start on {}, not on this host",
                target.launcher.id()
            ))),
        }
    }
}
