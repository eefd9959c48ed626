//! `HostLauncher`: runs commands on the gateway host with `/bin/sh -c`, each
//! in its own contained process tree (a `talon-proc-tree` leaf: a cgroup, or
//! a labelled process group), confined to a workspace directory.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::io;
use std::os::fd::OwnedFd;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::process::Stdio;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll};

use talon_hooks::exec_env::filter_inherited_env;
use talon_proc_tree::{Leaf, Limits, Supervisor};
use talon_sandbox_core::{
    ExitStatus, LaunchRequest, LaunchedProcess, ProcessControl, ProcessLauncher, SandboxError,
};
use tokio::io::{AsyncRead, ReadBuf};
use tokio::net::unix::pipe;
use tokio::sync::watch;

/// The shell every command runs under.
const SHELL: &str = "/bin/sh";
/// The terminal size a PTY starts with.
const PTY_ROWS: u16 = 24;
/// The terminal size a PTY starts with.
const PTY_COLS: u16 = 80;

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
/// [`HostLauncher::with_supervisor`] gives another), with the host
/// environment filtered by
/// [`filter_inherited_env`] plus the request's variables, in a working
/// directory that must lie inside the workspace root.
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
    supervisor: Option<Arc<Supervisor>>,
}

impl HostLauncher {
    /// A launcher confined to `workspace_root`, which must be an existing
    /// directory (it is resolved once, here, with symlinks followed).
    pub fn new(workspace_root: impl AsRef<Path>) -> Result<Self, SandboxError> {
        let given = workspace_root.as_ref();
        let root = std::fs::canonicalize(given).map_err(|e| {
            SandboxError::Config(format!(
                "workspace root {} cannot be resolved: {e}",
                given.display()
            ))
        })?;
        if !root.is_dir() {
            return Err(SandboxError::Config(format!(
                "workspace root {} is not a directory",
                given.display()
            )));
        }
        Ok(HostLauncher {
            root,
            env: HostEnv::Process,
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
            None => Supervisor::shared()
                .map_err(|e| io_error("cannot contain the command", chain(&e)))?,
        };
        supervisor
            .leaf(&Limits::NONE)
            .map_err(|e| io_error("cannot contain the command", chain(&e)))
    }

    /// Builder: take the host environment from `vars` instead of this
    /// process's environment (it is still filtered).
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
            return Err(SandboxError::Config(
                "workdir contains a NUL byte".to_owned(),
            ));
        }
        let joined = self.root.join(raw);
        let resolved = std::fs::canonicalize(&joined).map_err(|e| {
            SandboxError::Config(format!(
                "workdir {raw:?} cannot be used: {e}; give a directory inside the workspace {}",
                self.root.display()
            ))
        })?;
        if !resolved.starts_with(&self.root) {
            return Err(SandboxError::Config(format!(
                "workdir {raw:?} resolves to {}, outside the workspace {}; give a directory inside it",
                resolved.display(),
                self.root.display()
            )));
        }
        if !resolved.is_dir() {
            return Err(SandboxError::Config(format!(
                "workdir {raw:?} is not a directory"
            )));
        }
        Ok(resolved)
    }

    /// The environment of one command.
    fn environment(&self, request: &LaunchRequest) -> BTreeMap<String, String> {
        let mut env = match &self.env {
            HostEnv::Process => filter_inherited_env(std::env::vars_os().filter_map(utf8_pair)),
            HostEnv::Fixed(vars) => filter_inherited_env(vars.iter().cloned()),
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

/// Keeps an environment entry only when both sides are UTF-8 (OpenClaw
/// drops non-string values too).
fn utf8_pair((key, value): (OsString, OsString)) -> Option<(String, String)> {
    Some((key.into_string().ok()?, value.into_string().ok()?))
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

fn io_error(what: &str, e: impl std::fmt::Display) -> SandboxError {
    SandboxError::Exec(format!("{what}: {e}"))
}

#[async_trait::async_trait]
impl ProcessLauncher for HostLauncher {
    fn id(&self) -> &str {
        "host"
    }

    async fn launch(&self, request: LaunchRequest) -> Result<LaunchedProcess, SandboxError> {
        if request.command.contains('\0') {
            return Err(SandboxError::Config(
                "command contains a NUL byte".to_owned(),
            ));
        }
        let cwd = self.resolve_workdir(request.workdir.as_deref())?;
        let env = self.environment(&request);
        let leaf = self.leaf()?;
        // The leaf's command joins the leaf before `/bin/sh` runs, in a new
        // process group, with exactly `env` (plus the leaf label).
        let mut cmd = tokio::process::Command::from(leaf.command(
            SHELL,
            ["-c", request.command.as_str()],
            &env,
        ));
        cmd.current_dir(&cwd).kill_on_drop(false);
        let mut master = None;
        if request.pty {
            let pty = open_pty()?;
            let slave = pty.slave;
            let dup = |fd: &OwnedFd| {
                fd.try_clone()
                    .map_err(|e| io_error("cannot duplicate the PTY", e))
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
        // The command keeps copies of the PTY slave until it is dropped;
        // drop it now so the master sees the end once the process group is
        // gone.
        drop(cmd);
        let mut child = spawned.map_err(|e| io_error("cannot start /bin/sh", e))?;
        let pid = child.id();
        if let Some(pid) = pid {
            leaf.set_root_pid(pid);
        }
        let leaf = Arc::new(leaf);
        let (stdin, stdout, stderr) = match master {
            Some(master) => {
                let reader = master
                    .try_clone()
                    .map_err(|e| io_error("cannot duplicate the PTY", e))?;
                let reader = pipe::Receiver::from_owned_fd_unchecked(reader)
                    .map_err(|e| io_error("cannot watch the PTY", e))?;
                let writer = pipe::Sender::from_owned_fd_unchecked(master)
                    .map_err(|e| io_error("cannot watch the PTY", e))?;
                (
                    Some(Box::pin(writer) as talon_sandbox_core::ProcessInput),
                    Box::pin(PtyReader(reader)) as talon_sandbox_core::ProcessOutput,
                    None,
                )
            }
            None => {
                let stdout = child
                    .stdout
                    .take()
                    .ok_or_else(|| io_error("cannot read stdout", "no pipe"))?;
                let stderr = child
                    .stderr
                    .take()
                    .ok_or_else(|| io_error("cannot read stderr", "no pipe"))?;
                let stdin = child.stdin.take();
                (
                    stdin.map(|s| Box::pin(s) as talon_sandbox_core::ProcessInput),
                    Box::pin(stdout) as talon_sandbox_core::ProcessOutput,
                    Some(Box::pin(stderr) as talon_sandbox_core::ProcessOutput),
                )
            }
        };
        let (tx, rx) = watch::channel(None);
        tokio::spawn(async move {
            let status = child
                .wait()
                .await
                .map(convert_status)
                .map_err(|e| e.to_string());
            let _ = tx.send(Some(status));
        });
        tracing::debug!(
            pid,
            leaf = leaf.id(),
            pty = request.pty,
            "host exec started"
        );
        Ok(LaunchedProcess {
            stdin,
            stdout,
            stderr,
            control: Box::new(HostControl {
                pid,
                leaf,
                status: rx,
                killed: AtomicBool::new(false),
            }),
        })
    }
}

fn open_pty() -> Result<nix::pty::OpenptyResult, SandboxError> {
    let size = nix::pty::Winsize {
        ws_row: PTY_ROWS,
        ws_col: PTY_COLS,
        ws_xpixel: 0,
        ws_ypixel: 0,
    };
    nix::pty::openpty(&size, None).map_err(|e| io_error("cannot open a PTY", e))
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

/// Waits for one host command and kills its whole tree.
#[derive(Debug)]
struct HostControl {
    pid: Option<u32>,
    leaf: Arc<Leaf>,
    status: watch::Receiver<Option<Result<ExitStatus, String>>>,
    killed: AtomicBool,
}

impl HostControl {
    fn kill_tree(leaf: &Leaf) -> Result<(), SandboxError> {
        leaf.kill().map_err(|e| {
            SandboxError::Exec(format!(
                "cannot kill the command's process tree: {}",
                chain(&e)
            ))
        })
    }
}

#[async_trait::async_trait]
impl ProcessControl for HostControl {
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
        // Bounded, but it polls until the tree is empty: keep it off the
        // async workers.
        let leaf = Arc::clone(&self.leaf);
        tokio::task::spawn_blocking(move || HostControl::kill_tree(&leaf))
            .await
            .map_err(|e| SandboxError::Exec(format!("the kill task failed: {e}")))?
    }
}

impl Drop for HostControl {
    fn drop(&mut self) {
        // Whoever held the handle is gone; nothing may outlive it (the
        // leaf's own drop would do it too, once the last handle goes).
        if !self.killed.load(Ordering::SeqCst)
            && let Err(e) = HostControl::kill_tree(&self.leaf)
        {
            tracing::warn!(error = %e, "a host command's tree outlived its handle");
        }
    }
}

#[cfg(test)]
#[path = "host_launcher_tests.rs"]
mod tests;
