//! The PostgreSQL engine (`postgres` feature): several gateways share one
//! database, so a session created on one is found, reopened and written on
//! another.
//!
//! What SQLite did is done the same way here, in SQL: the upsert keeps the
//! creation time and never moves `updated_ms` back (`GREATEST`); a message
//! is appended in one transaction with its session's time, and only when
//! the session exists; the spawn-tree walk is a recursive `UNION` that
//! ends on a cyclic chain; keys sort bytewise (`COLLATE "C"`, SQLite's
//! `BINARY`). Search keeps SQLite's `LIKE` semantics exactly: every word
//! literally (`%`, `_` and `\` escaped), ASCII letters folded and no
//! other: `text COLLATE "C" ILIKE`, whose case folding under the `C`
//! collation is ASCII-only whatever the database's locale (a plain `ILIKE`
//! under a `C.UTF-8` or `en_US` locale would also fold `É`). Migrations are
//! versioned ([`PgPool::migrate`]`("sessions", …)`) and a newer schema is
//! refused.

use talon_state::Conn;
use talon_state::postgres::Row;
use talon_state::postgres::types::ToSql;
use talon_state::{PgPool, StateError};

use crate::backend::{
    NewMessage, RawMessage, RawSession, SessionBackend, like_pattern, limit_of, to_i64,
};
use crate::error::Result;
use crate::record::{MessageRecord, SessionRecord};
use crate::store::ListQuery;

/// The store's name in `talon_schema`.
pub const STORE: &str = "sessions";

