//! The `session` section: the part of OpenClaw's session settings that
//! decides which session is an agent's main one (`mainKey`, `scope`).
//! OpenClaw's other session settings (`dmScope`, `reset`, `store`, …) are
//! ignored with a notice.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use talon_sandbox_core::MainSession;

/// The longest `session.mainKey` accepted.
pub(crate) const MAX_MAIN_KEY_CHARS: usize = 64;

/// `session.scope`: how direct chats map to sessions.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum SessionScope {
    /// One main session per agent, `agent:<id>:<mainKey>` (the default).
    #[default]
    PerSender,
    /// One main session for everything, keyed `global`.
    Global,
}

/// `session`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SessionSection {
    /// `per-sender` (default) or `global`. Under `global` the main session
    /// of every agent is `global`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<SessionScope>,
    /// The last segment of an agent's main session key,
    /// `agent:<agentId>:<mainKey>` (default `main`; `main` stays an alias).
    /// Lowercase letters, digits, `_` and `-`, at most 64 characters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub main_key: Option<String>,
}

impl SessionSection {
    /// Which session is an agent's main one under these settings.
    pub fn main_session(&self) -> MainSession {
        MainSession::new(
            self.main_key.as_deref(),
            self.scope == Some(SessionScope::Global),
        )
    }
}

/// Why `raw` is not a valid `session.mainKey`, if it is not. A key
/// segment must not contain `:` (it would read as another session's key),
/// whitespace or control characters.
pub(crate) fn main_key_problem(raw: &str) -> Option<String> {
    let key = raw.trim().to_lowercase();
    if key.is_empty() {
        return Some(
            "session.mainKey must not be empty: omit it for the default `main`".to_owned(),
        );
    }
    let well_formed = key.chars().count() <= MAX_MAIN_KEY_CHARS
        && key.starts_with(|c: char| c.is_ascii_lowercase() || c.is_ascii_digit())
        && key
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '-');
    if well_formed {
        return None;
    }
    Some(format!(
        "invalid session.mainKey `{}`: use 1–{MAX_MAIN_KEY_CHARS} lowercase letters, digits, `_` or `-`, starting with a letter or digit (it is the last segment of `agent:<agentId>:<mainKey>`, so `:` and spaces are not allowed)",
        raw.escape_debug()
    ))
}
