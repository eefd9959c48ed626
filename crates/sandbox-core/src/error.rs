//! `SandboxError`: what can go wrong talking to a sandbox.

/// A sandbox backend failure, with a message an operator can act on.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SandboxError {
    /// The engine (Docker daemon, remote host) cannot be reached.
    #[error("sandbox engine unavailable: {0}")]
    EngineUnavailable(String),
    /// The configured image does not exist.
    #[error("sandbox image missing: {0}")]
    ImageMissing(String),
    /// The sandbox configuration is invalid or refused by validation.
    #[error("sandbox configuration: {0}")]
    Config(String),
    /// No backend is registered under the configured id.
    #[error("{0}")]
    BackendMissing(String),
    /// Launching or controlling a process failed.
    #[error("sandbox exec failed: {0}")]
    Exec(String),
    /// The sandbox itself is gone or stopped (its container was killed or
    /// removed): ensuring it again recreates or restarts it.
    #[error("sandbox gone: {0}")]
    Gone(String),
    /// An operation ran past its deadline.
    #[error("sandbox operation timed out: {0}")]
    Timeout(String),
    /// Any other I/O failure.
    #[error("sandbox I/O error: {0}")]
    Io(String),
}
