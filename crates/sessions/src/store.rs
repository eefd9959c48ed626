//! The SQLite session store, in the shared state database (`talon.db`).

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};

use rusqlite::{Connection, OptionalExtension, Row, params};
use talon_tasks::{open_database, schema_version, set_schema_version};

use crate::error::{Result, StoreError};
use crate::record::{
    MAX_KEY_BYTES, MAX_LABEL_CHARS, MAX_MESSAGE_BYTES, MessageRecord, Role, SessionRecord,
    SessionStatus, cut,
};

/// The component name in `schema_version`.
const COMPONENT: &str = "sessions";
/// The schema this build writes.
const SCHEMA_VERSION: i64 = 1;
/// How many parents a walk up the spawn tree follows at most (a bound
/// against a corrupt, cyclic parent chain).
const MAX_TREE_DEPTH: u32 = 64;

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

/// Sessions and their messages, persisted.
#[derive(Debug, Clone)]
pub struct SessionStore {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    path: PathBuf,
    conn: Mutex<Connection>,
}

impl SessionStore {
    /// Open (or create) the store in the database at `path`.
    pub fn open(path: &Path) -> Result<Self> {
        let db = |source| StoreError::Db {
            path: path.display().to_string(),
            source,
        };
        let mut conn = open_database(path).map_err(db)?;
        let found = schema_version(&conn, COMPONENT).map_err(db)?;
        if found > SCHEMA_VERSION {
            return Err(StoreError::NewerSchema {
                path: path.display().to_string(),
                found,
                supported: SCHEMA_VERSION,
            });
        }
        migrate(&mut conn).map_err(db)?;
        Ok(SessionStore {
            inner: Arc::new(Inner {
                path: path.to_path_buf(),
                conn: Mutex::new(conn),
            }),
        })
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.inner.path
    }

