//! `FsError`: why a file operation was refused or failed, with a stable code.

use serde::Serialize;

/// The stable code of an [`FsError`] (what a caller or a test matches on).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum FsErrorCode {
    /// The path is not under any mount (or not under the workspace root).
    OutsideMounts,
    /// Resolution would leave the mount root (`..`, an absolute or relative
    /// symlink to outside, a magic link, a swapped-in symlink).
    Escape,
    /// A write, edit, mkdir, remove or rename in a read-only mount.
    ReadOnly,
    /// Nothing exists at the path.
    NotFound,
    /// The path names a directory (or something else) where a file was needed.
    NotAFile,
    /// A path component that must be a directory is not one.
    NotADirectory,
    /// The target exists and the operation does not overwrite.
    AlreadyExists,
    /// The path itself is malformed (empty, NUL byte, `.` or `/` as an
    /// entry name, ...).
    InvalidPath,
    /// The content exceeds a size limit.
    TooLarge,
    /// The path is longer than the host's `PATH_MAX`, one of its names is
    /// longer than `NAME_MAX`, or it is (or would resolve or create)
    /// deeper than [`MAX_PATH_DEPTH`](crate::MAX_PATH_DEPTH) levels.
    PathTooLong,
    /// The operation would remove, rename or replace a mount root (or the
    /// working directory's root through `.`, `..` or an empty name).
    MountRoot,
    /// An edit callback refused the content (its message says why).
    Rejected,
    /// The backend behind the bridge (a container, a remote host) cannot
    /// be reached.
    Unavailable,
    /// Any other I/O failure.
    Io,
}

impl FsErrorCode {
    /// The code as written in JSON and in messages (`outside-mounts`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            FsErrorCode::OutsideMounts => "outside-mounts",
            FsErrorCode::Escape => "escape",
            FsErrorCode::ReadOnly => "read-only",
            FsErrorCode::NotFound => "not-found",
            FsErrorCode::NotAFile => "not-a-file",
            FsErrorCode::NotADirectory => "not-a-directory",
            FsErrorCode::AlreadyExists => "already-exists",
            FsErrorCode::InvalidPath => "invalid-path",
            FsErrorCode::TooLarge => "too-large",
            FsErrorCode::PathTooLong => "path-too-long",
            FsErrorCode::MountRoot => "mount-root",
            FsErrorCode::Rejected => "rejected",
            FsErrorCode::Unavailable => "unavailable",
            FsErrorCode::Io => "io",
        }
    }
}

impl std::fmt::Display for FsErrorCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A refused or failed file operation: the code, the path as the caller
/// wrote it, and a message a model or an operator can act on.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, Serialize)]
#[error("{message}")]
pub struct FsError {
    /// The stable code.
    pub code: FsErrorCode,
    /// The path as given by the caller.
    pub path: String,
    /// What happened and, where it helps, how to fix it.
    pub message: String,
}

impl FsError {
    /// An error with this code, path and message.
    pub fn new(code: FsErrorCode, path: impl Into<String>, message: impl Into<String>) -> Self {
        FsError {
            code,
            path: path.into(),
            message: message.into(),
        }
    }

    /// An edit callback's refusal (code [`FsErrorCode::Rejected`]).
    pub fn rejected(path: impl Into<String>, message: impl Into<String>) -> Self {
        FsError::new(FsErrorCode::Rejected, path, message)
    }
}
