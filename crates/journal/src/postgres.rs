//! The PostgreSQL engine: one `journal_calls` table shared by a fleet of
//! gateways, each writing as its own member id.
//!
//! The invariants are the database's, not one writer's:
//! - one row per call id: `call_id` is the primary key and every insert is
//!   `ON CONFLICT (call_id) DO NOTHING`, so a second gateway cannot start
//!   the same call id either;
//! - write-ahead: `apply` returns only after the transaction holding the
//!   `started` row committed (`synchronous_commit` on with
//!   [`Durability::Full`]); when it fails the writer answers the `started`
//!   with an error and the call does not run;
//! - first terminal wins: `UPDATE … WHERE outcome IS NULL`, and a trigger
//!   refuses any update of a row whose outcome is set;
//! - recovery marks `interrupted` only the calls of members that are not
//!   live (`talon_state::members`), never this member's or a live one's.
//!
//! A batch is a handful of statements whatever its size: runs of inserts
//! go as one `INSERT … SELECT FROM UNNEST(…) WITH ORDINALITY` (in batch
//! order) and runs of terminal records as one `UPDATE … FROM UNNEST(…)`,
//! so group commit saves round trips here as it saves syncs on SQLite.

use std::collections::HashSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};

use talon_state::Conn;
use talon_state::postgres::types::{ToSql, Type};
use talon_state::postgres::{Row, Transaction};
use talon_state::{PgPool, StateError};

use crate::backend::{JournalBackend, Location, RawRow, Write, finish_row};
use crate::error::{JournalError, Result};
use crate::options::Durability;
use crate::record::{CallEnd, CallRecord, CallStart, InterruptedCall};
use crate::sqlite::INTERRUPTED_SUMMARY;

