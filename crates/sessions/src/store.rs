//! The session store: the rules above the storage seam.

use std::borrow::Cow;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::backend::{NewMessage, SessionBackend};
use crate::error::{Result, StoreError};
use crate::record::{
    MAX_KEY_BYTES, MAX_LABEL_CHARS, MAX_MESSAGE_BYTES, MessageRecord, Role, SessionRecord, cut,
};
use crate::sqlite::SqliteSessions;

/// How many parents a walk up the spawn tree follows at most (a bound
/// against a corrupt, cyclic parent chain).
const MAX_TREE_DEPTH: u32 = 64;

/// The most words a search matches on (the rest are ignored).
const MAX_SEARCH_WORDS: usize = 8;

/// Which sessions [`SessionStore::list`] returns.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ListQuery {
    /// Only this agent's sessions.
    pub agent_id: Option<String>,
    /// Only sessions updated at or after this time (Unix ms).
    pub updated_since_ms: Option<u64>,
    /// Closed sessions too.
    pub include_closed: bool,
    /// At most this many (most recently updated first); 0 means no limit.
    pub limit: usize,
}

/// Sessions and their messages, persisted. Cheap to clone; clones share
/// one storage engine.
#[derive(Debug, Clone)]
pub struct SessionStore {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    backend: Box<dyn SessionBackend>,
    path: Option<PathBuf>,
}

impl SessionStore {
    /// Open (or create) the store in the SQLite database at `path`.
    pub fn open(path: &Path) -> Result<Self> {
        let backend = SqliteSessions::open(path)?;
        Ok(SessionStore {
            inner: Arc::new(Inner {
                backend: Box::new(backend),
                path: Some(path.to_path_buf()),
            }),
        })
    }

    /// Open the store on the shared PostgreSQL database behind `pool`
    /// (migrating its tables, refusing a newer schema). Several gateways
    /// may open it on one database at once.
    #[cfg(feature = "postgres")]
    pub fn open_postgres(pool: &talon_state::PgPool) -> Result<Self> {
        let backend = crate::postgres::PgSessions::open(pool)?;
        Ok(Self::with_backend(Box::new(backend)))
    }

    /// A store over any storage engine.
    pub fn with_backend(backend: Box<dyn SessionBackend>) -> Self {
        SessionStore {
            inner: Arc::new(Inner {
                backend,
                path: None,
            }),
        }
    }

    /// The database file (`None` when the store is not in a file, e.g. on
    /// PostgreSQL).
    pub fn path(&self) -> Option<&Path> {
        self.inner.path.as_deref()
    }

    /// Where the store lives, for messages (a file path, `postgres`).
    pub fn location(&self) -> String {
        self.inner.backend.location()
    }

    fn backend(&self) -> &dyn SessionBackend {
        self.inner.backend.as_ref()
    }

    /// Record a session (created, or created again): everything but its
    /// creation time is replaced, and it is open.
    pub fn save(&self, record: &SessionRecord) -> Result<()> {
        validate(record)?;
        let params = serde_json::to_string(&record.params).map_err(|e| StoreError::Invalid {
            field: "params",
            message: e.to_string(),
        })?;
        self.backend().save(record, &params)
    }

    /// Mark a session as changed at `at_ms` (never moving its time back);
    /// `false` when there is no such session.
    pub fn touch(&self, key: &str, at_ms: u64) -> Result<bool> {
        self.backend().touch(key, at_ms)
    }

    /// Close a session (kept for history); `false` when there is no such
    /// session.
    pub fn close(&self, key: &str, at_ms: u64) -> Result<bool> {
        self.backend().close(key, at_ms)
    }

    /// The session `key`, if recorded.
    pub fn get(&self, key: &str) -> Result<Option<SessionRecord>> {
        self.backend().get(key)
    }

    /// Those of `keys` that the store holds closed: a gateway of a fleet
    /// asks this of the sessions it has open, to close those another
    /// gateway closed.
    pub fn closed_among(&self, keys: &[String]) -> Result<Vec<String>> {
        self.backend().closed_among(keys)
    }

    /// Sessions matching `query`, most recently updated first.
    pub fn list(&self, query: &ListQuery) -> Result<Vec<SessionRecord>> {
        self.backend().list(query)
    }