    fn conn(&self) -> MutexGuard<'_, Connection> {
        match self.inner.conn.lock() {
            Ok(c) => c,
            Err(p) => p.into_inner(),
        }
    }

    fn db(&self, source: rusqlite::Error) -> StoreError {
        StoreError::Db {
            path: self.inner.path.display().to_string(),
            source,
        }
    }

    /// Record a session (created, or created again): everything but its
    /// creation time is replaced, and it is open.
    pub fn save(&self, record: &SessionRecord) -> Result<()> {
        validate(record)?;
        let params = serde_json::to_string(&record.params).map_err(|e| StoreError::Invalid {
            field: "params",
            message: e.to_string(),
        })?;
        self.conn()
            .execute(
                "INSERT INTO sessions (key, agent_id, parent_key, spawn_depth, label, status,
                                       created_ms, updated_ms, params)
                 VALUES (?1, ?2, ?3, ?4, ?5, 'open', ?6, ?7, ?8)
                 ON CONFLICT(key) DO UPDATE SET
                     agent_id = excluded.agent_id,
                     parent_key = excluded.parent_key,
                     spawn_depth = excluded.spawn_depth,
                     label = excluded.label,
                     status = 'open',
                     updated_ms = max(updated_ms, excluded.updated_ms),
                     params = excluded.params",
                params![
                    record.key,
                    record.agent_id,
                    record.parent_key,
                    record.spawn_depth,
                    record.label,
                    to_i64(record.created_at_ms),
                    to_i64(record.updated_at_ms),
                    params,
                ],
            )
            .map_err(|e| self.db(e))?;
        Ok(())
    }

    /// Mark a session as changed at `at_ms` (never moving its time back);
    /// `false` when there is no such session.
    pub fn touch(&self, key: &str, at_ms: u64) -> Result<bool> {
        let n = self
            .conn()
            .execute(
                "UPDATE sessions SET updated_ms = max(updated_ms, ?2) WHERE key = ?1",
                params![key, to_i64(at_ms)],
            )
            .map_err(|e| self.db(e))?;
        Ok(n > 0)
    }

    /// Close a session (kept for history); `false` when there is no such
    /// session.
    pub fn close(&self, key: &str, at_ms: u64) -> Result<bool> {
        let n = self
            .conn()
            .execute(
                "UPDATE sessions SET status = 'closed', updated_ms = max(updated_ms, ?2)
                 WHERE key = ?1",
                params![key, to_i64(at_ms)],
            )
            .map_err(|e| self.db(e))?;
        Ok(n > 0)
    }

    /// The session `key`, if recorded.
    pub fn get(&self, key: &str) -> Result<Option<SessionRecord>> {
        let conn = self.conn();
        let row = conn
            .query_row(
                &format!("SELECT {SESSION_COLUMNS} FROM sessions WHERE key = ?1"),
                params![key],
                raw_session,
            )
            .optional()
            .map_err(|e| self.db(e))?;
        row.map(RawSession::into_record).transpose()
    }

    /// Sessions matching `query`, most recently updated first.
    pub fn list(&self, query: &ListQuery) -> Result<Vec<SessionRecord>> {
        let limit = if query.limit == 0 {
            -1
        } else {
            i64::try_from(query.limit).unwrap_or(i64::MAX)
        };
        let conn = self.conn();
        let mut stmt = conn
            .prepare_cached(&format!(
                "SELECT {SESSION_COLUMNS} FROM sessions
                 WHERE (?1 IS NULL OR agent_id = ?1)
                   AND (?2 IS NULL OR updated_ms >= ?2)
                   AND (?3 OR status = 'open')
                 ORDER BY updated_ms DESC, key
                 LIMIT ?4"
            ))
            .map_err(|e| self.db(e))?;
        let rows = stmt
            .query_map(
                params![
                    query.agent_id,
                    query.updated_since_ms.map(to_i64),
                    query.include_closed,
                    limit
                ],
                raw_session,
            )
            .map_err(|e| self.db(e))?;
        let mut out = Vec::new();
        for row in rows {
            out.push(row.map_err(|e| self.db(e))?.into_record()?);
        }
        Ok(out)
    }

    /// The keys of every session `key` spawned, directly or through its
    /// children (not `key` itself).
    pub fn descendants(&self, key: &str) -> Result<Vec<String>> {
        let conn = self.conn();
        let mut stmt = conn
            .prepare_cached(
                // UNION (not UNION ALL) drops rows already seen, so even a
                // corrupt, cyclic parent chain ends.
                "WITH RECURSIVE tree(key) AS (
                     SELECT key FROM sessions WHERE parent_key = ?1
                     UNION
                     SELECT s.key FROM sessions s JOIN tree ON s.parent_key = tree.key
                 )
                 SELECT key FROM tree WHERE key <> ?1 ORDER BY key",
            )
            .map_err(|e| self.db(e))?;
        let rows = stmt
            .query_map(params![key], |r| r.get::<_, String>(0))
            .map_err(|e| self.db(e))?;
        rows.collect::<rusqlite::Result<Vec<_>>>()
            .map_err(|e| self.db(e))
    }

    /// Whether `ancestor` spawned `key`, directly or through its children.
    pub fn is_descendant(&self, ancestor: &str, key: &str) -> Result<bool> {
        let conn = self.conn();
        let mut current = key.to_owned();
        for _ in 0..MAX_TREE_DEPTH {
            let parent: Option<Option<String>> = conn
                .query_row(
                    "SELECT parent_key FROM sessions WHERE key = ?1",
                    params![current],
                    |r| r.get(0),
                )
                .optional()
                .map_err(|e| self.db(e))?;
            match parent.flatten() {
                Some(p) if p == ancestor => return Ok(true),
                Some(p) if p == current => return Ok(false),
                Some(p) => current = p,
                None => return Ok(false),
            }
        }
        Ok(false)
    }

    /// Record a message in session `key` (which must exist); its text is
    /// cut at [`MAX_MESSAGE_BYTES`]. Returns the stored message.
    pub fn append_message(
        &self,
        key: &str,
        role: Role,
        source: Option<&str>,
        text: &str,
        at_ms: u64,
    ) -> Result<MessageRecord> {
        let (text, truncated) = cut(text, MAX_MESSAGE_BYTES);
        let mut conn = self.conn();
        let tx = conn.transaction().map_err(|e| self.db(e))?;
        let exists: bool = tx
            .query_row(
                "SELECT EXISTS(SELECT 1 FROM sessions WHERE key = ?1)",
                params![key],
                |r| r.get(0),
            )
            .map_err(|e| self.db(e))?;
        if !exists {
            return Err(StoreError::Invalid {
                field: "sessionKey",
                message: format!("no session `{key}` to record a message in"),
            });
        }
        tx.execute(
            "INSERT INTO messages (session_key, at_ms, role, source, text, truncated)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            params![key, to_i64(at_ms), role.as_str(), source, text, truncated],
        )
        .map_err(|e| self.db(e))?;
        let seq = tx.last_insert_rowid();
        tx.execute(
            "UPDATE sessions SET updated_ms = max(updated_ms, ?2) WHERE key = ?1",
            params![key, to_i64(at_ms)],
        )
        .map_err(|e| self.db(e))?;
        tx.commit().map_err(|e| self.db(e))?;
        Ok(MessageRecord {
            seq: u64::try_from(seq).unwrap_or(0),
            session_key: key.to_owned(),
            at_ms,
            role,
            source: source.map(str::to_owned),
            text: text.to_owned(),
            truncated,
        })
    }

    /// Messages of the sessions in `keys` whose text holds every word of
    /// `query` (case-insensitive, as plain text: no pattern syntax), newest
    /// first, at most `limit`.
    pub fn search_messages(
        &self,
        keys: &[String],
        query: &str,
        limit: usize,
    ) -> Result<Vec<MessageRecord>> {
        let words: Vec<String> = query
            .split_whitespace()
            .take(MAX_SEARCH_WORDS)
            .map(like_pattern)
            .collect();
        if words.is_empty() || keys.is_empty() || limit == 0 {
            return Ok(Vec::new());
        }
        let keys_json = serde_json::to_string(keys).map_err(|e| StoreError::Invalid {
            field: "sessionKey",
            message: e.to_string(),
        })?;
        let mut sql = String::from(
            "SELECT seq, session_key, at_ms, role, source, text, truncated FROM messages
             WHERE session_key IN (SELECT value FROM json_each(?1))",
        );
        for i in 0..words.len() {
            sql.push_str(&format!(" AND text LIKE ?{} ESCAPE '\\'", i + 3));
        }
        sql.push_str(" ORDER BY seq DESC LIMIT ?2");
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let mut values: Vec<&dyn rusqlite::ToSql> = vec![&keys_json, &limit];
        for w in &words {
            values.push(w);
        }
        let conn = self.conn();
        let mut stmt = conn.prepare(&sql).map_err(|e| self.db(e))?;
        let rows = stmt
            .query_map(values.as_slice(), message_row)
            .map_err(|e| self.db(e))?;
        let mut out = Vec::new();
        for row in rows {
            out.push(row.map_err(|e| self.db(e))?.into_record()?);
        }
        Ok(out)
    }

    /// The last `limit` messages of session `key` (all when 0) before
    /// `before_seq` (when given), oldest first.
    pub fn messages(
        &self,
        key: &str,
        limit: usize,
        before_seq: Option<u64>,
    ) -> Result<Vec<MessageRecord>> {
        let limit = if limit == 0 {
            -1
        } else {
            i64::try_from(limit).unwrap_or(i64::MAX)
        };
        let conn = self.conn();
        let mut stmt = conn
            .prepare_cached(
                "SELECT seq, session_key, at_ms, role, source, text, truncated FROM messages
                 WHERE session_key = ?1 AND (?2 IS NULL OR seq < ?2)
                 ORDER BY seq DESC LIMIT ?3",
            )
            .map_err(|e| self.db(e))?;
        let rows = stmt
            .query_map(params![key, before_seq.map(to_i64), limit], message_row)
            .map_err(|e| self.db(e))?;
        let mut out = Vec::new();
        for row in rows {
            out.push(row.map_err(|e| self.db(e))?.into_record()?);
        }
        out.reverse();
        Ok(out)
    }
}

