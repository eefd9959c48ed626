//! [`LocalBackend`]: finding bubblewrap, checking a request, and handing out
//! [`LocalSandbox`] handles.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use talon_proc_tree::Supervisor;
use talon_sandbox_core::{
    MountKind, OwnedSandbox, PinnedSource, SandboxBackend, SandboxError, SandboxHandle,
    SandboxRequest, SecurityEnv, WorkspaceAccess, ensure_request_security, pin_mount_sources,
    prepare_sandbox_workspace,
};

use talon_egress::{EgressProxy, HostResolver, SsrfPolicy, SystemResolver};

use crate::file_rules::{SANDBOX_EXEC_ENV, SANDBOX_EXEC_NAME};
use crate::handle::{Egress, LocalSandbox};
use crate::launcher::{Runner, SeccompFiles, TreeLimits};
use crate::layout::SandboxLayout;
use crate::rootfs::HostRoot;
use crate::sandbox_exec::{LandlockSetup, find_sandbox_exec};
use crate::settings::{EGRESS_NETWORK, unsupported_settings, wants_egress};

/// Where bubblewrap is looked for first (Debian's `bubblewrap` package).
pub const DEFAULT_BWRAP: &str = "/usr/bin/bwrap";
/// How long the check run of a new layout (`true` in the sandbox) may take.
const PROBE_TIMEOUT: Duration = Duration::from_secs(20);
/// How to install bubblewrap, for errors.
pub(crate) const INSTALL_HINT: &str = "install bubblewrap (Debian/Ubuntu: `apt-get install \
     bubblewrap`, Fedora: `dnf install bubblewrap`, Arch: `pacman -S bubblewrap`), or set \
     agents.defaults.sandbox.backend to \"docker\"";

/// Find `bwrap`: [`DEFAULT_BWRAP`], else the first `bwrap` on `path_var`
/// (the value of `PATH`).
pub fn find_bwrap(path_var: Option<&std::ffi::OsStr>) -> Option<PathBuf> {
    let default = Path::new(DEFAULT_BWRAP);
    if default.is_file() {
        return Some(default.to_path_buf());
    }
    std::env::split_paths(path_var?)
        .map(|dir| dir.join("bwrap"))
        .find(|p| p.is_file())
}

/// The local sandbox backend (id `local`): no daemon; every command runs in
/// fresh bubblewrap namespaces with a read-only view of the host's system
/// directories, the run's mount plan, no network (or, with `network:
/// "bridge"`, HTTP(S) through an SSRF-guarded proxy) and a seccomp filter.
///
/// Cheap to share (`Arc` it). Building it finds bubblewrap and compiles the
/// seccomp filter; a missing `bwrap` is an error naming the fix, and nothing
/// ever runs on the host instead.
#[derive(Debug)]
pub struct LocalBackend {
    bwrap: PathBuf,
    seccomp: Arc<SeccompFiles>,
    root: Arc<HostRoot>,
    home_dirs: Arc<[PathBuf]>,
    /// Whether commands start through `talon-sandbox-exec` (Landlock).
    landlock: Arc<LandlockSetup>,
    /// The helper, found whether or not Landlock is applied: a sandbox
    /// with egress needs it to run the forwarder.
    helper: Option<PathBuf>,
    /// What the egress proxy of a `network: "bridge"` sandbox lets through.
    egress_policy: Arc<SsrfPolicy>,
    /// How the egress proxy resolves names.
    resolver: Arc<dyn HostResolver>,
    /// Ready sandboxes by name, with the config hash they were built for.
    ready: Mutex<HashMap<String, (String, Arc<LocalSandbox>)>>,
}

impl LocalBackend {
    /// Find bubblewrap (see [`find_bwrap`]), compile the seccomp filters
    /// and look the host's system directories up.
    pub fn new() -> Result<Self, SandboxError> {
        let bwrap = find_bwrap(std::env::var_os("PATH").as_deref()).ok_or_else(|| {
            SandboxError::engine_unavailable(format!(
                "the local sandbox backend needs bubblewrap, but no `bwrap` was found at \
                 {DEFAULT_BWRAP} or on PATH; {INSTALL_HINT}"
            ))
        })?;
        Self::with_bwrap(bwrap)
    }

