//! The `exec` tool.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use talon_exec_env::{
    EnvPolicy, ModelEnvCheck, ModelEnvRefusal, RunPlace, check_model_env, merge_exec_env,
};
use talon_hooks::HookContext;
use talon_hooks::exec_env::{ExecEnvEvent, ExecEnvHooks, ExecHost, ResolvedExecEnv};
use talon_sandbox_core::{
    ExitStatus, LaunchRequest, ProcessLauncher, SandboxError, SandboxErrorKind,
};
use talon_tool_catalog::{
    ApprovalPin, CancelExt, CancellationToken, Canceller, ContentBlock, Section, Tool, ToolCall,
    ToolContext, ToolError, ToolErrorCode, ToolFamily, ToolResult, ToolSpec,
};

use crate::exec::config::{ExecConfig, ExecConfigError};
use crate::exec::params::{self, ExecParams, host_name};
use crate::process::registry::ProcessRegistry;
use crate::process::session::{KillReason, Session, SessionInfo, Snapshot, unix_ms};

/// The markers every command's environment gets (OpenClaw sets
/// `OPENCLAW_CLI=1` and `OPENCLAW_SHELL=exec`; `TALON_CLI=1` is Talon's
/// own). Calls and plugins cannot set these names.
const MARKERS: [(&str, &str); 3] = [
    ("OPENCLAW_CLI", "1"),
    ("OPENCLAW_SHELL", "exec"),
    ("TALON_CLI", "1"),
];
/// How much output a "still running" result shows.
const RUNNING_TAIL_BYTES: usize = 2_000;
/// How long an aborted call waits for its process group to be reaped.
const ABORT_WAIT: Duration = Duration::from_secs(5);

/// The `exec` spec: what the model sees before the tool is constructed.
/// Only the parameters this implementation honours are in the schema.
pub fn exec_spec() -> ToolSpec {
    let base = ToolSpec::core("exec").unwrap_or_else(|| {
        ToolSpec::new(
            "exec",
            ToolFamily::Core {
                section: Section::Runtime,
            },
        )
    });
    base.with_description(
        "Run a shell command (/bin/sh -c). Output is returned when it finishes; a command \
         still running after yieldMs moves to the background and is continued with the \
         process tool (poll, log, write, kill).",
    )
    .with_parameters(json!({
        "type": "object",
        "properties": {
            "command": {"type": "string", "description": "Shell command to run."},
            "workdir": {"type": "string", "description": "Working directory inside the workspace (relative or absolute); omit for the workspace root."},
            "env": {
                "type": "object",
                "additionalProperties": {"type": "string"},
                "description": "Environment variables to set. PATH (on the host), loader, interpreter-startup, proxy, TLS-verification and credential variables are refused (in any case), as are credential-looking names in a sandbox."
            },
            "timeout": {"type": "number", "description": "Kill the command (and everything it started) after this many seconds."},
            "yieldMs": {"type": "number", "description": "Milliseconds to wait before moving the command to the background (default 10000)."},
            "background": {"type": "boolean", "description": "Start in the background at once and return a session id."},
            "pty": {"type": "boolean", "description": "Run in a pseudo-terminal (stdout and stderr merged), for CLIs that need a TTY."}
        },
        "required": ["command"]
    }))
}

