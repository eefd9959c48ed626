//! Command hooks: a program receives the event as JSON on stdin and
//! answers with JSON on stdout.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use serde::Deserialize;
use serde_json::{Map, Value, json};

use crate::after::{AfterToolCallEvent, AfterToolCallHandler};
use crate::approval::{ApprovalDecision, ApprovalScope, ApprovalSeverity};
use crate::before::BeforeToolCallHandler;
use crate::config::{CommandHookConfig, HooksConfig};
use crate::error::{HookError, HookErrorKind};
use crate::event::{ApprovalSpec, BeforeToolCallEvent, BeforeToolCallResult, HookContext};
use crate::exec_env::{ExecEnvEvent, ResolveExecEnvHandler};
use crate::process::{BoundedCommand, run_bounded};
use crate::registration::{DEFAULT_BEFORE_TOOL_CALL_TIMEOUT, Registration, ToolMatcher};
use crate::registry::Hooks;
use talon_exec_env::{EnvPolicy, process_env};

/// The most a hook may print on stdout (1 MiB); more is an unparseable
/// answer.
pub const MAX_HOOK_OUTPUT: usize = 1024 * 1024;

/// A `before_tool_call` answer exactly as a hook program may write it.
/// Unknown keys are refused, not ignored: a misspelt `"Block": true` must
/// fail the hook (and so block the call), not pass as "no decision".
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct CommandAnswer {
    /// Replacement parameters.
    #[serde(default)]
    params: Option<Map<String, Value>>,
    /// `true` blocks the call.
    #[serde(default)]
    block: Option<bool>,
    /// Why it was blocked.
    #[serde(default, alias = "block_reason")]
    block_reason: Option<String>,
    /// Ask a human first.
    #[serde(default, alias = "require_approval")]
    require_approval: Option<CommandApproval>,
}

/// The `requireApproval` object of a [`CommandAnswer`].
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct CommandApproval {
    title: String,
    description: String,
    #[serde(default)]
    scope: Option<ApprovalScope>,
    #[serde(default)]
    severity: Option<ApprovalSeverity>,
    #[serde(default, alias = "timeout_ms")]
    timeout_ms: Option<u64>,
    #[serde(default, alias = "allowed_decisions")]
    allowed_decisions: Option<Vec<ApprovalDecision>>,
    /// Accepted and ignored: the host stamps the hook's own id.
    #[serde(default, alias = "plugin_id")]
    plugin_id: Option<String>,
    /// OpenClaw's deprecated `timeoutBehavior`; accepted and ignored: an
    /// approval nobody resolves always denies.
    #[serde(default, alias = "timeout_behavior")]
    timeout_behavior: Option<String>,
}

impl CommandAnswer {
    /// Parse a hook program's trimmed, non-empty stdout.
    fn parse(answer: &str) -> Result<Self, HookError> {
        let value: Value = serde_json::from_str(answer)
            .map_err(|e| bad_answer(format!("unparseable answer (expected a JSON object): {e}")))?;
        if !value.is_object() {
            // serde would read a JSON array as a struct's fields in order.
            return Err(bad_answer("unparseable answer: expected a JSON object"));
        }
        serde_json::from_value(value).map_err(|e| bad_answer(format!("unparseable answer: {e}")))
    }

    /// The answer as the gate's result type.
    fn into_result(self, hook_id: &str) -> BeforeToolCallResult {
        BeforeToolCallResult {
            params: self.params,
            block: self.block,
            block_reason: self.block_reason,
            require_approval: self.require_approval.map(|a| a.into_spec(hook_id)),
        }
    }
}

impl CommandApproval {
    /// The approval as the gate's spec; `pluginId` and `timeoutBehavior`
    /// are dropped.
    fn into_spec(self, hook_id: &str) -> ApprovalSpec {
        let CommandApproval {
            title,
            description,
            scope,
            severity,
            timeout_ms,
            allowed_decisions,
            plugin_id,
            timeout_behavior,
        } = self;
        if plugin_id.as_deref().is_some_and(|id| id != hook_id) {
            tracing::debug!(
                hook = hook_id,
                "command hook's pluginId ignored; the host stamps its id"
            );
        }
        if let Some(behavior) = timeout_behavior {
            tracing::warn!(
                hook = hook_id,
                timeout_behavior = %behavior.escape_debug(),
                "command hook set the deprecated timeoutBehavior; ignored: an unresolved approval always denies"
            );
        }
        ApprovalSpec {
            title,
            description,
            scope,
            severity,
            timeout_ms,
            allowed_decisions,
            plugin_id: None,
            on_resolution: None,
            exec_command: None,
            exec_env: None,
            exec_pin: None,
        }
    }
}

