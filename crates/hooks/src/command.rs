//! Command hooks: a program receives the event as JSON on stdin and
//! answers with JSON on stdout.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};

use crate::after::{AfterToolCallEvent, AfterToolCallHandler};
use crate::before::BeforeToolCallHandler;
use crate::config::{CommandHookConfig, HooksConfig};
use crate::event::{BeforeToolCallEvent, BeforeToolCallResult, HookContext};
use crate::exec_env::{ExecEnvEvent, ResolveExecEnvHandler, filter_inherited_env};
use crate::process::{BoundedCommand, run_bounded};
use crate::registration::{DEFAULT_BEFORE_TOOL_CALL_TIMEOUT, Registration, ToolMatcher};
use crate::registry::Hooks;

/// The most a hook may print on stdout (1 MiB); more is an unparseable
/// answer.
pub const MAX_HOOK_OUTPUT: usize = 1024 * 1024;

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
    /// A hook from its config; relative `cwd` and a relative program path
    /// containing `/` resolve against `base_dir` (the config file's
    /// directory).
    pub fn from_config(config: &CommandHookConfig, base_dir: &Path) -> Self {
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
        // `vars_os`, not `vars`: a non-UTF-8 variable must not panic; it is
        // simply not passed on.
        let mut env = filter_inherited_env(
            std::env::vars_os()
                .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?))),
        );
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

    /// Run the program with `input`; the trimmed stdout on exit 0.
    async fn call(&self, hook: &str, input: &Value, ctx: &HookContext) -> Result<String, String> {
        let mut env = self.env.clone();
        env.insert("TALON_HOOK".into(), hook.to_owned());
        let cmd = BoundedCommand {
            program: self.program.clone(),
            args: self.args.clone(),
            cwd: Some(self.cwd.clone()),
            env,
            stdin: serde_json::to_vec(input).map_err(|e| e.to_string())?,
            timeout: self.timeout,
            max_output: MAX_HOOK_OUTPUT,
        };
        let out = run_bounded(&cmd, &ctx.abort)
            .await
            .map_err(|e| e.to_string())?;
        match out.code {
            Some(0) => {}
            Some(code) => return Err(format!("exited with status {code}")),
            None => return Err("killed by a signal".to_owned()),
        }
        if out.stdout_truncated {
            return Err(format!("answer longer than {MAX_HOOK_OUTPUT} bytes"));
        }
        let text = String::from_utf8(out.stdout).map_err(|_| "answer is not UTF-8".to_owned())?;
        Ok(text.trim().to_owned())
    }
}

#[async_trait::async_trait]
impl BeforeToolCallHandler for CommandHook {
    async fn before_tool_call(
        &self,
        event: &BeforeToolCallEvent,
        ctx: &HookContext,
    ) -> Result<Option<BeforeToolCallResult>, String> {
        let input = json!({"hook": "before_tool_call", "event": event, "context": ctx.to_json()});
        let answer = self.call("before_tool_call", &input, ctx).await?;
        if answer.is_empty() {
            return Ok(None);
        }
        let value: Value = serde_json::from_str(&answer)
            .map_err(|e| format!("unparseable answer (expected a JSON object): {e}"))?;
        if !value.is_object() {
            return Err("unparseable answer: expected a JSON object".to_owned());
        }
        let result: BeforeToolCallResult =
            serde_json::from_value(value).map_err(|e| format!("unparseable answer: {e}"))?;
        Ok(Some(result))
    }
}

#[async_trait::async_trait]
impl AfterToolCallHandler for CommandHook {
    async fn after_tool_call(
        &self,
        event: &AfterToolCallEvent,
        ctx: &HookContext,
    ) -> Result<(), String> {
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
    ) -> Result<BTreeMap<String, String>, String> {
        let input = json!({"hook": "resolve_exec_env", "event": event, "context": ctx.to_json()});
        let answer = self.call("resolve_exec_env", &input, ctx).await?;
        if answer.is_empty() {
            return Ok(BTreeMap::new());
        }
        serde_json::from_str(&answer)
            .map_err(|e| format!("unparseable answer (expected an object of strings): {e}"))
    }
}

impl Hooks {
    /// Register every command hook of `config`; relative paths resolve
    /// against `base_dir`.
    pub fn add_command_hooks(&mut self, config: &HooksConfig, base_dir: &Path) {
        let reg = |c: &CommandHookConfig| {
            let mut r = Registration::new(c.id.clone()).priority(c.priority.unwrap_or(0));
            if let Some(m) = &c.matcher {
                r = r.matcher(ToolMatcher::ids(m));
            }
            // The program's own timeout fires first and kills its process
            // group; the registration's is a backstop a second later.
            let t = c
                .timeout_ms
                .map_or(DEFAULT_BEFORE_TOOL_CALL_TIMEOUT, Duration::from_millis);
            r.timeout(t + Duration::from_secs(1))
        };
        for c in &config.before_tool_call {
            self.on_before_tool_call(reg(c), Arc::new(CommandHook::from_config(c, base_dir)));
        }
        for c in &config.after_tool_call {
            self.on_after_tool_call(reg(c), Arc::new(CommandHook::from_config(c, base_dir)));
        }
        for c in &config.resolve_exec_env {
            self.on_resolve_exec_env(reg(c), Arc::new(CommandHook::from_config(c, base_dir)));
        }
    }
}
