//! The SQLite engine (the embedded default): opening and migrating the
//! file, recovering calls left in flight, and the statements the writer and
//! the readers run, behind [`JournalBackend`].

use std::fs::{File, OpenOptions};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use std::sync::{Mutex, MutexGuard, PoisonError};

use rusqlite::{Connection, OpenFlags, OptionalExtension, Row, params};

use crate::backend::{JournalBackend, Location, RawRow, Write, finish_row};
use crate::error::{JournalError, Result};
use crate::options::Durability;
use crate::record::{CallEnd, CallRecord, CallStart, InterruptedCall, Outcome};

/// The schema this build writes (`PRAGMA user_version`).
pub(crate) const SCHEMA_VERSION: i64 = 2;

/// The summary stored on calls found in flight at open.
pub(crate) const INTERRUPTED_SUMMARY: &str =
    "interrupted: the process stopped while the call was running; it was not re-run";

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS calls (
    seq            INTEGER PRIMARY KEY,
    call_id        TEXT    NOT NULL UNIQUE,
    session_key    TEXT    NOT NULL,
    agent_id       TEXT    NOT NULL,
    tool           TEXT    NOT NULL,
    params_digest  TEXT    NOT NULL,
    started_at_ms  INTEGER NOT NULL,
    write_ahead    INTEGER NOT NULL,
    outcome        TEXT CHECK (outcome IS NULL OR outcome IN
                       ('ok', 'error', 'blocked', 'timeout', 'cancelled', 'interrupted')),
    summary        TEXT,
    ended_at_ms    INTEGER,
    duration_us    INTEGER
);
CREATE INDEX IF NOT EXISTS calls_by_session ON calls (session_key, seq);
CREATE INDEX IF NOT EXISTS calls_in_flight ON calls (seq) WHERE outcome IS NULL;
CREATE TRIGGER IF NOT EXISTS calls_terminal_is_final
BEFORE UPDATE ON calls WHEN OLD.outcome IS NOT NULL
BEGIN
    SELECT RAISE(ABORT, 'a call''s terminal record is final');
END;
";

/// Version 2: the caller's `toolCallId` in its own column (recovery used
/// to leave it only in the summary it overwrites).
const MIGRATE_2: &str = "
ALTER TABLE calls ADD COLUMN tool_call_id TEXT;
CREATE INDEX IF NOT EXISTS calls_by_tool_call ON calls (session_key, tool_call_id, seq)
    WHERE tool_call_id IS NOT NULL;
";

const COLUMNS: &str = "call_id, session_key, agent_id, tool, params_digest, started_at_ms, \
                       write_ahead, outcome, summary, ended_at_ms, duration_us, tool_call_id";

pub(crate) fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

fn open_error(path: &Path, reason: impl Into<String>) -> JournalError {
    JournalError::Open {
        path: path.to_path_buf(),
        reason: reason.into(),
    }
}

pub(crate) fn storage(during: &'static str) -> impl FnOnce(rusqlite::Error) -> JournalError {
    move |source| JournalError::Storage { during, source }
}

/// The lock file next to the journal.
pub(crate) fn lock_path(path: &Path) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(".lock");
    PathBuf::from(name)
}

/// Take the journal's exclusive lock, so that no second process (or second
/// handle in this one) recovers calls the first is still running.
pub(crate) fn take_lock(path: &Path) -> Result<File> {
    let lock = lock_path(path);
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .mode(0o600)
        .open(&lock)
        .map_err(|e| {
            open_error(
                path,
                format!("cannot create lock file {}: {e}", lock.display()),
            )
        })?;
    match file.try_lock() {
        Ok(()) => Ok(file),
        Err(std::fs::TryLockError::WouldBlock) => Err(JournalError::Locked {
            path: path.to_path_buf(),
            lock,
        }),
        Err(std::fs::TryLockError::Error(e)) => Err(open_error(
            path,
            format!("cannot lock {}: {e}", lock.display()),
        )),
    }
}

