//! Running commands on the remote host: [`SshLauncher`] (the `exec` /
//! `process` tools' [`ProcessLauncher`]) and the script runner behind
//! [`SandboxHandle::run_script`](talon_sandbox_core::SandboxHandle::run_script).
//!
//! Each command is one channel on the scope's multiplexed connection. The
//! remote login shell gets a single line, `exec /bin/sh -c WRAPPER
//! talon-exec ARGS...`, every argument single-quoted ([`shell_quote`]);
//! nothing from the request is ever spliced into a shell string. sshd
//! makes each channel's command a session and process-group leader, and
//! `exec` keeps that pid for the wrapper, so the pid the wrapper prints
//! first (stripped before the caller sees stdout) is the process group of
//! the command and everything it starts. `kill` sends `SIGKILL` to that
//! whole group from a second channel, after checking the group leader's
//! command line still carries this exec's random id.
//!
//! Environment variables travel as `NAME=value` arguments the wrapper
//! `export`s (names must be portable; values may hold anything but NUL).
//! `PATH` is never replaced: its value is prepended to the remote `PATH`.
//!
//! [`shell_quote`]: crate::shell_quote

use std::sync::Arc;
use std::time::Duration;

use openssh::{Session, Stdio};
use talon_sandbox_core::{
    ExitStatus, LaunchRequest, LaunchedProcess, PidLine, PidLineStep, ProcessControl,
    ProcessLauncher, SandboxError, ScriptOutput, WrappedState,
};
use tokio::io::{AsyncReadExt, AsyncWriteExt, DuplexStream};

use crate::connection::{KILL_SCRIPT, SshConnection, exec_error, exit_status};
use crate::quote::command_line;

/// Prints its pid (= the process group), enters the workdir, exports the
/// `NAME=value` arguments up to `--`, prepends `TALON_PREPEND_PATH`, runs
/// the rest. `$1` workdir, `$2` exec id, `$3` `1` to merge stderr.
const WRAPPER: &str = r#"echo "$$"
cd -- "$1" || { echo "talon: cannot enter the working directory $1" >&2; exit 126; }
shift 2
[ "$1" = 1 ] && exec 2>&1
shift
while [ "$#" -gt 0 ] && [ "$1" != -- ]; do export "$1"; shift; done
shift
if [ -n "${TALON_PREPEND_PATH-}" ]; then PATH="$TALON_PREPEND_PATH:$PATH"; export PATH; fi
"$@""#;

/// The env var an exec's `PATH` travels in.
pub use talon_sandbox_core::PREPEND_PATH_VAR;
pub use talon_sandbox_core::SCRIPT_MAX_OUTPUT_BYTES;
use talon_sandbox_core::WRAPPED_PIPE_CAPACITY as PIPE_CAPACITY;

/// What the workspace sync does around each command (upload before,
/// sync back after).
#[async_trait::async_trait]
pub trait ExecHooks: Send + Sync + std::fmt::Debug {
    /// Before a command starts (a failure refuses the command).
    async fn before_exec(&self) -> Result<(), SandboxError>;
    /// After a command ended (failures are logged by the hook).
    async fn after_exec(&self);
}

/// Runs commands on the remote host over the scope's connection.
#[derive(Debug, Clone)]
pub struct SshLauncher {
    conn: Arc<SshConnection>,
    workdir: String,
    hooks: Option<Arc<dyn ExecHooks>>,
}

fn random_id() -> String {
    let mut bytes = [0u8; 16];
    if getrandom::fill(&mut bytes).is_err() {
        // Fall back to time and address entropy; the id only has to be
        // unlikely to appear on another process's command line.
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or_default();
        bytes.copy_from_slice(&nanos.to_le_bytes());
    }
    let mut id = String::from("talon-");
    for b in bytes {
        id.push_str(&format!("{b:02x}"));
    }
    id
}

impl SshLauncher {
    /// A launcher whose commands start in `workdir` (a remote path).
    pub fn new(conn: Arc<SshConnection>, workdir: impl Into<String>) -> Self {
        SshLauncher {
            conn,
            workdir: workdir.into(),
            hooks: None,
        }
    }

