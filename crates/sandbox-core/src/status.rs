//! Runtime status: whether a session runs sandboxed and why, and the
//! "blocked by sandbox tool policy" explanation a blocked call gets.

use serde::Serialize;
use talon_tool_policy::SandboxMode;

use crate::resolved::ResolvedSandboxConfig;
use crate::sandbox_config::mode_str;

/// Whether a session is sandboxed, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RuntimeStatus {
    /// The agent.
    pub agent_id: String,
    /// The session key as given (trimmed).
    pub session_key: String,
    /// The key it was compared by (trimmed, lowercased, main aliases
    /// canonicalised).
    pub comparable_session_key: String,
    /// The agent's main session key (`agent:<id>:<session.mainKey>`, or
    /// `global` when `session.scope` is `global`).
    pub main_session_key: String,
    /// The sandbox mode (`off`, `non-main`, `all`).
    pub mode: &'static str,
    /// The key the mode came from, when configured.
    pub mode_key: Option<String>,
    /// Whether the session runs sandboxed.
    pub sandboxed: bool,
    /// Why, in one sentence.
    pub reason: String,
}

/// Explain whether `session_key` runs sandboxed under `config`.
pub fn explain_runtime_status(config: &ResolvedSandboxConfig, session_key: &str) -> RuntimeStatus {
    let main = config.main_session.main_session_key(&config.agent_id);
    let comparable = config
        .main_session
        .comparable_session_key(&config.agent_id, session_key);
    let sandboxed = config.should_sandbox(session_key);
    let from = config
        .mode_key
        .clone()
        .unwrap_or_else(|| "the built-in default".to_owned());
    let reason = match config.mode {
        SandboxMode::Off => {
            format!("sandbox mode is \"off\" (from {from}): every session runs on the host")
        }
        SandboxMode::All => {
            format!("sandbox mode is \"all\" (from {from}): every session runs sandboxed")
        }
        SandboxMode::NonMain if sandboxed => format!(
            "sandbox mode is \"non-main\" (from {from}) and this session is not the agent's main session ({main}); group, channel and other sessions are sandboxed"
        ),
        SandboxMode::NonMain => format!(
            "sandbox mode is \"non-main\" (from {from}) and this is the agent's main session ({main}), which runs on the host"
        ),
    };
    RuntimeStatus {
        agent_id: config.agent_id.clone(),
        session_key: session_key.trim().to_owned(),
        comparable_session_key: comparable,
        main_session_key: main,
        mode: mode_str(config.mode),
        mode_key: config.mode_key.clone(),
        sandboxed,
        reason,
    }
}

fn escape_control(c: char, out: &mut String) {
    match c {
        '\n' => out.push_str("\\n"),
        '\r' => out.push_str("\\r"),
        '\t' => out.push_str("\\t"),
        c if c.is_control() => out.push_str(&format!("\\u{:04x}", u32::from(c))),
        c => out.push(c),
    }
}

/// A session key fit for a message: empty → `(unknown)`; 12 characters
/// or fewer → `(redacted)`; else the first 6 and last 6 characters around
/// `…`, control characters shown escaped (`\n`).
pub fn redact_session_key(key: &str) -> String {
    let key = key.trim();
    let chars: Vec<char> = key.chars().collect();
    if chars.is_empty() {
        return "(unknown)".to_owned();
    }
    if chars.len() <= 12 {
        return "(redacted)".to_owned();
    }
    let mut out = String::new();
    for &c in &chars[..6] {
        escape_control(c, &mut out);
    }
    out.push('…');
    for &c in &chars[chars.len() - 6..] {
        escape_control(c, &mut out);
    }
    out
}

/// Quote for a POSIX shell: `'…'` with each `'` written `'\''`.
pub fn shell_single_quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', "'\\''"))
}

/// The message a blocked tool call gets when the sandbox tool policy
/// removed the tool, or `None` when the session is not sandboxed or the
/// tool is not blocked by the sandbox policy.
pub fn format_blocked_tool_message(
    config: &ResolvedSandboxConfig,
    session_key: &str,
    tool: &str,
) -> Option<String> {
    if !config.should_sandbox(session_key) {
        return None;
    }
    let tool = tool.trim().to_lowercase();
    let block = config.tool_policy.classify(&tool);
    if !block.blocked() {
        return None;
    }
    let reason = match (block.blocked_by_deny, block.blocked_by_allow) {
        (true, true) => "deny list + allow list",
        (true, false) => "deny list",
        _ => "allow list",
    };
    let mut lines = vec![
        format!(
            "Tool \"{tool}\" blocked by sandbox tool policy (mode={}).",
            mode_str(config.mode)
        ),
        format!("Session: {}", redact_session_key(session_key)),
        format!("Reason: {reason}"),
        "Fix:".to_owned(),
        "- agents.defaults.sandbox.mode=off (disable sandbox)".to_owned(),
    ];
    if block.blocked_by_deny {
        lines.push(format!(
            "- Remove \"{tool}\" from {}.",
            config.tool_policy.deny_key
        ));
    }
    if block.blocked_by_allow {
        lines.push(format!(
            "- Add \"{tool}\" to {} (or set it to [] to allow all).",
            config.tool_policy.allow_key
        ));
    }
    if config.mode == SandboxMode::NonMain {
        lines.push("- Use the agent main session instead of a non-main session.".to_owned());
    }
    let key = session_key.trim();
    if key.chars().any(char::is_control) || key.is_empty() {
        lines.push(format!(
            "- See: talon sandbox explain --agent {}",
            shell_single_quote(&config.agent_id)
        ));
    } else {
        lines.push(format!(
            "- See: talon sandbox explain --session {}",
            shell_single_quote(key)
        ));
    }
    Some(lines.join("\n"))
}

#[cfg(test)]
#[path = "status_tests.rs"]
mod tests;
