//! The pid-wrapper protocol the Docker and SSH backends share.
//!
//! A remote or in-container command cannot be signalled by a local pid, so
//! both backends start it under a small `sh` wrapper that prints its own
//! pid on the first line of stdout (the process group of the command and
//! everything it starts) before it runs the command. This module holds the
//! parts of that protocol that do not depend on the transport:
//!
//! - [`PidLine`] takes the wrapper's first line off the output (split
//!   across reads or not, `\n` or `\r\n` under a terminal), and hands back
//!   untouched whatever did not start with a pid line;
//! - [`WrappedState`] is what a process's output pump, waiter and
//!   [`ProcessControl`](crate::ProcessControl) share: the process group
//!   once known, whether the line was read, the exit status once known and
//!   whether a kill was asked for; a kill waits for the group at most
//!   [`PID_WAIT`];
//! - [`wrapped_env`] is the one check of a request's environment: every
//!   key as given, except `PATH`, which travels as [`PREPEND_PATH_VAR`] and
//!   is prepended to the shell's own `PATH`, and the reserved key itself,
//!   which is refused.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use tokio::sync::watch;

use crate::{ExitStatus, SandboxError};

/// The variable a request's `PATH` travels in (prepended to the shell's
/// `PATH` by the wrapper, so the image's or host's login `PATH` stays).
pub const PREPEND_PATH_VAR: &str = "TALON_PREPEND_PATH";

/// The longest first line taken as a pid line; a longer one is output.
pub const PID_LINE_MAX: usize = 32;

/// How long a kill waits for the wrapper's pid line.
pub const PID_WAIT: Duration = Duration::from_secs(5);

/// The capacity of the pipes between a wrapped process and its caller.
pub const WRAPPED_PIPE_CAPACITY: usize = 64 * 1024;

/// What [`PidLine::feed`] found.
#[derive(Debug, PartialEq, Eq)]
pub enum PidLineStep {
    /// No full line yet: feed more.
    More,
    /// The first line is read: the process group it named (`None` when
    /// the line was not a pid, or too long, and is then kept in `rest`),
    /// and the output that follows.
    Done {
        /// The process group, when the line named one (`> 1`).
        pgid: Option<u32>,
        /// The output after the line (or all of it, when it was not one).
        rest: Vec<u8>,
    },
}

/// Reads the wrapper's first line off a command's output.
#[derive(Debug, Default)]
pub struct PidLine {
    pending: Vec<u8>,
}

impl PidLine {
    /// A reader that has seen nothing yet.
    pub fn new() -> Self {
        PidLine::default()
    }

    /// Add `chunk` of output. Once this returns [`PidLineStep::Done`] the
    /// caller forwards the rest of the output itself.
    pub fn feed(&mut self, chunk: &[u8]) -> PidLineStep {
        self.pending.extend_from_slice(chunk);
        match self.pending.iter().position(|b| *b == b'\n') {
            Some(newline) if newline <= PID_LINE_MAX => {
                let pgid = std::str::from_utf8(&self.pending[..newline])
                    .ok()
                    .and_then(|line| line.trim().parse::<u32>().ok())
                    .filter(|p| *p > 1);
                let mut rest = std::mem::take(&mut self.pending);
                if pgid.is_some() {
                    rest.drain(..=newline);
                }
                PidLineStep::Done { pgid, rest }
            }
            Some(_) => PidLineStep::Done {
                pgid: None,
                rest: std::mem::take(&mut self.pending),
            },
            None if self.pending.len() > PID_LINE_MAX => PidLineStep::Done {
                pgid: None,
                rest: std::mem::take(&mut self.pending),
            },
            None => PidLineStep::More,
        }
    }

    /// The output held back when it ended before a full line.
    pub fn into_pending(self) -> Vec<u8> {
        self.pending
    }
}

/// The shared state of one wrapped process.
#[derive(Debug)]
pub struct WrappedState {
    pgid: watch::Sender<Option<u32>>,
    line_read: watch::Sender<bool>,
    done: watch::Sender<Option<Result<ExitStatus, SandboxError>>>,
    killed: AtomicBool,
}

impl Default for WrappedState {
    fn default() -> Self {
        WrappedState::new()
    }
}

impl WrappedState {
    /// A process that has printed nothing and not ended.
    pub fn new() -> Self {
        WrappedState {
            pgid: watch::Sender::new(None),
            line_read: watch::Sender::new(false),
            done: watch::Sender::new(None),
            killed: AtomicBool::new(false),
        }
    }

    /// The wrapper's first line was read, naming `pgid` (or nothing usable).
    pub fn line_read(&self, pgid: Option<u32>) {
        if pgid.is_some() {
            self.pgid.send_replace(pgid);
        }
        self.line_read.send_replace(true);
    }

