//! [`LocalLauncher`]: every command is one `bwrap` run.
//!
//! The host process is `/bin/sh -c 'exec 3<"$1" 4<"$2"; shift 2; exec "$@"'`
//! which opens the two sealed seccomp filters on descriptors 3 and 4 and
//! becomes `bwrap` (so no `unsafe` `pre_exec` is needed to hand bubblewrap
//! a descriptor). It runs in a process group of its own; `bwrap` puts the
//! command in new PID, IPC, UTS, network and cgroup namespaces with
//! `--die-with-parent`, so killing that group ends bubblewrap, and with it
//! the PID namespace's init and every process the command started,
//! double-forked daemons included. When Landlock is applied, bubblewrap
//! runs `/.talon/sandbox-exec RULES -- COMMAND` (see
//! [`crate::FileRules`]), which restricts itself and becomes the command.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::io;
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::process::ExitStatusExt;
use std::path::PathBuf;
use std::pin::Pin;
use std::process::Stdio;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use nix::errno::Errno;
use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use talon_proc_tree::{Leaf, Limits, Supervisor};
use talon_sandbox_core::{
    ExitStatus, LaunchRequest, LaunchedProcess, ProcessControl, ProcessInput, ProcessLauncher,
    ProcessOutput, SandboxError, ScriptOutput,
};
use tokio::io::{AsyncRead, ReadBuf};
use tokio::net::unix::pipe;
use tokio::sync::watch;

use crate::seccomp::SeccompPrograms;

/// The `PATH` a sandboxed command starts with (a request's `PATH` is
/// prepended to it).
pub const DEFAULT_PATH: &str = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
/// `HOME` inside the sandbox: the writable tmpfs.
pub const SANDBOX_HOME: &str = "/tmp";
/// Opens the two filters on descriptors 3 and 4 (`layout::SECCOMP_FDS`)
/// and becomes `bwrap`.
const WRAPPER: &str = "exec 3<\"$1\" 4<\"$2\"; shift 2; exec \"$@\"";
const PTY_ROWS: u16 = 24;
const PTY_COLS: u16 = 80;

/// The compiled seccomp filters in sealed memory files, opened by each
/// launch through `/proc/<our pid>/fd/<n>`.
#[derive(Debug)]
pub(crate) struct SeccompFiles {
    deny: OwnedFd,
    clone3: OwnedFd,
}

