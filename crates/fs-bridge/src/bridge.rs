//! The `FsBridge` trait and the values its operations take and return.

use std::path::PathBuf;
use std::time::SystemTime;

use serde::Serialize;

use crate::error::FsError;

/// What an operation intends to do with a path (decides whether a
/// read-only mount refuses it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum Access {
    /// Read or list.
    Read,
    /// Create, replace, edit, remove or rename.
    Write,
}

/// Where a path lands after resolution beneath its mount.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ResolvedPath {
    /// The normalised absolute path in the bridge's namespace (the
    /// container path in a sandbox, the host path in host mode).
    pub container_path: String,
    /// The host path it maps to, with symlinks resolved beneath the mount
    /// root (`None` for bridges whose files are not on this host).
    pub host_path: Option<PathBuf>,
    /// The container path of the mount that holds it.
    pub mount: String,
    /// Whether that mount is read-only.
    pub read_only: bool,
    /// Whether something exists at the path.
    pub exists: bool,
}

/// What kind of filesystem object a path names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum FileKind {
    /// A regular file.
    File,
    /// A directory.
    Directory,
    /// A symbolic link (only reported by `list`, which does not follow links).
    Symlink,
    /// Anything else (socket, fifo, device).
    Other,
}

/// `stat` of one path.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FileStat {
    /// The kind of object.
    pub kind: FileKind,
    /// Size in bytes.
    pub size: u64,
    /// Permission bits (`0o644`, ...).
    pub mode: u32,
    /// Last modification time, when known.
    pub modified: Option<SystemTime>,
}

/// One entry of a directory listing.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DirEntry {
    /// The entry's file name.
    pub name: String,
    /// Its kind (symlinks are reported as such, not followed).
    pub kind: FileKind,
    /// Its size in bytes (0 for directories and symlinks).
    pub size: u64,
}

/// The bytes of a file, possibly cut at a limit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileContents {
    /// The bytes read (at most the limit asked for).
    pub bytes: Vec<u8>,
    /// The file's whole size.
    pub total_size: u64,
    /// Whether `bytes` stops before the end of the file.
    pub truncated: bool,
}

/// How `write` behaves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WriteOptions {
    /// Create missing parent directories (beneath the mount root only).
    pub create_parents: bool,
    /// Refuse with [`already-exists`](crate::FsErrorCode::AlreadyExists)
    /// when the file exists.
    pub create_new: bool,
}

impl Default for WriteOptions {
    fn default() -> Self {
        WriteOptions {
            create_parents: true,
            create_new: false,
        }
    }
}

/// What a write or an edit did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct WriteReport {
    /// The resolved path written.
    pub container_path: String,
    /// Whether the file did not exist before.
    pub created: bool,
    /// Bytes now in the file.
    pub bytes: u64,
}

/// An edit callback: gets the current bytes, returns the new bytes or a
/// [`FsError::rejected`] saying why not. Runs once, between the read and
/// the atomic replace of the same resolved file.
pub type EditFn<'a> = dyn Fn(&[u8]) -> Result<Vec<u8>, FsError> + Send + Sync + 'a;

/// File operations confined to a set of mounts.
///
/// Paths are strings in the bridge's namespace: absolute (`/workspace/a.txt`)
/// or relative to [`cwd`](FsBridge::cwd). Every operation resolves the path
/// beneath its mount's root without a check-then-use window; anything that
/// would leave the root is refused with [`escape`](crate::FsErrorCode::Escape),
/// a path under no mount with
/// [`outside-mounts`](crate::FsErrorCode::OutsideMounts), and a mutation of
/// a read-only mount with [`read-only`](crate::FsErrorCode::ReadOnly).
#[async_trait::async_trait]
pub trait FsBridge: Send + Sync + std::fmt::Debug {
    /// The directory relative paths start from.
    fn cwd(&self) -> &str;

    /// Resolve a path beneath its mount (following symlinks that stay
    /// inside; for a path that does not exist yet, through its deepest
    /// existing ancestor) without touching it.
    async fn resolve(&self, path: &str, access: Access) -> Result<ResolvedPath, FsError>;

    /// Read a regular file, at most `max_bytes` of it when given.
    async fn read(&self, path: &str, max_bytes: Option<u64>) -> Result<FileContents, FsError>;

    /// Replace (or create) a file atomically: temp file in the same
    /// directory, then rename; an existing file keeps its permissions.
    async fn write(
        &self,
        path: &str,
        data: &[u8],
        options: WriteOptions,
    ) -> Result<WriteReport, FsError>;

    /// Read a file, pass its bytes to `edit`, and atomically replace it
    /// with the result (nothing is written when `edit` refuses).
    async fn edit(&self, path: &str, edit: &EditFn<'_>) -> Result<WriteReport, FsError>;

    /// Kind, size, mode and modification time of a path (follows symlinks
    /// that stay inside the mount).
    async fn stat(&self, path: &str) -> Result<FileStat, FsError>;

    /// The entries of a directory, sorted by name.
    async fn list(&self, path: &str) -> Result<Vec<DirEntry>, FsError>;

    /// Create a directory (and its missing parents when `recursive`).
    async fn mkdir(&self, path: &str, recursive: bool) -> Result<(), FsError>;

    /// Remove a file, a symlink (not its target) or an empty directory; a
    /// non-empty directory only when `recursive`.
    async fn remove(&self, path: &str, recursive: bool) -> Result<(), FsError>;

    /// Rename `from` to `to` (both beneath writable mounts); an existing
    /// `to` is replaced only when `overwrite`.
    async fn rename(&self, from: &str, to: &str, overwrite: bool) -> Result<(), FsError>;
}
