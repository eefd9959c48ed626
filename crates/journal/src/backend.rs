//! The storage seam: what the journal needs from a database engine.
//!
//! Everything that is not persistence stays above this trait, once: the
//! caller-side validation and in-flight map ([`CallJournal`](crate::CallJournal)),
//! the writer thread's batching (group commit), its retry and fail-fast
//! health, and the retention policy (which rows go, in which order). An
//! engine only runs statements: it applies a batch of writes in one
//! transaction, recovers calls left in flight, answers reads, and offers
//! the few primitives retention is built from.
//!
//! The journal's invariants are enforced by each engine in its own SQL, so
//! they hold even for a second writer on the same database: one row per
//! call id (a unique key, `ON CONFLICT DO NOTHING`), first terminal wins
//! (`UPDATE … WHERE outcome IS NULL`, plus a trigger refusing any update of
//! a terminal row), and a `started` row committed before `apply` returns.

use std::fmt::Debug;
use std::path::Path;

use crate::error::{JournalError, Result};
use crate::record::{CallEnd, CallRecord, CallStart, InterruptedCall};

/// One write of a batch.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Write<'a> {
    /// Insert a `started` record (write-ahead); 0 rows when the id is taken.
    Start(&'a CallStart),
    /// Write the terminal columns of a started call; 0 rows when it has no
    /// row or already has a terminal record (the first one wins).
    Finish { call_id: &'a str, end: &'a CallEnd },
    /// Insert a whole record (no write-ahead); 0 rows when the id is taken.
    Record {
        start: &'a CallStart,
        end: &'a CallEnd,
    },
    /// Delete terminal records that ended before `before_ms`; never a call
    /// in flight.
    Prune { before_ms: u64 },
}

/// Where a journal lives, for messages and [`CallJournal::path`](crate::CallJournal::path).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Location {
    /// A SQLite file.
    File(std::path::PathBuf),
    /// The shared PostgreSQL database, written as this fleet member.
    #[cfg_attr(not(feature = "postgres"), allow(dead_code))]
    Postgres { member_id: String },
}

impl Location {
    pub(crate) fn path(&self) -> Option<&Path> {
        match self {
            Location::File(path) => Some(path),
            Location::Postgres { .. } => None,
        }
    }
}

/// A database engine under the journal. Sync: the writer thread calls the
/// write side, any thread the read side, so an engine guards its own
/// connections.
pub(crate) trait JournalBackend: Send + Sync + Debug {
    /// Where the journal lives.
    fn location(&self) -> &Location;

    /// Apply `writes` in one transaction, all or none, and return for each
    /// the number of rows it changed. A failure (disk full, database lost)
    /// rolls the whole batch back; the caller decides what is retried.
    /// [`JournalError::Unavailable`](crate::JournalError::Unavailable) says
    /// the database cannot be reached (as opposed to refusing the write).
    fn apply(&self, writes: &[Write<'_>]) -> Result<Vec<u64>>;

    /// Mark the calls left in flight by a process that is gone
    /// `interrupted` (terminal columns only: the call's identity stays) and
    /// report them. SQLite: every call in flight (the file lock guarantees
    /// no other process runs any). PostgreSQL: the calls of fleet members
    /// that are not live, never this member's or a live one's.
    fn recover(&self, now_ms: u64) -> Result<Vec<InterruptedCall>>;

    /// How often [`recover`](Self::recover) should run again while the
    /// journal is open (`None`: only at open, as with a file only one
    /// process may hold).
    fn recovery_interval(&self) -> Option<std::time::Duration> {
        None
    }

    /// Bytes of live data (what the size limit of retention measures).
    fn live_bytes(&self) -> Result<u64>;

    /// Rows stored.
    fn row_count(&self) -> Result<u64>;

    /// Delete up to `limit` of the oldest terminal records; with
    /// `compactable_only`, only those of calls that wrote no `started`
    /// record or were refused (`blocked`). Never a call in flight.
    fn delete_oldest_terminal(&self, limit: u64, compactable_only: bool) -> Result<u64>;

    /// Give space freed by deletes back (SQLite: to the file system).
    fn shrink(&self) -> Result<()>;

    /// One call by id.
    fn get(&self, call_id: &str) -> Result<Option<CallRecord>>;

    /// The newest `limit` calls of a session, newest first.
    fn history(&self, session_key: &str, limit: usize) -> Result<Vec<CallRecord>>;

    /// A session's calls with the caller's id `tool_call_id`, newest first.
    fn by_tool_call_id(
        &self,
        session_key: &str,
        tool_call_id: &str,
        limit: usize,
    ) -> Result<Vec<CallRecord>>;
}

/// A stored row, before its text columns are checked (the outcome's name
/// is parsed by [`finish_row`], the same for every engine).
pub(crate) struct RawRow {
    pub(crate) record: CallRecord,
    pub(crate) outcome: Option<String>,
}

/// Check a row's outcome against its end time and parse the outcome.
pub(crate) fn finish_row(raw: RawRow) -> Result<CallRecord> {
    let RawRow {
        mut record,
        outcome,
    } = raw;
    match (outcome, record.end.as_mut()) {
        (None, None) => Ok(record),
        (Some(name), Some(end)) => {
            end.outcome =
                name.parse()
                    .map_err(|e: crate::record::UnknownOutcome| JournalError::Corrupt {
                        call_id: record.call_id.clone(),
                        detail: e.to_string(),
                    })?;
            Ok(record)
        }
        (Some(_), None) => Err(JournalError::Corrupt {
            call_id: record.call_id.clone(),
            detail: "the terminal record has an outcome but no end time".into(),
        }),
        (None, Some(_)) => Err(JournalError::Corrupt {
            call_id: record.call_id.clone(),
            detail: "an end time without an outcome".into(),
        }),
    }
}

#[cfg(test)]
#[path = "backend_tests.rs"]
mod tests;
