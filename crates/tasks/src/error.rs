//! The ledger's error type.

use crate::record::TaskStatus;

/// Everything that can go wrong in the task ledger.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TaskError {
    /// The SQLite database failed (open, migrate, read or write).
    #[error("task ledger database at {path}: {source}")]
    Db {
        /// The database file.
        path: String,
        /// The SQLite error.
        #[source]
        source: rusqlite::Error,
    },
    /// No task has this id (or run id).
    #[error("no task with {what} `{id}`; list tasks with `talon tasks list`")]
    NotFound {
        /// `id` or `run id`.
        what: &'static str,
        /// The id looked up.
        id: String,
    },
    /// The requested state change is not allowed (facts §13).
    #[error("task `{id}` cannot go from {from} to {to}: {why}")]
    IllegalTransition {
        /// The task.
        id: String,
        /// Its current status.
        from: TaskStatus,
        /// The refused status.
        to: TaskStatus,
        /// Which rule refused it.
        why: &'static str,
    },
    /// A stored row holds a value this version does not know.
    #[error("invalid persisted task {field}: `{value}` (database written by a newer Talon?)")]
    InvalidPersisted {
        /// The column.
        field: &'static str,
        /// The stored value.
        value: String,
    },
    /// Bad input from the caller.
    #[error("invalid task {field}: {message}")]
    Invalid {
        /// The field.
        field: &'static str,
        /// What is wrong and how to fix it.
        message: String,
    },
}

/// `Result` with [`TaskError`].
pub type Result<T> = std::result::Result<T, TaskError>;
