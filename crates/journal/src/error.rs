//! The journal's error type.

use std::path::PathBuf;

/// Everything that can go wrong in the call journal.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum JournalError {
    /// A field of a [`CallStart`](crate::CallStart) / [`CallEnd`](crate::CallEnd)
    /// or an argument is unusable. Nothing was written.
    #[error("invalid call journal {field}: {reason}")]
    Invalid {
        /// The field or argument at fault (`callId`, `paramsDigest`, ...).
        field: &'static str,
        /// What is wrong and how to fix it.
        reason: String,
    },
    /// The journal file could not be opened, created or migrated.
    #[error("cannot open call journal {path}: {reason}")]
    Open {
        /// The journal file.
        path: PathBuf,
        /// What went wrong and how to fix it.
        reason: String,
    },
    /// Another handle (this process or another one) has the journal open.
    #[error(
        "call journal {path} is in use by another process (lock {lock}); stop the other gateway or use another state dir"
    )]
    Locked {
        /// The journal file.
        path: PathBuf,
        /// The lock file held by the other owner.
        lock: PathBuf,
    },
    /// The file was written by a newer Talon.
    #[error(
        "call journal {path} has schema version {found}, newer than the {supported} this build knows; upgrade Talon or use another state dir"
    )]
    SchemaTooNew {
        /// The journal file.
        path: PathBuf,
        /// The version in the file.
        found: i64,
        /// The newest version this build writes.
        supported: i64,
    },
    /// A `started` record for this call id already exists: call ids must be
    /// unique. Nothing was written and the call must not run.
    #[error("call `{call_id}` is already journalled; every call needs a fresh call id")]
    DuplicateCall {
        /// The call id.
        call_id: String,
    },
    /// `finish` for a call id with no record at all. Calls journalled only
    /// at their end (idempotent tools) use [`CallJournal::record`](crate::CallJournal::record).
    #[error(
        "call `{call_id}` has no started record; write one with `started` first or journal the whole call with `record`"
    )]
    NotStarted {
        /// The call id.
        call_id: String,
    },
    /// The writer queue is full (the disk is slower than the calls); the
    /// record was not queued.
    #[error("call journal queue is full ({capacity} records waiting); the record was not written")]
    Overloaded {
        /// The queue capacity.
        capacity: usize,
    },
    /// SQLite failed on a read or a write.
    #[error("call journal storage failed while {during}: {source}")]
    Storage {
        /// What the journal was doing.
        during: &'static str,
        /// The SQLite error.
        #[source]
        source: rusqlite::Error,
    },
    /// The writer could not commit (disk full, I/O error). A `started`
    /// record was not written, so its call must not run; terminal records
    /// are kept and retried.
    #[error(
        "call journal could not write: {reason}; free disk space or fix the state dir, it retries by itself"
    )]
    WriteFailed {
        /// The SQLite error, as text.
        reason: String,
    },
    /// The database cannot be reached (PostgreSQL down or the connection
    /// lost). A `started` record was not written, so its call must not run;
    /// queued terminal records are kept and retried, and writes resume
    /// once the database is back. Code `unavailable`.
    #[error(
        "call journal database is unavailable: {reason}; the call was not run, retry once the database is back"
    )]
    Unavailable {
        /// What failed, as the driver reported it.
        reason: String,
    },
    /// The PostgreSQL engine failed for a reason other than reachability
    /// (a newer schema, a refused statement, a bad configuration); its code
    /// is the foundation's ([`StateError::code`](talon_state::StateError::code)).
    #[cfg(feature = "postgres")]
    #[error("call journal on PostgreSQL failed while {during}: {source}")]
    State {
        /// What the journal was doing.
        during: &'static str,
        /// The foundation's error.
        #[source]
        source: talon_state::StateError,
    },
    /// A stored row holds a value this build does not understand.
    #[error("call journal row for `{call_id}` is unreadable: {detail}")]
    Corrupt {
        /// The call id of the row.
        call_id: String,
        /// What is wrong.
        detail: String,
    },
    /// The writer thread has stopped (the journal is closing or crashed).
    #[error("call journal writer has stopped; reopen the journal")]
    Closed,
}

impl JournalError {
    /// A stable code for the kind of error, for APIs and metrics:
    /// `invalid`, `open`, `locked`, `schema_newer`, `duplicate_call`,
    /// `not_started`, `overloaded`, `storage`, `write_failed`,
    /// `unavailable`, `corrupt`, `closed`; on PostgreSQL also the
    /// foundation's `schema_newer`, `conflict`, `query`, `config`, `fenced`.
    pub fn code(&self) -> &'static str {
        match self {
            JournalError::Invalid { .. } => "invalid",
            JournalError::Open { .. } => "open",
            JournalError::Locked { .. } => "locked",
            JournalError::SchemaTooNew { .. } => "schema_newer",
            JournalError::DuplicateCall { .. } => "duplicate_call",
            JournalError::NotStarted { .. } => "not_started",
            JournalError::Overloaded { .. } => "overloaded",
            JournalError::Storage { .. } => "storage",
            JournalError::WriteFailed { .. } => "write_failed",
            JournalError::Unavailable { .. } => "unavailable",
            #[cfg(feature = "postgres")]
            JournalError::State { source, .. } => source.code(),
            JournalError::Corrupt { .. } => "corrupt",
            JournalError::Closed => "closed",
        }
    }

    /// Whether the database could not be reached (the gateway answers such
    /// a call `unavailable`; it never ran).
    pub fn is_unavailable(&self) -> bool {
        matches!(self, JournalError::Unavailable { .. })
    }
}

/// `Result` with [`JournalError`].
pub type Result<T> = std::result::Result<T, JournalError>;
