//! Talon's file bridge: every file a tool touches goes through here.
//!
//! A bridge maps paths in its namespace (container paths such as
//! `/workspace/src/main.rs` in a sandbox, or the workspace's own host paths
//! in host mode) to host files through a mount table, and performs each
//! operation beneath the mount's root so that no `..`, absolute path,
//! symlink or symlink swapped in mid-operation can reach a file outside it.
//!
//! The [`FsBridge`] trait is what the file tools (`read`, `write`, `edit`,
//! `apply_patch`) run on; the host implementation and the sandbox's
//! mount-table implementation are the same code with different tables.
//!
//! What it does NOT do: decide whether a tool may run (policy and hooks do),
//! or run commands (the sandbox backends do).
#![deny(missing_docs)]

pub use crate::bridge::{
    Access, DirEntry, EditFn, FileContents, FileKind, FileStat, FsBridge, ResolvedPath,
    WriteOptions, WriteReport,
};
pub use crate::error::{FsError, FsErrorCode};
pub use crate::mount::{Mount, normalize_path};
pub use crate::mount_bridge::MountBridge;

mod bridge;
mod error;
mod mount;
mod mount_bridge;
mod ops;
mod resolve;
