//! The one way this crate starts a program: a cleared environment (only
//! what the caller allows), its own process group, stdin written then
//! closed, stdout and stderr capped, a timeout and an abort token that kill
//! the whole group, and a guard that kills the whole group when the run is
//! dropped half-way (a caller's timeout, runtime shutdown).
//!
//! Once the leader has exited, whatever it left behind in its group is
//! killed. A leftover process that still holds stdout or stderr open gets
//! a short grace period ([`OUTPUT_GRACE`], never past the timeout), then
//! the group is killed and what was read so far is returned: a leftover
//! background child does not cost the full timeout.
//!
//! Limits: containment is by process group only. A program that calls
//! `setsid` (or `setpgid`) leaves the group and escapes every kill here;
//! its pipes are abandoned after the grace period, but the process lives
//! on. Containing that needs cgroups (or a PID namespace), which is out of
//! scope for this module.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use talon_proc_tree::{ChildCommand, ChildEnv, ProcessGroup, SpawnError};
use talon_tool_catalog::CancellationToken;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio::process::{Child, ChildStderr, ChildStdin, ChildStdout, Command};
use tokio::time::{Instant, sleep_until};

/// How long, after the leader has exited, a leftover process may keep
/// stdout or stderr open before the group is killed.
pub const OUTPUT_GRACE: Duration = Duration::from_millis(200);

/// How long to keep draining the pipes after the group was killed at the
/// end of the grace period (only a process that escaped the group can
/// still hold them open then).
const DRAIN_AFTER_KILL: Duration = Duration::from_millis(100);

/// A program to run to completion.
#[derive(Debug, Clone)]
pub struct BoundedCommand {
    /// `argv[0]` (a path, or a name looked up in the given `PATH`).
    pub program: String,
    /// The other arguments.
    pub args: Vec<String>,
    /// The working directory (default: the current one).
    pub cwd: Option<PathBuf>,
    /// The whole environment of the child.
    pub env: BTreeMap<String, String>,
    /// Written to stdin, which is then closed.
    pub stdin: Vec<u8>,
    /// Kill the group after this long.
    pub timeout: Duration,
    /// Keep at most this many bytes of stdout and of stderr.
    pub max_output: usize,
}

/// How a program ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BoundedOutput {
    /// The exit code (`None` when killed by a signal).
    pub code: Option<i32>,
    /// Captured stdout (at most `max_output` bytes).
    pub stdout: Vec<u8>,
    /// Captured stderr (at most `max_output` bytes).
    pub stderr: Vec<u8>,
    /// Whether stdout was longer than `max_output`.
    pub stdout_truncated: bool,
    /// Whether stdout or stderr was still held open by a leftover process
    /// when the grace period after the leader's exit ended: the group was
    /// killed and `stdout` / `stderr` are what had been read by then.
    pub output_cut_short: bool,
}

/// Why a program did not finish.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RunError {
    /// It could not be started.
    #[error("cannot start `{program}`: {message}")]
    Spawn {
        /// The program.
        program: String,
        /// The OS error.
        message: String,
    },
    /// It ran past the timeout (its process group was killed).
    #[error("timed out after {0}ms")]
    TimedOut(u128),
    /// The abort token fired (its process group was killed).
    #[error("aborted")]
    Aborted,
    /// Reading its output or waiting for it failed.
    #[error("i/o error: {0}")]
    Io(String),
}