/// The `exec` tool: runs commands through a [`ProcessLauncher`] (the host
/// or a sandbox) and hands long runs to the [`ProcessRegistry`] as
/// background sessions.
///
/// Construction is cheap (no process, task or file access); the spec is
/// also available without constructing the tool, from [`exec_spec`].
///
/// Each call: parameters are read leniently; the call's `env` goes through
/// [`check_model_env`] (OpenClaw's override rules in any case, TLS
/// verification switches, and credential-looking names when sandboxed: a
/// refused key fails the call, naming every refused key, and nothing
/// runs); the environment policy's `set` variables come first, the call's
/// `env` over them and the `resolve_exec_env` handlers' filtered output on
/// top; the `OPENCLAW_CLI=1`, `OPENCLAW_SHELL=exec`
/// and `TALON_CLI=1` markers are set; the command is launched and
/// supervised (timeout, kill requests, head-and-tail output cap). When it
/// ends, its whole process group is killed, so nothing it started in the
/// background outlives the call (or the background session).
///
/// ```
/// use std::sync::Arc;
/// use talon_tool_catalog::{CancellationToken, Tool, ToolCall, ToolContext};
/// use talon_tools::{ExecConfig, ExecTool, HostLauncher, ProcessRegistry, ProcessTool, RegistryOptions};
///
/// let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
/// rt.block_on(async {
///     let workspace = tempfile::tempdir().unwrap();
///     let config = ExecConfig::default();
///     let registry = Arc::new(ProcessRegistry::new(RegistryOptions::from_config(&config)));
///     let launcher = Arc::new(HostLauncher::new(workspace.path()).unwrap());
///     let exec = ExecTool::new(launcher, Arc::clone(&registry), config).unwrap();
///     let _process = ProcessTool::new(Arc::clone(&registry));
///     let params = serde_json::json!({"command": "echo hi"});
///     let call = ToolCall {
///         id: "c1".into(),
///         name: "exec".into(),
///         params: params.as_object().unwrap().clone(),
///     };
///     let ctx = ToolContext::new("main", "agent:main:main");
///     let result = exec.execute(&call, &ctx, &CancellationToken::new()).await.unwrap();
///     assert_eq!(result.text(), "hi\n");
///     assert_eq!(result.details["exitCode"], 0);
///     registry.shutdown().await;
/// });
/// ```
pub struct ExecTool {
    spec: ToolSpec,
    launcher: Arc<dyn ProcessLauncher>,
    registry: Arc<ProcessRegistry>,
    config: ExecConfig,
    env_policy: Arc<EnvPolicy>,
    hooks: Option<Arc<ExecEnvHooks>>,
    host: ExecHost,
    allow_background: bool,
}

impl std::fmt::Debug for ExecTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ExecTool")
            .field("launcher", &self.launcher.id())
            .field("host", &self.host)
            .field("config", &self.config)
            .field("allow_background", &self.allow_background)
            .finish_non_exhaustive()
    }
}

impl ExecTool {
    /// The tool over `launcher`, sharing `registry` with the `process`
    /// tool. The `resolve_exec_env` host is `gateway` when the launcher's
    /// id is `host` and `sandbox` otherwise. Fails when `config` is out of
    /// range ([`ExecConfig::validate`]).
    pub fn new(
        launcher: Arc<dyn ProcessLauncher>,
        registry: Arc<ProcessRegistry>,
        config: ExecConfig,
    ) -> Result<Self, ExecConfigError> {
        config.validate()?;
        let host = if launcher.id() == "host" {
            ExecHost::Gateway
        } else {
            ExecHost::Sandbox
        };
        Ok(ExecTool {
            spec: exec_spec(),
            launcher,
            registry,
            config,
            env_policy: Arc::new(EnvPolicy::default()),
            hooks: None,
            host,
            allow_background: true,
        })
    }

    /// Builder: the environment policy whose `set` variables every command
    /// gets (the launcher builds the inherited base with the same policy).
    pub fn with_env_policy(mut self, policy: Arc<EnvPolicy>) -> Self {
        self.env_policy = policy;
        self
    }

    /// Builder: run the `resolve_exec_env` plugin handlers for every call.
    pub fn with_env_hooks(mut self, hooks: Arc<ExecEnvHooks>) -> Self {
        self.hooks = Some(hooks);
        self
    }

    /// Builder: override the host reported to `resolve_exec_env`.
    pub fn with_exec_host(mut self, host: ExecHost) -> Self {
        self.host = host;
        self
    }

    /// Builder: whether commands may move to the background. Turn it off
    /// when the run has no `process` tool: every call then runs to
    /// completion (or its timeout), ignoring `yieldMs` and `background`,
    /// as OpenClaw does.
    pub fn with_background(mut self, allow: bool) -> Self {
        self.allow_background = allow;
        self
    }

    /// The canonical directory the command starts in, after checking the
    /// approval's binding against it (and the files it pinned).
    fn pinned_workdir(&self, pin: &ApprovalPin, params: &ExecParams) -> Result<String, ToolError> {
        let resolved = self
            .launcher
            .host_workdir(params.workdir.as_deref())
            .ok_or_else(|| {
                ToolError::new(
                    ToolErrorCode::ApprovalPinFailed,
                    format!(
                        "the approval of this command is bound to a host directory, but the {} \
                         launcher cannot resolve one; nothing was run",
                        self.launcher.id()
                    ),
                )
            })?
            .map_err(|e| launch_error(e, params, self.launcher.id()))?;
        pin.verify_before_run(&resolved)?;
        resolved.to_str().map(str::to_owned).ok_or_else(|| {
            ToolError::new(
                ToolErrorCode::ApprovalPinFailed,
                format!(
                    "the working directory {} is not UTF-8; nothing was run",
                    resolved.display()
                ),
            )
        })
    }