/// The most words a search matches on (the rest are ignored).
const MAX_SEARCH_WORDS: usize = 8;

/// A `LIKE` pattern matching `word` anywhere, its `%`, `_` and `\\`
/// taken literally.
fn like_pattern(word: &str) -> String {
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

struct RawMessage {
    seq: i64,
    session_key: String,
    at_ms: i64,
    role: String,
    source: Option<String>,
    text: String,
    truncated: bool,
}

fn message_row(r: &Row<'_>) -> rusqlite::Result<RawMessage> {
    Ok(RawMessage {
        seq: r.get(0)?,
        session_key: r.get(1)?,
        at_ms: r.get(2)?,
        role: r.get(3)?,
        source: r.get(4)?,
        text: r.get(5)?,
        truncated: r.get(6)?,
    })
}

impl RawMessage {
    fn into_record(self) -> Result<MessageRecord> {
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

const SESSION_COLUMNS: &str =
    "key, agent_id, parent_key, spawn_depth, label, status, created_ms, updated_ms, params";

struct RawSession {
    key: String,
    agent_id: String,
    parent_key: Option<String>,
    spawn_depth: i64,
    label: Option<String>,
    status: String,
    created_ms: i64,
    updated_ms: i64,
    params: String,
}

fn raw_session(r: &Row<'_>) -> rusqlite::Result<RawSession> {
    Ok(RawSession {
        key: r.get(0)?,
        agent_id: r.get(1)?,
        parent_key: r.get(2)?,
        spawn_depth: r.get(3)?,
        label: r.get(4)?,
        status: r.get(5)?,
        created_ms: r.get(6)?,
        updated_ms: r.get(7)?,
        params: r.get(8)?,
    })
}

impl RawSession {
    fn into_record(self) -> Result<SessionRecord> {
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

fn to_i64(ms: u64) -> i64 {
    i64::try_from(ms).unwrap_or(i64::MAX)
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

fn migrate(conn: &mut Connection) -> rusqlite::Result<()> {
    let tx = conn.transaction()?;
    if schema_version(&tx, COMPONENT)? < 1 {
        tx.execute_batch(
            "CREATE TABLE IF NOT EXISTS sessions (
                 key TEXT PRIMARY KEY,
                 agent_id TEXT NOT NULL,
                 parent_key TEXT,
                 spawn_depth INTEGER NOT NULL,
                 label TEXT,
                 status TEXT NOT NULL,
                 created_ms INTEGER NOT NULL,
                 updated_ms INTEGER NOT NULL,
                 params TEXT NOT NULL
             );
             CREATE INDEX IF NOT EXISTS sessions_by_parent ON sessions(parent_key);
             CREATE INDEX IF NOT EXISTS sessions_by_updated ON sessions(updated_ms);
             CREATE TABLE IF NOT EXISTS messages (
                 seq INTEGER PRIMARY KEY AUTOINCREMENT,
                 session_key TEXT NOT NULL,
                 at_ms INTEGER NOT NULL,
                 role TEXT NOT NULL,
                 source TEXT,
                 text TEXT NOT NULL,
                 truncated INTEGER NOT NULL DEFAULT 0
             );
             CREATE INDEX IF NOT EXISTS messages_by_session ON messages(session_key, seq);",
        )?;
        set_schema_version(&tx, COMPONENT, SCHEMA_VERSION)?;
    }
    tx.commit()
}

#[cfg(test)]
#[path = "store_tests.rs"]
mod tests;
