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
    /// Other writers kept changing the task between each read and write
    /// (compare-and-set retried [`MAX_WRITE_ATTEMPTS`] times).
    ///
    /// [`MAX_WRITE_ATTEMPTS`]: crate::MAX_WRITE_ATTEMPTS
    #[error("task `{id}` kept changing under concurrent writers; try again")]
    Contended {
        /// The task.
        id: String,
    },
    /// The shared PostgreSQL state failed (its code is kept: `unavailable`
    /// when the database cannot be reached, `schema_newer`, `query`, …).
    #[cfg(feature = "postgres")]
    #[error("task ledger on PostgreSQL: {0}")]
    State(#[from] talon_state::StateError),
}

impl TaskError {
    /// The stable machine code: `task.store`, `task.unavailable`,
    /// `task.store_newer`, `task.not_found`, `task.illegal_transition`,
    /// `task.store_invalid`, `task.invalid`, `task.contended`.
    pub fn code(&self) -> &'static str {
        match self {
            TaskError::Db { .. } => "task.store",
            TaskError::NotFound { .. } => "task.not_found",
            TaskError::IllegalTransition { .. } => "task.illegal_transition",
            TaskError::InvalidPersisted { .. } => "task.store_invalid",
            TaskError::Invalid { .. } => "task.invalid",
            TaskError::Contended { .. } => "task.contended",
            #[cfg(feature = "postgres")]
            TaskError::State(talon_state::StateError::Unavailable { .. }) => "task.unavailable",
            #[cfg(feature = "postgres")]
            TaskError::State(talon_state::StateError::SchemaNewer { .. }) => "task.store_newer",
            #[cfg(feature = "postgres")]
            TaskError::State(_) => "task.store",
        }
    }

    /// Whether the database could not be reached (the call may succeed
    /// later; nothing was written).
    pub fn is_unavailable(&self) -> bool {
        match self {
            #[cfg(feature = "postgres")]
            TaskError::State(e) => e.is_unavailable(),
            _ => false,
        }
    }

    pub(crate) fn duplicate_id(task_id: &str) -> TaskError {
        TaskError::Invalid {
            field: "taskId",
            message: format!("`{task_id}` already exists"),
        }
    }
}

/// `Result` with [`TaskError`].
pub type Result<T> = std::result::Result<T, TaskError>;
