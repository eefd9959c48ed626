//! The one way this crate starts a program: a cleared environment (only
//! what the caller allows), its own process group, stdin written then
//! closed, stdout and stderr capped, a timeout and an abort signal that kill
//! the whole group, and kill-on-drop.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use talon_tool_catalog::AbortSignal;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio::process::Command;

/// A program to run to completion.
#[derive(Debug, Clone)]
pub struct BoundedCommand {
    /// argv[0] (a path, or a name looked up in the given `PATH`).
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
    /// The abort signal fired (its process group was killed).
    #[error("aborted")]
    Aborted,
    /// Reading its output or waiting for it failed.
    #[error("i/o error: {0}")]
    Io(String),
}

/// Run `cmd` to completion under its limits.
pub async fn run_bounded(
    cmd: &BoundedCommand,
    abort: &AbortSignal,
) -> Result<BoundedOutput, RunError> {
    let mut command = Command::new(&cmd.program);
    command
        .args(&cmd.args)
        .env_clear()
        .envs(&cmd.env)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true);
    if let Some(dir) = &cmd.cwd {
        command.current_dir(dir);
    }
    let mut child = command.spawn().map_err(|e| RunError::Spawn {
        program: cmd.program.clone(),
        message: e.to_string(),
    })?;
    let pgid = child
        .id()
        .and_then(|id| i32::try_from(id).ok())
        .map(Pid::from_raw);
    let kill_group = || {
        if let Some(pgid) = pgid {
            let _ = killpg(pgid, Signal::SIGKILL);
        }
    };

    let stdin = child.stdin.take();
    let input = cmd.stdin.clone();
    let writer = async move {
        if let Some(mut stdin) = stdin {
            // A child that exits without reading its input is not an error.
            let _ = stdin.write_all(&input).await;
            let _ = stdin.shutdown().await;
        }
    };
    let stdout = child.stdout.take();
    let stderr = child.stderr.take();
    let max = cmd.max_output;
    let work = async {
        let ((), out, err, status) = tokio::join!(
            writer,
            read_capped(stdout, max),
            read_capped(stderr, max),
            child.wait()
        );
        (out, err, status)
    };
    let finished = tokio::select! {
        r = tokio::time::timeout(cmd.timeout, work) => r,
        () = abort.aborted() => {
            kill_group();
            return Err(RunError::Aborted);
        }
    };
    let Ok((out, err, status)) = finished else {
        kill_group();
        return Err(RunError::TimedOut(cmd.timeout.as_millis()));
    };
    // The leader has exited; make sure nothing it started outlives it.
    kill_group();
    let status = status.map_err(|e| RunError::Io(e.to_string()))?;
    let (stdout, stdout_truncated) = out.map_err(|e| RunError::Io(e.to_string()))?;
    let (stderr, _) = err.map_err(|e| RunError::Io(e.to_string()))?;
    Ok(BoundedOutput {
        code: status.code(),
        stdout,
        stderr,
        stdout_truncated,
    })
}

async fn read_capped<R: AsyncRead + Unpin>(
    reader: Option<R>,
    max: usize,
) -> std::io::Result<(Vec<u8>, bool)> {
    let Some(mut reader) = reader else {
        return Ok((Vec::new(), false));
    };
    let mut kept = Vec::new();
    let mut truncated = false;
    let mut buf = [0u8; 8192];
    loop {
        let n = reader.read(&mut buf).await?;
        if n == 0 {
            break;
        }
        let room = max.saturating_sub(kept.len());
        if n > room {
            truncated = true;
        }
        if let Some(chunk) = buf.get(..n.min(room)) {
            kept.extend_from_slice(chunk);
        }
    }
    Ok((kept, truncated))
}
