//! The session store's error type.

/// Everything that can go wrong in the session store.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// The SQLite database failed (open, migrate, read or write).
    #[error("session store database at {path}: {source}")]
    Db {
        /// The database file.
        path: String,
        /// The SQLite error.
        #[source]
        source: rusqlite::Error,
    },
    /// The database was written by a newer Talon.
    #[error(
        "session store database at {path} has schema version {found}; this Talon reads up to {supported}: upgrade Talon or point it at another state dir"
    )]
    NewerSchema {
        /// The database file.
        path: String,
        /// The version found.
        found: i64,
        /// The newest version this build knows.
        supported: i64,
    },
    /// A stored row holds a value this version does not know.
    #[error("invalid persisted session {field}: `{value}` (database written by a newer Talon?)")]
    InvalidPersisted {
        /// The column.
        field: &'static str,
        /// The stored value.
        value: String,
    },
    /// Bad input from the caller.
    #[error("invalid session {field}: {message}")]
    Invalid {
        /// The field.
        field: &'static str,
        /// What is wrong.
        message: String,
    },
    /// The shared PostgreSQL state failed (its kind is kept: unavailable
    /// when the database cannot be reached, a newer schema, a query).
    #[cfg(feature = "postgres")]
    #[error("session store on PostgreSQL: {0}")]
    State(#[from] talon_state::StateError),
}

impl StoreError {
    /// The stable machine code (`session.store`, `session.unavailable`,
    /// `session.store_newer`, `session.store_invalid`, `session.invalid`).
    pub fn code(&self) -> &'static str {
        match self {
            StoreError::Db { .. } => "session.store",
            StoreError::NewerSchema { .. } => "session.store_newer",
            StoreError::InvalidPersisted { .. } => "session.store_invalid",
            StoreError::Invalid { .. } => "session.invalid",
            #[cfg(feature = "postgres")]
            StoreError::State(talon_state::StateError::Unavailable { .. }) => "session.unavailable",
            #[cfg(feature = "postgres")]
            StoreError::State(talon_state::StateError::SchemaNewer { .. }) => "session.store_newer",
            #[cfg(feature = "postgres")]
            StoreError::State(_) => "session.store",
        }
    }

    /// Whether the database could not be reached (the call may succeed
    /// later; nothing was written).
    pub fn is_unavailable(&self) -> bool {
        match self {
            #[cfg(feature = "postgres")]
            StoreError::State(e) => e.is_unavailable(),
            _ => false,
        }
    }
}

/// The store's result type.
pub type Result<T, E = StoreError> = std::result::Result<T, E>;
