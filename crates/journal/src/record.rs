//! The records the journal stores and hands back: what a caller says when a
//! call starts and ends, and what a reader gets.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// How a call ended. Exactly one of these is stored per call id.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Outcome {
    /// The tool ran and returned a result.
    Ok,
    /// The tool ran (or tried to) and failed.
    Error,
    /// The gate refused the call (policy, hook or approval); nothing ran.
    Blocked,
    /// The call ran out of time.
    Timeout,
    /// The call was cancelled by the caller or by shutdown.
    Cancelled,
    /// The process stopped while the call was in flight; it was not re-run.
    Interrupted,
}

impl Outcome {
    /// Every outcome, in declaration order.
    pub const ALL: [Outcome; 6] = [
        Outcome::Ok,
        Outcome::Error,
        Outcome::Blocked,
        Outcome::Timeout,
        Outcome::Cancelled,
        Outcome::Interrupted,
    ];

    /// The stored (and serialised) name: `ok`, `error`, `blocked`, `timeout`,
    /// `cancelled` or `interrupted`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Outcome::Ok => "ok",
            Outcome::Error => "error",
            Outcome::Blocked => "blocked",
            Outcome::Timeout => "timeout",
            Outcome::Cancelled => "cancelled",
            Outcome::Interrupted => "interrupted",
        }
    }
}

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The name is not one of the six outcomes.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "unknown call outcome `{0}`; expected one of ok, error, blocked, timeout, cancelled, interrupted"
)]
pub struct UnknownOutcome(pub String);

impl FromStr for Outcome {
    type Err = UnknownOutcome;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Outcome::ALL
            .into_iter()
            .find(|o| o.as_str() == s)
            .ok_or_else(|| UnknownOutcome(s.to_owned()))
    }
}

/// What is known about a call when it is accepted.
///
/// `params_digest` is the SHA-256 of the canonical parameters
/// ([`params_digest`](crate::params_digest)), never the parameters
/// themselves: the journal holds no arguments, file contents or secrets.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CallStart {
    /// The call id (unique per journal; the key of every record).
    pub call_id: String,
    /// The session the call belongs to.
    pub session_key: String,
    /// The agent that made the call.
    pub agent_id: String,
    /// The tool name.
    pub tool: String,
    /// 64 lowercase hex digits: SHA-256 of the canonical parameters.
    pub params_digest: String,
    /// When the call was accepted, Unix milliseconds.
    pub at_ms: u64,
    /// The caller's own id for the call (a model's or client's
    /// `toolCallId`), kept in its own column and never rewritten, so a
    /// client that never got its reply can look the call up
    /// ([`CallJournal::find_tool_call`](crate::CallJournal::find_tool_call)).
    /// Not unique: callers choose it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
}

/// How a call ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CallEnd {
    /// The outcome.
    pub outcome: Outcome,
    /// A short, already-redacted summary (an error message, a block
    /// reason). Longer text is cut at [`MAX_SUMMARY_BYTES`](crate::MAX_SUMMARY_BYTES).
    pub summary: String,
    /// When the call ended, Unix milliseconds.
    pub at_ms: u64,
    /// How long the call took, microseconds.
    pub duration_us: u64,
}

/// One call as stored.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CallRecord {
    /// The call id.
    pub call_id: String,
    /// The session the call belongs to.
    pub session_key: String,
    /// The agent that made the call.
    pub agent_id: String,
    /// The tool name.
    pub tool: String,
    /// SHA-256 of the canonical parameters.
    pub params_digest: String,
    /// When the call was accepted (Unix ms); the start time of a `started`
    /// record or of a whole record written with
    /// [`CallJournal::record`](crate::CallJournal::record).
    pub started_at_ms: u64,
    /// Whether a `started` record was written before the call ran
    /// (non-idempotent tools).
    pub write_ahead: bool,
    /// The caller's id for the call, as given at its start (`None` for a
    /// call journalled without one, and for records written before the
    /// journal kept it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
    /// The terminal record; `None` while the call is in flight.
    pub end: Option<CallEnd>,
}

impl CallRecord {
    /// The outcome, or `None` while the call is in flight.
    pub fn outcome(&self) -> Option<Outcome> {
        self.end.as_ref().map(|e| e.outcome)
    }
}

/// What [`CallJournal::finish`](crate::CallJournal::finish) and
/// [`CallJournal::record`](crate::CallJournal::record) did with a terminal
/// record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[must_use]
pub enum FinishAck {
    /// Queued for the writer; it is durable once [`CallJournal::flush`](crate::CallJournal::flush)
    /// returns (the writer commits queued records straight away, in batches).
    Queued,
    /// The call already has a terminal record (stored or queued); this one
    /// was ignored. The first terminal record wins.
    AlreadyFinished(Outcome),
}

/// A call found in flight when the journal was opened, now marked
/// [`Outcome::Interrupted`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InterruptedCall {
    /// The call id.
    pub call_id: String,
    /// Its session.
    pub session_key: String,
    /// Its tool.
    pub tool: String,
    /// When it started (Unix ms).
    pub started_at_ms: u64,
    /// The caller's id for the call, kept through recovery.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
}

/// What [`CallJournal::open`](crate::CallJournal::open) found and repaired.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RecoveryReport {
    /// Calls that had a `started` record and no terminal one: the previous
    /// process stopped while they ran. They are now `interrupted` and are
    /// never re-run by the journal.
    pub interrupted: Vec<InterruptedCall>,
    /// Whether the database file was created by this open.
    pub created: bool,
}