    /// Use the `bwrap` at `path`.
    pub fn with_bwrap(path: impl Into<PathBuf>) -> Result<Self, SandboxError> {
        let bwrap = path.into();
        if !bwrap.is_file() {
            return Err(SandboxError::engine_unavailable(format!(
                "bubblewrap was configured at {} but is not there; {INSTALL_HINT}",
                bwrap.display()
            )));
        }
        let programs = crate::seccomp::compile()?;
        Ok(LocalBackend {
            bwrap,
            seccomp: Arc::new(SeccompFiles::new(&programs)?),
            root: Arc::new(HostRoot::detect()),
            home_dirs: crate::protections::process_home_dirs().into(),
            landlock: Arc::new(LandlockSetup::detect(None)),
            helper: find_sandbox_exec(None),
            egress_policy: Arc::new(SsrfPolicy::strict()),
            resolver: Arc::new(SystemResolver),
            ready: Mutex::new(HashMap::new()),
        })
    }

    /// Use these home directories (instead of `$HOME`, `$TALON_HOME` and
    /// the OS home) when security validation blocks credential
    /// directories as bind sources.
    pub fn with_home_dirs(mut self, dirs: Vec<PathBuf>) -> Self {
        self.home_dirs = dirs.into();
        self
    }

    /// Use the `talon-sandbox-exec` helper at `path` (instead of
    /// `$TALON_SANDBOX_EXEC` or the one next to the running executable)
    /// and check what Landlock the kernel enforces with it. A path that is
    /// not a file is an error: a configured helper must be there.
    pub fn with_sandbox_exec(mut self, path: impl Into<PathBuf>) -> Result<Self, SandboxError> {
        let path = path.into();
        if !path.is_file() {
            return Err(SandboxError::engine_unavailable(format!(
                "the local sandbox's Landlock helper was configured at {} but is not there;                  build it (`cargo build -p talon-sandbox-local --bin talon-sandbox-exec`) or                  leave the setting out",
                path.display()
            )));
        }
        self.landlock = Arc::new(LandlockSetup::detect(Some(&path)));
        self.helper = Some(path);
        Ok(self)
    }

    /// The SSRF rules of the egress proxy every `network: "bridge"`
    /// sandbox reaches the outside through (default
    /// [`SsrfPolicy::strict`]; the runtime passes the same policy as
    /// `web_fetch`'s, from `tools.web.fetch.ssrfAllowlist`).
    pub fn with_egress_policy(mut self, policy: Arc<SsrfPolicy>) -> Self {
        self.egress_policy = policy;
        self
    }

    /// Resolve the egress proxy's destinations with `resolver` (default:
    /// the system resolver).
    pub fn with_resolver(mut self, resolver: Arc<dyn HostResolver>) -> Self {
        self.resolver = resolver;
        self
    }

    /// Whether (and how) Landlock is applied to every command.
    pub fn landlock(&self) -> &LandlockSetup {
        &self.landlock
    }

    /// The `bwrap` in use.
    pub fn bwrap(&self) -> &Path {
        &self.bwrap
    }

    /// What of the host every sandbox sees.
    pub fn host_root(&self) -> &HostRoot {
        &self.root
    }

