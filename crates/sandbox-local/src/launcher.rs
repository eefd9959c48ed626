//! [`LocalLauncher`]: every command is one `bwrap` run.
//!
//! The host process is `bwrap` itself, started with the two sealed seccomp
//! filters on descriptors 3 and 4 (each launch opens them afresh, so every
//! `bwrap` reads its filters from the start; `command-fds` maps them
//! between fork and exec, so Talon's own code stays free of `unsafe`). It
//! runs in a process group of its own; `bwrap` puts the
//! command in new PID, IPC, UTS, network and cgroup namespaces with
//! `--die-with-parent`, so killing that group ends bubblewrap, and with it
//! the PID namespace's init and every process the command started,
//! double-forked daemons included. When Landlock is applied, bubblewrap
//! runs `/.talon/sandbox-exec RULES -- COMMAND` (see
//! [`crate::FileRules`]), which restricts itself and becomes the command.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::os::fd::{AsRawFd, OwnedFd};

use command_fds::{CommandFdExt, FdMapping};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use talon_proc_tree::{ChildCommand, ChildEnv, Leaf, Limits, ProcessGroup, Supervisor};
use talon_sandbox_core::{
    LaunchRequest, LaunchedProcess, LocalKill, PinnedSource, ProcessLauncher, SandboxError,
    ScriptOutput, spawn_local,
};

use crate::layout::MOUNT_FD_BASE;
use crate::seccomp::SeccompPrograms;

/// The `PATH` a sandboxed command starts with (a request's `PATH` is
/// prepended to it).
pub const DEFAULT_PATH: &str = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
/// `HOME` inside the sandbox: the writable tmpfs.
pub const SANDBOX_HOME: &str = "/tmp";

/// The compiled seccomp filters in sealed memory files, opened afresh by
/// each launch through `/proc/self/fd/<n>` (a new open file description,
/// so concurrent launches never share a read offset).
#[derive(Debug)]
pub(crate) struct SeccompFiles {
    deny: OwnedFd,
    clone3: OwnedFd,
}

fn sealed_memfd(name: &str, bytes: &[u8]) -> Result<OwnedFd, SandboxError> {
    use rustix::fs::{MemfdFlags, SealFlags, fcntl_add_seals, memfd_create};
    let fail = |e: rustix::io::Errno| {
        SandboxError::io(format!(
            "cannot hold the local sandbox's seccomp filter in a memory file: {e}"
        ))
    };
    let fd = memfd_create(name, MemfdFlags::CLOEXEC | MemfdFlags::ALLOW_SEALING).map_err(fail)?;
    let mut written = 0;
    while written < bytes.len() {
        written += rustix::io::write(&fd, &bytes[written..]).map_err(fail)?;
    }
    fcntl_add_seals(
        &fd,
        SealFlags::WRITE | SealFlags::GROW | SealFlags::SHRINK | SealFlags::SEAL,
    )
    .map_err(fail)?;
    Ok(fd)
}

impl SeccompFiles {
    pub(crate) fn new(programs: &SeccompPrograms) -> Result<Self, SandboxError> {
        Ok(SeccompFiles {
            deny: sealed_memfd("talon-seccomp-deny", &programs.deny)?,
            clone3: sealed_memfd("talon-seccomp-clone3", &programs.clone3)?,
        })
    }

    /// The two filters, newly opened, mapped to descriptors 3 and 4
    /// (`layout::SECCOMP_FDS`) of the child.
    fn mappings(&self) -> Result<Vec<FdMapping>, SandboxError> {
        let reopen = |fd: &OwnedFd, child_fd: i32| {
            let path = format!("/proc/self/fd/{}", fd.as_raw_fd());
            rustix::fs::open(
                path.as_str(),
                rustix::fs::OFlags::RDONLY | rustix::fs::OFlags::CLOEXEC,
                rustix::fs::Mode::empty(),
            )
            .map(|parent_fd| FdMapping {
                parent_fd,
                child_fd,
            })
            .map_err(|e| {
                SandboxError::io(format!(
                    "cannot open the local sandbox's seccomp filter for a launch: {e}"
                ))
                .with_source(e)
            })
        };
        Ok(vec![reopen(&self.deny, 3)?, reopen(&self.clone3, 4)?])
    }
}

/// The cgroup limits every command of a sandbox runs under.
#[derive(Debug, Clone)]
pub(crate) struct TreeLimits {
    pub(crate) supervisor: Arc<Supervisor>,
    pub(crate) limits: Limits,
}