/// Make sure `path` can hold the journal, creating its directory and an
/// empty file with mode 0600. Returns whether the file was created.
pub(crate) fn prepare_file(path: &Path) -> Result<bool> {
    if path.as_os_str().is_empty() {
        return Err(open_error(
            path,
            "the path is empty; pass the journal file's path",
        ));
    }
    if let Some(parent) = path.parent()
        && !parent.as_os_str().is_empty()
    {
        std::fs::create_dir_all(parent).map_err(|e| {
            open_error(
                path,
                format!("cannot create directory {}: {e}", parent.display()),
            )
        })?;
    }
    match std::fs::symlink_metadata(path) {
        Ok(meta) if meta.is_file() => Ok(false),
        Ok(meta) if meta.is_dir() => Err(open_error(
            path,
            "it is a directory; pass a file path such as <state dir>/journal.sqlite",
        )),
        Ok(_) => Err(open_error(
            path,
            "it is not a regular file (a symlink or special file); pass a plain file path",
        )),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(0o600)
                .open(path)
                .map_err(|e| open_error(path, format!("cannot create the file: {e}")))?;
            Ok(true)
        }
        Err(e) => Err(open_error(path, format!("cannot inspect the file: {e}"))),
    }
}

/// Open the writer's connection: WAL, the sync level `durability` asks
/// for, schema migrated.
pub(crate) fn open_writer(path: &Path, durability: Durability) -> Result<Connection> {
    let conn = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .map_err(|e| open_error(path, e.to_string()))?;
    let setup = |conn: &Connection| -> rusqlite::Result<i64> {
        conn.busy_timeout(Duration::from_secs(5))?;
        conn.pragma_query_value(None, "user_version", |r| r.get(0))
    };
    let found = setup(&conn)
        .map_err(|e| open_error(path, format!("{e} (is this a call journal database?)")))?;
    if found > SCHEMA_VERSION {
        return Err(JournalError::SchemaTooNew {
            path: path.to_path_buf(),
            found,
            supported: SCHEMA_VERSION,
        });
    }
    let mode: String = conn
        .pragma_update_and_check(None, "journal_mode", "WAL", |r| r.get(0))
        .map_err(|e| open_error(path, format!("cannot switch to WAL: {e}")))?;
    if !mode.eq_ignore_ascii_case("wal") {
        return Err(open_error(
            path,
            format!(
                "the file system refused WAL mode (got `{mode}`); put the state dir on a local disk"
            ),
        ));
    }
    let sync = match durability {
        Durability::Full => "FULL",
        Durability::ProcessCrash => "NORMAL",
    };
    conn.execute_batch(&format!("PRAGMA synchronous = {sync};"))
        .map_err(|e| open_error(path, e.to_string()))?;
    // Freed pages go back to the file system on `incremental_vacuum`
    // (retention). Switching an existing file takes one VACUUM, once.
    let auto_vacuum: i64 = conn
        .pragma_query_value(None, "auto_vacuum", |r| r.get(0))
        .map_err(|e| open_error(path, e.to_string()))?;
    if auto_vacuum != 2 {
        conn.execute_batch("PRAGMA auto_vacuum = INCREMENTAL; VACUUM;")
            .map_err(|e| open_error(path, format!("cannot turn on incremental vacuum: {e}")))?;
    }
    if found < SCHEMA_VERSION {
        // Each step runs once, in order, in one transaction: a version-1
        // file keeps its rows and gains the new columns.
        let mut steps = String::new();
        if found < 1 {
            steps.push_str(SCHEMA);
        }
        if found < 2 {
            steps.push_str(MIGRATE_2);
        }
        conn.execute_batch(&format!(
            "BEGIN IMMEDIATE; {steps} PRAGMA user_version = {SCHEMA_VERSION}; COMMIT;"
        ))
        .map_err(|e| {
            open_error(
                path,
                format!("cannot bring the schema from version {found} to {SCHEMA_VERSION}: {e}"),
            )
        })?;
    }
    Ok(conn)
}

/// Open a read-only connection for `history` and `get`.
pub(crate) fn open_reader(path: &Path) -> Result<Connection> {
    let conn = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .map_err(|e| open_error(path, e.to_string()))?;
    conn.busy_timeout(Duration::from_secs(5))
        .map_err(|e| open_error(path, e.to_string()))?;
    Ok(conn)
}