/// The store's migrations: version `i + 1` is `MIGRATIONS[i]`.
pub const MIGRATIONS: &[&str] = &["
    CREATE TABLE sessions (
        key TEXT PRIMARY KEY,
        agent_id TEXT NOT NULL,
        parent_key TEXT,
        spawn_depth BIGINT NOT NULL,
        label TEXT,
        status TEXT NOT NULL,
        created_ms BIGINT NOT NULL,
        updated_ms BIGINT NOT NULL,
        params TEXT NOT NULL
    );
    CREATE INDEX sessions_by_parent ON sessions (parent_key);
    CREATE INDEX sessions_by_updated ON sessions (updated_ms);
    CREATE TABLE session_messages (
        seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        session_key TEXT NOT NULL,
        at_ms BIGINT NOT NULL,
        role TEXT NOT NULL,
        source TEXT,
        text TEXT NOT NULL,
        truncated BOOLEAN NOT NULL DEFAULT FALSE
    );
    CREATE INDEX session_messages_by_session ON session_messages (session_key, seq);
"];

const SESSION_COLUMNS: &str =
    "key, agent_id, parent_key, spawn_depth, label, status, created_ms, updated_ms, params";
const MESSAGE_COLUMNS: &str = "seq, session_key, at_ms, role, source, text, truncated";

/// Sessions and messages in a PostgreSQL database.
#[derive(Debug, Clone)]
pub struct PgSessions {
    pool: PgPool,
}

impl PgSessions {
    /// Bring the session tables up to date (refusing a newer schema) and
    /// use them through `pool`.
    pub fn open(pool: &PgPool) -> Result<Self> {
        pool.migrate(STORE, MIGRATIONS)?;
        Ok(PgSessions { pool: pool.clone() })
    }

    fn messages_where<F>(&self, query: F) -> Result<Vec<MessageRecord>>
    where
        F: FnOnce(&mut Conn) -> std::result::Result<Vec<Row>, StateError> + Send + 'static,
    {
        let raw: Vec<RawMessage> = self.pool.run(move |c| {
            query(c)?
                .iter()
                .map(raw_message)
                .collect::<std::result::Result<_, _>>()
                .map_err(StateError::from)
        })?;
        raw.into_iter().map(RawMessage::into_record).collect()
    }

    fn sessions_where<F>(&self, query: F) -> Result<Vec<SessionRecord>>
    where
        F: FnOnce(&mut Conn) -> std::result::Result<Vec<Row>, StateError> + Send + 'static,
    {
        let raw: Vec<RawSession> = self.pool.run(move |c| {
            query(c)?
                .iter()
                .map(raw_session)
                .collect::<std::result::Result<_, _>>()
                .map_err(StateError::from)
        })?;
        raw.into_iter().map(RawSession::into_record).collect()
    }
}

impl SessionBackend for PgSessions {
    fn location(&self) -> String {
        format!("postgres {}", self.pool.target())
    }

    fn save(&self, record: &SessionRecord, params: &str) -> Result<()> {
        let r = record.clone();
        let params = params.to_owned();
        self.pool.run(move |c| {
            c.execute(
                "INSERT INTO sessions (key, agent_id, parent_key, spawn_depth, label, status,
                                       created_ms, updated_ms, params)
                 VALUES ($1, $2, $3, $4, $5, 'open', $6, $7, $8)
                 ON CONFLICT (key) DO UPDATE SET
                     agent_id = EXCLUDED.agent_id,
                     parent_key = EXCLUDED.parent_key,
                     spawn_depth = EXCLUDED.spawn_depth,
                     label = EXCLUDED.label,
                     status = 'open',
                     updated_ms = GREATEST(sessions.updated_ms, EXCLUDED.updated_ms),
                     params = EXCLUDED.params",
                &[
                    &r.key,
                    &r.agent_id,
                    &r.parent_key,
                    &i64::from(r.spawn_depth),
                    &r.label,
                    &to_i64(r.created_at_ms),
                    &to_i64(r.updated_at_ms),
                    &params,
                ],
            )?;
            Ok(())
        })?;
        Ok(())
    }

    fn touch(&self, key: &str, at_ms: u64) -> Result<bool> {
        let key = key.to_owned();
        let n = self.pool.run(move |c| {
            Ok(c.execute(
                "UPDATE sessions SET updated_ms = GREATEST(updated_ms, $2) WHERE key = $1",
                &[&key, &to_i64(at_ms)],
            )?)
        })?;
        Ok(n > 0)
    }

    fn close(&self, key: &str, at_ms: u64) -> Result<bool> {
        let key = key.to_owned();
        let n = self.pool.run(move |c| {
            Ok(c.execute(
                "UPDATE sessions SET status = 'closed', updated_ms = GREATEST(updated_ms, $2)
                 WHERE key = $1",
                &[&key, &to_i64(at_ms)],
            )?)
        })?;
        Ok(n > 0)
    }

    fn get(&self, key: &str) -> Result<Option<SessionRecord>> {
        let key = key.to_owned();
        Ok(self
            .sessions_where(move |c| {
                Ok(c.query(
                    &format!("SELECT {SESSION_COLUMNS} FROM sessions WHERE key = $1"),
                    &[&key],
                )?)
            })?
            .pop())
    }

    fn closed_among(&self, keys: &[String]) -> Result<Vec<String>> {
        if keys.is_empty() {
            return Ok(Vec::new());
        }
        let keys = keys.to_vec();
        Ok(self.pool.run(move |c| {
            Ok(c.query(
                "SELECT key FROM sessions WHERE key = ANY($1) AND status = 'closed'",
                &[&keys],
            )?
            .iter()
            .map(|row| row.try_get::<_, String>(0))
            .collect::<std::result::Result<Vec<_>, _>>()?)
        })?)
    }

    fn list(&self, query: &ListQuery) -> Result<Vec<SessionRecord>> {
        let agent = query.agent_id.clone();
        let since = query.updated_since_ms.map(to_i64);
        let closed = query.include_closed;
        let limit = limit_of(query.limit);
        self.sessions_where(move |c| {
            Ok(c.query(
                &format!(
                    "SELECT {SESSION_COLUMNS} FROM sessions
                     WHERE ($1::text IS NULL OR agent_id = $1)
                       AND ($2::bigint IS NULL OR updated_ms >= $2)
                       AND ($3 OR status = 'open')
                     ORDER BY updated_ms DESC, key COLLATE \"C\"
                     LIMIT $4"
                ),
                &[&agent, &since, &closed, &limit],
            )?)
        })
    }

    fn descendants(&self, key: &str) -> Result<Vec<String>> {
        let key = key.to_owned();
        Ok(self.pool.run(move |c| {
            c.query(
                // UNION (not UNION ALL) drops rows already seen, so even a
                // corrupt, cyclic parent chain ends.
                "WITH RECURSIVE tree(key) AS (
                     SELECT key FROM sessions WHERE parent_key = $1
                     UNION
                     SELECT s.key FROM sessions s JOIN tree ON s.parent_key = tree.key
                 )
                 SELECT key FROM tree WHERE key <> $1 ORDER BY key COLLATE \"C\"",
                &[&key],
            )?
            .iter()
            .map(|r| r.try_get::<_, String>(0))
            .collect::<std::result::Result<_, _>>()
            .map_err(StateError::from)
        })?)
    }

    fn parent_of(&self, key: &str) -> Result<Option<Option<String>>> {
        let key = key.to_owned();
        Ok(self.pool.run(move |c| {
            c.query_opt("SELECT parent_key FROM sessions WHERE key = $1", &[&key])?
                .map(|r| r.try_get::<_, Option<String>>(0))
                .transpose()
                .map_err(StateError::from)
        })?)
    }

    fn append_message(&self, m: &NewMessage<'_>) -> Result<Option<u64>> {
        let key = m.session_key.to_owned();
        let at = to_i64(m.at_ms);
        let role = m.role.as_str();
        let source = m.source.map(str::to_owned);
        let text = m.text.to_owned();
        let truncated = m.truncated;
        let seq: Option<i64> = self.pool.run(move |c| {
            let mut tx = c.transaction()?;
            let n = tx.execute(
                "UPDATE sessions SET updated_ms = GREATEST(updated_ms, $2) WHERE key = $1",
                &[&key, &at],
            )?;
            if n == 0 {
                // Dropping the transaction rolls it back.
                return Ok(None);
            }
            let row = tx.query_one(
                "INSERT INTO session_messages (session_key, at_ms, role, source, text, truncated)
                 VALUES ($1, $2, $3, $4, $5, $6) RETURNING seq",
                &[&key, &at, &role, &source, &text, &truncated],
            )?;
            let seq: i64 = row.try_get(0)?;
            tx.commit()?;
            Ok(Some(seq))
        })?;
        Ok(seq.map(|s| u64::try_from(s).unwrap_or(0)))
    }

    fn search_messages(
        &self,
        keys: &[String],
        words: &[&str],
        limit: usize,
    ) -> Result<Vec<MessageRecord>> {
        let keys = keys.to_vec();
        let patterns: Vec<String> = words.iter().map(|w| like_pattern(w)).collect();
        let limit = limit_of(limit);
        self.messages_where(move |c| {
            let mut sql = format!(
                "SELECT {MESSAGE_COLUMNS} FROM session_messages WHERE session_key = ANY($1)"
            );
            for i in 0..patterns.len() {
                sql.push_str(&format!(
                    " AND text COLLATE \"C\" ILIKE ${} ESCAPE '\\'",
                    i + 3
                ));
            }
            sql.push_str(" ORDER BY seq DESC LIMIT $2");
            let mut values: Vec<&(dyn ToSql + Sync)> = vec![&keys, &limit];
            for p in &patterns {
                values.push(p);
            }
            Ok(c.query(&sql, &values)?)
        })
    }

    fn messages(
        &self,
        key: &str,
        limit: usize,
        before_seq: Option<u64>,
    ) -> Result<Vec<MessageRecord>> {
        let key = key.to_owned();
        let before = before_seq.map(to_i64);
        let limit = limit_of(limit);
        self.messages_where(move |c| {
            Ok(c.query(
                &format!(
                    "SELECT {MESSAGE_COLUMNS} FROM session_messages
                     WHERE session_key = $1 AND ($2::bigint IS NULL OR seq < $2)
                     ORDER BY seq DESC LIMIT $3"
                ),
                &[&key, &before, &limit],
            )?)
        })
    }
}

fn raw_message(r: &Row) -> std::result::Result<RawMessage, talon_state::postgres::Error> {
    Ok(RawMessage {
        seq: r.try_get(0)?,
        session_key: r.try_get(1)?,
        at_ms: r.try_get(2)?,
        role: r.try_get(3)?,
        source: r.try_get(4)?,
        text: r.try_get(5)?,
        truncated: r.try_get(6)?,
    })
}

fn raw_session(r: &Row) -> std::result::Result<RawSession, talon_state::postgres::Error> {
    Ok(RawSession {
        key: r.try_get(0)?,
        agent_id: r.try_get(1)?,
        parent_key: r.try_get(2)?,
        spawn_depth: r.try_get(3)?,
        label: r.try_get(4)?,
        status: r.try_get(5)?,
        created_ms: r.try_get(6)?,
        updated_ms: r.try_get(7)?,
        params: r.try_get(8)?,
    })
}
