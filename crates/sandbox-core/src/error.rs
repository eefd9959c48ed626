//! `SandboxError`: what can go wrong talking to a sandbox.

use std::fmt;
use std::sync::Arc;

/// The underlying error a [`SandboxError`] was made from (an engine, I/O or
/// SSH error), shared so the error stays `Clone`.
pub type SandboxErrorSource = Arc<dyn std::error::Error + Send + Sync + 'static>;

/// A sandbox backend failure: its [`SandboxErrorKind`] (what callers match
/// on and what the tool error code is derived from), a message an operator
/// can act on (what failed, where, how to fix it), and, where there is one,
/// the underlying error as its [`source`](std::error::Error::source).
///
/// `Display` is the kind's prefix and the message
/// (`sandbox exec failed: cannot open a PTY: …`). The message already
/// quotes the underlying error's text, as it always did (tool results and
/// tests read it); the source is there for callers that need the error
/// itself (to downcast it to `std::io::Error`, `bollard::errors::Error`,
/// ...).
#[derive(Clone)]
pub struct SandboxError {
    kind: SandboxErrorKind,
    message: String,
    source: Option<SandboxErrorSource>,
}

impl SandboxError {
    /// An error of `kind` with `message`.
    pub fn new(kind: SandboxErrorKind, message: impl Into<String>) -> Self {
        SandboxError {
            kind,
            message: message.into(),
            source: None,
        }
    }

    /// The engine (Docker daemon, remote host) cannot be reached.
    pub fn engine_unavailable(message: impl Into<String>) -> Self {
        Self::new(SandboxErrorKind::EngineUnavailable, message)
    }

    /// The configured image does not exist.
    pub fn image_missing(message: impl Into<String>) -> Self {
        Self::new(SandboxErrorKind::ImageMissing, message)
    }

    /// The sandbox configuration (or a value a call gave) is invalid or
    /// refused by validation.
    pub fn config(message: impl Into<String>) -> Self {
        Self::new(SandboxErrorKind::Config, message)
    }

    /// No backend is registered under the configured id.
    pub fn backend_missing(message: impl Into<String>) -> Self {
        Self::new(SandboxErrorKind::BackendMissing, message)
    }

    /// Launching or controlling a process failed.
    pub fn exec(message: impl Into<String>) -> Self {
        Self::new(SandboxErrorKind::Exec, message)
    }

    /// The sandbox itself is gone or stopped (its container was killed or
    /// removed): ensuring it again recreates or restarts it.
    pub fn gone(message: impl Into<String>) -> Self {
        Self::new(SandboxErrorKind::Gone, message)
    }

    /// An operation ran past its deadline.
    pub fn timeout(message: impl Into<String>) -> Self {
        Self::new(SandboxErrorKind::Timeout, message)
    }

    /// Any other I/O failure.
    pub fn io(message: impl Into<String>) -> Self {
        Self::new(SandboxErrorKind::Io, message)
    }

    /// The same error with `source` as the underlying error.
    #[must_use]
    pub fn with_source(self, source: impl std::error::Error + Send + Sync + 'static) -> Self {
        self.with_shared_source(Arc::new(source))
    }

    /// [`SandboxError::with_source`] with an already shared error.
    #[must_use]
    pub fn with_shared_source(mut self, source: SandboxErrorSource) -> Self {
        self.source = Some(source);
        self
    }

    /// The class of this error.
    pub fn kind(&self) -> SandboxErrorKind {
        self.kind
    }

    /// The message, without the kind's prefix.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// Whether an operation ran past its deadline.
    pub fn is_timeout(&self) -> bool {
        self.kind == SandboxErrorKind::Timeout
    }
}

impl fmt::Display for SandboxError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.kind.display_prefix() {
            Some(prefix) => write!(f, "{prefix}: {}", self.message),
            None => f.write_str(&self.message),
        }
    }
}

impl fmt::Debug for SandboxError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut d = f.debug_struct("SandboxError");
        d.field("kind", &self.kind).field("message", &self.message);
        if let Some(source) = &self.source {
            d.field("source", source);
        }
        d.finish()
    }
}

/// Two errors are equal when their kind and message are: the source is not
/// compared (`dyn Error` has no equality, and the message already quotes
/// it).
impl PartialEq for SandboxError {
    fn eq(&self, other: &Self) -> bool {
        self.kind == other.kind && self.message == other.message
    }
}

impl Eq for SandboxError {}

impl std::error::Error for SandboxError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.source
            .as_deref()
            .map(|e| e as &(dyn std::error::Error + 'static))
    }
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

    /// What `Display` puts before the message (none for a missing
    /// backend, whose message says it all).
    fn display_prefix(self) -> Option<&'static str> {
        match self {
            SandboxErrorKind::EngineUnavailable => Some("sandbox engine unavailable"),
            SandboxErrorKind::ImageMissing => Some("sandbox image missing"),
            SandboxErrorKind::Config => Some("sandbox configuration"),
            SandboxErrorKind::BackendMissing => None,
            SandboxErrorKind::Exec => Some("sandbox exec failed"),
            SandboxErrorKind::Gone => Some("sandbox gone"),
            SandboxErrorKind::Timeout => Some("sandbox operation timed out"),
            SandboxErrorKind::Io => Some("sandbox I/O error"),
        }
    }
}

#[cfg(test)]
#[path = "error_tests.rs"]
mod tests;
