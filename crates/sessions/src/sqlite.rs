//! The SQLite engine, in the shared state database (`talon.db`).

use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};

use rusqlite::{Connection, OptionalExtension, Row, params};
use talon_tasks::{open_database, schema_version, set_schema_version};

use crate::backend::{
    NewMessage, RawMessage, RawSession, SessionBackend, like_pattern, limit_of, to_i64,
};
use crate::error::{Result, StoreError};
use crate::record::{MessageRecord, SessionRecord};
use crate::store::ListQuery;

/// The component name in `schema_version`.
pub(crate) const COMPONENT: &str = "sessions";
/// The schema this build writes.
pub(crate) const SCHEMA_VERSION: i64 = 1;

/// Sessions and messages in a SQLite file.
#[derive(Debug)]
pub struct SqliteSessions {
    path: PathBuf,
    conn: Mutex<Connection>,
}

impl SqliteSessions {
    /// Open (or create) the session tables in the database at `path`; a
    /// schema newer than this build is refused.
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
        Ok(SqliteSessions {
            path: path.to_path_buf(),
            conn: Mutex::new(conn),
        })
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn conn(&self) -> MutexGuard<'_, Connection> {
        match self.conn.lock() {
            Ok(c) => c,
            Err(p) => p.into_inner(),
        }
    }

    fn db(&self, source: rusqlite::Error) -> StoreError {
        StoreError::Db {
            path: self.path.display().to_string(),
            source,
        }
    }

    fn message_rows(
        &self,
        sql: &str,
        values: &[&dyn rusqlite::ToSql],
    ) -> Result<Vec<MessageRecord>> {
        let conn = self.conn();
        let mut stmt = conn.prepare_cached(sql).map_err(|e| self.db(e))?;
        let rows = stmt
            .query_map(values, message_row)
            .map_err(|e| self.db(e))?;
        let mut out = Vec::new();
        for row in rows {
            out.push(row.map_err(|e| self.db(e))?.into_record()?);
        }
        Ok(out)
    }
}

impl SessionBackend for SqliteSessions {
    fn location(&self) -> String {
        self.path.display().to_string()
    }

    fn save(&self, record: &SessionRecord, params: &str) -> Result<()> {
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

    fn touch(&self, key: &str, at_ms: u64) -> Result<bool> {
        let n = self
            .conn()
            .execute(
                "UPDATE sessions SET updated_ms = max(updated_ms, ?2) WHERE key = ?1",
                params![key, to_i64(at_ms)],
            )
            .map_err(|e| self.db(e))?;
        Ok(n > 0)
    }

    fn close(&self, key: &str, at_ms: u64) -> Result<bool> {
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

    fn get(&self, key: &str) -> Result<Option<SessionRecord>> {
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

    fn closed_among(&self, keys: &[String]) -> Result<Vec<String>> {
        let conn = self.conn();
        let mut stmt = conn
            .prepare_cached("SELECT status FROM sessions WHERE key = ?1")
            .map_err(|e| self.db(e))?;
        let mut closed = Vec::new();
        for key in keys {
            let status: Option<String> = stmt
                .query_row(params![key], |row| row.get(0))
                .optional()
                .map_err(|e| self.db(e))?;
            if status.as_deref() == Some(crate::record::SessionStatus::Closed.as_str()) {
                closed.push(key.clone());
            }
        }
        Ok(closed)
    }

    fn list(&self, query: &ListQuery) -> Result<Vec<SessionRecord>> {
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
                    limit_of(query.limit).unwrap_or(-1)
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

    fn descendants(&self, key: &str) -> Result<Vec<String>> {
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

    fn parent_of(&self, key: &str) -> Result<Option<Option<String>>> {
        self.conn()
            .prepare_cached("SELECT parent_key FROM sessions WHERE key = ?1")
            .and_then(|mut s| s.query_row(params![key], |r| r.get(0)).optional())
            .map_err(|e| self.db(e))
    }

    fn append_message(&self, m: &NewMessage<'_>) -> Result<Option<u64>> {
        let mut conn = self.conn();
        let tx = conn.transaction().map_err(|e| self.db(e))?;
        let n = tx
            .execute(
                "UPDATE sessions SET updated_ms = max(updated_ms, ?2) WHERE key = ?1",
                params![m.session_key, to_i64(m.at_ms)],
            )
            .map_err(|e| self.db(e))?;
        if n == 0 {
            return Ok(None);
        }
        tx.execute(
            "INSERT INTO messages (session_key, at_ms, role, source, text, truncated)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            params![
                m.session_key,
                to_i64(m.at_ms),
                m.role.as_str(),
                m.source,
                m.text,
                m.truncated
            ],
        )
        .map_err(|e| self.db(e))?;
        let seq = tx.last_insert_rowid();
        tx.commit().map_err(|e| self.db(e))?;
        Ok(Some(u64::try_from(seq).unwrap_or(0)))
    }

    fn search_messages(
        &self,
        keys: &[String],
        words: &[&str],
        limit: usize,
    ) -> Result<Vec<MessageRecord>> {
        let keys_json = serde_json::to_string(keys).map_err(|e| StoreError::Invalid {
            field: "sessionKey",
            message: e.to_string(),
        })?;
        let patterns: Vec<String> = words.iter().map(|w| like_pattern(w)).collect();
        // SQLite's LIKE folds ASCII letters only (`É` never matches `é`):
        // the search's documented semantics, which the PostgreSQL engine
        // reproduces.
        let mut sql = String::from(
            "SELECT seq, session_key, at_ms, role, source, text, truncated FROM messages
             WHERE session_key IN (SELECT value FROM json_each(?1))",
        );
        for i in 0..patterns.len() {
            sql.push_str(&format!(" AND text LIKE ?{} ESCAPE '\\'", i + 3));
        }
        sql.push_str(" ORDER BY seq DESC LIMIT ?2");
        let limit = limit_of(limit).unwrap_or(-1);
        let mut values: Vec<&dyn rusqlite::ToSql> = vec![&keys_json, &limit];
        for p in &patterns {
            values.push(p);
        }
        self.message_rows(&sql, &values)
    }

    fn messages(
        &self,
        key: &str,
        limit: usize,
        before_seq: Option<u64>,
    ) -> Result<Vec<MessageRecord>> {
        self.message_rows(
            "SELECT seq, session_key, at_ms, role, source, text, truncated FROM messages
             WHERE session_key = ?1 AND (?2 IS NULL OR seq < ?2)
             ORDER BY seq DESC LIMIT ?3",
            params![key, before_seq.map(to_i64), limit_of(limit).unwrap_or(-1)],
        )
    }
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

const SESSION_COLUMNS: &str =
    "key, agent_id, parent_key, spawn_depth, label, status, created_ms, updated_ms, params";

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
