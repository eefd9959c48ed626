//! One launched command: its output buffer, its state, and the task that
//! supervises it until it ends.

use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use talon_sandbox_core::{ExitStatus, ProcessControl, ProcessInput, ProcessOutput, SandboxError};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::sync::watch;

use crate::exec::output::{OutputBuffer, OutputSlice};

/// How long a killed process may take to be reaped before the session is
/// closed without its status.
const KILL_WAIT: Duration = Duration::from_secs(5);
/// How long output may keep draining once the process group is gone
/// (something that left the group can hold the pipe open).
const DRAIN_GRACE: Duration = Duration::from_secs(2);
/// How long a stdin write may block on a command that does not read.
const WRITE_TIMEOUT: Duration = Duration::from_secs(5);
/// The read size of the output pumps.
const READ_CHUNK: usize = 16 * 1024;

/// Why a command was killed by Talon.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum KillReason {
    /// Its timeout fired.
    Timeout,
    /// The exec call's abort token fired.
    Abort,
    /// The exec call's future was dropped while it waited.
    Cancelled,
    /// `process kill` or `process remove`.
    User,
    /// The registry shut down.
    Shutdown,
}

impl KillReason {
    /// A stable name for results.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            KillReason::Timeout => "timeout",
            KillReason::Abort => "abort",
            KillReason::Cancelled => "cancelled",
            KillReason::User => "user",
            KillReason::Shutdown => "shutdown",
        }
    }
}

/// What never changes about a session.
#[derive(Debug, Clone)]
pub(crate) struct SessionInfo {
    /// The session id.
    pub(crate) id: String,
    /// The session key that owns it.
    pub(crate) owner: String,
    /// The command line.
    pub(crate) command: String,
    /// A short display name (command verb and target).
    pub(crate) name: String,
    /// The requested workdir, if any.
    pub(crate) workdir: Option<String>,
    /// Where it runs (the launcher id).
    pub(crate) launcher: String,
    /// Whether it runs under a PTY.
    pub(crate) pty: bool,
    /// Its pid in the launcher's namespace.
    pub(crate) pid: Option<u32>,
    /// When it started (monotonic).
    pub(crate) started: Instant,
    /// When it started (Unix milliseconds).
    pub(crate) started_at_ms: u64,
    /// The timeout it runs under.
    pub(crate) timeout: Duration,
}

/// How a session ended.
#[derive(Debug, Clone)]
pub(crate) struct Finish {
    /// The exit status, when it was observed.
    pub(crate) status: Option<ExitStatus>,
    /// Why Talon killed it, if it did.
    pub(crate) killed: Option<KillReason>,
    /// A launcher failure while waiting or killing.
    pub(crate) error: Option<String>,
    /// When it ended.
    pub(crate) at: Instant,
}

#[derive(Debug)]
struct State {
    output: OutputBuffer,
    poll_cursor: u64,
    backgrounded: bool,
    finish: Option<Finish>,
}

/// A point-in-time view of a session.
#[derive(Debug, Clone)]
pub(crate) struct Snapshot {
    /// How it ended, if it did.
    pub(crate) finish: Option<Finish>,
    /// How long it has run (or ran).
    pub(crate) runtime: Duration,
    /// Bytes of output so far.
    pub(crate) total_bytes: u64,
    /// Bytes dropped from the middle of the output.
    pub(crate) omitted_bytes: u64,
}

impl Snapshot {
    /// `running`, `completed` (exit code 0) or `failed`.
    pub(crate) fn status(&self) -> &'static str {
        match &self.finish {
            None => "running",
            Some(f) if f.killed.is_none() && f.status == Some(ExitStatus::Code(0)) => "completed",
            Some(_) => "failed",
        }
    }

    /// The typed form of [`status`](Self::status) for a result: running
    /// and completed are ok, killed at the time limit is timed out, any
    /// other end is failed.
    pub(crate) fn result_status(&self) -> talon_tool_catalog::ResultStatus {
        use talon_tool_catalog::ResultStatus;
        match &self.finish {
            None => ResultStatus::Ok,
            Some(f) if f.killed == Some(KillReason::Timeout) => ResultStatus::TimedOut,
            Some(f) if f.killed.is_none() && f.status == Some(ExitStatus::Code(0)) => {
                ResultStatus::Ok
            }
            Some(_) => ResultStatus::Failed,
        }
    }
}

