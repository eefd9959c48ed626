//! Talon's file bridge: every file a tool touches goes through here.
//!
//! A bridge maps paths in its namespace (container paths such as
//! `/workspace/src/main.rs` in a sandbox, or the workspace's own host paths
//! in host mode) to host files through a mount table, and performs each
//! operation beneath the mount's root so that no `..`, absolute path,
//! symlink or symlink swapped in mid-operation can reach a file outside it.
//!
//! - [`FsBridge`] is the trait the file tools (`read`, `write`, `edit`,
//!   `apply_patch`) run on; [`FsError`] / [`FsErrorCode`] say why an
//!   operation was refused (`outside-mounts`, `escape`, `read-only`, ...).
//! - [`MountBridge`] is the implementation over host directories: a
//!   sandbox's [`Mount`] table ([`MountBridge::new`]) or the workspace root
//!   in host mode ([`MountBridge::host`]). Lookup is longest-prefix; each
//!   mount root is opened once and every path is resolved beneath that fd
//!   with `openat2(RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS)`, or, where the
//!   kernel refuses or lacks it, by an `O_NOFOLLOW` walk one component at a
//!   time. Mutations run `*at` calls on the resolved parent directory fd;
//!   writes are atomic (temp file + `renameat`) and keep the old mode.
//! - [`normalize_path`] is the lexical normalisation every lookup starts
//!   with; it also enforces the bounds [`MAX_PATH_BYTES`] (the host's
//!   `PATH_MAX`), [`MAX_NAME_BYTES`] (`NAME_MAX`) and [`MAX_PATH_DEPTH`]
//!   (`path-too-long`). The same bounds hold for what resolution walks and
//!   for what a mutation creates on the host (through symlinks, or by
//!   renaming a deep tree deeper).
//! - A path ending in `/` (or `/.`) names a directory: on a file every
//!   operation refuses it with `not-a-directory` instead of using the file.
//!   A mount root is never removed, renamed or replaced (`mount-root`),
//!   whether it is written as itself, `.`, `sub/..` or a link to it.
//!
//! ```
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use talon_fs_bridge::{FsBridge, FsErrorCode, Mount, MountBridge, WriteOptions};
//!
//! let dir = tempfile::tempdir()?;
//! std::fs::create_dir(dir.path().join("project"))?;
//! std::fs::create_dir(dir.path().join("skills"))?;
//! let bridge = MountBridge::new(
//!     vec![
//!         Mount::writable("/workspace", dir.path().join("project")),
//!         Mount::read_only("/workspace/skills", dir.path().join("skills")),
//!     ],
//!     "/workspace",
//! )?;
//!
//! bridge.write("notes/todo.md", b"- ship it\n", WriteOptions::default()).await?;
//! let read = bridge.read("/workspace/notes/todo.md", None).await?;
//! assert_eq!(read.bytes, b"- ship it\n");
//!
//! let refused = bridge.read("../../etc/passwd", None).await.unwrap_err();
//! assert_eq!(refused.code, FsErrorCode::OutsideMounts);
//! let refused = bridge.write("skills/x.md", b"", WriteOptions::default()).await.unwrap_err();
//! assert_eq!(refused.code, FsErrorCode::ReadOnly);
//! # Ok(())
//! # }
//! ```
//!
//! What it does NOT do: decide whether a tool may run (policy and hooks
//! do), run commands (the sandbox backends do), reach files that are not on
//! this host (a remote backend implements [`FsBridge`] itself), or detect a
//! hard link inside a mount that aliases a file outside it (the kernel
//! resolves hard links like any other name; keep mount roots on a file
//! system the sandbox cannot hard-link into from outside).
#![deny(missing_docs)]

pub use crate::bounds::{MAX_NAME_BYTES, MAX_PATH_BYTES, MAX_PATH_DEPTH};
pub use crate::bridge::{
    Access, DirEntry, EditFn, FileContents, FileKind, FileStat, FsBridge, ResolvedPath,
    WriteOptions, WriteReport,
};
pub use crate::error::{FsError, FsErrorCode};
pub use crate::mount::{Mount, normalize_path};
pub use crate::mount_bridge::MountBridge;

mod bounds;
mod bridge;
mod error;
mod mount;
mod mount_bridge;
mod ops;
pub mod path_rules;
mod resolve;