/// The journal's migrations (`talon_schema` store `journal`); version `i +
/// 1` is entry `i`.
pub(crate) const MIGRATIONS: &[&str] = &["
CREATE TABLE journal_calls (
    call_id        TEXT    PRIMARY KEY,
    seq            BIGINT  GENERATED ALWAYS AS IDENTITY UNIQUE,
    member_id      TEXT    NOT NULL,
    session_key    TEXT    NOT NULL,
    agent_id       TEXT    NOT NULL,
    tool           TEXT    NOT NULL,
    params_digest  TEXT    NOT NULL,
    started_at_ms  BIGINT  NOT NULL,
    write_ahead    BOOLEAN NOT NULL,
    outcome        TEXT CHECK (outcome IS NULL OR outcome IN
                       ('ok', 'error', 'blocked', 'timeout', 'cancelled', 'interrupted')),
    summary        TEXT,
    ended_at_ms    BIGINT,
    duration_us    BIGINT,
    tool_call_id   TEXT
);
CREATE INDEX journal_calls_by_session ON journal_calls (session_key, seq);
CREATE INDEX journal_calls_in_flight ON journal_calls (member_id) WHERE outcome IS NULL;
CREATE INDEX journal_calls_by_tool_call ON journal_calls (session_key, tool_call_id, seq)
    WHERE tool_call_id IS NOT NULL;
CREATE INDEX journal_calls_ended ON journal_calls (ended_at_ms) WHERE outcome IS NOT NULL;
CREATE FUNCTION journal_calls_terminal_is_final() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'a call''s terminal record is final';
END
$$;
CREATE TRIGGER journal_calls_terminal_is_final
    BEFORE UPDATE ON journal_calls
    FOR EACH ROW WHEN (OLD.outcome IS NOT NULL)
    EXECUTE FUNCTION journal_calls_terminal_is_final();
"];

/// The store's name in `talon_schema`.
pub(crate) const STORE: &str = "journal";

const COLUMNS: &str = "call_id, session_key, agent_id, tool, params_digest, started_at_ms, \
                       write_ahead, outcome, summary, ended_at_ms, duration_us, tool_call_id";

/// Stages of one attempt (see `PostgresBackend::run`).
const NOT_RUN: u8 = 0;
const RAN: u8 = 1;
const COMMITTED_TO_TRY: u8 = 2;
/// Stale connections skipped before a failure is reported: a whole pool's
/// worth after a restart.
const STALE_RETRIES: usize = talon_state::MAX_POOL_SIZE;

/// Longest member id accepted.
const MAX_MEMBER_ID_BYTES: usize = 128;

/// Map a foundation error: a database that cannot be reached is the
/// journal's `Unavailable`, anything else keeps its own kind and code.
pub(crate) fn state(during: &'static str) -> impl FnOnce(StateError) -> JournalError {
    move |source| {
        if source.is_unavailable() {
            JournalError::Unavailable {
                reason: source.to_string(),
            }
        } else {
            JournalError::State { during, source }
        }
    }
}

fn to_i64(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

fn to_u64(v: i64) -> u64 {
    v.max(0).cast_unsigned()
}

fn check_member_id(member_id: &str) -> Result<()> {
    let bad = member_id.is_empty()
        || member_id.len() > MAX_MEMBER_ID_BYTES
        || member_id.chars().any(char::is_control);
    if bad {
        return Err(JournalError::Invalid {
            field: "memberId",
            reason: format!(
                "must be 1 to {MAX_MEMBER_ID_BYTES} bytes without control characters; pass the id this gateway registered with talon_state::members"
            ),
        });
    }
    Ok(())
}

/// A batch's write, owned (the pool runs it on its own thread).
enum Owned {
    Insert {
        start: CallStart,
        end: Option<CallEnd>,
    },
    Finish {
        call_id: String,
        end: CallEnd,
    },
    Prune {
        before_ms: u64,
    },
}

impl Owned {
    fn of(write: &Write<'_>) -> Owned {
        match *write {
            Write::Start(start) => Owned::Insert {
                start: start.clone(),
                end: None,
            },
            Write::Record { start, end } => Owned::Insert {
                start: start.clone(),
                end: Some(end.clone()),
            },
            Write::Finish { call_id, end } => Owned::Finish {
                call_id: call_id.to_owned(),
                end: end.clone(),
            },
            Write::Prune { before_ms } => Owned::Prune { before_ms },
        }
    }
}

/// A run of inserts as column arrays (one `UNNEST` parameter each).
#[derive(Default)]
struct InsertColumns<'a> {
    call_id: Vec<&'a str>,
    session_key: Vec<&'a str>,
    agent_id: Vec<&'a str>,
    tool: Vec<&'a str>,
    params_digest: Vec<&'a str>,
    started_at_ms: Vec<i64>,
    write_ahead: Vec<bool>,
    outcome: Vec<Option<&'a str>>,
    summary: Vec<Option<&'a str>>,
    ended_at_ms: Vec<Option<i64>>,
    duration_us: Vec<Option<i64>>,
    tool_call_id: Vec<Option<&'a str>>,
}

/// A run of terminal records as column arrays.
#[derive(Default)]
struct FinishColumns<'a> {
    call_id: Vec<&'a str>,
    outcome: Vec<&'a str>,
    summary: Vec<&'a str>,
    ended_at_ms: Vec<i64>,
    duration_us: Vec<i64>,
}