    /// Run `hooks` around every command.
    pub fn with_hooks(mut self, hooks: Arc<dyn ExecHooks>) -> Self {
        self.hooks = Some(hooks);
        self
    }

    /// The connection.
    pub fn connection(&self) -> &Arc<SshConnection> {
        &self.conn
    }

    /// Start `argv` (program and arguments) under the wrapper.
    pub async fn spawn_argv(
        &self,
        argv: Vec<String>,
        env: &std::collections::BTreeMap<String, String>,
        workdir: Option<String>,
        merge_stderr: bool,
    ) -> Result<LaunchedProcess, SandboxError> {
        let exec_id = random_id();
        let mut args = vec![
            "-c".to_owned(),
            WRAPPER.to_owned(),
            "talon-exec".to_owned(),
            workdir.unwrap_or_else(|| self.workdir.clone()),
            exec_id.clone(),
            if merge_stderr { "1" } else { "0" }.to_owned(),
        ];
        args.extend(talon_sandbox_core::wrapped_env(env, true)?.0);
        args.push("--".to_owned());
        args.extend(argv);
        let line = command_line("exec /bin/sh", &args)?;
        if let Some(hooks) = &self.hooks {
            hooks.before_exec().await?;
        }
        let session = self.conn.session().await?;
        let generation = self.conn.generation();
        let mut cmd = Session::to_raw_command(Arc::clone(&session), line);
        cmd.stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = cmd.spawn().await.map_err(|e| exec_error("start", e))?;
        let stdin = child.stdin().take();
        let stdout = child.stdout().take();
        let stderr = child.stderr().take();
        let shared = Arc::new(ExecShared {
            conn: Arc::clone(&self.conn),
            exec_id,
            state: WrappedState::new(),
            hooks: self.hooks.clone(),
        });
        let (out_writer, out_reader) = tokio::io::duplex(PIPE_CAPACITY);
        let pump = stdout.map(|stdout| {
            tokio::spawn(pump_stdout(
                Arc::clone(&shared),
                stdout,
                out_writer,
                generation,
            ))
        });
        let waiter = Arc::clone(&shared);
        tokio::spawn(async move {
            let session = child.session();
            let result = child.wait().await;
            // The marker line (and the exec record) come first.
            let record = match pump {
                Some(pump) => pump.await.ok().flatten(),
                None => None,
            };
            // "Terminated without status" also means the master died:
            // tell them apart by asking the master.
            let killed = waiter.state.was_killed();
            let connection_lost = match &result {
                Ok(_) => false,
                Err(openssh::Error::RemoteProcessTerminated) if killed => false,
                Err(_) => session.check().await.is_err(),
            };
            drop(session);
            // A command whose channel died with the connection may still
            // run remotely: its record stays so the reconnect reaps it.
            if let Some(key) = record
                && !connection_lost
            {
                waiter.conn.forget_exec(key);
            }
            let status = match result {
                Ok(status) => Ok(exit_status(status)),
                Err(_) if connection_lost => Err(SandboxError::engine_unavailable(
                    "the ssh connection dropped while the remote command ran; it is killed \
                     when the next call reconnects"
                        .to_owned(),
                )),
                Err(openssh::Error::RemoteProcessTerminated) => Ok(ExitStatus::Signal(9)),
                Err(e) if waiter.state.was_killed() => {
                    tracing::debug!("remote command ended after kill: {e}");
                    Ok(ExitStatus::Signal(9))
                }
                Err(e) => Err(exec_error("wait for", e)),
            };
            if let Some(hooks) = &waiter.hooks {
                hooks.after_exec().await;
            }
            waiter.state.finish(status);
        });
        Ok(LaunchedProcess {
            stdin: stdin.map(|s| Box::pin(s) as talon_sandbox_core::ProcessInput),
            stdout: Box::pin(out_reader),
            stderr: if merge_stderr {
                None
            } else {
                stderr.map(|s| Box::pin(s) as talon_sandbox_core::ProcessOutput)
            },
            control: Box::new(SshProcess { shared }),
        })
    }

