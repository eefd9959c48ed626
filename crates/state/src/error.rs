//! What can go wrong with shared state, as a typed kind with a stable code.

use postgres::error::SqlState;

/// Why a shared-state operation failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StateError {
    /// The database cannot be reached, or the connection was lost. Calls
    /// fail fast with this while the pool reconnects with backoff.
    #[error("the state database is unavailable: {message}")]
    Unavailable {
        /// What happened (never the URL's password).
        message: String,
    },
    /// The database holds a schema newer than this binary knows.
    #[error(
        "the state database holds schema version {found} of store `{store}`, newer than the {known} this Talon knows: upgrade Talon (or point it at another database); nothing was changed"
    )]
    SchemaNewer {
        /// The store (`journal`, `cron`, ...).
        store: String,
        /// The version in the database.
        found: u32,
        /// The newest version this binary knows.
        known: u32,
    },
    /// A write under a lease token that is no longer current: another
    /// member holds the lease now.
    #[error(
        "lease `{lease}` token {token} is no longer current: another gateway holds it now, so this write was refused"
    )]
    Fenced {
        /// The lease.
        lease: String,
        /// The stale token.
        token: i64,
    },
    /// A unique key was violated.
    #[error("the state database refused a duplicate: {message}")]
    Conflict {
        /// The database's message.
        message: String,
    },
    /// Any other database error.
    #[error("state database query failed: {message}")]
    Query {
        /// The database's message.
        message: String,
    },
    /// The state configuration cannot be used.
    #[error("state configuration: {message}")]
    Config {
        /// What is wrong and how to fix it.
        message: String,
    },
}

impl StateError {
    /// The stable code of this error's kind.
    pub fn code(&self) -> &'static str {
        match self {
            StateError::Unavailable { .. } => "unavailable",
            StateError::SchemaNewer { .. } => "schema_newer",
            StateError::Fenced { .. } => "fenced",
            StateError::Conflict { .. } => "conflict",
            StateError::Query { .. } => "query",
            StateError::Config { .. } => "config",
        }
    }

    /// Whether the database could not be reached (retry later).
    pub fn is_unavailable(&self) -> bool {
        matches!(self, StateError::Unavailable { .. })
    }

    /// An [`StateError::Unavailable`] with `message`.
    pub fn unavailable(message: impl Into<String>) -> Self {
        StateError::Unavailable {
            message: message.into(),
        }
    }

    /// A [`StateError::Query`] with `message`.
    pub fn query(message: impl Into<String>) -> Self {
        StateError::Query {
            message: message.into(),
        }
    }
}

/// SQLSTATE codes that mean the server is going away or not taking work.
const UNAVAILABLE_STATES: &[SqlState] = &[
    SqlState::ADMIN_SHUTDOWN,
    SqlState::CRASH_SHUTDOWN,
    SqlState::CANNOT_CONNECT_NOW,
    SqlState::TOO_MANY_CONNECTIONS,
    SqlState::CONNECTION_EXCEPTION,
    SqlState::CONNECTION_FAILURE,
    SqlState::QUERY_CANCELED,
];

impl From<postgres::Error> for StateError {
    fn from(e: postgres::Error) -> Self {
        if e.is_closed() {
            return StateError::unavailable(format!("the connection was closed: {e}"));
        }
        match e.code() {
            Some(code) if *code == SqlState::UNIQUE_VIOLATION => StateError::Conflict {
                message: e.to_string(),
            },
            Some(code) if UNAVAILABLE_STATES.contains(code) => {
                StateError::unavailable(e.to_string())
            }
            Some(_) => StateError::query(e.to_string()),
            // No SQLSTATE: an I/O or protocol failure on the way to the server.
            None => StateError::unavailable(e.to_string()),
        }
    }
}