    /// Runs the `resolve_exec_env` handlers, if any.
    async fn plugin_env(&self, ctx: &ToolContext, abort: &CancellationToken) -> ResolvedExecEnv {
        let Some(hooks) = self.hooks.as_ref().filter(|h| !h.is_empty()) else {
            return ResolvedExecEnv::default();
        };
        let event = ExecEnvEvent::new(ctx.session_key.clone(), self.host);
        let mut hook_ctx = HookContext::new(ctx.agent_id.clone(), ctx.session_key.clone());
        hook_ctx.abort = Canceller::from(abort.clone());
        hooks.resolve(&event, &hook_ctx).await
    }
}

/// Refuses a call whose `env` has keys the policy refuses, naming every
/// key and why.
fn env_rejection(check: &ModelEnvCheck) -> ToolError {
    let mut parts: Vec<String> = Vec::new();
    let mut reasons: Vec<ModelEnvRefusal> = check.refused.iter().map(|r| r.reason).collect();
    reasons.dedup();
    for reason in reasons {
        let keys: Vec<String> = check
            .refused
            .iter()
            .filter(|r| r.reason == reason)
            .map(|r| format!("{:?}", r.key))
            .collect();
        parts.push(format!("{} ({})", keys.join(", "), reason.explain()));
    }
    ToolError::input(
        "env",
        format!(
            "env overrides refused: {}; remove them and call again (nothing was run)",
            parts.join("; ")
        ),
    )
    .with_code(ToolErrorCode::ExecEnvRejected)
}

/// A short display name: the command's first two words.
fn display_name(command: &str) -> String {
    let name: String = command
        .split_whitespace()
        .take(2)
        .collect::<Vec<_>>()
        .join(" ");
    if name.chars().count() > 48 {
        let mut short: String = name.chars().take(47).collect();
        short.push('…');
        short
    } else {
        name
    }
}

/// Kills and forgets a foreground session whose call went away before it
/// finished (dropped future); disarmed once the call returns normally.
struct ForegroundGuard<'a> {
    session: &'a Arc<Session>,
    registry: &'a ProcessRegistry,
    armed: bool,
}

impl Drop for ForegroundGuard<'_> {
    fn drop(&mut self) {
        if self.armed {
            self.session.request_kill(KillReason::Cancelled);
            self.registry.forget(&self.session.info.id);
        }
    }
}