/// Parse a `resolve_exec_env` answer: a JSON object whose values are all
/// strings. Anything else fails the hook.
fn parse_env_answer(answer: &str) -> Result<BTreeMap<String, String>, HookError> {
    const EXPECTED: &str = "expected a JSON object of strings";
    let value: Value = serde_json::from_str(answer)
        .map_err(|e| bad_answer(format!("unparseable answer ({EXPECTED}): {e}")))?;
    let Value::Object(map) = value else {
        return Err(bad_answer(format!("unparseable answer: {EXPECTED}")));
    };
    let mut env = BTreeMap::new();
    for (key, value) in map {
        match value {
            Value::String(v) => {
                env.insert(key, v);
            }
            other => {
                return Err(bad_answer(format!(
                    "unparseable answer: the value of `{}` is not a string ({EXPECTED}, got {})",
                    key.escape_debug(),
                    json_kind(&other)
                )));
            }
        }
    }
    Ok(env)
}

/// A [`HookErrorKind::Answer`] error.
fn bad_answer(message: impl Into<String>) -> HookError {
    HookError::new(HookErrorKind::Answer, message)
}

/// The JSON type name of `value`, for error messages (never the value).
fn json_kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// One configured program.
#[derive(Debug, Clone)]
pub struct CommandHook {
    id: String,
    program: String,
    args: Vec<String>,
    cwd: PathBuf,
    env: BTreeMap<String, String>,
    timeout: Duration,
}

impl CommandHook {
    /// A hook from its config under the default environment policy
    /// ([`CommandHook::from_config_with_env`]).
    pub fn from_config(config: &CommandHookConfig, base_dir: &Path) -> Self {
        Self::from_config_with_env(config, base_dir, &EnvPolicy::default())
    }

    /// A hook from its config; relative `cwd` and a relative program path
    /// containing `/` resolve against `base_dir` (the config file's
    /// directory). The program's environment is built by `env_policy`
    /// from this process's environment (so model keys, the gateway token
    /// and every other credential-looking or Talon variable stay out),
    /// then the hook's own configured `env`: a hook that needs a secret
    /// names it there.
    pub fn from_config_with_env(
        config: &CommandHookConfig,
        base_dir: &Path,
        env_policy: &EnvPolicy,
    ) -> Self {
        // A relative program path is resolved here, against an absolute
        // base: how the OS resolves it after the child's chdir varies.
        let absolute_base;
        let base_dir = if base_dir.is_absolute() {
            base_dir
        } else {
            absolute_base = std::env::current_dir()
                .map(|cwd| cwd.join(base_dir))
                .unwrap_or_else(|_| base_dir.to_path_buf());
            absolute_base.as_path()
        };
        let mut argv = config.command.iter();
        let program = argv.next().cloned().unwrap_or_default();
        let program = if program.contains('/') && Path::new(&program).is_relative() {
            base_dir.join(&program).to_string_lossy().into_owned()
        } else {
            program
        };
        let cwd = match &config.cwd {
            Some(dir) if Path::new(dir).is_absolute() => PathBuf::from(dir),
            Some(dir) => base_dir.join(dir),
            None => base_dir.to_path_buf(),
        };
        // A non-UTF-8 variable is simply not passed on; the hook's own
        // `env` still applies over the policy-built base.
        let mut env = env_policy.host_env(process_env());
        for (k, v) in config.env.iter().flatten() {
            env.insert(k.clone(), v.clone());
        }
        CommandHook {
            id: config.id.clone(),
            program,
            args: argv.cloned().collect(),
            cwd,
            env,
            timeout: config
                .timeout_ms
                .map_or(DEFAULT_BEFORE_TOOL_CALL_TIMEOUT, Duration::from_millis),
        }
    }

    /// The hook's id.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The program as it will be started: a path (made absolute against
    /// the config directory) or a bare name looked up on the `PATH`.
    pub(crate) fn program(&self) -> &str {
        &self.program
    }

    /// The working directory the program starts in.
    pub(crate) fn cwd(&self) -> &Path {
        &self.cwd
    }

    /// The `PATH` of the program's environment (a bare program name is
    /// looked up on it), `None` when it has none.
    pub(crate) fn search_path(&self) -> Option<&str> {
        self.env.get("PATH").map(String::as_str)
    }