/// Mark every call still in flight `interrupted` (one transaction) and
/// report them.
pub(crate) fn recover(conn: &mut Connection, now: u64) -> Result<Vec<InterruptedCall>> {
    let tx = conn
        .transaction()
        .map_err(storage("recovering in-flight calls"))?;
    let interrupted = {
        let mut stmt = tx
            .prepare(
                "SELECT call_id, session_key, tool, started_at_ms, tool_call_id FROM calls
                 WHERE outcome IS NULL ORDER BY seq",
            )
            .map_err(storage("recovering in-flight calls"))?;
        let rows = stmt
            .query_map([], |r| {
                Ok(InterruptedCall {
                    call_id: r.get(0)?,
                    session_key: r.get(1)?,
                    tool: r.get(2)?,
                    started_at_ms: r.get::<_, i64>(3)?.max(0).cast_unsigned(),
                    tool_call_id: r.get(4)?,
                })
            })
            .map_err(storage("recovering in-flight calls"))?;
        rows.collect::<rusqlite::Result<Vec<_>>>()
            .map_err(storage("recovering in-flight calls"))?
    };
    let now_i = i64::try_from(now).unwrap_or(i64::MAX);
    // Only the terminal columns are written: the call's identity
    // (`call_id`, `tool_call_id`, session, tool) stays as started.
    tx.execute(
        "UPDATE calls SET outcome = 'interrupted', summary = ?1, ended_at_ms = ?2,
             duration_us = MAX(0, ?2 - started_at_ms) * 1000
         WHERE outcome IS NULL",
        params![INTERRUPTED_SUMMARY, now_i],
    )
    .map_err(storage("recovering in-flight calls"))?;
    tx.commit().map_err(storage("recovering in-flight calls"))?;
    Ok(interrupted)
}

fn to_i64(v: u64) -> i64 {
    // Inputs are validated to fit; saturate rather than wrap regardless.
    i64::try_from(v).unwrap_or(i64::MAX)
}

/// Insert a `started` record. `false` when the call id is taken.
pub(crate) fn insert_started(conn: &Connection, start: &CallStart) -> rusqlite::Result<bool> {
    let mut stmt = conn.prepare_cached(
        "INSERT INTO calls (call_id, session_key, agent_id, tool, params_digest,
                            started_at_ms, write_ahead, tool_call_id)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, 1, ?7)
         ON CONFLICT (call_id) DO NOTHING",
    )?;
    let n = stmt.execute(params![
        start.call_id,
        start.session_key,
        start.agent_id,
        start.tool,
        start.params_digest,
        to_i64(start.at_ms),
        start.tool_call_id,
    ])?;
    Ok(n == 1)
}

/// Write the terminal record of a started call. `false` when the call has
/// no row or already has a terminal record (the first one wins).
pub(crate) fn update_finished(
    conn: &Connection,
    call_id: &str,
    end: &CallEnd,
) -> rusqlite::Result<bool> {
    let mut stmt = conn.prepare_cached(
        "UPDATE calls SET outcome = ?2, summary = ?3, ended_at_ms = ?4, duration_us = ?5
         WHERE call_id = ?1 AND outcome IS NULL",
    )?;
    let n = stmt.execute(params![
        call_id,
        end.outcome.as_str(),
        end.summary,
        to_i64(end.at_ms),
        to_i64(end.duration_us),
    ])?;
    Ok(n == 1)
}

/// Insert a whole record (no write-ahead). `false` when the call id is taken.
pub(crate) fn insert_whole(
    conn: &Connection,
    start: &CallStart,
    end: &CallEnd,
) -> rusqlite::Result<bool> {
    let mut stmt = conn.prepare_cached(
        "INSERT INTO calls (call_id, session_key, agent_id, tool, params_digest,
                            started_at_ms, write_ahead, outcome, summary, ended_at_ms,
                            duration_us, tool_call_id)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, 0, ?7, ?8, ?9, ?10, ?11)
         ON CONFLICT (call_id) DO NOTHING",
    )?;
    let n = stmt.execute(params![
        start.call_id,
        start.session_key,
        start.agent_id,
        start.tool,
        start.params_digest,
        to_i64(start.at_ms),
        end.outcome.as_str(),
        end.summary,
        to_i64(end.at_ms),
        to_i64(end.duration_us),
        start.tool_call_id,
    ])?;
    Ok(n == 1)
}

/// Delete terminal records that ended before `before_ms`; in-flight calls
/// are never deleted.
pub(crate) fn prune(conn: &Connection, before_ms: u64) -> rusqlite::Result<u64> {
    let n = conn.execute(
        "DELETE FROM calls WHERE outcome IS NOT NULL AND ended_at_ms < ?1",
        params![to_i64(before_ms)],
    )?;
    Ok(n as u64)
}

/// Bytes of live data (pages in use, free pages not counted).
pub(crate) fn live_bytes(conn: &Connection) -> rusqlite::Result<u64> {
    let pages: i64 = conn.pragma_query_value(None, "page_count", |r| r.get(0))?;
    let free: i64 = conn.pragma_query_value(None, "freelist_count", |r| r.get(0))?;
    let size: i64 = conn.pragma_query_value(None, "page_size", |r| r.get(0))?;
    Ok(((pages - free).max(0) * size).cast_unsigned())
}

