//! The config sections this crate reads: `tools.hooks` (command hooks)
//! and, re-exported, `tools.loopDetection`.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use talon_tool_catalog::core_group_members;

use talon_exec_env::{EnvKeyVerdict, classify_override_key};

/// The longest timeout a command hook may set (10 minutes).
pub const MAX_COMMAND_HOOK_TIMEOUT_MS: u64 = 600_000;

/// `tools.hooks`: hooks written as programs instead of Rust.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct HooksConfig {
    /// Programs asked before each matching tool call. Each receives
    /// `{"hook":"before_tool_call","event":…,"context":…}` on stdin and
    /// answers on stdout with `{}` / nothing (no decision), `{"block":true,
    /// "blockReason":…}`, `{"params":{…}}` or `{"requireApproval":{…}}`
    /// (snake_case keys are accepted too). A crash, timeout, non-zero exit
    /// or unparseable answer blocks the call; an answer with an unknown key
    /// or a `block` that is not a boolean is unparseable.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub before_tool_call: Vec<CommandHookConfig>,
    /// Programs told about each finished call (fire and forget; output
    /// ignored).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub after_tool_call: Vec<CommandHookConfig>,
    /// Programs that contribute environment variables to `exec`: they
    /// answer with a JSON object of strings (anything else fails the hook),
    /// filtered by the exec-env key policy.
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
                if let Some(matcher) = &hook.matcher {
                    validate_matcher(matcher, &at("matcher"), &mut out);
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

/// The problems of one `matcher` list (at key path `at`), appended to
/// `out`. A matcher that can never match would silently disable its hook,
/// so every entry must be a plausible tool id, `*`, or a core group.
fn validate_matcher(matcher: &[String], at: &str, out: &mut Vec<(String, String)>) {
    if matcher.is_empty() {
        out.push((
            at.to_owned(),
            "an empty matcher matches no tool; omit it to match every tool".to_owned(),
        ));
        return;
    }
    for (j, entry) in matcher.iter().enumerate() {
        if let Some(message) = matcher_entry_problem(entry) {
            out.push((format!("{at}[{j}]"), message));
        }
    }
}

/// Why one matcher entry is refused, if it is.
fn matcher_entry_problem(entry: &str) -> Option<String> {
    if entry.is_empty() {
        return Some("an empty entry matches no tool".to_owned());
    }
    if entry.chars().any(char::is_whitespace) {
        return Some(format!(
            "`{}` contains whitespace; tool ids never do",
            entry.escape_debug()
        ));
    }
    if let Some(bad) = entry.chars().find(|c| !is_matcher_char(*c)) {
        return Some(format!(
            "`{}` contains `{}`; entries use only letters, digits and `_ . : * -`",
            entry.escape_debug(),
            bad.escape_debug()
        ));
    }
    if entry.contains('*') && entry != "*" {
        return Some(format!(
            "`{entry}`: `*` is not a wildcard inside an id; use `*` alone to match every tool"
        ));
    }
    if is_group_entry(entry) && group_members(entry).is_none() {
        return Some(format!(
            "`{entry}` is not a core tool group (known: {})",
            talon_tool_catalog::core_group_ids().join(", ")
        ));
    }
    None
}

/// Whether `c` may appear in a matcher entry.
fn is_matcher_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | ':' | '*' | '-')
}

/// Whether a matcher entry names a group (`group:…`, any case).
fn is_group_entry(entry: &str) -> bool {
    entry
        .get(..6)
        .is_some_and(|p| p.eq_ignore_ascii_case("group:"))
}

/// The members of a core group entry (compared lowercased).
fn group_members(entry: &str) -> Option<Vec<&'static str>> {
    core_group_members(&entry.to_ascii_lowercase())
}

impl CommandHookConfig {
    /// The tool ids the hook's registration matches: `None` for every
    /// tool, otherwise the entries with each core `group:` expanded to its
    /// members.
    ///
    /// Meant for a config that passed [`HooksConfig::validate`]. Should an
    /// unvalidated config carry an empty matcher or a refused entry, this
    /// answers `None` (every tool): a hook that runs too often is visible,
    /// a hook that silently never runs is not.
    pub fn matcher_ids(&self) -> Option<Vec<String>> {
        let matcher = self.matcher.as_ref()?;
        if matcher.is_empty() {
            return None;
        }
        let mut ids = Vec::new();
        for entry in matcher {
            if matcher_entry_problem(entry).is_some() {
                return None;
            }
            if entry == "*" {
                return None;
            }
            if is_group_entry(entry) {
                let members = group_members(entry)?;
                ids.extend(members.into_iter().map(str::to_owned));
            } else {
                ids.push(entry.clone());
            }
        }
        Some(ids)
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
    /// every tool). A core group (`group:fs`, `group:runtime`, …) stands
    /// for its members. An empty list, an unknown group, or an entry with
    /// characters outside `[A-Za-z0-9_.:*-]` is a config error.
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
    /// Extra environment variables. The host environment is filtered by
    /// the inherited-key rules first, and its `TALON_*` / `OPENCLAW_*`
    /// variables and credential-looking names (`*_API_KEY`, `*_TOKEN`,
    /// `*_SECRET`, `*_PASSWORD`, …) are withheld; a secret the hook needs
    /// must be set here.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub env: Option<BTreeMap<String, String>>,
}

#[cfg(test)]
#[path = "config_tests.rs"]
mod tests;