    /// The keys of every session `key` spawned, directly or through its
    /// children (not `key` itself).
    pub fn descendants(&self, key: &str) -> Result<Vec<String>> {
        self.backend().descendants(key)
    }

    /// Whether `ancestor` spawned `key`, directly or through its children.
    pub fn is_descendant(&self, ancestor: &str, key: &str) -> Result<bool> {
        let mut current = key.to_owned();
        for _ in 0..MAX_TREE_DEPTH {
            match self.backend().parent_of(&current)?.flatten() {
                Some(p) if p == ancestor => return Ok(true),
                Some(p) if p == current => return Ok(false),
                Some(p) => current = p,
                None => return Ok(false),
            }
        }
        Ok(false)
    }

    /// Record a message in session `key` (which must exist); its text is
    /// cut at [`MAX_MESSAGE_BYTES`] and a NUL character in it (or in
    /// `source`) is stored as U+FFFD, which every engine can hold. Returns
    /// the stored message.
    pub fn append_message(
        &self,
        key: &str,
        role: Role,
        source: Option<&str>,
        text: &str,
        at_ms: u64,
    ) -> Result<MessageRecord> {
        let whole = without_nul(text);
        let (text, truncated) = cut(&whole, MAX_MESSAGE_BYTES);
        let source = source.map(without_nul);
        let seq = self
            .backend()
            .append_message(&NewMessage {
                session_key: key,
                at_ms,
                role,
                source: source.as_deref(),
                text,
                truncated,
            })?
            .ok_or_else(|| StoreError::Invalid {
                field: "sessionKey",
                message: format!("no session `{key}` to record a message in"),
            })?;
        Ok(MessageRecord {
            seq,
            session_key: key.to_owned(),
            at_ms,
            role,
            source: source.map(Cow::into_owned),
            text: text.to_owned(),
            truncated,
        })
    }

    /// Messages of the sessions in `keys` whose text holds every word of
    /// `query` (ASCII case-insensitive, as plain text: no pattern syntax),
    /// newest first, at most `limit`.
    pub fn search_messages(
        &self,
        keys: &[String],
        query: &str,
        limit: usize,
    ) -> Result<Vec<MessageRecord>> {
        let words: Vec<&str> = query.split_whitespace().take(MAX_SEARCH_WORDS).collect();
        if words.is_empty() || keys.is_empty() || limit == 0 {
            return Ok(Vec::new());
        }
        self.backend().search_messages(keys, &words, limit)
    }

    /// The last `limit` messages of session `key` (all when 0) before
    /// `before_seq` (when given), oldest first.
    pub fn messages(
        &self,
        key: &str,
        limit: usize,
        before_seq: Option<u64>,
    ) -> Result<Vec<MessageRecord>> {
        let mut out = self.backend().messages(key, limit, before_seq)?;
        out.reverse();
        Ok(out)
    }
}

/// `s` with each NUL character replaced by U+FFFD (PostgreSQL's text
/// cannot hold NUL; both engines store the same text).
fn without_nul(s: &str) -> Cow<'_, str> {
    if s.contains('\0') {
        Cow::Owned(s.replace('\0', "\u{FFFD}"))
    } else {
        Cow::Borrowed(s)
    }
}

fn validate(record: &SessionRecord) -> Result<()> {
    let bad = |field: &'static str, message: String| Err(StoreError::Invalid { field, message });
    let key = record.key.as_str();
    if key.trim().is_empty() {
        return bad("sessionKey", "must not be empty".into());
    }
    if key.len() > MAX_KEY_BYTES {
        return bad(
            "sessionKey",
            format!(
                "is {} bytes; at most {MAX_KEY_BYTES} are accepted",
                key.len()
            ),
        );
    }
    if key.chars().any(char::is_control) {
        return bad("sessionKey", "must not contain control characters".into());
    }
    if record.agent_id.trim().is_empty() {
        return bad("agentId", "must not be empty".into());
    }
    if record.parent_key.as_deref() == Some(key) {
        return bad(
            "parentSessionKey",
            "a session cannot be its own parent".into(),
        );
    }
    if let Some(label) = &record.label
        && (label.chars().count() > MAX_LABEL_CHARS || label.chars().any(char::is_control))
    {
        return bad(
            "label",
            format!("at most {MAX_LABEL_CHARS} characters, no control characters"),
        );
    }
    Ok(())
}

#[cfg(test)]
#[path = "store_tests.rs"]
mod tests;