/// One launched command.
pub(crate) struct Session {
    pub(crate) info: SessionInfo,
    state: Mutex<State>,
    changed: watch::Sender<u64>,
    kill: watch::Sender<Option<KillReason>>,
    stdin: tokio::sync::Mutex<Option<ProcessInput>>,
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session")
            .field("id", &self.info.id)
            .field("pid", &self.info.pid)
            .finish_non_exhaustive()
    }
}

/// Unix milliseconds now.
pub(crate) fn unix_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
        .unwrap_or(0)
}

impl Session {
    /// A session for a process that was just launched.
    pub(crate) fn new(info: SessionInfo, stdin: Option<ProcessInput>, output_cap: usize) -> Self {
        Session {
            info,
            state: Mutex::new(State {
                output: OutputBuffer::new(output_cap),
                poll_cursor: 0,
                backgrounded: false,
                finish: None,
            }),
            changed: watch::Sender::new(0),
            kill: watch::Sender::new(None),
            stdin: tokio::sync::Mutex::new(stdin),
        }
    }

    fn state(&self) -> MutexGuard<'_, State> {
        match self.state.lock() {
            Ok(guard) => guard,
            Err(poisoned) => poisoned.into_inner(),
        }
    }

    fn bump(&self) {
        self.changed.send_modify(|generation| *generation += 1);
    }

    /// Supervises the process until it ends: pumps its output, enforces
    /// the timeout, honours kill requests, kills the whole process group
    /// once the command is over (so nothing it started outlives it), and
    /// records how it ended.
    pub(crate) async fn supervise(
        self: Arc<Self>,
        control: Box<dyn ProcessControl>,
        stdout: ProcessOutput,
        stderr: Option<ProcessOutput>,
    ) {
        let mut pumps = tokio::task::JoinSet::new();
        pumps.spawn(pump(Arc::clone(&self), stdout));
        if let Some(stderr) = stderr {
            pumps.spawn(pump(Arc::clone(&self), stderr));
        }
        let mut kill_rx = self.kill.subscribe();
        let mut killed = None;
        let waited = tokio::select! {
            status = control.wait() => Some(status),
            () = tokio::time::sleep(self.info.timeout) => {
                killed = Some(KillReason::Timeout);
                None
            }
            reason = kill_rx.wait_for(Option::is_some) => {
                killed = Some(reason.ok().and_then(|r| *r).unwrap_or(KillReason::Shutdown));
                None
            }
        };
        let kill_error = control.kill().await.err();
        let status = match waited {
            Some(status) => status,
            None => match tokio::time::timeout(KILL_WAIT, control.wait()).await {
                Ok(status) => status,
                Err(_) => Err(SandboxError::timeout(
                    "the process did not end after it was killed".to_owned(),
                )),
            },
        };
        let drained = tokio::time::timeout(DRAIN_GRACE, async {
            while pumps.join_next().await.is_some() {}
        })
        .await;
        if drained.is_err() {
            pumps.abort_all();
        }
        let (status, error) = match status {
            Ok(status) => (Some(status), kill_error.map(|e| e.to_string())),
            Err(e) => (None, Some(e.to_string())),
        };
        if let Some(error) = &error {
            tracing::warn!(session = %self.info.id, error = %error, "exec session ended with a launcher error");
        }
        *self.stdin.lock().await = None;
        self.state().finish = Some(Finish {
            status,
            killed,
            error,
            at: Instant::now(),
        });
        self.bump();
        // Keep the control handle until here so a launcher's own drop
        // cleanup never races the status above.
        drop(control);
    }

    /// Appends output and wakes pollers.
    fn push_output(&self, bytes: &[u8]) {
        self.state().output.push(bytes);
        self.bump();
    }

    /// Asks the supervisor to kill the process group (idempotent; the
    /// first reason is kept).
    pub(crate) fn request_kill(&self, reason: KillReason) {
        self.kill.send_if_modified(|slot| {
            if slot.is_none() {
                *slot = Some(reason);
                true
            } else {
                false
            }
        });
    }

    /// Whether the session has ended.
    pub(crate) fn is_finished(&self) -> bool {
        self.state().finish.is_some()
    }

    /// When it ended.
    pub(crate) fn finished_at(&self) -> Option<Instant> {
        self.state().finish.as_ref().map(|f| f.at)
    }

    /// Whether it is a background session (visible to `process`).
    pub(crate) fn is_backgrounded(&self) -> bool {
        self.state().backgrounded
    }

    /// Marks it a background session.
    pub(crate) fn set_backgrounded(&self) {
        self.state().backgrounded = true;
    }

    /// Waits until it has ended.
    pub(crate) async fn wait_finished(&self) {
        let mut rx = self.changed.subscribe();
        loop {
            if self.is_finished() {
                return;
            }
            if rx.changed().await.is_err() {
                return;
            }
        }
    }

    /// Waits up to `limit` for output past the poll cursor or the end.
    pub(crate) async fn wait_for_news(&self, limit: Duration) {
        let mut rx = self.changed.subscribe();
        let news = |s: &Session| {
            let state = s.state();
            state.finish.is_some() || state.output.total() > state.poll_cursor
        };
        let _ = tokio::time::timeout(limit, async {
            loop {
                if news(self) {
                    return;
                }
                if rx.changed().await.is_err() {
                    return;
                }
            }
        })
        .await;
    }

    /// A view of the state.
    pub(crate) fn snapshot(&self) -> Snapshot {
        let state = self.state();
        let end = state.finish.as_ref().map_or_else(Instant::now, |f| f.at);
        Snapshot {
            finish: state.finish.clone(),
            runtime: end.saturating_duration_since(self.info.started),
            total_bytes: state.output.total(),
            omitted_bytes: state.output.omitted(),
        }
    }

    /// All retained output.
    pub(crate) fn output(&self) -> OutputSlice {
        self.state().output.all()
    }

    /// At most the last `max` bytes of output.
    pub(crate) fn tail(&self, max: usize) -> OutputSlice {
        self.state().output.tail(max)
    }

    /// The output since the last poll; moves the cursor to the end.
    pub(crate) fn take_new_output(&self) -> OutputSlice {
        let mut state = self.state();
        let slice = state.output.read_from(state.poll_cursor);
        state.poll_cursor = state.output.total();
        slice
    }

    /// Writes to stdin; `eof` closes it afterwards (under a PTY it sends
    /// the terminal's end-of-file character instead).
    pub(crate) async fn write_stdin(
        &self,
        data: &[u8],
        eof: bool,
    ) -> Result<usize, talon_tool_catalog::ToolError> {
        use talon_tool_catalog::ToolError;
        let mut guard = self.stdin.lock().await;
        let Some(stdin) = guard.as_mut() else {
            return Err(ToolError::execution("its stdin is closed"));
        };
        let mut bytes = data.to_vec();
        if eof && self.info.pty {
            bytes.push(0x04);
        }
        let written = tokio::time::timeout(WRITE_TIMEOUT, async {
            stdin.write_all(&bytes).await?;
            stdin.flush().await
        })
        .await;
        match written {
            Ok(Ok(())) => {}
            Ok(Err(e)) => {
                return Err(ToolError::execution(format!(
                    "writing to its stdin failed: {e}"
                )));
            }
            Err(_) => {
                return Err(ToolError::timed_out(format!(
                    "its stdin did not accept the data within {}s (the command is not reading)",
                    WRITE_TIMEOUT.as_secs()
                )));
            }
        }
        if eof && !self.info.pty {
            *guard = None;
        }
        Ok(data.len())
    }
}

/// Copies one output stream into the session until it ends.
async fn pump(session: Arc<Session>, mut stream: ProcessOutput) {
    let mut buf = vec![0_u8; READ_CHUNK];
    loop {
        match stream.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => session.push_output(&buf[..n]),
        }
    }
}