    /// `sh -c SCRIPT talon-sandbox ARGS...` with optional stdin; at
    /// `timeout` its remote process group is killed.
    pub async fn run_script(
        &self,
        script: &str,
        args: &[String],
        stdin: Option<Vec<u8>>,
        timeout: Duration,
    ) -> Result<ScriptOutput, SandboxError> {
        let argv = talon_sandbox_core::script_argv(script, args);
        let process = self
            .spawn_argv(argv, &Default::default(), None, false)
            .await?;
        talon_sandbox_core::collect_script(process, stdin, timeout, "on the remote host").await
    }
}

#[async_trait::async_trait]
impl ProcessLauncher for SshLauncher {
    fn id(&self) -> &str {
        "ssh"
    }

    async fn launch(&self, request: LaunchRequest) -> Result<LaunchedProcess, SandboxError> {
        let argv = vec!["/bin/sh".to_owned(), "-c".to_owned(), request.command];
        self.spawn_argv(argv, &request.env, request.workdir, request.pty)
            .await
    }
}

/// Read the wrapper's pid line, record the exec, forward the rest.
/// Returns the connection's record key.
async fn pump_stdout(
    shared: Arc<ExecShared>,
    mut from: openssh::ChildStdout,
    mut to: DuplexStream,
    generation: u64,
) -> Option<u64> {
    let mut chunk = vec![0u8; PIPE_CAPACITY];
    let mut record = None;
    let mut line = Some(PidLine::new());
    let mut consumer_gone = false;
    loop {
        let n = match from.read(&mut chunk).await {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        let rest;
        let data: &[u8] = match line.as_mut() {
            None => &chunk[..n],
            Some(reader) => match reader.feed(&chunk[..n]) {
                PidLineStep::More => continue,
                PidLineStep::Done { pgid, rest: after } => {
                    match pgid {
                        Some(pgid) => {
                            record =
                                Some(shared.conn.record_exec(generation, pgid, &shared.exec_id));
                        }
                        None => tracing::warn!(
                            "remote command printed no pid line; kill cannot reach its process group"
                        ),
                    }
                    shared.state.line_read(pgid);
                    line = None;
                    rest = after;
                    &rest
                }
            },
        };
        if !consumer_gone && !data.is_empty() && to.write_all(data).await.is_err() {
            consumer_gone = true;
        }
    }
    if let Some(reader) = line
        && !consumer_gone
    {
        let _ = to.write_all(&reader.into_pending()).await;
    }
    record
}

#[derive(Debug)]
struct ExecShared {
    conn: Arc<SshConnection>,
    exec_id: String,
    /// The pid-wrapper protocol's state (group, first line, status, kill).
    state: WrappedState,
    hooks: Option<Arc<dyn ExecHooks>>,
}

/// Wait / kill of one remote command.
#[derive(Debug)]
struct SshProcess {
    shared: Arc<ExecShared>,
}

#[async_trait::async_trait]
impl ProcessControl for SshProcess {
    fn pid(&self) -> Option<u32> {
        self.shared.state.pgid()
    }

    async fn wait(&self) -> Result<ExitStatus, SandboxError> {
        self.shared.state.wait("the remote command").await
    }

    async fn kill(&self) -> Result<(), SandboxError> {
        let state = &self.shared.state;
        if state.is_done() {
            return Ok(());
        }
        state.mark_killed();
        let pgid = match state.wait_pgid().await {
            Some(pgid) => pgid,
            // Ended meanwhile without naming a group: nothing to kill.
            None if state.is_done() => return Ok(()),
            None => {
                return Err(SandboxError::exec(
                    "the remote command never reported its process group; it cannot be killed \
                     remotely"
                        .to_owned(),
                ));
            }
        };
        let target = self.shared.conn.target().command_timeout;
        self.shared
            .conn
            .run(
                KILL_SCRIPT,
                &[format!("{pgid}:{}", self.shared.exec_id)],
                None,
                target,
            )
            .await?;
        Ok(())
    }
}