#[async_trait::async_trait]
impl Tool for ExecTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    async fn execute(
        &self,
        call: &ToolCall,
        ctx: &ToolContext,
        abort: &CancellationToken,
    ) -> Result<ToolResult, ToolError> {
        abort.check()?;
        if ctx.sandboxed && self.host == ExecHost::Gateway {
            // Fail closed: a sandboxed session must never run on the host
            // because the runtime wired the wrong launcher.
            return Err(ToolError::new(
                ToolErrorCode::ExecHostRefused,
                "this session is sandboxed but this exec tool runs commands on the gateway host; \
                 refusing (the runtime must give sandboxed sessions an exec tool over the sandbox launcher)",
            ));
        }
        let params = params::parse(&call.params, &self.config, self.host)?;
        let place = if self.host == ExecHost::Gateway {
            RunPlace::Host
        } else {
            RunPlace::Sandbox
        };
        let checked = check_model_env(&params.env, place);
        if checked.is_refused() {
            return Err(env_rejection(&checked));
        }
        if self.registry.is_closed() {
            return Err(ToolError::new(
                ToolErrorCode::ExecRegistryClosed,
                "the exec registry is shut down (the gateway is stopping); nothing was run",
            ));
        }
        let limit = self.registry.options().max_running_per_key;
        let running = self.registry.running_for(&ctx.session_key);
        if running >= limit {
            return Err(ToolError::new(
                ToolErrorCode::ExecSessionLimit,
                format!(
                    "{running} commands are already running in this session (the limit is {limit}); \
                     wait for some to finish or stop them with the process tool (list, kill), then call again"
                ),
            ));
        }
        let plugin = self.plugin_env(ctx, abort).await;
        abort.check()?;
        let mut requested = self.env_policy.set_vars().clone();
        requested.extend(checked.accepted);
        let mut env = merge_exec_env(&requested, &plugin.env);
        for (key, value) in MARKERS {
            env.insert(key.to_owned(), value.to_owned());
        }
        // An approved command starts only if what its approval was bound to
        // still holds, checked last, right before the launch; it then
        // starts in the canonical directory that was checked.
        let workdir = match &ctx.approval_pin {
            Some(pin) => Some(self.pinned_workdir(pin, &params)?),
            None => params.workdir.clone(),
        };
        let request = LaunchRequest {
            command: params.command.clone(),
            workdir,
            env,
            pty: params.pty,
        };
        let launched = self
            .launcher
            .launch(request)
            .await
            .map_err(|e| launch_error(e, &params, self.launcher.id()))?;
        let info = SessionInfo {
            id: self.registry.new_id(),
            owner: ctx.session_key.clone(),
            name: display_name(&params.command),
            command: params.command.clone(),
            workdir: params.workdir.clone(),
            launcher: self.launcher.id().to_owned(),
            pty: params.pty,
            pid: launched.control.pid(),
            started: std::time::Instant::now(),
            started_at_ms: unix_ms(),
            timeout: params.timeout,
        };
        let session = Arc::new(Session::new(
            info,
            launched.stdin,
            self.registry.options().max_output_bytes,
        ));
        tokio::spawn(Arc::clone(&session).supervise(
            launched.control,
            launched.stdout,
            launched.stderr,
        ));
        if !self.registry.insert(Arc::clone(&session)) {
            return Err(ToolError::new(
                ToolErrorCode::ExecRegistryClosed,
                "the exec registry is shut down; the command was killed",
            ));
        }
        let extra = Extra {
            plugin: &plugin,
            host: self.host,
        };
        if self.allow_background && params.background {
            session.set_backgrounded();
            return Ok(running_result(&session, &extra, None));
        }
        let mut guard = ForegroundGuard {
            session: &session,
            registry: &self.registry,
            armed: true,
        };
        let yield_window = self.allow_background.then_some(params.yield_window);
        let outcome = tokio::select! {
            () = session.wait_finished() => Outcome::Finished,
            () = sleep_or_forever(yield_window) => Outcome::Yielded,
            () = abort.cancelled() => Outcome::Aborted,
        };
        guard.armed = false;
        match outcome {
            Outcome::Finished => {
                self.registry.forget(&session.info.id);
                Ok(finished_result(&session, &extra))
            }
            Outcome::Yielded => {
                session.set_backgrounded();
                Ok(running_result(&session, &extra, yield_window))
            }
            Outcome::Aborted => {
                session.request_kill(KillReason::Abort);
                let _ = tokio::time::timeout(ABORT_WAIT, session.wait_finished()).await;
                self.registry.forget(&session.info.id);
                Err(abort.abort_error())
            }
        }
    }
}

enum Outcome {
    Finished,
    Yielded,
    Aborted,
}

async fn sleep_or_forever(window: Option<Duration>) {
    match window {
        Some(window) => tokio::time::sleep(window).await,
        None => std::future::pending().await,
    }
}

/// A launcher refusal as a tool error keeping the sandbox code. A
/// configuration refusal is the model's `workdir` when it gave one (and
/// keeps the launcher's own message); anything else says which launcher.
fn launch_error(e: SandboxError, params: &ExecParams, launcher: &str) -> ToolError {
    let config = e.kind() == SandboxErrorKind::Config;
    let err = crate::sandbox_error(e);
    if config {
        match params.workdir {
            Some(_) => err.with_param("workdir"),
            None => err,
        }
    } else {
        err.context(format_args!("cannot start the command on {launcher}"))
    }
}

/// What a result reports besides the session.
struct Extra<'a> {
    plugin: &'a ResolvedExecEnv,
    host: ExecHost,
}

fn signal_name(signal: i32) -> String {
    match nix::sys::signal::Signal::try_from(signal) {
        Ok(s) => format!("{signal} ({})", s.as_str()),
        Err(_) => signal.to_string(),
    }
}

fn base_details(
    session: &Session,
    snap: &Snapshot,
    extra: &Extra<'_>,
) -> serde_json::Map<String, Value> {
    let mut d = serde_json::Map::new();
    d.insert("status".into(), json!(snap.status()));
    d.insert("sessionId".into(), json!(session.info.id));
    d.insert("pid".into(), json!(session.info.pid));
    d.insert("host".into(), json!(host_name(extra.host)));
    d.insert("launcher".into(), json!(session.info.launcher));
    d.insert("pty".into(), json!(session.info.pty));
    if let Some(workdir) = &session.info.workdir {
        d.insert("workdir".into(), json!(workdir));
    }
    d.insert(
        "durationMs".into(),
        json!(u64::try_from(snap.runtime.as_millis()).unwrap_or(u64::MAX)),
    );
    d.insert("totalBytes".into(), json!(snap.total_bytes));
    d.insert("omittedBytes".into(), json!(snap.omitted_bytes));
    if !extra.plugin.dropped.is_empty() {
        d.insert(
            "pluginEnvDropped".into(),
            json!(
                extra
                    .plugin
                    .dropped
                    .iter()
                    .map(|k| json!({"key": k.key, "reason": k.reason.as_str()}))
                    .collect::<Vec<_>>()
            ),
        );
    }
    if !extra.plugin.env.is_empty() {
        // Keys only: plugin values may be credentials.
        d.insert(
            "pluginEnvKeys".into(),
            json!(extra.plugin.env.keys().collect::<Vec<_>>()),
        );
    }
    if !extra.plugin.failed.is_empty() {
        d.insert("pluginEnvFailed".into(), json!(extra.plugin.failed));
    }
    d
}

