//! Reading a journal another process writes: no lock, no recovery, no
//! writes (SQLite's WAL lets a reader see committed records beside the
//! writer).

use std::path::Path;

use rusqlite::Connection;

use crate::error::Result;
use crate::record::CallRecord;
use crate::{sqlite, validate};

/// A read-only view of a journal file (for tools such as the CLI; the
/// process that owns the journal uses [`CallJournal`](crate::CallJournal)).
#[derive(Debug)]
pub struct JournalReader {
    conn: Connection,
}

impl JournalReader {
    /// Open `path` read-only. A missing file is an error (nothing is
    /// created).
    pub fn open(path: &Path) -> Result<Self> {
        Ok(JournalReader {
            conn: sqlite::open_reader(path)?,
        })
    }

    /// As [`CallJournal::history`](crate::CallJournal::history): the
    /// newest `limit` committed calls of a session, newest first.
    pub fn history(&self, session_key: &str, limit: usize) -> Result<Vec<CallRecord>> {
        validate::check_session_key(session_key)?;
        validate::check_history_limit(limit)?;
        if limit == 0 {
            return Ok(Vec::new());
        }
        sqlite::history(&self.conn, session_key, limit)
    }
}
