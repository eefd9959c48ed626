//! Running commands inside a container: [`DockerLauncher`] (the `exec` /
//! `process` tools' [`ProcessLauncher`]) and the script runner behind
//! [`SandboxHandle::run_script`](talon_sandbox_core::SandboxHandle::run_script).
//!
//! Every command runs under a small wrapper shell (`WRAPPER`): the
//! engine starts each exec process as a session and process-group leader
//! in the container's PID namespace, so the pid the wrapper prints (first
//! line of stdout, stripped before the caller sees it) is the process group
//! of the command and of everything it starts. `kill` sends `SIGKILL` to
//! that whole group from a second exec (`kill -9 -PGID`), so a timeout or
//! an abort stops the process tree inside the container, not only the
//! local attach client. When the command ends on its own, the wrapper
//! kills what it left in the group before exiting, so the sweep a caller
//! asks for afterwards (`kill` after the end, as the `exec` tool does)
//! costs no second exec; after a wrapper that died by a signal it still
//! runs one. (A process that calls `setsid` itself leaves the group;
//! `--init` reaps what remains when it dies.)

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::Duration;

use bollard::Docker;
use bollard::container::LogOutput;
use bollard::exec::{CreateExecOptions, StartExecOptions, StartExecResults};
use futures::StreamExt;
use talon_sandbox_core::{
    ExitStatus, LaunchRequest, LaunchedProcess, PidLine, PidLineStep, ProcessControl,
    ProcessLauncher, SandboxError, ScriptOutput, SharedEventSink, WrappedState,
};
use tokio::io::{AsyncWrite, AsyncWriteExt, DuplexStream};
use tokio::sync::watch;

use crate::engine_error::{engine_error, is_transport, status_of, unavailable};
use crate::recycle::Health;
use crate::usage::UsageClock;