impl TreeLimits {
    /// A new leaf for one command; an unavailable limit names its key.
    pub(crate) fn leaf(&self) -> Result<Leaf, SandboxError> {
        self.supervisor
            .leaf(&self.limits)
            .map_err(crate::limits::leaf_error)
    }
}

/// What every launch in one sandbox shares.
#[derive(Debug)]
pub(crate) struct Runner {
    pub(crate) bwrap: PathBuf,
    pub(crate) seccomp: Arc<SeccompFiles>,
    pub(crate) layout_args: Vec<OsString>,
    /// `talon-sandbox-exec` and its Landlock rules, when applied (else
    /// empty): what bubblewrap runs before the command.
    pub(crate) command_prefix: Vec<OsString>,
    pub(crate) workdir: String,
    pub(crate) name: String,
    /// `docker.env` of the resolved config.
    pub(crate) base_env: BTreeMap<String, String>,
    /// `docker.memory` / `pidsLimit` / `cpus`, when any is set.
    pub(crate) limits: Option<TreeLimits>,
    /// Whether commands get the egress proxy variables
    /// (`network: "bridge"`).
    pub(crate) egress: bool,
    /// The mount sources as pinned at `ensure`, in layout order: each is
    /// opened again for every launch, without following any symlink, and
    /// must still be the same file (see [`Runner::mount_fds`]).
    pub(crate) mount_sources: Vec<(PinnedSource, String)>,
}

impl Runner {
    /// Open every pinned mount source for one launch
    /// (`openat2(O_PATH, RESOLVE_NO_SYMLINKS)`: a symlink anywhere in the
    /// canonical path fails), check it is the very file that was pinned
    /// (device and inode), and map it to its child descriptor. bubblewrap
    /// then mounts the descriptor, so nothing swapped into the path after
    /// this check is ever mounted.
    fn mount_fds(&self) -> Result<Vec<FdMapping>, SandboxError> {
        let mut out = Vec::with_capacity(self.mount_sources.len());
        for (index, (pin, container_path)) in self.mount_sources.iter().enumerate() {
            let swapped = |why: String| {
                SandboxError::config(format!(
                    "Sandbox security: the mount source \"{}\" (for {container_path}) {why}; \
                     nothing was run. Make sure nothing rewrites the mount sources while the \
                     sandbox is in use, then run again.",
                    pin.canonical.display()
                ))
            };
            let fd = rustix::fs::openat2(
                rustix::fs::CWD,
                &pin.canonical,
                rustix::fs::OFlags::PATH | rustix::fs::OFlags::CLOEXEC,
                rustix::fs::Mode::empty(),
                rustix::fs::ResolveFlags::NO_SYMLINKS | rustix::fs::ResolveFlags::NO_MAGICLINKS,
            )
            .map_err(|e| {
                swapped(format!(
                    "can no longer be opened without following a symlink ({e})"
                ))
            })?;
            let stat =
                rustix::fs::fstat(&fd).map_err(|e| swapped(format!("cannot be read ({e})")))?;
            if stat.st_dev != pin.dev || stat.st_ino != pin.ino {
                return Err(swapped(
                    "is no longer the file that was validated".to_owned(),
                ));
            }
            out.push(FdMapping {
                parent_fd: fd,
                child_fd: MOUNT_FD_BASE + i32::try_from(index).unwrap_or(i32::MAX - MOUNT_FD_BASE),
            });
        }
        Ok(out)
    }

    /// The environment of one command: `PATH`, `HOME`, `docker.env`, then
    /// the request's variables (its `PATH` prepended to the default), then
    /// the egress proxy variables when the sandbox has egress.
    fn environment(
        &self,
        extra: &BTreeMap<String, String>,
    ) -> Result<BTreeMap<String, String>, SandboxError> {
        let mut env = BTreeMap::from([
            ("PATH".to_owned(), DEFAULT_PATH.to_owned()),
            ("HOME".to_owned(), SANDBOX_HOME.to_owned()),
        ]);
        for (key, value) in self.base_env.iter().chain(extra) {
            if key.is_empty() || key.contains(['=', '\0']) || value.contains('\0') {
                return Err(SandboxError::exec(format!(
                    "environment key {key:?} (or its value) is invalid: empty, or contains `=` or NUL"
                )));
            }
            if key == "PATH" {
                if !value.is_empty() {
                    env.insert(key.clone(), format!("{value}:{DEFAULT_PATH}"));
                }
            } else {
                env.insert(key.clone(), value.clone());
            }
        }
        if self.egress {
            env.extend(crate::egress::proxy_env());
        }
        Ok(env)
    }