/// The end-state fields shared by `exec` and `process` results, and the
/// one-line footer that says how it ended.
pub(crate) fn end_fields(
    snap: &Snapshot,
    d: &mut serde_json::Map<String, Value>,
) -> Option<String> {
    let finish = snap.finish.as_ref()?;
    let (code, signal) = match finish.status {
        Some(ExitStatus::Code(c)) => (Some(c), None),
        Some(ExitStatus::Signal(s)) => (None, Some(s)),
        None => (None, None),
    };
    d.insert("exitCode".into(), json!(code));
    d.insert("signal".into(), json!(signal));
    d.insert(
        "timedOut".into(),
        json!(finish.killed == Some(KillReason::Timeout)),
    );
    if let Some(reason) = finish.killed {
        d.insert("killedBy".into(), json!(reason.as_str()));
    }
    if let Some(error) = &finish.error {
        d.insert("error".into(), json!(error));
    }
    let how = match (finish.killed, finish.status) {
        (Some(KillReason::Timeout), _) => {
            Some("timed out; it and every process it started were killed".to_owned())
        }
        (Some(KillReason::User), _) => Some("was killed on request".to_owned()),
        (Some(KillReason::Abort | KillReason::Cancelled), _) => {
            Some("was cancelled and killed".to_owned())
        }
        (Some(KillReason::Shutdown), _) => {
            Some("was killed because the gateway is shutting down".to_owned())
        }
        (None, Some(ExitStatus::Code(0))) => None,
        (None, Some(ExitStatus::Code(c))) => Some(format!("exited with code {c}")),
        (None, Some(ExitStatus::Signal(s))) => {
            Some(format!("was killed by signal {}", signal_name(s)))
        }
        (None, None) => Some(format!(
            "ended without an exit status: {}",
            finish.error.as_deref().unwrap_or("unknown")
        )),
    };
    how.map(|h| format!("(Command {h})"))
}

fn finished_result(session: &Session, extra: &Extra<'_>) -> ToolResult {
    let snap = session.snapshot();
    let mut details = base_details(session, &snap, extra);
    // A foreground run is forgotten once it returns; its id is no handle.
    details.remove("sessionId");
    let footer = end_fields(&snap, &mut details);
    let output = session.output();
    let mut text = if output.is_empty() {
        "(no output)".to_owned()
    } else {
        output.render()
    };
    if let Some(footer) = footer {
        if !text.ends_with('\n') {
            text.push('\n');
        }
        text.push('\n');
        text.push_str(&footer);
    }
    ToolResult {
        content: vec![ContentBlock::Text { text }],
        details: Value::Object(details),
        status: snap.result_status(),
    }
}

fn running_result(session: &Session, extra: &Extra<'_>, waited: Option<Duration>) -> ToolResult {
    let snap = session.snapshot();
    let mut details = base_details(session, &snap, extra);
    let tail = session.tail(RUNNING_TAIL_BYTES).render();
    details.insert("tail".into(), json!(tail));
    let id = &session.info.id;
    let when = match waited {
        Some(w) => format!("is still running after {}ms", w.as_millis()),
        None => "was started in the background".to_owned(),
    };
    let pid = session
        .info
        .pid
        .map_or_else(String::new, |p| format!(", pid {p}"));
    let mut text = format!(
        "Command {when} (session {id}{pid}). It keeps running in the background; use the process \
         tool with sessionId \"{id}\": action \"poll\" for new output and the exit status, \"log\" \
         for the whole output, \"write\" to send input, \"kill\" to stop it."
    );
    if !tail.is_empty() {
        text.push_str("\n\nOutput so far (tail):\n");
        text.push_str(&tail);
    }
    ToolResult {
        content: vec![ContentBlock::Text { text }],
        details: Value::Object(details),
        status: talon_tool_catalog::ResultStatus::Ok,
    }
}