/// Delete up to `limit` of the oldest terminal records; with
/// `compactable_only`, only those of calls that wrote no `started` record
/// (read-only tools) or were refused. Never a call in flight.
pub(crate) fn delete_oldest_terminal(
    conn: &Connection,
    limit: u64,
    compactable_only: bool,
) -> rusqlite::Result<u64> {
    let filter = if compactable_only {
        "outcome IS NOT NULL AND (write_ahead = 0 OR outcome = 'blocked')"
    } else {
        "outcome IS NOT NULL"
    };
    let n = conn.execute(
        &format!(
            "DELETE FROM calls WHERE seq IN
                 (SELECT seq FROM calls WHERE {filter} ORDER BY seq LIMIT ?1)"
        ),
        params![to_i64(limit)],
    )?;
    Ok(n as u64)
}

/// Rows in the table.
pub(crate) fn row_count(conn: &Connection) -> rusqlite::Result<u64> {
    let n: i64 = conn.query_row("SELECT COUNT(*) FROM calls", [], |r| r.get(0))?;
    Ok(n.max(0).cast_unsigned())
}

/// Give free pages back to the file system: `incremental_vacuum` moves
/// them to the end and cuts them off, and a truncating checkpoint carries
/// that into the database file and empties the WAL.
pub(crate) fn shrink(conn: &Connection) -> rusqlite::Result<()> {
    conn.execute_batch("PRAGMA incremental_vacuum;")?;
    // `(busy, log, checkpointed)`; a busy reader only postpones the shrink.
    conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))
}

fn read_row(r: &Row<'_>) -> rusqlite::Result<RawRow> {
    let started: i64 = r.get(5)?;
    let write_ahead: i64 = r.get(6)?;
    let outcome: Option<String> = r.get(7)?;
    let summary: Option<String> = r.get(8)?;
    let ended: Option<i64> = r.get(9)?;
    let duration: Option<i64> = r.get(10)?;
    let end = match (&outcome, ended) {
        (Some(_), Some(at)) => Some(CallEnd {
            // Replaced below once the name is checked.
            outcome: Outcome::Error,
            summary: summary.unwrap_or_default(),
            at_ms: at.max(0).cast_unsigned(),
            duration_us: duration.unwrap_or(0).max(0).cast_unsigned(),
        }),
        _ => None,
    };
    Ok(RawRow {
        record: CallRecord {
            call_id: r.get(0)?,
            session_key: r.get(1)?,
            agent_id: r.get(2)?,
            tool: r.get(3)?,
            params_digest: r.get(4)?,
            started_at_ms: started.max(0).cast_unsigned(),
            write_ahead: write_ahead != 0,
            tool_call_id: r.get(11)?,
            end,
        },
        outcome,
    })
}

/// One call by id.
pub(crate) fn get(conn: &Connection, call_id: &str) -> Result<Option<CallRecord>> {
    let mut stmt = conn
        .prepare_cached(&format!("SELECT {COLUMNS} FROM calls WHERE call_id = ?1"))
        .map_err(storage("reading a call"))?;
    let raw = stmt
        .query_row(params![call_id], read_row)
        .optional()
        .map_err(storage("reading a call"))?;
    raw.map(finish_row).transpose()
}

/// The newest `limit` calls of a session, newest first.
pub(crate) fn history(
    conn: &Connection,
    session_key: &str,
    limit: usize,
) -> Result<Vec<CallRecord>> {
    let mut stmt = conn
        .prepare_cached(&format!(
            "SELECT {COLUMNS} FROM calls WHERE session_key = ?1 ORDER BY seq DESC LIMIT ?2"
        ))
        .map_err(storage("reading session history"))?;
    let rows = stmt
        .query_map(
            params![session_key, i64::try_from(limit).unwrap_or(i64::MAX)],
            read_row,
        )
        .map_err(storage("reading session history"))?;
    let mut out = Vec::new();
    for raw in rows {
        out.push(finish_row(
            raw.map_err(storage("reading session history"))?,
        )?);
    }
    Ok(out)
}