    /// Start `argv` in the sandbox.
    pub(crate) fn spawn(
        &self,
        argv: &[String],
        env: &BTreeMap<String, String>,
        workdir: Option<&str>,
        pty: bool,
    ) -> Result<LaunchedProcess, SandboxError> {
        let workdir = workdir.unwrap_or(&self.workdir);
        if !workdir.starts_with('/') || workdir.contains('\0') {
            return Err(SandboxError::exec(format!(
                "working directory {workdir:?} must be an absolute path inside the sandbox \
                 (e.g. {})",
                self.workdir
            )));
        }
        if argv.iter().any(|a| a.contains('\0')) {
            return Err(SandboxError::exec(
                "the command contains a NUL byte".to_owned(),
            ));
        }
        let env = self.environment(env)?;
        let mut fds = self.seccomp.mappings()?;
        fds.extend(self.mount_fds()?);
        let leaf = self.limits.as_ref().map(TreeLimits::leaf).transpose()?;
        let mut args: Vec<OsString> = self.layout_args.clone();
        if leaf.is_some() {
            // The leaf's label is for the host side only.
            args.extend(["--unsetenv".into(), talon_proc_tree::LABEL_VAR.into()]);
        }
        args.extend(["--chdir".into(), workdir.into(), "--".into()]);
        args.extend(self.command_prefix.iter().cloned());
        args.extend(argv.iter().map(OsString::from));
        let mut cmd = match &leaf {
            // Joins the leaf's cgroups, then execs bwrap (descriptors 3
            // and 4 survive that exec); env cleared and a process group of
            // its own, as below.
            Some(leaf) => leaf.command(&self.bwrap, &args, &env),
            None => {
                let mut cmd =
                    ChildCommand::new(&self.bwrap, ChildEnv::exact(&env), ProcessGroup::Own);
                cmd.args(&args);
                cmd.into_std()
            }
        };
        cmd.fd_mappings(fds).map_err(|e| {
            SandboxError::exec(format!(
                "cannot hand the seccomp filters to bubblewrap: {e}"
            ))
            .with_source(e)
        })?;
        let mut cmd = tokio::process::Command::from(cmd);
        cmd.current_dir("/");
        // SIGKILL to the wrapper's / bwrap's process group ends bubblewrap,
        // and `--die-with-parent` the sandbox's PID namespace with it; the
        // leaf (limits) then removes the cgroup and ends any straggler.
        let process = spawn_local(
            cmd,
            pty,
            LocalKill::ProcessGroup(leaf),
            &format!("bubblewrap ({})", self.bwrap.display()),
        )?;
        tracing::debug!(
            sandbox = %self.name,
            pid = process.control.pid(),
            pty,
            "local sandbox exec started"
        );
        Ok(process)
    }

    /// `sh -c SCRIPT talon-sandbox ARGS...` in the sandbox, killed at
    /// `timeout`.
    pub(crate) async fn run_script(
        &self,
        script: &str,
        args: &[String],
        stdin: Option<Vec<u8>>,
        timeout: Duration,
    ) -> Result<ScriptOutput, SandboxError> {
        let argv = talon_sandbox_core::script_argv(script, args);
        let process = self.spawn(&argv, &BTreeMap::new(), None, false)?;
        talon_sandbox_core::collect_script(
            process,
            stdin,
            timeout,
            &format!("in local sandbox {}", self.name),
        )
        .await
    }
}

/// Runs the `exec` and `process` tools' commands in one local sandbox
/// (`/bin/sh -c COMMAND`, workdir `/workspace` unless the request says
/// otherwise).
#[derive(Debug, Clone)]
pub struct LocalLauncher {
    pub(crate) runner: Arc<Runner>,
}

#[async_trait::async_trait]
impl ProcessLauncher for LocalLauncher {
    fn id(&self) -> &str {
        "local"
    }

    async fn launch(&self, request: LaunchRequest) -> Result<LaunchedProcess, SandboxError> {
        let argv = [
            "/bin/sh".to_owned(),
            "-c".to_owned(),
            request.command.clone(),
        ];
        self.runner
            .spawn(&argv, &request.env, request.workdir.as_deref(), request.pty)
    }
}