/// Insert the rows of `run` in order, one statement; per row whether it
/// went in (a call id already stored, or earlier in the run, does not).
fn insert_run(
    tx: &mut Transaction<'_>,
    member_id: &str,
    run: &[&Owned],
) -> std::result::Result<Vec<u64>, StateError> {
    let mut c = InsertColumns::default();
    for write in run {
        let Owned::Insert { start, end } = write else {
            continue;
        };
        c.call_id.push(&start.call_id);
        c.session_key.push(&start.session_key);
        c.agent_id.push(&start.agent_id);
        c.tool.push(&start.tool);
        c.params_digest.push(&start.params_digest);
        c.started_at_ms.push(to_i64(start.at_ms));
        c.write_ahead.push(end.is_none());
        c.outcome.push(end.as_ref().map(|e| e.outcome.as_str()));
        c.summary.push(end.as_ref().map(|e| e.summary.as_str()));
        c.ended_at_ms.push(end.as_ref().map(|e| to_i64(e.at_ms)));
        c.duration_us
            .push(end.as_ref().map(|e| to_i64(e.duration_us)));
        c.tool_call_id.push(start.tool_call_id.as_deref());
    }
    // Typed parameters: one round trip, no separate prepare.
    let rows = tx.query_typed(
        "INSERT INTO journal_calls (call_id, member_id, session_key, agent_id, tool,
             params_digest, started_at_ms, write_ahead, outcome, summary, ended_at_ms,
             duration_us, tool_call_id)
         SELECT u.call_id, $1, u.session_key, u.agent_id, u.tool, u.params_digest,
                u.started_at_ms, u.write_ahead, u.outcome, u.summary, u.ended_at_ms,
                u.duration_us, u.tool_call_id
         FROM UNNEST($2::text[], $3::text[], $4::text[], $5::text[], $6::text[],
                     $7::bigint[], $8::boolean[], $9::text[], $10::text[], $11::bigint[],
                     $12::bigint[], $13::text[])
              WITH ORDINALITY AS u(call_id, session_key, agent_id, tool, params_digest,
                                   started_at_ms, write_ahead, outcome, summary,
                                   ended_at_ms, duration_us, tool_call_id, n)
         ORDER BY u.n
         ON CONFLICT (call_id) DO NOTHING
         RETURNING call_id",
        &[
            (&member_id, Type::TEXT),
            (&c.call_id, Type::TEXT_ARRAY),
            (&c.session_key, Type::TEXT_ARRAY),
            (&c.agent_id, Type::TEXT_ARRAY),
            (&c.tool, Type::TEXT_ARRAY),
            (&c.params_digest, Type::TEXT_ARRAY),
            (&c.started_at_ms, Type::INT8_ARRAY),
            (&c.write_ahead, Type::BOOL_ARRAY),
            (&c.outcome, Type::TEXT_ARRAY),
            (&c.summary, Type::TEXT_ARRAY),
            (&c.ended_at_ms, Type::INT8_ARRAY),
            (&c.duration_us, Type::INT8_ARRAY),
            (&c.tool_call_id, Type::TEXT_ARRAY),
        ],
    )?;
    let mut inserted: HashSet<String> = rows.iter().map(|r| r.get(0)).collect();
    // The first row of a call id in the run is the one that went in.
    Ok(c.call_id
        .iter()
        .map(|id| u64::from(inserted.remove(*id)))
        .collect())
}

/// Write the terminal records of `run`, one statement; per record whether
/// it was written (the call has a row and no terminal record yet).
fn finish_run(
    tx: &mut Transaction<'_>,
    run: &[&Owned],
) -> std::result::Result<Vec<u64>, StateError> {
    let mut seen = HashSet::new();
    let mut first = Vec::with_capacity(run.len());
    let mut c = FinishColumns::default();
    for write in run {
        let Owned::Finish { call_id, end } = write else {
            continue;
        };
        // A second terminal record for one call in the same batch loses,
        // as it would in a later batch.
        let is_first = seen.insert(call_id.as_str());
        first.push((call_id.as_str(), is_first));
        if is_first {
            c.call_id.push(call_id);
            c.outcome.push(end.outcome.as_str());
            c.summary.push(&end.summary);
            c.ended_at_ms.push(to_i64(end.at_ms));
            c.duration_us.push(to_i64(end.duration_us));
        }
    }
    let rows = tx.query_typed(
        "UPDATE journal_calls c
         SET outcome = u.outcome, summary = u.summary, ended_at_ms = u.ended_at_ms,
             duration_us = u.duration_us
         FROM UNNEST($1::text[], $2::text[], $3::text[], $4::bigint[], $5::bigint[])
              AS u(call_id, outcome, summary, ended_at_ms, duration_us)
         WHERE c.call_id = u.call_id AND c.outcome IS NULL
         RETURNING c.call_id",
        &[
            (&c.call_id, Type::TEXT_ARRAY),
            (&c.outcome, Type::TEXT_ARRAY),
            (&c.summary, Type::TEXT_ARRAY),
            (&c.ended_at_ms, Type::INT8_ARRAY),
            (&c.duration_us, Type::INT8_ARRAY),
        ],
    )?;
    let written: HashSet<String> = rows.iter().map(|r| r.get(0)).collect();
    Ok(first
        .into_iter()
        .map(|(id, is_first)| u64::from(is_first && written.contains(id)))
        .collect())
}

