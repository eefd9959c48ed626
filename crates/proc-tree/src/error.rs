//! The crate's error type.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use crate::limits::LimitKind;

/// Why containment could not be set up or a tree could not be ended.
#[non_exhaustive]
#[derive(Debug, thiserror::Error)]
pub enum ProcTreeError {
    /// A file or directory operation failed.
    #[error("cannot {action} {}: {source}", path.display())]
    Io {
        /// What was being done (`create`, `write`, `remove`, ...).
        action: &'static str,
        /// The file or directory.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// A requested limit has no controller to enforce it here. Nothing was
    /// started; the caller decides whether to run without it.
    #[error("limit `{limit}` cannot be applied: {reason}")]
    LimitUnavailable {
        /// The limit.
        limit: LimitKind,
        /// Why (which hierarchies were looked at).
        reason: String,
    },
    /// A requested limit has a value no controller accepts.
    #[error("limit `{limit}` is invalid: {reason}")]
    InvalidLimit {
        /// The limit.
        limit: LimitKind,
        /// What is wrong and what is accepted.
        reason: String,
    },
    /// The watchdog that ends the tree when this process dies did not start.
    #[error("cannot start the parent-death watchdog (/bin/sh): {source}")]
    Watchdog {
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// Processes of a leaf were still alive when the kill gave up.
    #[error("leaf {leaf}: processes {remaining:?} still alive after {waited:?}")]
    KillTimeout {
        /// The leaf id.
        leaf: String,
        /// The pids still alive.
        remaining: Vec<u32>,
        /// How long the kill tried.
        waited: Duration,
    },
    /// The process-wide supervisor failed to start (the first error is kept).
    #[error("the shared process-tree supervisor is unavailable")]
    Shared(#[source] Arc<ProcTreeError>),
}

/// The crate's result type.
pub type Result<T, E = ProcTreeError> = std::result::Result<T, E>;

pub(crate) fn io(
    action: &'static str,
    path: impl Into<PathBuf>,
) -> impl FnOnce(std::io::Error) -> ProcTreeError {
    let path = path.into();
    move |source| ProcTreeError::Io {
        action,
        path,
        source,
    }
}