/// A session's calls with the caller's id `tool_call_id`, newest first, at
/// most `limit`.
pub(crate) fn by_tool_call_id(
    conn: &Connection,
    session_key: &str,
    tool_call_id: &str,
    limit: usize,
) -> Result<Vec<CallRecord>> {
    let mut stmt = conn
        .prepare_cached(&format!(
            "SELECT {COLUMNS} FROM calls WHERE session_key = ?1 AND tool_call_id = ?2
             ORDER BY seq DESC LIMIT ?3"
        ))
        .map_err(storage("finding a call by toolCallId"))?;
    let rows = stmt
        .query_map(
            params![
                session_key,
                tool_call_id,
                i64::try_from(limit).unwrap_or(i64::MAX)
            ],
            read_row,
        )
        .map_err(storage("finding a call by toolCallId"))?;
    let mut out = Vec::new();
    for raw in rows {
        out.push(finish_row(
            raw.map_err(storage("finding a call by toolCallId"))?,
        )?);
    }
    Ok(out)
}

/// The SQLite engine: a writer connection (used by the writer thread only),
/// a read-only connection for lookups, and the file lock, held for the
/// engine's life (fields drop in order: connections first, then the lock).
#[derive(Debug)]
pub(crate) struct SqliteBackend {
    location: Location,
    writer: Mutex<Connection>,
    reader: Mutex<Connection>,
    _lock: File,
}

fn lock_conn(conn: &Mutex<Connection>) -> MutexGuard<'_, Connection> {
    // A connection holds no half-written state across a panic: SQLite
    // rolls back a transaction that was not committed.
    conn.lock().unwrap_or_else(PoisonError::into_inner)
}

impl SqliteBackend {
    /// Create (mode 0600) if needed, lock, migrate; the flag says whether
    /// the file was created. Recovery is the journal's next step.
    pub(crate) fn open(path: &Path, durability: Durability) -> Result<(Self, bool)> {
        let created = prepare_file(path)?;
        let lock = take_lock(path)?;
        let writer = open_writer(path, durability)?;
        let reader = open_reader(path)?;
        Ok((
            SqliteBackend {
                location: Location::File(path.to_path_buf()),
                writer: Mutex::new(writer),
                reader: Mutex::new(reader),
                _lock: lock,
            },
            created,
        ))
    }
}

impl JournalBackend for SqliteBackend {
    fn location(&self) -> &Location {
        &self.location
    }

    fn apply(&self, writes: &[Write<'_>]) -> Result<Vec<u64>> {
        let mut conn = lock_conn(&self.writer);
        let during = "committing a batch";
        let tx = conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
            .map_err(storage(during))?;
        let mut changed = Vec::with_capacity(writes.len());
        for write in writes {
            let n = match *write {
                Write::Start(start) => {
                    u64::from(insert_started(&tx, start).map_err(storage(during))?)
                }
                Write::Finish { call_id, end } => {
                    u64::from(update_finished(&tx, call_id, end).map_err(storage(during))?)
                }
                Write::Record { start, end } => {
                    u64::from(insert_whole(&tx, start, end).map_err(storage(during))?)
                }
                Write::Prune { before_ms } => prune(&tx, before_ms).map_err(storage(during))?,
            };
            changed.push(n);
        }
        tx.commit().map_err(storage(during))?;
        Ok(changed)
    }

    fn recover(&self, now_ms: u64) -> Result<Vec<InterruptedCall>> {
        recover(&mut lock_conn(&self.writer), now_ms)
    }

    fn live_bytes(&self) -> Result<u64> {
        live_bytes(&lock_conn(&self.writer)).map_err(storage("measuring the journal"))
    }

    fn row_count(&self) -> Result<u64> {
        row_count(&lock_conn(&self.writer)).map_err(storage("counting rows"))
    }

    fn delete_oldest_terminal(&self, limit: u64, compactable_only: bool) -> Result<u64> {
        delete_oldest_terminal(&lock_conn(&self.writer), limit, compactable_only)
            .map_err(storage("applying retention"))
    }

    fn shrink(&self) -> Result<()> {
        shrink(&lock_conn(&self.writer)).map_err(storage("shrinking the file"))
    }

    fn get(&self, call_id: &str) -> Result<Option<CallRecord>> {
        get(&lock_conn(&self.reader), call_id)
    }

    fn history(&self, session_key: &str, limit: usize) -> Result<Vec<CallRecord>> {
        history(&lock_conn(&self.reader), session_key, limit)
    }

    fn by_tool_call_id(
        &self,
        session_key: &str,
        tool_call_id: &str,
        limit: usize,
    ) -> Result<Vec<CallRecord>> {
        by_tool_call_id(&lock_conn(&self.reader), session_key, tool_call_id, limit)
    }
}

#[cfg(test)]
#[path = "sqlite_tests.rs"]
mod tests;
