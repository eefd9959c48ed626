//! [`SshConnection`]: one multiplexed connection (an OpenSSH
//! ControlMaster driven over its mux socket) per sandbox scope, checked
//! before each use and re-established transparently when it dropped.
//!
//! On reconnect, the process groups of commands that were running on the
//! dead connection are killed (each verified by the exec id on its
//! wrapper's command line, so a recycled process-group id is never hit).

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use openssh::{Session, Stdio};
use openssh_sftp_client::{Sftp, SftpOptions};
use talon_sandbox_core::{ExitStatus, SandboxError, ScriptOutput};
use tokio::io::AsyncWriteExt;

use crate::master::{MasterError, launch_master};
use crate::quote::command_line;
use crate::target::SshTarget;

/// Kills the process groups given as `PGID:EXECID` arguments: a group
/// whose leader still exists is killed only when the leader's command
/// line carries the exec id; a group without a leader cannot have been
/// recycled (Linux never hands out a pid equal to a live group id).
pub(crate) const KILL_SCRIPT: &str = r#"for spec in "$@"; do
  pg=${spec%%:*}; id=${spec#*:}
  case "$pg" in ''|*[!0-9]*) continue;; esac
  [ "$pg" -gt 1 ] || continue
  if [ -r "/proc/$pg/cmdline" ]; then
    tr '\000' '\n' < "/proc/$pg/cmdline" | grep -qx -- "$id" || continue
  fi
  kill -9 -"$pg" 2>/dev/null
done
exit 0"#;

/// A command that ran on the remote host, recorded so a reconnect can
/// reap it.
#[derive(Debug, Clone)]
struct LiveExec {
    generation: u64,
    pgid: u32,
    exec_id: String,
}

#[derive(Debug)]
struct Live {
    session: Arc<Session>,
    sftp: Option<Arc<Sftp>>,
}

/// One multiplexed connection to a remote host, re-established on demand.
#[derive(Debug)]
pub struct SshConnection {
    target: SshTarget,
    live: tokio::sync::Mutex<Option<Live>>,
    generation: AtomicU64,
    execs: Mutex<HashMap<u64, LiveExec>>,
    next_exec: AtomicU64,
}

/// Whether an openssh error means the connection (not the command) failed.
pub(crate) fn is_connection_error(err: &openssh::Error) -> bool {
    matches!(
        err,
        openssh::Error::Master(_)
            | openssh::Error::Connect(_)
            | openssh::Error::SshMux(_)
            | openssh::Error::Disconnected
            | openssh::Error::Ssh(_)
    )
}

fn describe(err: &openssh::Error) -> String {
    let mut text = err.to_string();
    let mut source = std::error::Error::source(err);
    while let Some(s) = source {
        text.push_str(": ");
        text.push_str(&s.to_string());
        source = s.source();
    }
    text
}

impl SshConnection {
    /// A connection to `target` (nothing is dialled until first use).
    pub fn new(target: SshTarget) -> Self {
        SshConnection {
            target,
            live: tokio::sync::Mutex::new(None),
            generation: AtomicU64::new(0),
            execs: Mutex::new(HashMap::new()),
            next_exec: AtomicU64::new(0),
        }
    }

    /// The target.
    pub fn target(&self) -> &SshTarget {
        &self.target
    }

    async fn dial(&self) -> Result<Session, SandboxError> {
        let started = std::time::Instant::now();
        let dir = launch_master(&self.target).await.map_err(|e| {
            let text = e.to_string();
            let hint = if matches!(e, MasterError::HostKey(_)) {
                " — the host key is unknown or does not match the known-hosts file; \
                 verify the host and add its key (ssh-keyscan), or set \
                 sandbox.ssh.strictHostKeyChecking: \"accept-new\" for a first connect"
            } else {
                ""
            };
            SandboxError::engine_unavailable(format!(
                "cannot connect to {}: {text}{hint}",
                self.target.display()
            ))
            .with_source(e)
        })?;
        let session = Session::new_native_mux(dir);
        tracing::debug!(target = %self.target.display(), elapsed_ms = started.elapsed().as_millis() as u64, "ssh master connected");
        Ok(session)
    }

    /// The live session, reconnecting when the master is gone.
    pub async fn session(&self) -> Result<Arc<Session>, SandboxError> {
        Ok(self.live_parts(false).await?.0)
    }

    /// The live SFTP channel (opened on first use per connection).
    pub async fn sftp(&self) -> Result<Arc<Sftp>, SandboxError> {
        self.live_parts(true)
            .await?
            .1
            .ok_or_else(|| SandboxError::io("the sftp channel was not opened".to_owned()))
    }

    async fn live_parts(
        &self,
        want_sftp: bool,
    ) -> Result<(Arc<Session>, Option<Arc<Sftp>>), SandboxError> {
        let mut guard = self.live.lock().await;
        let alive = match guard.as_ref() {
            Some(live) => live.session.check().await.is_ok(),
            None => false,
        };
        if !alive {
            if let Some(old) = guard.take() {
                tracing::info!(target = %self.target.display(), "ssh connection lost; reconnecting");
                drop(old);
            }
            let session = Arc::new(self.dial().await?);
            let generation = self.generation.fetch_add(1, Ordering::SeqCst) + 1;
            *guard = Some(Live {
                session: Arc::clone(&session),
                sftp: None,
            });
            self.reap_previous(&session, generation).await;
        }
        let Some(live) = guard.as_mut() else {
            return Err(SandboxError::engine_unavailable(format!(
                "no connection to {}",
                self.target.display()
            )));
        };
        if want_sftp && live.sftp.is_none() {
            let sftp =
                Sftp::from_clonable_session(Arc::clone(&live.session), SftpOptions::default())
                    .await
                    .map_err(|e| {
                        SandboxError::engine_unavailable(format!(
                            "cannot open the sftp channel to {}: {e} (the server needs an sftp \
                         Subsystem)",
                            self.target.display()
                        ))
                        .with_source(e)
                    })?;
            live.sftp = Some(Arc::new(sftp));
        }
        Ok((Arc::clone(&live.session), live.sftp.clone()))
    }

