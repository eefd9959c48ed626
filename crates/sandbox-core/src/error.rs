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

/// The class of a [`SandboxError`]: what a caller matches on (and what
/// the tool error code is derived from), never the message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum SandboxErrorKind {
    /// The engine cannot be reached.
    EngineUnavailable,
    /// The image does not exist.
    ImageMissing,
    /// The configuration (or a value a call gave) is invalid.
    Config,
    /// No backend under the configured id.
    BackendMissing,
    /// Launching or controlling a process failed.
    Exec,
    /// The sandbox is gone or stopped.
    Gone,
    /// An operation ran past its deadline.
    Timeout,
    /// Any other I/O failure.
    Io,
}

impl SandboxErrorKind {
    /// The kind as a stable snake-case string (`engine_unavailable`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            SandboxErrorKind::EngineUnavailable => "engine_unavailable",
            SandboxErrorKind::ImageMissing => "image_missing",
            SandboxErrorKind::Config => "config",
            SandboxErrorKind::BackendMissing => "backend_missing",
            SandboxErrorKind::Exec => "exec",
            SandboxErrorKind::Gone => "gone",
            SandboxErrorKind::Timeout => "timeout",
            SandboxErrorKind::Io => "io",
        }
    }
}

impl SandboxError {
    /// The class of this error.
    pub fn kind(&self) -> SandboxErrorKind {
        match self {
            SandboxError::EngineUnavailable(_) => SandboxErrorKind::EngineUnavailable,
            SandboxError::ImageMissing(_) => SandboxErrorKind::ImageMissing,
            SandboxError::Config(_) => SandboxErrorKind::Config,
            SandboxError::BackendMissing(_) => SandboxErrorKind::BackendMissing,
            SandboxError::Exec(_) => SandboxErrorKind::Exec,
            SandboxError::Gone(_) => SandboxErrorKind::Gone,
            SandboxError::Timeout(_) => SandboxErrorKind::Timeout,
            SandboxError::Io(_) => SandboxErrorKind::Io,
        }
    }

    /// Whether an operation ran past its deadline.
    pub fn is_timeout(&self) -> bool {
        self.kind() == SandboxErrorKind::Timeout
    }
}
