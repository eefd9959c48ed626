//! The crate's one error type: a kind the caller matches on, and a message
//! that says what failed, where, and how to fix it.

use talon_tool_catalog::{ToolError, ToolErrorCode};

/// What went wrong, for callers that decide on it (the tools map each to a
/// tool error code; the CLI to an exit status).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum MemoryErrorKind {
    /// The index file cannot be opened, read or written.
    Index,
    /// A path is not a memory file (`memory_get` refuses it).
    PathRefused,
    /// A memory file is not valid UTF-8 or is over the size limit.
    FileUnreadable,
    /// The file bridge refused or failed an operation.
    Bridge,
    /// The embedding provider failed or answered something unreadable.
    Embedding,
    /// The configuration asks for something this build or setup cannot do.
    Config,
}

/// An error of the memory index, its sync or its tools.
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub struct MemoryError {
    kind: MemoryErrorKind,
    message: String,
    /// The bridge's own error, kept so the tools report its code.
    bridge: Option<talon_fs_bridge::FsError>,
}

impl MemoryError {
    /// An error of `kind`.
    pub fn new(kind: MemoryErrorKind, message: impl Into<String>) -> Self {
        MemoryError {
            kind,
            message: message.into(),
            bridge: None,
        }
    }

    /// A file bridge error met while doing `what`.
    pub fn bridge(what: &str, err: talon_fs_bridge::FsError) -> Self {
        MemoryError {
            kind: MemoryErrorKind::Bridge,
            message: format!("{what}: {err}"),
            bridge: Some(err),
        }
    }

    /// An SQLite error on the index at `path`.
    pub(crate) fn sqlite(path: &std::path::Path, err: rusqlite::Error) -> Self {
        MemoryError::new(
            MemoryErrorKind::Index,
            format!(
                "memory index {}: {err} (run `talon memory index --rebuild` to rebuild it from the memory files)",
                path.display()
            ),
        )
    }

    /// What went wrong.
    pub fn kind(&self) -> MemoryErrorKind {
        self.kind
    }

    /// The message.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// This error as a tool error, keeping its code (`param` is the
    /// parameter at fault for input errors).
    pub fn into_tool_error(self, param: &str) -> ToolError {
        if let Some(fs) = self.bridge {
            let code = fs_code(fs.code);
            let e = ToolError::new(code, self.message).with_detail("path", fs.path);
            return if e.is_input() { e.with_param(param) } else { e };
        }
        let code = match self.kind {
            MemoryErrorKind::Index | MemoryErrorKind::Bridge => ToolErrorCode::MemoryIndexFailed,
            MemoryErrorKind::PathRefused => ToolErrorCode::MemoryPathRefused,
            MemoryErrorKind::FileUnreadable => ToolErrorCode::MemoryFileUnreadable,
            MemoryErrorKind::Embedding | MemoryErrorKind::Config => ToolErrorCode::Failed,
        };
        let e = ToolError::new(code, self.message);
        if e.is_input() { e.with_param(param) } else { e }
    }
}

/// The tool error code of a bridge error code (the same mapping as the
/// file tools').
fn fs_code(code: talon_fs_bridge::FsErrorCode) -> ToolErrorCode {
    use talon_fs_bridge::FsErrorCode as C;
    match code {
        C::OutsideMounts => ToolErrorCode::FsOutsideMounts,
        C::Escape => ToolErrorCode::FsEscape,
        C::ReadOnly => ToolErrorCode::FsReadOnly,
        C::NotFound => ToolErrorCode::FsNotFound,
        C::NotAFile => ToolErrorCode::FsNotAFile,
        C::NotADirectory => ToolErrorCode::FsNotADirectory,
        C::AlreadyExists => ToolErrorCode::FsAlreadyExists,
        C::InvalidPath => ToolErrorCode::FsInvalidPath,
        C::TooLarge => ToolErrorCode::FsTooLarge,
        C::PathTooLong => ToolErrorCode::FsPathTooLong,
        C::MountRoot => ToolErrorCode::FsMountRoot,
        C::Rejected => ToolErrorCode::FsRejected,
        C::Unavailable => ToolErrorCode::FsUnavailable,
        _ => ToolErrorCode::FsIo,
    }
}

/// The crate's result type.
pub type Result<T, E = MemoryError> = std::result::Result<T, E>;
