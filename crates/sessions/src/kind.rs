//! What kind of session a key names, in OpenClaw's session-key grammar.
//!
//! Internal keys are `agent:<agentId>:<rest>`; tools show `<rest>` (the
//! display key). The main session is the literal `main` (or the configured
//! main key, or `global` under the global scope). Cron runs use
//! `cron:<jobId>…`, hooks `hook:<id>`, nodes `node-<id>` or `node:<id>`,
//! group and channel chats carry `:group:` or `:channel:`
//! (`telegram:group:42`). Everything else is `other`, sub-agent keys
//! (`subagent:<id>`) included: a sub-agent is told apart by its parent,
//! not by its key.

use serde::{Deserialize, Serialize};
use talon_sandbox_core::MainSession;

/// The kind of a session, as `sessions_list` reports and filters it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SessionKind {
    /// The agent's main (direct chat) session.
    Main,
    /// A group or channel chat.
    Group,
    /// A cron job's run.
    Cron,
    /// A hook's session.
    Hook,
    /// A node's session.
    Node,
    /// Anything else (sub-agents, gateway clients' own keys, DMs under a
    /// per-peer scope).
    Other,
}

impl SessionKind {
    /// Every kind, in the order OpenClaw documents them.
    pub const ALL: [SessionKind; 6] = [
        SessionKind::Main,
        SessionKind::Group,
        SessionKind::Cron,
        SessionKind::Hook,
        SessionKind::Node,
        SessionKind::Other,
    ];

    /// The kind's name (`main`, `group`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            SessionKind::Main => "main",
            SessionKind::Group => "group",
            SessionKind::Cron => "cron",
            SessionKind::Hook => "hook",
            SessionKind::Node => "node",
            SessionKind::Other => "other",
        }
    }

    /// The kind named `name` (trimmed, case-insensitive).
    pub fn parse(name: &str) -> Option<SessionKind> {
        let name = name.trim();
        SessionKind::ALL
            .into_iter()
            .find(|k| k.as_str().eq_ignore_ascii_case(name))
    }

    /// Classify `session_key` of `agent_id` under `main` (the configured
    /// main key and scope).
    pub fn of(main: &MainSession, agent_id: &str, session_key: &str) -> SessionKind {
        if main.is_main_session(agent_id, session_key) {
            return SessionKind::Main;
        }
        let key = session_key.trim().to_lowercase();
        let rest = display_key(&key);
        if rest.starts_with("cron:") {
            SessionKind::Cron
        } else if rest.starts_with("hook:") {
            SessionKind::Hook
        } else if rest.starts_with("node-") || rest.starts_with("node:") {
            SessionKind::Node
        } else if rest.contains(":group:")
            || rest.contains(":channel:")
            || rest.starts_with("group:")
            || rest.starts_with("channel:")
        {
            SessionKind::Group
        } else {
            SessionKind::Other
        }
    }
}

impl std::fmt::Display for SessionKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The key without its `agent:<agentId>:` prefix (the whole key when it has
/// none, or when nothing follows the prefix).
pub fn display_key(session_key: &str) -> &str {
    match split_agent_key(session_key) {
        Some((_, rest)) => rest,
        None => session_key,
    }
}

/// `(agentId, rest)` of an `agent:<agentId>:<rest>` key; `None` when the
/// key does not have that shape (an empty agent id or rest included).
pub fn split_agent_key(session_key: &str) -> Option<(&str, &str)> {
    let tail = session_key.strip_prefix("agent:")?;
    let (agent, rest) = tail.split_once(':')?;
    (!agent.is_empty() && !rest.is_empty()).then_some((agent, rest))
}

/// The conversation a group session key names: `(provider, group id)` of
/// `agent:<agent>:<provider>:group:<id>` or `...:<provider>:channel:<id>`
/// (a `subagent:` segment after the agent allowed, as in OpenClaw), the
/// provider lowercased and the id as written (`-100`, `-100:topic:5`).
/// `None` for any other key. The gateway holds a session's group and
/// channel to it, so a caller cannot name another group's policy for a
/// group conversation's session.
pub fn group_conversation(session_key: &str) -> Option<(String, String)> {
    let key = session_key.trim();
    // `agent:<id>:` compared ignoring case; the agent id is one segment.
    let rest = match key.get(..6) {
        Some(p) if p.eq_ignore_ascii_case("agent:") => key[6..].split_once(':')?.1,
        _ => key,
    };
    let rest = match rest.get(..9) {
        Some(p) if p.eq_ignore_ascii_case("subagent:") => &rest[9..],
        _ => rest,
    };
    let mut parts = rest.splitn(3, ':');
    let provider = parts.next()?.trim();
    let kind = parts.next()?;
    let id = parts.next()?.trim();
    let group = kind.eq_ignore_ascii_case("group") || kind.eq_ignore_ascii_case("channel");
    (group && !provider.is_empty() && !id.is_empty())
        .then(|| (provider.to_lowercase(), id.to_owned()))
}

/// The channel a session belongs to: `internal` for cron, hook and node
/// sessions, else the first segment of a group or channel key
/// (`telegram` in `telegram:group:42`), else the channel it was created
/// with, else `unknown`.
pub fn channel_of(kind: SessionKind, session_key: &str, created_with: Option<&str>) -> String {
    if matches!(
        kind,
        SessionKind::Cron | SessionKind::Hook | SessionKind::Node
    ) {
        return "internal".to_owned();
    }
    if let Some(c) = created_with.map(str::trim).filter(|c| !c.is_empty()) {
        return c.to_lowercase();
    }
    if kind == SessionKind::Group {
        let rest = display_key(session_key);
        if let Some(first) = rest
            .split(':')
            .next()
            .filter(|s| !s.is_empty() && *s != "group" && *s != "channel")
        {
            return first.to_lowercase();
        }
    }
    "unknown".to_owned()
}

#[cfg(test)]
#[path = "kind_tests.rs"]
mod tests;
