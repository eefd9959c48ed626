//! Spawning a local process (on this machine) as a [`LaunchedProcess`]:
//! with pipes or under a pseudo-terminal, reaped by a task of its own, and
//! ended as a whole tree. What the host launcher and the local (bubblewrap)
//! sandbox share; each builds its own [`tokio::process::Command`].

use std::io;
use std::os::fd::OwnedFd;
use std::os::unix::process::ExitStatusExt;
use std::pin::Pin;
use std::process::Stdio;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll};

use nix::errno::Errno;
use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use talon_proc_tree::Leaf;
use tokio::io::{AsyncRead, ReadBuf};
use tokio::net::unix::pipe;
use tokio::sync::watch;

use crate::error::{SandboxError, SandboxErrorSource};
use crate::process::{ExitStatus, LaunchedProcess, ProcessControl, ProcessInput, ProcessOutput};

/// The terminal size a PTY starts with (rows).
const PTY_ROWS: u16 = 24;
/// The terminal size a PTY starts with (columns).
const PTY_COLS: u16 = 80;

/// How [`spawn_local`] ends a spawned process's tree.
#[derive(Debug)]
pub enum LocalKill {
    /// The leaf's [`Leaf::kill`] ends the whole tree. It is killed on
    /// [`ProcessControl::kill`] and when the handle is dropped, not when
    /// the process exits (its daemons live until then).
    Tree(Leaf),
    /// `SIGKILL` to the process group the spawned process leads (the
    /// command must put it in a group of its own), only while it has not
    /// been reaped (its pid may be reused after that); plus the leaf, if
    /// any, which is also killed as soon as the process is reaped.
    ProcessGroup(Option<Leaf>),
}

/// How the control handle ends the tree (the leaf shared with the reaper).
#[derive(Debug)]
enum Ender {
    Tree(Arc<Leaf>),
    ProcessGroup(Option<Arc<Leaf>>),
}

impl ExitStatus {
    /// A local process's status: its exit code, else the signal that
    /// killed it (`Code(-1)` when it has neither).
    pub fn from_std(status: std::process::ExitStatus) -> Self {
        match (status.code(), status.signal()) {
            (Some(code), _) => ExitStatus::Code(code),
            (None, Some(signal)) => ExitStatus::Signal(signal),
            (None, None) => ExitStatus::Code(-1),
        }
    }
}

fn exec_error(what: &str, e: impl std::error::Error + Send + Sync + 'static) -> SandboxError {
    SandboxError::exec(format!("{what}: {e}")).with_source(e)
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

/// Spawns `cmd` with its stdin, stdout and stderr as pipes, or, with
/// `pty`, all three on the slave side of a new pseudo-terminal (the
/// returned stdout reads the master; there is no separate stderr). The
/// command gets no controlling terminal: the caller decides its session
/// and process group. `program` names what is started, for the error
/// `cannot start {program}`.
///
/// The command's copies of the PTY slave are dropped right after the
/// spawn, so the master reads the end once the process tree is gone. A
/// task reaps the process and reports its status to
/// [`ProcessControl::wait`]; `kill` tells how the tree ends (see
/// [`LocalKill`]); [`ProcessControl::kill`] is idempotent, and dropping
/// the handle without a kill ends the tree too.
///
/// Must be called inside a Tokio runtime.
pub fn spawn_local(
    mut cmd: tokio::process::Command,
    pty: bool,
    kill: LocalKill,
    program: &str,
) -> Result<LaunchedProcess, SandboxError> {
    cmd.kill_on_drop(false);
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
    // The command keeps copies of the PTY slave until it is dropped; drop
    // it now so the master sees the end once the process tree is gone.
    drop(cmd);
    let mut child = spawned.map_err(|e| exec_error(&format!("cannot start {program}"), e))?;
    let pid = child.id();
    let ender = match kill {
        LocalKill::Tree(leaf) => Ender::Tree(Arc::new(leaf)),
        LocalKill::ProcessGroup(leaf) => Ender::ProcessGroup(leaf.map(Arc::new)),
    };
    if let (Some(leaf), Some(pid)) = (ender.leaf(), pid) {
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
                .ok_or_else(|| SandboxError::exec("cannot read stdout: no pipe"))?;
            let stderr = child
                .stderr
                .take()
                .ok_or_else(|| SandboxError::exec("cannot read stderr: no pipe"))?;
            let stdin = child.stdin.take();
            (
                stdin.map(|s| Box::pin(s) as ProcessInput),
                Box::pin(stdout) as ProcessOutput,
                Some(Box::pin(stderr) as ProcessOutput),
            )
        }
    };
    let (tx, rx) = watch::channel(None);
    // Only a process-group tree ends with its process: its leaf then
    // removes the cgroup and ends anything that still lingered.
    let reaped_leaf = match &ender {
        Ender::ProcessGroup(leaf) => leaf.clone(),
        Ender::Tree(_) => None,
    };
    tokio::spawn(async move {
        let status = child
            .wait()
            .await
            .map(ExitStatus::from_std)
            .map_err(Arc::new);
        if let Some(leaf) = reaped_leaf {
            let _ = tokio::task::spawn_blocking(move || leaf.kill()).await;
        }
        let _ = tx.send(Some(status));
    });
    Ok(LaunchedProcess {
        stdin,
        stdout,
        stderr,
        control: Box::new(LocalControl {
            pid,
            ender,
            status: rx,
            killed: AtomicBool::new(false),
        }),
    })
}