    /// Forget the SFTP channel (after it failed) so the next use opens a
    /// new one.
    pub(crate) async fn drop_sftp(&self) {
        if let Some(live) = self.live.lock().await.as_mut() {
            live.sftp = None;
        }
    }

    /// The current connection generation (bumped by every reconnect).
    pub(crate) fn generation(&self) -> u64 {
        self.generation.load(Ordering::SeqCst)
    }

    /// Record a running command; returns the key for [`Self::forget_exec`].
    pub(crate) fn record_exec(&self, generation: u64, pgid: u32, exec_id: &str) -> u64 {
        let key = self.next_exec.fetch_add(1, Ordering::SeqCst);
        self.execs
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(
                key,
                LiveExec {
                    generation,
                    pgid,
                    exec_id: exec_id.to_owned(),
                },
            );
        key
    }

    /// The command ended.
    pub(crate) fn forget_exec(&self, key: u64) {
        self.execs
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&key);
    }

    async fn reap_previous(&self, session: &Session, generation: u64) {
        let orphans: Vec<String> = {
            let mut execs = self.execs.lock().unwrap_or_else(PoisonError::into_inner);
            let stale: Vec<u64> = execs
                .iter()
                .filter(|(_, e)| e.generation < generation)
                .map(|(k, _)| *k)
                .collect();
            stale
                .into_iter()
                .filter_map(|k| execs.remove(&k))
                .map(|e| format!("{}:{}", e.pgid, e.exec_id))
                .collect()
        };
        if orphans.is_empty() {
            return;
        }
        tracing::info!(
            count = orphans.len(),
            "killing remote commands left by a dropped connection"
        );
        if let Err(e) = run_on(
            session,
            KILL_SCRIPT,
            &orphans,
            None,
            self.target.command_timeout,
        )
        .await
        {
            tracing::warn!("could not reap remote commands after a reconnect: {e}");
        }
    }

    /// Run `sh -c SCRIPT talon-sandbox ARGS...` on the remote host over
    /// the live connection (reconnecting first when needed), bounded by
    /// `timeout` (a timed-out script's local channel is closed; scripts
    /// run this way are the backend's own short ones).
    pub async fn run(
        &self,
        script: &str,
        args: &[String],
        stdin: Option<Vec<u8>>,
        timeout: Duration,
    ) -> Result<ScriptOutput, SandboxError> {
        let session = self.session().await?;
        run_on(&session, script, args, stdin, timeout).await
    }
}

/// Run a backend script on `session` (see [`SshConnection::run`]).
pub(crate) async fn run_on(
    session: &Session,
    script: &str,
    args: &[String],
    stdin: Option<Vec<u8>>,
    timeout: Duration,
) -> Result<ScriptOutput, SandboxError> {
    let mut all = vec![
        "-c".to_owned(),
        script.to_owned(),
        "talon-sandbox".to_owned(),
    ];
    all.extend(args.iter().cloned());
    let line = command_line("exec /bin/sh", &all)?;
    let work = async {
        let mut cmd = session.raw_command(&line);
        cmd.stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
        let mut child = cmd.spawn().await.map_err(|e| exec_error("start", e))?;
        if let (Some(data), Some(mut input)) = (stdin, child.stdin().take()) {
            // A script that exits without reading closes the pipe early.
            let _ = input.write_all(&data).await;
            let _ = input.shutdown().await;
        }
        let output = child
            .wait_with_output()
            .await
            .map_err(|e| exec_error("run", e))?;
        Ok::<_, SandboxError>(ScriptOutput {
            stdout: output.stdout,
            stderr: output.stderr,
            status: exit_status(output.status),
        })
    };
    tokio::time::timeout(timeout, work).await.map_err(|_| {
        SandboxError::timeout(format!(
            "a remote backend command ran past {:.1} s",
            timeout.as_secs_f64()
        ))
    })?
}

/// An openssh error met while doing `what` to a remote command, kept as
/// the source.
pub(crate) fn exec_error(what: &str, err: openssh::Error) -> SandboxError {
    let mapped = if is_connection_error(&err) {
        SandboxError::engine_unavailable(format!(
            "the ssh connection failed while trying to {what} a remote command: {}; the next \
             call reconnects",
            describe(&err)
        ))
    } else {
        SandboxError::exec(format!(
            "could not {what} a remote command: {}",
            describe(&err)
        ))
    };
    mapped.with_source(err)
}

pub(crate) fn exit_status(status: std::process::ExitStatus) -> ExitStatus {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(code), _) => ExitStatus::Code(code),
        (None, Some(sig)) => ExitStatus::Signal(sig),
        (None, None) => ExitStatus::Signal(9),
    }
}