fn sealed_memfd(name: &str, bytes: &[u8]) -> Result<OwnedFd, SandboxError> {
    use rustix::fs::{MemfdFlags, SealFlags, fcntl_add_seals, memfd_create};
    let fail = |e: rustix::io::Errno| {
        SandboxError::Io(format!(
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

    fn paths(&self) -> [String; 2] {
        let pid = std::process::id();
        [
            format!("/proc/{pid}/fd/{}", self.deny.as_raw_fd()),
            format!("/proc/{pid}/fd/{}", self.clone3.as_raw_fd()),
        ]
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
}

fn exec_error(what: &str, e: impl std::fmt::Display) -> SandboxError {
    SandboxError::Exec(format!("{what}: {e}"))
}

impl Runner {
    /// The environment of one command: `PATH`, `HOME`, `docker.env`, then
    /// the request's variables (its `PATH` prepended to the default).
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
                return Err(SandboxError::Exec(format!(
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
            return Err(SandboxError::Exec(format!(
                "working directory {workdir:?} must be an absolute path inside the sandbox \
                 (e.g. {})",
                self.workdir
            )));
        }
        if argv.iter().any(|a| a.contains('\0')) {
            return Err(SandboxError::Exec(
                "the command contains a NUL byte".to_owned(),
            ));
        }
        let env = self.environment(env)?;
        let [deny, clone3] = self.seccomp.paths();
        let leaf = self.limits.as_ref().map(TreeLimits::leaf).transpose()?;
        let mut args: Vec<OsString> = vec![
            "-c".into(),
            WRAPPER.into(),
            "talon-local".into(),
            deny.into(),
            clone3.into(),
            self.bwrap.clone().into(),
        ];
        args.extend(self.layout_args.iter().cloned());
        if leaf.is_some() {
            // The leaf's label is for the host side only.
            args.extend(["--unsetenv".into(), talon_proc_tree::LABEL_VAR.into()]);
        }
        args.extend(["--chdir".into(), workdir.into(), "--".into()]);
        args.extend(self.command_prefix.iter().cloned());
        args.extend(argv.iter().map(OsString::from));
        let mut cmd = match &leaf {
            // Joins the leaf's cgroups, then execs the wrapper; env cleared
            // and a process group of its own, as below.
            Some(leaf) => tokio::process::Command::from(leaf.command("/bin/sh", &args, &env)),
            None => {
                let mut cmd = tokio::process::Command::new("/bin/sh");
                cmd.args(&args).env_clear().envs(&env).process_group(0);
                cmd
            }
        };
        cmd.current_dir("/").kill_on_drop(false);
        let mut master = None;
        if pty {
            let pty = open_pty()?;
            let slave = pty.slave;
            let dup = |fd: &OwnedFd| {
                fd.try_clone()
                    .map_err(|e| exec_error("cannot duplicate the PTY", e))
            };
            cmd.stdin(Stdio::from(dup(&slave)?))
                .stdout(Stdio::from(dup(&slave)?))
                .stderr(Stdio::from(slave));
            master = Some(pty.master);
        } else {
            cmd.stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped());
        }
        let spawned = cmd.spawn();
        // Drop the command's copies of the PTY slave so the master sees the
        // end once the sandbox is gone.
        drop(cmd);
        let mut child = spawned.map_err(|e| {
            exec_error(
                &format!("cannot start bubblewrap ({})", self.bwrap.display()),
                e,
            )
        })?;
        let pid = child.id();
        let leaf = leaf.map(Arc::new);
        if let (Some(leaf), Some(pid)) = (&leaf, pid) {
            leaf.set_root_pid(pid);
        }
        let (stdin, stdout, stderr) = match master {
            Some(master) => {
                let reader = master
                    .try_clone()
                    .map_err(|e| exec_error("cannot duplicate the PTY", e))?;
                let reader = pipe::Receiver::from_owned_fd_unchecked(reader)
                    .map_err(|e| exec_error("cannot watch the PTY", e))?;
                let writer = pipe::Sender::from_owned_fd_unchecked(master)
                    .map_err(|e| exec_error("cannot watch the PTY", e))?;
                (
                    Some(Box::pin(writer) as ProcessInput),
                    Box::pin(PtyReader(reader)) as ProcessOutput,
                    None,
                )
            }
            None => {
                let stdout = child
                    .stdout
                    .take()
                    .ok_or_else(|| exec_error("cannot read stdout", "no pipe"))?;
                let stderr = child
                    .stderr
                    .take()
                    .ok_or_else(|| exec_error("cannot read stderr", "no pipe"))?;
                let stdin = child.stdin.take();
                (
                    stdin.map(|s| Box::pin(s) as ProcessInput),
                    Box::pin(stdout) as ProcessOutput,
                    Some(Box::pin(stderr) as ProcessOutput),
                )
            }
        };
        let (tx, rx) = watch::channel(None);
        let reaped_leaf = leaf.clone();
        tokio::spawn(async move {
            let status = child
                .wait()
                .await
                .map(convert_status)
                .map_err(|e| e.to_string());
            // The PID namespace is gone with bwrap; this removes the
            // leaf's cgroup (and ends anything that still lingered).
            if let Some(leaf) = reaped_leaf {
                let _ = tokio::task::spawn_blocking(move || leaf.kill()).await;
            }
            let _ = tx.send(Some(status));
        });
        tracing::debug!(sandbox = %self.name, pid, pty, "local sandbox exec started");
        Ok(LaunchedProcess {
            stdin,
            stdout,
            stderr,
            control: Box::new(LocalControl {
                pid,
                leaf,
                status: rx,
                killed: AtomicBool::new(false),
            }),
        })
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

fn open_pty() -> Result<nix::pty::OpenptyResult, SandboxError> {
    let size = nix::pty::Winsize {
        ws_row: PTY_ROWS,
        ws_col: PTY_COLS,
        ws_xpixel: 0,
        ws_ypixel: 0,
    };
    nix::pty::openpty(&size, None).map_err(|e| exec_error("cannot open a PTY", e))
}

fn convert_status(status: std::process::ExitStatus) -> ExitStatus {
    match (status.code(), status.signal()) {
        (Some(code), _) => ExitStatus::Code(code),
        (None, Some(signal)) => ExitStatus::Signal(signal),
        (None, None) => ExitStatus::Code(-1),
    }
}

/// Reads a PTY master; the `EIO` Linux returns once every slave is closed
/// is the end of the stream.
struct PtyReader(pipe::Receiver);

impl AsyncRead for PtyReader {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        match Pin::new(&mut self.0).poll_read(cx, buf) {
            Poll::Ready(Err(e)) if e.raw_os_error() == Some(libc::EIO) => Poll::Ready(Ok(())),
            other => other,
        }
    }
}

/// Waits for and kills one sandboxed command.
#[derive(Debug)]
struct LocalControl {
    pid: Option<u32>,
    /// The command's cgroup leaf, when it has limits.
    leaf: Option<Arc<Leaf>>,
    status: watch::Receiver<Option<Result<ExitStatus, String>>>,
    killed: AtomicBool,
}

impl LocalControl {
    /// `SIGKILL` to the host process group of the wrapper / `bwrap`;
    /// `--die-with-parent` takes the sandbox's PID namespace down with it.
    fn kill_group(&self) -> Result<(), SandboxError> {
        let Some(pid) = self.pid.and_then(|p| i32::try_from(p).ok()) else {
            return Ok(());
        };
        // Once bwrap has been reaped its namespace is gone, and its pid
        // (the group id) may belong to someone else by now.
        if self.status.borrow().is_some() {
            return Ok(());
        }
        match killpg(Pid::from_raw(pid), Signal::SIGKILL) {
            Ok(()) | Err(Errno::ESRCH) => Ok(()),
            Err(e) => Err(SandboxError::Exec(format!(
                "cannot kill the local sandbox's process group {pid}: {e}"
            ))),
        }
    }
}

#[async_trait::async_trait]
impl ProcessControl for LocalControl {
    fn pid(&self) -> Option<u32> {
        self.pid
    }

    async fn wait(&self) -> Result<ExitStatus, SandboxError> {
        let mut rx = self.status.clone();
        let status = rx
            .wait_for(Option::is_some)
            .await
            .map_err(|_| SandboxError::Exec("the process reaper stopped".to_owned()))?;
        match status.as_ref() {
            Some(Ok(status)) => Ok(*status),
            Some(Err(e)) => Err(SandboxError::Exec(format!("waiting failed: {e}"))),
            None => Err(SandboxError::Exec("no exit status".to_owned())),
        }
    }

    async fn kill(&self) -> Result<(), SandboxError> {
        self.killed.store(true, Ordering::SeqCst);
        self.kill_group()?;
        if let Some(leaf) = self.leaf.clone() {
            tokio::task::spawn_blocking(move || leaf.kill())
                .await
                .map_err(|e| SandboxError::Exec(format!("the cgroup kill task failed: {e}")))?
                .map_err(|e| {
                    SandboxError::Exec(format!("cannot end the local sandbox's process tree: {e}"))
                })?;
        }
        Ok(())
    }
}

impl Drop for LocalControl {
    fn drop(&mut self) {
        // Whoever held the handle is gone; nothing may outlive it.
        if !self.killed.load(Ordering::SeqCst) {
            let _ = self.kill_group();
        }
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