    /// Check `request` and build (or reuse) its sandbox, typed.
    ///
    /// In order, each failing with nothing run: the settings the local
    /// backend cannot enforce ([`crate::unsupported_settings`]), security
    /// validation of the binds and the managed workspaces
    /// ([`ensure_request_security`]), the scope workspace is
    /// prepared ([`prepare_sandbox_workspace`]: created and seeded for
    /// `ro` / `none`) and every mount source must exist, each source is
    /// pinned and judged again at its canonical path
    /// ([`pin_mount_sources`]), user
    /// namespaces must be available (when not root), and `true` must run
    /// in the exact layout.
    pub async fn ensure_local(
        &self,
        request: &SandboxRequest,
    ) -> Result<Arc<LocalSandbox>, SandboxError> {
        let problems = unsupported_settings(&request.config);
        if !problems.is_empty() {
            let text: Vec<String> = problems.iter().map(ToString::to_string).collect();
            return Err(SandboxError::config(text.join("\n")));
        }
        let env = SecurityEnv::for_request(request, &self.home_dirs);
        ensure_request_security(request, &env)?;
        // The scope's own workspace (`none` / `ro`), seeded once; a fault
        // there refuses the sandbox.
        prepare_sandbox_workspace(request)?;
        if let Some(sandbox) = self.cached(request) {
            return Ok(sandbox);
        }
        let docker = &request.config.docker;
        let origins = &request.config.docker_origins;
        let requested = crate::limits::requested_checked(docker, origins)?;
        let limits = if requested.is_empty() {
            None
        } else {
            let supervisor = Supervisor::shared()
                .map_err(|e| crate::limits::leaf_error_keyed(e, Some(origins)))?;
            let limits = TreeLimits {
                supervisor,
                limits: requested.to_limits(),
            };
            // Made once here so a limit this host cannot enforce fails
            // `ensure` with its key, before anything runs.
            drop(
                limits
                    .supervisor
                    .leaf(&limits.limits)
                    .map_err(|e| crate::limits::leaf_error_keyed(e, Some(origins)))?,
            );
            Some(limits)
        };
        self.prepare_mounts(request)?;
        // Every source judged again at its canonical path; bubblewrap gets
        // descriptors opened from those paths, checked for every launch.
        let pinned = pin_mount_sources(request, &env)?;
        let mut mounts = request.mount_plan.entries.clone();
        for (mount, pin) in mounts.iter_mut().zip(&pinned) {
            mount.host_path = pin.canonical.clone();
        }
        let mount_sources: Vec<(PinnedSource, String)> = pinned
            .iter()
            .cloned()
            .zip(&mounts)
            .map(|(pin, mount)| (pin, mount.container_path.clone()))
            .collect();
        crate::protections::check_user_namespaces()?;
        let egress = if wants_egress(&request.config) {
            Some(self.start_egress(request)?)
        } else {
            None
        };
        let landlock = self.landlock.helper().is_some();
        let sandbox_exec = if landlock || egress.is_some() {
            self.helper.clone()
        } else {
            None
        };
        let layout = SandboxLayout {
            root: Arc::clone(&self.root),
            mounts,
            pinned,
            tmpfs: docker.tmpfs.clone(),
            hostname: request.sandbox_name.clone(),
            read_only_root: docker.read_only_root,
            sandbox_exec,
            landlock,
            egress_socket: egress.as_ref().map(|e| e.proxy.socket_path().to_path_buf()),
        };
        self.landlock.warn_once();
        let runner = Arc::new(Runner {
            bwrap: self.bwrap.clone(),
            seccomp: Arc::clone(&self.seccomp),
            layout_args: layout.args(),
            command_prefix: layout.command_prefix(),
            workdir: docker.workdir.clone(),
            name: request.sandbox_name.clone(),
            base_env: docker.env.clone(),
            limits,
            egress: egress.is_some(),
            mount_sources,
        });
        probe(&runner).await?;
        let bridge = request
            .mount_plan
            .mount_bridge(&docker.workdir)
            .map_err(|e| {
                SandboxError::config(format!(
                    "cannot build the file bridge over local sandbox {}'s mounts: {e}",
                    request.sandbox_name
                ))
                .with_source(e)
            })?;
        let sandbox = Arc::new(LocalSandbox::new(runner, bridge, egress));
        self.ready
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(
                request.sandbox_name.clone(),
                (request.config_hash.clone(), Arc::clone(&sandbox)),
            );
        tracing::debug!(sandbox = %request.sandbox_name, "local sandbox ready");
        Ok(sandbox)
    }

    /// Start the guarded proxy of a `network: "bridge"` sandbox, its
    /// socket in a private (0700) directory of its own.
    fn start_egress(&self, request: &SandboxRequest) -> Result<Egress, SandboxError> {
        let key = request.config.docker_origins.key("network");
        if self.helper.is_none() {
            return Err(SandboxError::engine_unavailable(format!(
                "{key}: \"{EGRESS_NETWORK}\" on the local sandbox backend needs the \
                 {SANDBOX_EXEC_NAME} helper (it relays the sandbox's proxy port to the host's \
                 guarded proxy), and it was not found: install it next to the talon binary or \
                 set {SANDBOX_EXEC_ENV}, or set the network to \"none\""
            )));
        }
        let dir = tempfile::Builder::new()
            .prefix("talon-egress-")
            .tempdir()
            .map_err(|e| {
                SandboxError::io(format!(
                    "cannot create the egress proxy directory of local sandbox {}: {e}",
                    request.sandbox_name
                ))
                .with_source(e)
            })?;
        let proxy = EgressProxy::start(
            &dir.path().join("egress.sock"),
            Arc::clone(&self.egress_policy),
            Arc::clone(&self.resolver),
        )
        .map_err(|e| {
            SandboxError::io(format!(
                "cannot start the egress proxy of local sandbox {}: {e}",
                request.sandbox_name
            ))
            .with_source(e)
        })?;
        Ok(Egress { proxy, _dir: dir })
    }

