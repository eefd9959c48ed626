//! The config sections this crate reads: `tools.hooks` (command hooks)
//! and, re-exported, `tools.loopDetection`.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::exec_env::{EnvKeyVerdict, classify_override_key};

/// The longest timeout a command hook may set (10 minutes).
pub const MAX_COMMAND_HOOK_TIMEOUT_MS: u64 = 600_000;

/// `tools.hooks`: hooks written as programs instead of Rust.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct HooksConfig {
    /// Programs asked before each matching tool call. Each receives
    /// `{"hook":"before_tool_call","event":…,"context":…}` on stdin and
    /// answers on stdout with `{}` / nothing (no decision), `{"block":true,
    /// "blockReason":…}`, `{"params":{…}}` or `{"requireApproval":{…}}`.
    /// A crash, timeout, non-zero exit or unparseable answer blocks the
    /// call.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub before_tool_call: Vec<CommandHookConfig>,
    /// Programs told about each finished call (fire and forget; output
    /// ignored).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub after_tool_call: Vec<CommandHookConfig>,
    /// Programs that contribute environment variables to `exec`: they
    /// answer with a JSON object of strings, filtered by the exec-env key
    /// policy.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub resolve_exec_env: Vec<CommandHookConfig>,
}

impl HooksConfig {
    /// Whether no hook is configured.
    pub fn is_empty(&self) -> bool {
        self.before_tool_call.is_empty()
            && self.after_tool_call.is_empty()
            && self.resolve_exec_env.is_empty()
    }

    /// Every problem, as `(key path below tools.hooks, message)`.
    pub fn validate(&self) -> Vec<(String, String)> {
        let mut out = Vec::new();
        for (list, hooks) in [
            ("beforeToolCall", &self.before_tool_call),
            ("afterToolCall", &self.after_tool_call),
            ("resolveExecEnv", &self.resolve_exec_env),
        ] {
            let mut seen: Vec<&str> = Vec::new();
            for (i, hook) in hooks.iter().enumerate() {
                let at = |key: &str| format!("{list}[{i}].{key}");
                if hook.id.trim().is_empty() {
                    out.push((at("id"), "must not be empty".to_owned()));
                } else if seen.contains(&hook.id.as_str()) {
                    out.push((
                        at("id"),
                        format!(
                            "duplicate hook id `{}` in {list}; ids must be unique",
                            hook.id
                        ),
                    ));
                } else {
                    seen.push(&hook.id);
                }
                match hook.command.first() {
                    None => out.push((
                        at("command"),
                        "must name a program: [\"/path/to/program\", \"arg\", …]".to_owned(),
                    )),
                    Some(p) if p.trim().is_empty() => {
                        out.push((
                            at("command"),
                            "the program (first element) is empty".to_owned(),
                        ));
                    }
                    Some(_) => {}
                }
                if hook.command.iter().any(|a| a.contains('\0')) {
                    out.push((at("command"), "arguments must not contain NUL".to_owned()));
                }
                if let Some(t) = hook.timeout_ms
                    && (t == 0 || t > MAX_COMMAND_HOOK_TIMEOUT_MS)
                {
                    out.push((
                        at("timeoutMs"),
                        format!("must be between 1 and {MAX_COMMAND_HOOK_TIMEOUT_MS}, got {t}"),
                    ));
                }
                for (key, value) in hook.env.iter().flatten() {
                    let verdict = classify_override_key(key);
                    if verdict != EnvKeyVerdict::Allowed {
                        out.push((
                            format!("{list}[{i}].env.{key}"),
                            format!(
                                "environment key refused by the exec-env policy ({verdict:?}); remove it"
                            ),
                        ));
                    } else if value.contains('\0') {
                        out.push((
                            format!("{list}[{i}].env.{key}"),
                            "value contains NUL".to_owned(),
                        ));
                    }
                }
            }
        }
        out
    }
}

/// One command hook.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CommandHookConfig {
    /// A unique id (used as the plugin id in block reasons and approvals).
    pub id: String,
    /// The program and its arguments, e.g. `["/usr/bin/python3",
    /// "hooks/guard.py"]`. Run directly, never through a shell.
    pub command: Vec<String>,
    /// Tool ids this hook applies to (`bash` means `exec`; `*` or absent:
    /// every tool).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub matcher: Option<Vec<String>>,
    /// Higher runs first (default 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub priority: Option<i32>,
    /// How long the program may run (default 30 000 ms; at most 600 000).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<u64>,
    /// The working directory (default: the config file's directory).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    /// Extra environment variables (the host environment is filtered by
    /// the inherited-key rules first).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub env: Option<BTreeMap<String, String>>,
}
