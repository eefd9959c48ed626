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
