//! The journal handle.

use std::path::Path;
use std::sync::Arc;

use crate::error::{JournalError, Result};
use crate::record::{CallEnd, CallRecord, CallStart, FinishAck, RecoveryReport};

/// A handle to the call journal. Cheap to clone; every clone writes through
/// the same single writer thread.
#[derive(Debug, Clone)]
pub struct CallJournal {
    _inner: Arc<()>,
}

impl CallJournal {
    /// Open (creating if needed) the journal at `path`, take its lock, and
    /// mark every call left in flight by a previous process `interrupted`.
    pub fn open(path: &Path) -> Result<(CallJournal, RecoveryReport)> {
        let _ = path;
        Err(JournalError::Closed)
    }

    /// Write the `started` record of a non-idempotent call; it is durable
    /// when this returns. Run the tool only after `Ok`.
    pub async fn started(&self, start: CallStart) -> Result<()> {
        let _ = start;
        Err(JournalError::Closed)
    }

    /// Queue the terminal record of a call that has a `started` record.
    /// Exactly one terminal record is kept per call id: a second is ignored
    /// and reported as [`FinishAck::AlreadyFinished`].
    pub fn finish(&self, call_id: &str, end: CallEnd) -> Result<FinishAck> {
        let _ = (call_id, end);
        Err(JournalError::Closed)
    }

    /// Queue the whole record (start and end at once) of a call that had no
    /// `started` record (an idempotent tool).
    pub fn record(&self, start: CallStart, end: CallEnd) -> Result<FinishAck> {
        let _ = (start, end);
        Err(JournalError::Closed)
    }

    /// Wait until everything queued before this call is committed.
    pub async fn flush(&self) -> Result<()> {
        Err(JournalError::Closed)
    }

    /// The newest `limit` committed calls of a session, newest first.
    pub fn history(&self, session_key: &str, limit: usize) -> Result<Vec<CallRecord>> {
        let _ = (session_key, limit);
        Err(JournalError::Closed)
    }

    /// One committed call by id.
    pub fn get(&self, call_id: &str) -> Result<Option<CallRecord>> {
        let _ = call_id;
        Err(JournalError::Closed)
    }
}
