//! What the store keeps: sessions and the messages seen in them.

use serde::{Deserialize, Serialize};

/// The longest message text kept, in bytes (longer text is cut at a
/// character boundary and marked truncated).
pub const MAX_MESSAGE_BYTES: usize = 64 * 1024;

/// The longest session key accepted, in bytes.
pub const MAX_KEY_BYTES: usize = 512;

/// The longest label accepted, in characters.
pub const MAX_LABEL_CHARS: usize = 128;

/// Whether a session is still open.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SessionStatus {
    /// Open: calls may run in it.
    Open,
    /// Closed by a client or the gateway; kept for history.
    Closed,
}

impl SessionStatus {
    /// The stored name.
    pub fn as_str(self) -> &'static str {
        match self {
            SessionStatus::Open => "open",
            SessionStatus::Closed => "closed",
        }
    }

    pub(crate) fn parse(s: &str) -> Option<SessionStatus> {
        match s {
            "open" => Some(SessionStatus::Open),
            "closed" => Some(SessionStatus::Closed),
            _ => None,
        }
    }
}

/// One session.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionRecord {
    /// The session key.
    pub key: String,
    /// The agent it runs as.
    pub agent_id: String,
    /// The session that spawned it, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent_key: Option<String>,
    /// 0 for a top-level session, the parent's depth + 1 for a child.
    pub spawn_depth: u32,
    /// A label given at creation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// Open or closed.
    pub status: SessionStatus,
    /// When it was first created (Unix ms); kept when it is created again.
    pub created_at_ms: u64,
    /// When it last changed or ran a call (Unix ms).
    pub updated_at_ms: u64,
    /// What it was created with, as the creator gave it (opaque to the
    /// store; the gateway rebuilds the session from it after a restart).
    pub params: serde_json::Value,
}

/// Who wrote a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// A person, or another session speaking to this one.
    User,
    /// The agent of this session.
    Assistant,
    /// The gateway (a system event, an announce-back).
    System,
}

impl Role {
    /// The stored name.
    pub fn as_str(self) -> &'static str {
        match self {
            Role::User => "user",
            Role::Assistant => "assistant",
            Role::System => "system",
        }
    }

    pub(crate) fn parse(s: &str) -> Option<Role> {
        match s {
            "user" => Some(Role::User),
            "assistant" => Some(Role::Assistant),
            "system" => Some(Role::System),
            _ => None,
        }
    }
}

/// One message seen in a session.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MessageRecord {
    /// Its position in the store (increasing, across sessions).
    pub seq: u64,
    /// The session.
    pub session_key: String,
    /// When it was recorded (Unix ms).
    pub at_ms: u64,
    /// Who wrote it.
    pub role: Role,
    /// Where it came from (the sending session's key, a cron job, …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// The text (at most [`MAX_MESSAGE_BYTES`]).
    pub text: String,
    /// Whether the text was cut.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub truncated: bool,
}

/// `text` cut to at most `max` bytes at a character boundary, and whether
/// it was cut.
pub(crate) fn cut(text: &str, max: usize) -> (&str, bool) {
    if text.len() <= max {
        return (text, false);
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    (&text[..end], true)
}