fn apply_all(
    tx: &mut Transaction<'_>,
    member_id: &str,
    writes: &[Owned],
) -> std::result::Result<Vec<u64>, StateError> {
    let mut changed = Vec::with_capacity(writes.len());
    let mut i = 0;
    while i < writes.len() {
        match &writes[i] {
            Owned::Prune { before_ms } => {
                let n = tx.execute(
                    "DELETE FROM journal_calls WHERE outcome IS NOT NULL AND ended_at_ms < $1",
                    &[&to_i64(*before_ms)],
                )?;
                changed.push(n);
                i += 1;
            }
            Owned::Insert { .. } => {
                let run: Vec<&Owned> = writes[i..]
                    .iter()
                    .take_while(|w| matches!(w, Owned::Insert { .. }))
                    .collect();
                i += run.len();
                changed.extend(insert_run(tx, member_id, &run)?);
            }
            Owned::Finish { .. } => {
                let run: Vec<&Owned> = writes[i..]
                    .iter()
                    .take_while(|w| matches!(w, Owned::Finish { .. }))
                    .collect();
                i += run.len();
                changed.extend(finish_run(tx, &run)?);
            }
        }
    }
    Ok(changed)
}

fn read_row(r: &Row) -> RawRow {
    let outcome: Option<String> = r.get(7);
    let ended: Option<i64> = r.get(9);
    let end = match (&outcome, ended) {
        (Some(_), Some(at)) => Some(CallEnd {
            // Replaced by `finish_row` once the name is checked.
            outcome: crate::record::Outcome::Error,
            summary: r.get::<_, Option<String>>(8).unwrap_or_default(),
            at_ms: to_u64(at),
            duration_us: to_u64(r.get::<_, Option<i64>>(10).unwrap_or(0)),
        }),
        _ => None,
    };
    RawRow {
        record: CallRecord {
            call_id: r.get(0),
            session_key: r.get(1),
            agent_id: r.get(2),
            tool: r.get(3),
            params_digest: r.get(4),
            started_at_ms: to_u64(r.get(5)),
            write_ahead: r.get(6),
            tool_call_id: r.get(11),
            end,
        },
        outcome,
    }
}

/// The PostgreSQL engine of one gateway (fleet member).
#[derive(Debug)]
pub(crate) struct PostgresBackend {
    pool: PgPool,
    member_id: String,
    location: Location,
    durability: Durability,
}

impl PostgresBackend {
    /// Migrate the journal's tables (refusing a newer schema) and return
    /// the engine and whether this open created the table.
    pub(crate) fn open(
        pool: &PgPool,
        member_id: &str,
        durability: Durability,
    ) -> Result<(Self, bool)> {
        check_member_id(member_id)?;
        let before: Option<i32> = pool
            .run(|client| {
                Ok(client
                    .query_opt(
                        "SELECT version FROM talon_schema WHERE store = $1",
                        &[&STORE],
                    )?
                    .map(|row| row.get(0)))
            })
            .map_err(state("reading the journal's schema version"))?;
        pool.migrate(STORE, MIGRATIONS)
            .map_err(state("migrating the journal's tables"))?;
        Ok((
            PostgresBackend {
                pool: pool.clone(),
                member_id: member_id.to_owned(),
                location: Location::Postgres {
                    member_id: member_id.to_owned(),
                },
                durability,
            },
            before.is_none(),
        ))
    }