/// Prints the exec's pid (= its process group), runs the command, then
/// kills whatever the command left in the group (every process of group
/// `$$` but this shell, read from `/proc`, again until none is left) and
/// exits with the command's status. Only builtins and `/proc`: no tool from
/// the image, no second exec. A stat file is read whole (a process may put
/// a newline in its own name) and cut after the last `") "`; one that
/// cannot be read that way counts as left. When 20 rounds do not empty the
/// group (a process forking as fast as it is killed, or a name the sweep
/// cannot parse) the wrapper exits 255, so the caller's `kill` falls back
/// to the kernel's group kill from a second exec.
const WRAPPER: &str = r#"echo "$$"
"$@"
rc=$?
n=0
while [ "$n" -lt 20 ]; do
  n=$((n + 1))
  left=
  for d in /proc/[0-9]*; do
    p=${d#/proc/}
    [ "$p" = "$$" ] && continue
    s=
    { while IFS= read -r l || [ -n "$l" ]; do s="$s $l"; done < "$d/stat"; } 2>/dev/null || continue
    [ -n "$s" ] || continue
    case $s in
      *") "*) ;;
      *) left=1; continue ;;
    esac
    s=${s##*") "}
    set -- $s
    if [ "$3" = "$$" ] && [ "$1" != Z ]; then
      kill -9 "$p" 2>/dev/null
      left=1
    fi
  done
  [ -n "$left" ] || exit "$rc"
done
exit 255"#;
/// Exit statuses in `0..SWEPT_BELOW` come from the wrapper's own `exit`
/// after a sweep that emptied the group; from this up (or a negative code)
/// the wrapper may have died by a signal or given up, so `kill` still sends
/// the group kill.
const SWEPT_BELOW: i64 = 128;
/// Kills a process group, or the single process if it is not a group
/// leader (never fails: the group may be gone already).
const KILL_SCRIPT: &str = "kill -9 -\"$1\" 2>/dev/null || kill -9 \"$1\" 2>/dev/null; exit 0";
/// The env var an exec's `PATH` travels in (OpenClaw:
/// `OPENCLAW_PREPEND_PATH`); prepended after the login profile ran.
pub use talon_sandbox_core::PREPEND_PATH_VAR;
pub use talon_sandbox_core::SCRIPT_MAX_OUTPUT_BYTES;
use talon_sandbox_core::WRAPPED_PIPE_CAPACITY as PIPE_CAPACITY;
/// How long the engine may take to record an exit after the exec's
/// output ended.
const EXIT_RECORD_WAIT: Duration = Duration::from_secs(2);
/// Inspects repeated without a pause while the engine has not recorded
/// the exit yet.
const QUICK_REINSPECTS: u32 = 5;

/// Where an exec runs: the engine, the container and its defaults.
#[derive(Debug, Clone)]
pub(crate) struct ExecTarget {
    pub(crate) docker: Docker,
    pub(crate) addr: Arc<str>,
    pub(crate) container: Arc<str>,
    /// The engine's id of the container (its name until it is known):
    /// what a recycle removes, so a container created meanwhile under the
    /// same name is never touched.
    pub(crate) id: Arc<str>,
    pub(crate) scope_key: Arc<str>,
    pub(crate) workdir: Arc<str>,
    pub(crate) usage: UsageClock,
    /// Whether the container was recycled, and the engine kills in a row.
    pub(crate) health: Arc<Health>,
    pub(crate) events: Option<SharedEventSink>,
}

impl ExecTarget {
    fn map_exec_error(&self, what: &str, err: bollard::errors::Error) -> SandboxError {
        match status_of(&err) {
            Some(404) => SandboxError::gone(format!(
                "container {} no longer exists; ensure the sandbox again to recreate it",
                self.container
            )),
            Some(409) => SandboxError::gone(format!(
                "container {} is not running; ensure the sandbox again to start it",
                self.container
            )),
            _ => engine_error(&self.addr, what, err),
        }
    }

    /// Start `argv` under the pid wrapper; with `stdin` the exec's stdin
    /// is attached and handed out (without it the command reads EOF).
    pub(crate) async fn spawn(
        &self,
        argv: Vec<String>,
        env: Vec<String>,
        workdir: Option<String>,
        tty: bool,
        stdin: bool,
    ) -> Result<LaunchedProcess, SandboxError> {
        if self.health.is_recycled() {
            return Err(SandboxError::gone(format!(
                "container {} was removed after its commands were killed; ensure the sandbox \
                 again to get a fresh one",
                self.container
            )));
        }
        self.usage.touch(&self.container);
        let started_at = std::time::SystemTime::now();
        let mut cmd = vec![
            "/bin/sh".to_owned(),
            "-c".to_owned(),
            WRAPPER.to_owned(),
            "talon-exec".to_owned(),
        ];
        cmd.extend(argv);
        let what = format!("exec in container {}", self.container);
        let created = self
            .docker
            .create_exec(
                &self.container,
                CreateExecOptions {
                    attach_stdin: Some(stdin),
                    attach_stdout: Some(true),
                    attach_stderr: Some(true),
                    tty: Some(tty),
                    env: Some(env),
                    cmd: Some(cmd),
                    working_dir: Some(workdir.unwrap_or_else(|| self.workdir.to_string())),
                    ..Default::default()
                },
            )
            .await
            .map_err(|e| self.map_exec_error(&what, e))?;
        let started = self
            .docker
            .start_exec(
                &created.id,
                Some(StartExecOptions {
                    detach: false,
                    tty,
                    output_capacity: Some(PIPE_CAPACITY),
                }),
            )
            .await
            .map_err(|e| self.map_exec_error(&what, e))?;
        let StartExecResults::Attached { output, input } = started else {
            return Err(SandboxError::exec(format!(
                "the Docker engine did not attach to the exec in {}",
                self.container
            )));
        };
        tracing::debug!(container = %self.container, exec_id = %created.id, tty, "sandbox exec started");

        let shared = Arc::new(ExecShared {
            target: self.clone(),
            exec_id: created.id,
            started_at,
            state: WrappedState::new(),
            exit_code: AtomicI64::new(i64::MAX),
        });

        let stdin_writer = if stdin {
            let (writer, reader) = tokio::io::duplex(PIPE_CAPACITY);
            tokio::spawn(pump_stdin(
                reader,
                input,
                shared.state.subscribe_line(),
                shared.state.subscribe_done(),
                tty,
            ));
            Some(Box::pin(writer) as talon_sandbox_core::ProcessInput)
        } else {
            None
        };

        let (stdout_writer, stdout_reader) = tokio::io::duplex(PIPE_CAPACITY);
        let (stderr_writer, stderr_reader) = if tty {
            (None, None)
        } else {
            let (w, r) = tokio::io::duplex(PIPE_CAPACITY);
            (Some(w), Some(r))
        };
        tokio::spawn(pump_output(
            Arc::clone(&shared),
            output,
            stdout_writer,
            stderr_writer,
        ));

        Ok(LaunchedProcess {
            stdin: stdin_writer,
            stdout: Box::pin(stdout_reader),
            stderr: stderr_reader.map(|r| Box::pin(r) as talon_sandbox_core::ProcessOutput),
            control: Box::new(DockerProcess { shared }),
        })
    }

    /// `sh -c SCRIPT talon-sandbox ARGS...` with optional stdin, killed
    /// inside the container at `timeout`.
    pub(crate) async fn run_script(
        &self,
        script: &str,
        args: &[String],
        stdin: Option<Vec<u8>>,
        timeout: Duration,
    ) -> Result<ScriptOutput, SandboxError> {
        let argv = talon_sandbox_core::script_argv(script, args);
        let process = self
            .spawn(argv, Vec::new(), None, false, stdin.is_some())
            .await?;
        talon_sandbox_core::collect_script(
            process,
            stdin,
            timeout,
            &format!("in container {}", self.container),
        )
        .await
    }
}

/// Copy the caller's stdin to the exec, starting once the wrapper has
/// printed its pid line (a terminal would otherwise echo early input ahead
/// of it); close the exec's stdin when the caller closes or drops its end.
/// Under a PTY the engine ends the whole session when stdin closes, so
/// there the write side stays open until the process ends (send `\x04`
/// through the terminal for EOF).
async fn pump_stdin(
    mut from: DuplexStream,
    mut to: std::pin::Pin<Box<dyn AsyncWrite + Send>>,
    mut marker_seen: watch::Receiver<bool>,
    mut done: watch::Receiver<Option<Result<ExitStatus, SandboxError>>>,
    tty: bool,
) {
    tokio::select! {
        _ = marker_seen.wait_for(|seen| *seen) => {}
        _ = done.wait_for(Option::is_some) => return,
    }
    let _ = tokio::io::copy(&mut from, &mut to).await;
    if tty {
        let _ = done.wait_for(Option::is_some).await;
    } else {
        let _ = to.shutdown().await;
    }
}

/// Write to a consumer pipe; once the consumer is gone, drop its output
/// (the process keeps running until it ends or is killed).
async fn forward(slot: &mut Option<DuplexStream>, bytes: &[u8]) {
    if bytes.is_empty() {
        return;
    }
    if let Some(writer) = slot
        && writer.write_all(bytes).await.is_err()
    {
        *slot = None;
    }
}

async fn pump_output(
    shared: Arc<ExecShared>,
    mut output: std::pin::Pin<
        Box<dyn futures::Stream<Item = Result<LogOutput, bollard::errors::Error>> + Send>,
    >,
    stdout: DuplexStream,
    stderr: Option<DuplexStream>,
) {
    let mut out = Some(stdout);
    let mut err = stderr;
    let tty = err.is_none();
    let mut marker: Option<PidLine> = Some(PidLine::new());
    let mut stream_error = None;
    while let Some(item) = output.next().await {
        match item {
            Ok(LogOutput::StdOut { message } | LogOutput::Console { message }) => {
                match marker.as_mut() {
                    Some(line) => match line.feed(&message) {
                        PidLineStep::More => continue,
                        PidLineStep::Done { pgid, rest } => {
                            if pgid.is_none() {
                                tracing::warn!(container = %shared.target.container, "sandbox exec printed no pid line; kill cannot reach its process group");
                            }
                            shared.state.line_read(pgid);
                            marker = None;
                            forward(&mut out, &rest).await;
                        }
                    },
                    None => forward(&mut out, &message).await,
                }
            }
            Ok(LogOutput::StdErr { message }) => {
                if tty {
                    forward(&mut out, &message).await;
                } else {
                    forward(&mut err, &message).await;
                }
            }
            Ok(LogOutput::StdIn { .. }) => {}
            Err(e) => {
                stream_error = Some(e);
                break;
            }
        }
    }
    if let Some(line) = marker.take() {
        forward(&mut out, &line.into_pending()).await;
    }
    // EOF for the consumer before the (possibly slow) status lookup.
    drop(out);
    drop(err);
    let status = shared.finish(stream_error).await;
    shared.state.finish(status);
}

#[derive(Debug)]
struct ExecShared {
    target: ExecTarget,
    exec_id: String,
    /// When the exec was created (what an OOM lookup searches from).
    started_at: std::time::SystemTime,
    /// The pid-wrapper protocol's state (group, first line, status, kill).
    state: WrappedState,
    /// The exec's raw exit code once known (`i64::MAX` before).
    exit_code: AtomicI64,
}

impl ExecShared {
    /// The exit status once the output stream has ended.
    async fn finish(
        &self,
        stream_error: Option<bollard::errors::Error>,
    ) -> Result<ExitStatus, SandboxError> {
        let container = &self.target.container;
        if let Some(e) = &stream_error
            && is_transport(e)
        {
            return Err(unavailable(
                &self.target.addr,
                &format!("follow an exec in container {container} (the connection broke mid-run)"),
                e,
            ));
        }
        let what = format!("read the exit code of an exec in container {container}");
        // The output stream ends when the command's stdio closes; the
        // engine records the exit a moment later at most. So: one inspect,
        // and only when the engine still says running, a few more right
        // away (each round trip is itself the short wait), then after
        // growing pauses; never a fixed sleep.
        let begun = std::time::Instant::now();
        let mut pause = Duration::from_millis(1);
        let mut tries = 0u32;
        loop {
            let inspect = match self.target.docker.inspect_exec(&self.exec_id).await {
                Ok(inspect) => inspect,
                // The engine forgets the exec with its container.
                Err(e) if status_of(&e) == Some(404) => {
                    return Err(SandboxError::gone(format!(
                        "container {container} went away during the exec (killed or removed); \
                         ensure the sandbox again to get a new one"
                    )));
                }
                Err(e) => return Err(engine_error(&self.target.addr, &what, e)),
            };
            if inspect.running == Some(true) {
                let waited = begun.elapsed();
                if waited >= EXIT_RECORD_WAIT {
                    return Err(SandboxError::exec(format!(
                        "an exec in container {container} closed its output but the engine \
                         still reports it running after {} ms",
                        waited.as_millis()
                    )));
                }
                tries += 1;
                if tries > QUICK_REINSPECTS {
                    tokio::time::sleep(pause).await;
                    pause = (pause * 2).min(Duration::from_millis(50));
                }
                continue;
            }
            return match inspect.exit_code {
                Some(code) => {
                    self.exit_code.store(code, Ordering::SeqCst);
                    let killed = self.state.was_killed();
                    self.target.after_exit(code, killed, self.started_at).await;
                    Ok(self.status_from(code))
                }
                None => Err(SandboxError::exec(format!(
                    "the Docker engine reported no exit code for an exec in container {container}"
                ))),
            };
        }
    }

    fn status_from(&self, code: i64) -> ExitStatus {
        // The engine reports death by signal N as 128 + N.
        if self.state.was_killed() && (129..=192).contains(&code) {
            ExitStatus::Signal((code - 128) as i32)
        } else {
            ExitStatus::Code(i32::try_from(code).unwrap_or(i32::MAX))
        }
    }

    async fn send_kill(&self, pgid: u32) -> Result<(), SandboxError> {
        let target = &self.target;
        let what = format!("kill a process group in container {}", target.container);
        let created = match target
            .docker
            .create_exec(
                &target.container,
                CreateExecOptions {
                    attach_stdout: Some(true),
                    attach_stderr: Some(true),
                    cmd: Some(vec![
                        "/bin/sh".to_owned(),
                        "-c".to_owned(),
                        KILL_SCRIPT.to_owned(),
                        "talon-kill".to_owned(),
                        pgid.to_string(),
                    ]),
                    ..Default::default()
                },
            )
            .await
        {
            Ok(created) => created,
            // No container or not running: nothing left to kill.
            Err(e) if matches!(status_of(&e), Some(404 | 409)) => return Ok(()),
            Err(e) => return Err(engine_error(&target.addr, &what, e)),
        };
        match target.docker.start_exec(&created.id, None).await {
            Ok(StartExecResults::Attached { mut output, .. }) => {
                while let Some(item) = output.next().await {
                    if let Err(e) = item {
                        return Err(engine_error(&target.addr, &what, e));
                    }
                }
                Ok(())
            }
            Ok(StartExecResults::Detached) => Ok(()),
            Err(e) if matches!(status_of(&e), Some(404 | 409)) => Ok(()),
            Err(e) => Err(engine_error(&target.addr, &what, e)),
        }
    }
}

/// Wait / kill for one exec.
#[derive(Debug)]
struct DockerProcess {
    shared: Arc<ExecShared>,
}

#[async_trait::async_trait]
impl ProcessControl for DockerProcess {
    fn pid(&self) -> Option<u32> {
        self.shared.state.pgid()
    }

    async fn wait(&self) -> Result<ExitStatus, SandboxError> {
        self.shared
            .state
            .wait(&format!(
                "an exec in container {}",
                self.shared.target.container
            ))
            .await
    }

    async fn kill(&self) -> Result<(), SandboxError> {
        // Over already, and through the wrapper's own exit: it killed what
        // was left of the group before exiting, so there is nothing to
        // sweep (and no second exec to pay for).
        let state = &self.shared.state;
        if state.ended_with_status()
            && (0..SWEPT_BELOW).contains(&self.shared.exit_code.load(Ordering::SeqCst))
        {
            return Ok(());
        }
        state.mark_killed();
        match state.wait_pgid().await {
            // Even after the leader exited, background members of its
            // group may still run: kill the group regardless.
            Some(pgid) => self.shared.send_kill(pgid).await,
            None if state.is_done() => Ok(()),
            None => Err(SandboxError::exec(format!(
                "cannot kill an exec in container {}: it never reported its process group",
                self.shared.target.container
            ))),
        }
    }
}

/// The exec environment for a request: every key as given except `PATH`,
/// which travels as [`PREPEND_PATH_VAR`] and is prepended to the login
/// shell's `PATH` (OpenClaw's rule: `-e PATH` would replace the image's
/// PATH, and `/etc/profile` would reset it anyway).
pub(crate) fn exec_env(
    env: &BTreeMap<String, String>,
    command: &str,
) -> Result<(Vec<String>, String), SandboxError> {
    let (vars, prepend) = talon_sandbox_core::wrapped_env(env, false)?;
    let command = if prepend {
        format!(
            "export PATH=\"${{{PREPEND_PATH_VAR}}}:$PATH\"; unset {PREPEND_PATH_VAR}; {command}"
        )
    } else {
        command.to_owned()
    };
    Ok((vars, command))
}

/// Runs the `exec` and `process` tools' commands in one container
/// (`/bin/sh -lc COMMAND`, workdir `/workspace` unless the request says
/// otherwise).
#[derive(Debug, Clone)]
pub struct DockerLauncher {
    pub(crate) target: ExecTarget,
}

impl DockerLauncher {
    /// The container the commands run in.
    pub fn container(&self) -> &str {
        &self.target.container
    }
}

#[async_trait::async_trait]
impl ProcessLauncher for DockerLauncher {
    fn id(&self) -> &str {
        "docker"
    }

    async fn launch(&self, request: LaunchRequest) -> Result<LaunchedProcess, SandboxError> {
        if let Some(dir) = &request.workdir
            && (!dir.starts_with('/') || dir.contains('\0'))
        {
            return Err(SandboxError::exec(format!(
                "working directory {dir:?} must be an absolute path inside the container \
                 (e.g. {})",
                self.target.workdir
            )));
        }
        let (env, command) = exec_env(&request.env, &request.command)?;
        self.target
            .spawn(
                vec!["/bin/sh".to_owned(), "-lc".to_owned(), command],
                env,
                request.workdir,
                request.pty,
                true,
            )
            .await
    }
}

#[cfg(test)]
#[path = "exec_tests.rs"]
mod tests;
