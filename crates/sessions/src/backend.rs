//! The storage seam: what the session store asks of a database engine.
//!
//! [`SessionStore`](crate::SessionStore) validates records, cuts long
//! messages, splits search queries and walks the spawn tree; a
//! [`SessionBackend`] only stores and finds rows. Two engines implement it:
//! SQLite ([`SqliteSessions`](crate::SqliteSessions), the embedded default)
//! and PostgreSQL (`postgres` feature), where several gateways share one
//! database: a session saved through one is read through another.

use std::fmt::Debug;

use crate::error::{Result, StoreError};
use crate::record::{MessageRecord, Role, SessionRecord, SessionStatus};
use crate::store::ListQuery;

/// A message to append, already validated and cut.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NewMessage<'a> {
    /// The session (which must exist).
    pub session_key: &'a str,
    /// When (Unix ms).
    pub at_ms: u64,
    /// Who wrote it.
    pub role: Role,
    /// Where it came from.
    pub source: Option<&'a str>,
    /// The text, at most [`MAX_MESSAGE_BYTES`](crate::MAX_MESSAGE_BYTES).
    pub text: &'a str,
    /// Whether the text was cut.
    pub truncated: bool,
}

/// One storage engine of the session store. Calls block (no async
/// runtime); implementations are shared between threads.
pub trait SessionBackend: Send + Sync + Debug {
    /// Where the store lives, for messages (a file path, `postgres`).
    fn location(&self) -> String;

    /// Insert or replace a session: everything but its creation time is
    /// replaced, its status becomes open and its updated time never moves
    /// back. `params` is the record's params as JSON text.
    fn save(&self, record: &SessionRecord, params: &str) -> Result<()>;

    /// Move `key`'s updated time forward to `at_ms`; `false` when there is
    /// no such session.
    fn touch(&self, key: &str, at_ms: u64) -> Result<bool>;

    /// Close `key` (updated time moved forward); `false` when there is no
    /// such session.
    fn close(&self, key: &str, at_ms: u64) -> Result<bool>;

    /// The session `key`.
    fn get(&self, key: &str) -> Result<Option<SessionRecord>>;

    /// Those of `keys` that the store holds closed, in no set order (keys
    /// it does not hold are left out).
    fn closed_among(&self, keys: &[String]) -> Result<Vec<String>>;

    /// Sessions matching `query`, most recently updated first, then by key.
    fn list(&self, query: &ListQuery) -> Result<Vec<SessionRecord>>;

    /// Keys of every session below `key` in the spawn tree (not `key`),
    /// sorted; ends on a cyclic chain.
    fn descendants(&self, key: &str) -> Result<Vec<String>>;

    /// `key`'s parent: `None` when there is no session `key`, `Some(None)`
    /// for a top-level one.
    fn parent_of(&self, key: &str) -> Result<Option<Option<String>>>;

    /// Append a message and move its session's updated time forward, in
    /// one transaction. `Ok(None)` when there is no such session (nothing
    /// written); otherwise the message's sequence number (increasing across
    /// sessions).
    fn append_message(&self, message: &NewMessage<'_>) -> Result<Option<u64>>;

    /// Messages of the sessions in `keys` whose text contains every one of
    /// `words` (non-empty), ASCII case-insensitively and literally (no
    /// pattern syntax), newest first, at most `limit`.
    fn search_messages(
        &self,
        keys: &[String],
        words: &[&str],
        limit: usize,
    ) -> Result<Vec<MessageRecord>>;

    /// The last `limit` messages of `key` (all when 0) before `before_seq`
    /// (when given), newest first.
    fn messages(
        &self,
        key: &str,
        limit: usize,
        before_seq: Option<u64>,
    ) -> Result<Vec<MessageRecord>>;
}

/// A `LIKE` pattern matching `word` anywhere, its `%`, `_` and `\`
/// taken literally (escape character `\`).
pub(crate) fn like_pattern(word: &str) -> String {
    let mut p = String::with_capacity(word.len() + 2);
    p.push('%');
    for c in word.chars() {
        if matches!(c, '%' | '_' | '\\') {
            p.push('\\');
        }
        p.push(c);
    }
    p.push('%');
    p
}

/// A session row as the engines read it.
pub(crate) struct RawSession {
    pub(crate) key: String,
    pub(crate) agent_id: String,
    pub(crate) parent_key: Option<String>,
    pub(crate) spawn_depth: i64,
    pub(crate) label: Option<String>,
    pub(crate) status: String,
    pub(crate) created_ms: i64,
    pub(crate) updated_ms: i64,
    pub(crate) params: String,
}

impl RawSession {
    pub(crate) fn into_record(self) -> Result<SessionRecord> {
        let status = SessionStatus::parse(&self.status).ok_or(StoreError::InvalidPersisted {
            field: "status",
            value: self.status.clone(),
        })?;
        let params =
            serde_json::from_str(&self.params).map_err(|_| StoreError::InvalidPersisted {
                field: "params",
                value: self.params.chars().take(80).collect(),
            })?;
        Ok(SessionRecord {
            key: self.key,
            agent_id: self.agent_id,
            parent_key: self.parent_key,
            spawn_depth: u32::try_from(self.spawn_depth).unwrap_or(u32::MAX),
            label: self.label,
            status,
            created_at_ms: u64::try_from(self.created_ms).unwrap_or(0),
            updated_at_ms: u64::try_from(self.updated_ms).unwrap_or(0),
            params,
        })
    }
}

/// A message row as the engines read it.
pub(crate) struct RawMessage {
    pub(crate) seq: i64,
    pub(crate) session_key: String,
    pub(crate) at_ms: i64,
    pub(crate) role: String,
    pub(crate) source: Option<String>,
    pub(crate) text: String,
    pub(crate) truncated: bool,
}

impl RawMessage {
    pub(crate) fn into_record(self) -> Result<MessageRecord> {
        let role = Role::parse(&self.role).ok_or(StoreError::InvalidPersisted {
            field: "role",
            value: self.role.clone(),
        })?;
        Ok(MessageRecord {
            seq: u64::try_from(self.seq).unwrap_or(0),
            session_key: self.session_key,
            at_ms: u64::try_from(self.at_ms).unwrap_or(0),
            role,
            source: self.source,
            text: self.text,
            truncated: self.truncated,
        })
    }
}

/// Milliseconds as the engines store them.
pub(crate) fn to_i64(ms: u64) -> i64 {
    i64::try_from(ms).unwrap_or(i64::MAX)
}

/// A row limit as the engines take it (`None`: no limit).
pub(crate) fn limit_of(limit: usize) -> Option<i64> {
    (limit != 0).then(|| i64::try_from(limit).unwrap_or(i64::MAX))
}
