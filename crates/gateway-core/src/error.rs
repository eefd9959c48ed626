//! The gateway's errors.

use std::path::PathBuf;

/// Why the gateway could not start, reload or answer.
#[derive(Debug, thiserror::Error)]
pub enum GatewayError {
    /// The configuration could not be loaded or compiled.
    #[error("configuration {origin}: {message}")]
    Config {
        /// The file (or `<built-in defaults>`).
        origin: String,
        /// What is wrong.
        message: String,
    },
    /// The state directory (token, journal, databases) is unusable.
    #[error("state {}: {message}", path.display())]
    State {
        /// The file or directory.
        path: PathBuf,
        /// What went wrong.
        message: String,
    },
    /// The shared state database cannot be used (down at start, a schema
    /// newer than this binary, a bad `state` section).
    #[error("state database {target}: {source}")]
    SharedState {
        /// Where it points (`user@host:port/db`, never a password).
        target: String,
        /// Why, with its kind (`unavailable`, `schema_newer`, ...).
        source: talon_state::StateError,
    },
    /// The listen address is refused or unusable.
    #[error("bind {addr}: {message}")]
    Bind {
        /// The address.
        addr: String,
        /// Why.
        message: String,
    },
    /// Anything else.
    #[error("{0}")]
    Internal(String),
}