    /// Run the program with `input`; the trimmed stdout on exit 0.
    async fn call(
        &self,
        hook: &str,
        input: &Value,
        ctx: &HookContext,
    ) -> Result<String, HookError> {
        let mut env = self.env.clone();
        env.insert("TALON_HOOK".into(), hook.to_owned());
        let cmd = BoundedCommand {
            program: self.program.clone(),
            args: self.args.clone(),
            cwd: Some(self.cwd.clone()),
            env,
            stdin: serde_json::to_vec(input)
                .map_err(|e| HookError::new(HookErrorKind::Input, e.to_string()))?,
            timeout: self.timeout,
            max_output: MAX_HOOK_OUTPUT,
        };
        let out = run_bounded(&cmd, ctx.abort.token()).await?;
        match out.code {
            Some(0) => {}
            Some(code) => {
                return Err(HookError::new(
                    HookErrorKind::Exit,
                    format!("exited with status {code}"),
                ));
            }
            None => return Err(HookError::new(HookErrorKind::Exit, "killed by a signal")),
        }
        if out.stdout_truncated {
            return Err(bad_answer(format!(
                "answer longer than {MAX_HOOK_OUTPUT} bytes"
            )));
        }
        if out.output_cut_short {
            // The leader exited 0; a leftover child kept stdout open past
            // the grace period and was killed. What it printed counts.
            tracing::debug!(hook = %self.id, "hook left a process holding its output; killed");
        }
        let text = String::from_utf8(out.stdout).map_err(|_| bad_answer("answer is not UTF-8"))?;
        Ok(text.trim().to_owned())
    }
}

#[async_trait::async_trait]
impl BeforeToolCallHandler for CommandHook {
    async fn before_tool_call(
        &self,
        event: &BeforeToolCallEvent,
        ctx: &HookContext,
    ) -> Result<Option<BeforeToolCallResult>, HookError> {
        let input = json!({"hook": "before_tool_call", "event": event, "context": ctx.to_json()});
        let answer = self.call("before_tool_call", &input, ctx).await?;
        if answer.is_empty() {
            return Ok(None);
        }
        let answer = CommandAnswer::parse(&answer)?;
        Ok(Some(answer.into_result(&self.id)))
    }
}

#[async_trait::async_trait]
impl AfterToolCallHandler for CommandHook {
    async fn after_tool_call(
        &self,
        event: &AfterToolCallEvent,
        ctx: &HookContext,
    ) -> Result<(), HookError> {
        let input = json!({"hook": "after_tool_call", "event": event, "context": ctx.to_json()});
        self.call("after_tool_call", &input, ctx).await.map(|_| ())
    }
}

#[async_trait::async_trait]
impl ResolveExecEnvHandler for CommandHook {
    async fn resolve_exec_env(
        &self,
        event: &ExecEnvEvent,
        ctx: &HookContext,
    ) -> Result<BTreeMap<String, String>, HookError> {
        let input = json!({"hook": "resolve_exec_env", "event": event, "context": ctx.to_json()});
        let answer = self.call("resolve_exec_env", &input, ctx).await?;
        if answer.is_empty() {
            return Ok(BTreeMap::new());
        }
        parse_env_answer(&answer)
    }
}

impl Hooks {
    /// Register every command hook of `config`; relative paths resolve
    /// against `base_dir`.
    pub fn add_command_hooks(&mut self, config: &HooksConfig, base_dir: &Path) {
        self.add_command_hooks_with_env(config, base_dir, &EnvPolicy::default());
    }

    /// [`Hooks::add_command_hooks`] with the programs' environments built
    /// by `env_policy` (the agent's `tools.exec.env`).
    pub fn add_command_hooks_with_env(
        &mut self,
        config: &HooksConfig,
        base_dir: &Path,
        env_policy: &EnvPolicy,
    ) {
        let hook = |c: &CommandHookConfig| {
            Arc::new(CommandHook::from_config_with_env(c, base_dir, env_policy))
        };
        let reg = |c: &CommandHookConfig| {
            let mut r = Registration::new(c.id.clone()).priority(c.priority.unwrap_or(0));
            // Core `group:` entries are expanded to their members here;
            // `HooksConfig::validate` refuses matchers that match nothing.
            if let Some(ids) = c.matcher_ids() {
                r = r.matcher(ToolMatcher::ids(ids));
            }
            // The program's own timeout fires first and kills its process
            // group; the registration's is a backstop a second later.
            let t = c
                .timeout_ms
                .map_or(DEFAULT_BEFORE_TOOL_CALL_TIMEOUT, Duration::from_millis);
            r.timeout(t + Duration::from_secs(1))
        };
        for c in &config.before_tool_call {
            self.on_before_tool_call(reg(c), hook(c));
        }
        for c in &config.after_tool_call {
            self.on_after_tool_call(reg(c), hook(c));
        }
        for c in &config.resolve_exec_env {
            self.on_resolve_exec_env(reg(c), hook(c));
        }
    }
}

#[cfg(test)]
#[path = "command_tests.rs"]
mod tests;