/// Run `cmd` to completion under its limits.
///
/// Dropping the returned future before it completes kills the whole
/// process group.
pub async fn run_bounded(
    cmd: &BoundedCommand,
    abort: &CancellationToken,
) -> Result<BoundedOutput, RunError> {
    let deadline = Instant::now() + cmd.timeout;
    let mut command = ChildCommand::new(&cmd.program, ChildEnv::exact(&cmd.env), ProcessGroup::Own);
    command
        .args(&cmd.args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if let Some(dir) = &cmd.cwd {
        command.current_dir(dir);
    }
    let mut command = Command::from(command.into_std());
    command.kill_on_drop(true);
    let mut child = command.spawn().map_err(|e| {
        let e = SpawnError::new(&cmd.program, e);
        RunError::Spawn {
            program: cmd.program.clone(),
            message: format!("{} ({})", e.kind(), e.io_error()),
        }
    })?;
    // Armed from here on: however this future ends, or if it is dropped,
    // the group is killed.
    let group = GroupGuard::new(child.id());
    let pipes = Pipes {
        stdin: child.stdin.take(),
        stdout: child.stdout.take(),
        stderr: child.stderr.take(),
    };
    let mut out = Capture::new(cmd.max_output);
    let mut err = Capture::new(cmd.max_output);
    let ended = drive(
        &mut child, pipes, &cmd.stdin, &mut out, &mut err, deadline, abort, &group,
    )
    .await;
    // The leader has exited (or must die now); make sure nothing it started
    // outlives it.
    group.kill();
    match ended {
        Ended::Exited { status, cut_short } => Ok(BoundedOutput {
            code: status.code(),
            stdout: out.kept,
            stderr: err.kept,
            stdout_truncated: out.truncated,
            output_cut_short: cut_short,
        }),
        Ended::TimedOut => Err(RunError::TimedOut(cmd.timeout.as_millis())),
        Ended::Aborted => Err(RunError::Aborted),
        Ended::Io(message) => Err(RunError::Io(message)),
    }
}

/// The child's pipes, taken from it.
struct Pipes {
    stdin: Option<ChildStdin>,
    stdout: Option<ChildStdout>,
    stderr: Option<ChildStderr>,
}

/// How [`drive`] ended.
enum Ended {
    /// The leader exited; `cut_short` when a leftover process still held
    /// the output open at the end of the grace period.
    Exited {
        status: std::process::ExitStatus,
        cut_short: bool,
    },
    /// The deadline passed before the leader exited.
    TimedOut,
    /// The abort token fired.
    Aborted,
    /// Waiting or reading failed.
    Io(String),
}

/// Feed stdin, read stdout and stderr into `out` / `err`, and wait for the
/// leader, until the leader has exited and the output is closed (or the
/// grace period after its exit is over), the deadline passes, or `abort`
/// fires. Reads go straight into the captures, so what was read survives
/// the readers being dropped.
#[allow(clippy::too_many_arguments)]
async fn drive(
    child: &mut Child,
    pipes: Pipes,
    input: &[u8],
    out: &mut Capture,
    err: &mut Capture,
    deadline: Instant,
    abort: &CancellationToken,
    group: &GroupGuard,
) -> Ended {
    let Pipes {
        stdin,
        stdout,
        stderr,
    } = pipes;
    let writer = async move {
        if let Some(mut stdin) = stdin {
            // A child that exits without reading its input is not an error.
            let _ = stdin.write_all(input).await;
            let _ = stdin.shutdown().await;
        }
    };
    let io = async {
        let ((), o, e) = tokio::join!(writer, out.read_from(stdout), err.read_from(stderr));
        o.and(e)
    };
    tokio::pin!(io);

    let mut status: Option<std::process::ExitStatus> = None;
    let mut grace_end = deadline;
    let mut io_done = false;
    loop {
        if io_done && let Some(status) = status {
            return Ended::Exited {
                status,
                cut_short: false,
            };
        }
        tokio::select! {
            s = child.wait(), if status.is_none() => match s {
                Ok(s) => {
                    status = Some(s);
                    grace_end = deadline.min(Instant::now() + OUTPUT_GRACE);
                }
                Err(e) => return Ended::Io(e.to_string()),
            },
            r = &mut io, if !io_done => match r {
                Ok(()) => io_done = true,
                Err(e) => return Ended::Io(e.to_string()),
            },
            () = sleep_until(grace_end) => match status {
                None => return Ended::TimedOut,
                Some(status) => {
                    // A leftover process holds the output open: kill the
                    // group, drain what is still buffered, use what was read.
                    group.kill_now();
                    let drained = tokio::time::timeout(DRAIN_AFTER_KILL, &mut io).await;
                    if let Ok(Err(e)) = drained {
                        return Ended::Io(e.to_string());
                    }
                    return Ended::Exited {
                        status,
                        cut_short: true,
                    };
                }
            },
            () = abort.cancelled() => return Ended::Aborted,
        }
    }
}

/// Kills a process group with `SIGKILL` when dropped (or when told to).
/// The group id is the leader's pid, so it is only valid while the group
/// has members or the leader is unreaped; it is used only until
/// [`run_bounded`] returns.
struct GroupGuard {
    pgid: Option<Pid>,
}

impl GroupGuard {
    /// A guard for the group led by `leader` (`None`: nothing to kill).
    fn new(leader: Option<u32>) -> Self {
        GroupGuard {
            pgid: leader
                .and_then(|id| i32::try_from(id).ok())
                .filter(|id| *id > 0)
                .map(Pid::from_raw),
        }
    }

    /// Kill the group now; the guard stays armed.
    fn kill_now(&self) {
        if let Some(pgid) = self.pgid {
            // ESRCH (the group is already gone) is the normal case.
            let _ = killpg(pgid, Signal::SIGKILL);
        }
    }

    /// Kill the group now and disarm the guard.
    fn kill(mut self) {
        self.kill_now();
        self.disarm();
    }

    /// Forget the group: dropping the guard kills nothing.
    fn disarm(&mut self) {
        self.pgid = None;
    }
}

impl Drop for GroupGuard {
    fn drop(&mut self) {
        self.kill_now();
    }
}

/// Bytes read from one pipe, kept up to a limit.
struct Capture {
    max: usize,
    kept: Vec<u8>,
    truncated: bool,
}

impl Capture {
    fn new(max: usize) -> Self {
        Capture {
            max,
            kept: Vec::new(),
            truncated: false,
        }
    }

    /// Read `reader` to its end, keeping at most `max` bytes (the rest is
    /// read and discarded, so the writer never blocks on a full pipe).
    async fn read_from<R: AsyncRead + Unpin>(&mut self, reader: Option<R>) -> std::io::Result<()> {
        let Some(mut reader) = reader else {
            return Ok(());
        };
        let mut buf = [0u8; 8192];
        loop {
            let n = reader.read(&mut buf).await?;
            if n == 0 {
                return Ok(());
            }
            let room = self.max.saturating_sub(self.kept.len());
            if n > room {
                self.truncated = true;
            }
            if let Some(chunk) = buf.get(..n.min(room)) {
                self.kept.extend_from_slice(chunk);
            }
        }
    }
}

#[cfg(test)]
#[path = "process_tests.rs"]
mod tests;