    /// Run `f` on a pooled connection. A connection the server dropped is
    /// only noticed when used (the driver learns of the close on its next
    /// round trip), so after a database restart each pooled connection
    /// fails once. `f` marks [`COMMITTED_TO_TRY`] once its first round trip
    /// (the `BEGIN`, or a read) succeeded; while it had not, nothing was
    /// applied, and the work is tried again on the next connection (which
    /// the pool reopens), a bounded number of times. A pool that cannot
    /// connect at all fails at once (`f` never ran).
    fn run<T, F>(&self, during: &'static str, f: F) -> Result<T>
    where
        T: Send + 'static,
        F: Fn(&mut Conn, &AtomicU8) -> std::result::Result<T, StateError> + Clone + Send + 'static,
    {
        let mut retries = 0;
        loop {
            let stage = Arc::new(AtomicU8::new(NOT_RUN));
            let (attempt, seen) = (f.clone(), Arc::clone(&stage));
            let result = self.pool.run(move |client| {
                seen.store(RAN, Ordering::Release);
                attempt(client, &seen)
            });
            match result {
                Err(e)
                    if e.is_unavailable()
                        && stage.load(Ordering::Acquire) == RAN
                        && retries < STALE_RETRIES =>
                {
                    retries += 1;
                    tracing::debug!(error = %e, "state database connection was stale; trying the next one");
                }
                other => return other.map_err(state(during)),
            }
        }
    }

    /// A read: one statement, safe to try again on a stale connection.
    fn read<T, F>(&self, during: &'static str, f: F) -> Result<T>
    where
        T: Send + 'static,
        F: Fn(&mut Conn) -> std::result::Result<T, StateError> + Clone + Send + 'static,
    {
        self.run(during, move |client, _| f(client))
    }

    fn records(rows: Vec<RawRow>) -> Result<Vec<CallRecord>> {
        rows.into_iter().map(finish_row).collect()
    }
}

/// A read with typed parameters: one round trip, no separate prepare.
fn query_rows(
    client: &mut Conn,
    sql: &str,
    params: &[(&(dyn ToSql + Sync), Type)],
) -> std::result::Result<Vec<RawRow>, StateError> {
    Ok(client
        .query_typed(sql, params)?
        .iter()
        .map(read_row)
        .collect())
}

impl JournalBackend for PostgresBackend {
    fn location(&self) -> &Location {
        &self.location
    }

    fn apply(&self, writes: &[Write<'_>]) -> Result<Vec<u64>> {
        let owned: Arc<Vec<Owned>> = Arc::new(writes.iter().map(Owned::of).collect());
        let member_id: Arc<str> = Arc::from(self.member_id.as_str());
        let relaxed = self.durability == Durability::ProcessCrash;
        self.run("committing a batch", move |client, stage| {
            let mut tx = client.transaction()?;
            // From here on a failure may leave the outcome unknown: it
            // is reported, never retried.
            stage.store(COMMITTED_TO_TRY, Ordering::Release);
            // The journal's durability is its own, whatever the server's
            // default: `on` (every pooled connection's own setting, see
            // `talon_state`) returns after the WAL flush (and the standbys
            // the server waits for); `off` once the server has the commit
            // in memory, which survives this gateway dying but not the
            // database server crashing.
            if relaxed {
                tx.batch_execute("SET LOCAL synchronous_commit = off")?;
            }
            let changed = apply_all(&mut tx, &member_id, &owned)?;
            tx.commit()?;
            Ok(changed)
        })
    }

    fn recover(&self, now_ms: u64) -> Result<Vec<InterruptedCall>> {
        let member_id = self.member_id.clone();
        let sql = format!(
            "UPDATE journal_calls
             SET outcome = 'interrupted', summary = $1, ended_at_ms = $2,
                 duration_us = GREATEST(0, $2 - started_at_ms) * 1000
             WHERE outcome IS NULL AND member_id <> $3
               AND member_id NOT IN ({})
             RETURNING seq, call_id, session_key, tool, started_at_ms, tool_call_id",
            talon_state::members::LIVE_MEMBER_IDS_SQL
        );
        let mut found = self.read("recovering in-flight calls", move |client| {
            let rows = client.query(&sql, &[&INTERRUPTED_SUMMARY, &to_i64(now_ms), &member_id])?;
            Ok(rows
                .iter()
                .map(|r| {
                    (
                        r.get::<_, i64>(0),
                        InterruptedCall {
                            call_id: r.get(1),
                            session_key: r.get(2),
                            tool: r.get(3),
                            started_at_ms: to_u64(r.get(4)),
                            tool_call_id: r.get(5),
                        },
                    )
                })
                .collect::<Vec<_>>())
        })?;
        found.sort_by_key(|(seq, _)| *seq);
        Ok(found.into_iter().map(|(_, call)| call).collect())
    }

    fn recovery_interval(&self) -> Option<std::time::Duration> {
        Some(talon_state::members::LIVE_WINDOW)
    }

    fn live_bytes(&self) -> Result<u64> {
        self.read("measuring the journal", |client| {
            let row = client.query_one(
                "SELECT COALESCE(SUM(pg_column_size(c.*)), 0)::BIGINT FROM journal_calls c",
                &[],
            )?;
            Ok(to_u64(row.get(0)))
        })
    }

    fn row_count(&self) -> Result<u64> {
        self.read("counting rows", |client| {
            let row = client.query_one("SELECT COUNT(*) FROM journal_calls", &[])?;
            Ok(to_u64(row.get(0)))
        })
    }

    fn delete_oldest_terminal(&self, limit: u64, compactable_only: bool) -> Result<u64> {
        let filter = if compactable_only {
            "outcome IS NOT NULL AND (NOT write_ahead OR outcome = 'blocked')"
        } else {
            "outcome IS NOT NULL"
        };
        let sql = format!(
            "DELETE FROM journal_calls WHERE call_id IN
                 (SELECT call_id FROM journal_calls WHERE {filter} ORDER BY seq LIMIT $1)"
        );
        self.read("applying retention", move |client| {
            Ok(client.execute(&sql, &[&to_i64(limit)])?)
        })
    }

    fn shrink(&self) -> Result<()> {
        // The server's autovacuum reuses the space of deleted rows.
        Ok(())
    }

    fn get(&self, call_id: &str) -> Result<Option<CallRecord>> {
        let id = call_id.to_owned();
        let rows = self.read("reading a call", move |client| {
            query_rows(
                client,
                &format!("SELECT {COLUMNS} FROM journal_calls WHERE call_id = $1"),
                &[(&id, Type::TEXT)],
            )
        })?;
        Ok(Self::records(rows)?.pop())
    }

    fn history(&self, session_key: &str, limit: usize) -> Result<Vec<CallRecord>> {
        let key = session_key.to_owned();
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let rows = self.read("reading session history", move |client| {
            query_rows(
                client,
                &format!(
                    "SELECT {COLUMNS} FROM journal_calls WHERE session_key = $1
                     ORDER BY seq DESC LIMIT $2"
                ),
                &[(&key, Type::TEXT), (&limit, Type::INT8)],
            )
        })?;
        Self::records(rows)
    }

    fn by_tool_call_id(
        &self,
        session_key: &str,
        tool_call_id: &str,
        limit: usize,
    ) -> Result<Vec<CallRecord>> {
        let (key, tc) = (session_key.to_owned(), tool_call_id.to_owned());
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let rows = self.read("finding a call by toolCallId", move |client| {
            query_rows(
                client,
                &format!(
                    "SELECT {COLUMNS} FROM journal_calls
                     WHERE session_key = $1 AND tool_call_id = $2
                     ORDER BY seq DESC LIMIT $3"
                ),
                &[(&key, Type::TEXT), (&tc, Type::TEXT), (&limit, Type::INT8)],
            )
        })?;
        Self::records(rows)
    }
}