impl Ender {
    fn leaf(&self) -> Option<&Arc<Leaf>> {
        match self {
            Ender::Tree(leaf) => Some(leaf),
            Ender::ProcessGroup(leaf) => leaf.as_ref(),
        }
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

/// Waits for one local process and kills its whole tree.
#[derive(Debug)]
struct LocalControl {
    pid: Option<u32>,
    ender: Ender,
    status: watch::Receiver<Option<Result<ExitStatus, Arc<io::Error>>>>,
    killed: AtomicBool,
}

impl LocalControl {
    /// `SIGKILL` to the process group the spawned process leads, unless it
    /// has been reaped: its pid (the group id) may belong to someone else
    /// by now.
    fn kill_group(&self) -> Result<(), SandboxError> {
        let Some(pid) = self.pid.and_then(|p| i32::try_from(p).ok()) else {
            return Ok(());
        };
        if self.status.borrow().is_some() {
            return Ok(());
        }
        match killpg(Pid::from_raw(pid), Signal::SIGKILL) {
            Ok(()) | Err(Errno::ESRCH) => Ok(()),
            Err(e) => Err(SandboxError::exec(format!(
                "cannot kill the command's process group {pid}: {e}"
            ))
            .with_source(e)),
        }
    }
}

/// Ends a leaf's tree (blocking: it polls until the tree is empty).
fn kill_leaf(leaf: &Leaf) -> Result<(), SandboxError> {
    leaf.kill().map_err(|e| {
        SandboxError::exec(format!(
            "cannot kill the command's process tree: {}",
            chain(&e)
        ))
        .with_source(e)
    })
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
            .map_err(|_| SandboxError::exec("the process reaper stopped".to_owned()))?;
        match status.as_ref() {
            Some(Ok(status)) => Ok(*status),
            Some(Err(e)) => Err(SandboxError::exec(format!("waiting failed: {e}"))
                .with_shared_source(Arc::clone(e) as SandboxErrorSource)),
            None => Err(SandboxError::exec("no exit status".to_owned())),
        }
    }

    async fn kill(&self) -> Result<(), SandboxError> {
        self.killed.store(true, Ordering::SeqCst);
        if let Ender::ProcessGroup(_) = self.ender {
            self.kill_group()?;
        }
        if let Some(leaf) = self.ender.leaf().cloned() {
            // Bounded, but it polls until the tree is empty: keep it off
            // the async workers.
            tokio::task::spawn_blocking(move || kill_leaf(&leaf))
                .await
                .map_err(|e| {
                    SandboxError::exec(format!("the kill task failed: {e}")).with_source(e)
                })??;
        }
        Ok(())
    }
}

impl Drop for LocalControl {
    fn drop(&mut self) {
        // Whoever held the handle is gone; nothing may outlive it.
        if self.killed.load(Ordering::SeqCst) {
            return;
        }
        match &self.ender {
            // The leaf's own drop would do it too, once the last handle
            // goes; do it now.
            Ender::Tree(leaf) => {
                if let Err(e) = kill_leaf(leaf) {
                    tracing::warn!(error = %e, "a local command's tree outlived its handle");
                }
            }
            // The group ends the tree; a leaf goes with its reaper.
            Ender::ProcessGroup(_) => {
                let _ = self.kill_group();
            }
        }
    }
}

#[cfg(test)]
#[path = "local_spawn_tests.rs"]
mod tests;