    fn cached(&self, request: &SandboxRequest) -> Option<Arc<LocalSandbox>> {
        let ready = self.ready.lock().unwrap_or_else(PoisonError::into_inner);
        let (hash, sandbox) = ready.get(&request.sandbox_name)?;
        let mounts_there = request
            .mount_plan
            .entries
            .iter()
            .all(|e| e.host_path.exists());
        (hash == &request.config_hash && mounts_there).then(|| Arc::clone(sandbox))
    }

    /// Create the agent workspace (`rw`) when missing (the scope's own
    /// workspace is made by `prepare_sandbox_workspace`); every other
    /// mount source must exist.
    fn prepare_mounts(&self, request: &SandboxRequest) -> Result<(), SandboxError> {
        if request.config.workspace_access == WorkspaceAccess::Rw {
            let dir = &request.agent_workspace_dir;
            std::fs::create_dir_all(dir).map_err(|e| {
                SandboxError::io(format!(
                    "cannot create the agent workspace {}: {e}",
                    dir.display()
                ))
                .with_source(e)
            })?;
        }
        let origins = &request.config.docker_origins;
        let mut bind_index = 0;
        for entry in &request.mount_plan.entries {
            let key = match entry.kind {
                MountKind::Bind => {
                    bind_index += 1;
                    origins.bind_key(bind_index - 1)
                }
                MountKind::Workspace | MountKind::Agent | MountKind::Skills => {
                    "agents.*.workspace".to_owned()
                }
            };
            if !entry.host_path.exists() {
                return Err(SandboxError::config(format!(
                    "{key}: mount source {} (for {}) does not exist; create it or remove the \
                     mount",
                    entry.host_path.display(),
                    entry.container_path
                )));
            }
        }
        Ok(())
    }
}

/// The refusal of `remove`: a local sandbox keeps nothing between commands.
pub fn nothing_to_remove(name: &str) -> SandboxError {
    SandboxError::config(format!(
        "the local sandbox backend keeps nothing between commands, so there is no sandbox named \
         {name} to remove (its workspace directory stays on the host)"
    ))
}

/// Run `true` in the layout once, so a bubblewrap or kernel that cannot
/// build it fails `ensure` with bubblewrap's own words instead of every
/// later command failing with exit code 1.
async fn probe(runner: &Runner) -> Result<(), SandboxError> {
    let out = runner
        .run_script("exit 0", &[], None, PROBE_TIMEOUT)
        .await?;
    if out.status.success() {
        return Ok(());
    }
    let stderr = String::from_utf8_lossy(&out.stderr);
    Err(SandboxError::engine_unavailable(format!(
        "bubblewrap ({}) could not set up local sandbox {} ({:?}): {}. If it could not create a \
         namespace, this kernel or container does not allow it: run Talon as root, enable user \
         namespaces (sysctl user.max_user_namespaces=15000, and on Debian \
         kernel.unprivileged_userns_clone=1), allow bwrap in the AppArmor policy (Ubuntu 24.04), \
         or set agents.defaults.sandbox.backend to \"docker\"",
        runner.bwrap.display(),
        runner.name,
        out.status,
        stderr.trim()
    )))
}

#[async_trait::async_trait]
impl SandboxBackend for LocalBackend {
    fn id(&self) -> &str {
        "local"
    }

    /// See [`LocalBackend::ensure_local`].
    async fn ensure(
        &self,
        request: &SandboxRequest,
    ) -> Result<Arc<dyn SandboxHandle>, SandboxError> {
        let sandbox = self.ensure_local(request).await?;
        Ok(sandbox as Arc<dyn SandboxHandle>)
    }

    /// Always empty: a local sandbox keeps no process and no state between
    /// commands (its workspace is the scope's directory on the host).
    async fn list_owned(&self) -> Result<Vec<OwnedSandbox>, SandboxError> {
        Ok(Vec::new())
    }

    async fn remove(&self, name: &str) -> Result<(), SandboxError> {
        Err(nothing_to_remove(name))
    }
}