    /// The process group, once the wrapper reported it.
    pub fn pgid(&self) -> Option<u32> {
        *self.pgid.borrow()
    }

    /// Watches whether the first line was read (input written before it
    /// would be echoed ahead of it by a terminal).
    pub fn subscribe_line(&self) -> watch::Receiver<bool> {
        self.line_read.subscribe()
    }

    /// Watches the exit status.
    pub fn subscribe_done(&self) -> watch::Receiver<Option<Result<ExitStatus, SandboxError>>> {
        self.done.subscribe()
    }

    /// Record how the process ended (the first record wins).
    pub fn finish(&self, status: Result<ExitStatus, SandboxError>) {
        self.done.send_if_modified(|slot| {
            if slot.is_some() {
                return false;
            }
            *slot = Some(status);
            true
        });
    }

    /// Whether the process has ended (with a status or an error).
    pub fn is_done(&self) -> bool {
        self.done.borrow().is_some()
    }

    /// Whether the process ended with a status (not an error).
    pub fn ended_with_status(&self) -> bool {
        matches!(self.done.borrow().as_ref(), Some(Ok(_)))
    }

    /// Record that a kill was asked for (its exit is then a kill's).
    pub fn mark_killed(&self) {
        self.killed.store(true, Ordering::SeqCst);
    }

    /// Whether a kill was asked for.
    pub fn was_killed(&self) -> bool {
        self.killed.load(Ordering::SeqCst)
    }

    /// Wait for the exit status; `what` names the process in the error
    /// when its waiter ended without one.
    pub async fn wait(&self, what: &str) -> Result<ExitStatus, SandboxError> {
        let mut rx = self.done.subscribe();
        let value = match rx.wait_for(Option::is_some).await {
            Ok(value) => value.clone(),
            Err(_) => None,
        };
        value.unwrap_or_else(|| {
            Err(SandboxError::exec(format!(
                "{what}: its waiter ended without an exit status"
            )))
        })
    }

    /// The process group to kill: waits at most [`PID_WAIT`] for the pid
    /// line, or until the process ends. `None` when neither came with a
    /// group.
    pub async fn wait_pgid(&self) -> Option<u32> {
        let mut pgid = self.pgid.subscribe();
        let mut done = self.done.subscribe();
        let _ = tokio::time::timeout(PID_WAIT, async {
            tokio::select! {
                _ = pgid.wait_for(Option::is_some) => {}
                _ = done.wait_for(Option::is_some) => {}
            }
        })
        .await;
        self.pgid()
    }
}

/// A request's environment as the wrapper takes it: `NAME=value` strings,
/// `PATH` as [`PREPEND_PATH_VAR`] (the second value says whether one was
/// given, non-empty). A key that is empty or holds `=` or NUL, a value
/// holding NUL, the reserved key itself, and (with `portable_names`, for
/// a wrapper that `export`s each pair) a name outside
/// `[A-Za-z_][A-Za-z0-9_]*` are refused, naming the key.
pub fn wrapped_env(
    env: &BTreeMap<String, String>,
    portable_names: bool,
) -> Result<(Vec<String>, bool), SandboxError> {
    let mut out = Vec::with_capacity(env.len());
    let mut prepend = false;
    for (key, value) in env {
        if key.is_empty() || key.contains(['=', '\0']) || value.contains('\0') {
            return Err(SandboxError::exec(format!(
                "environment key {key:?} (or its value) is invalid: empty, or contains `=` or \
                 NUL; fix or remove it"
            )));
        }
        if key == PREPEND_PATH_VAR {
            return Err(SandboxError::exec(format!(
                "environment key {PREPEND_PATH_VAR} is reserved; pass PATH instead"
            )));
        }
        if portable_names && !is_portable_name(key) {
            return Err(SandboxError::exec(format!(
                "environment variable name `{}` is not portable ([A-Za-z_][A-Za-z0-9_]*); \
                 rename it",
                key.escape_default()
            )));
        }
        if key == "PATH" {
            if !value.is_empty() {
                prepend = true;
                out.push(format!("{PREPEND_PATH_VAR}={value}"));
            }
            continue;
        }
        out.push(format!("{key}={value}"));
    }
    Ok((out, prepend))
}

/// `[A-Za-z_][A-Za-z0-9_]*`: a name every POSIX shell can `export`.
pub fn is_portable_name(name: &str) -> bool {
    let mut bytes = name.bytes();
    bytes
        .next()
        .is_some_and(|b| b.is_ascii_alphabetic() || b == b'_')
        && bytes.all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

#[cfg(test)]
#[path = "wrapped_tests.rs"]
mod tests;
