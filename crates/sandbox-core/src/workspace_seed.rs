//! Preparing a scope's sandbox workspace before a backend uses it.
//!
//! With `workspaceAccess` `none` or `ro` the sandbox's `/workspace` is the
//! scope's own directory (`<workspaceRoot>/<slug>`), not the agent's. It is
//! seeded ONCE from the agent workspace's bootstrap files
//! ([`BOOTSTRAP_FILE_NAMES`]) so the sandboxed agent finds its
//! instructions, and is then the sandbox's writable scratch space.
//!
//! Both directories are hostile: the agent workspace is written by the
//! agent (and whatever it ran on the host), the sandbox workspace by
//! sandboxed code. So:
//! - a bootstrap file is copied only when it is a regular file with one
//!   link and at most [`MAX_BOOTSTRAP_FILE_BYTES`]: a symlink (to
//!   `~/.ssh/id_rsa`, `/etc/shadow`), a FIFO, a device, a socket, a hard
//!   link or a huge file is skipped, logged with `tracing::warn!` and
//!   listed in the [`SeedReport`]. It is opened `O_NOFOLLOW | O_NONBLOCK`
//!   relative to the agent workspace's directory fd and re-checked by
//!   `fstat` to be the inode that was judged.
//! - a file is written into the sandbox workspace through that
//!   directory's fd (opened `O_NOFOLLOW`), via an `O_EXCL` temp file
//!   renamed with `RENAME_NOREPLACE`: anything already there (the agent's
//!   own edit, a pre-planted symlink) is kept and never written through.
//! - seeding happens once: a marker beside the directory
//!   (`<dir>.talon-seeded`, outside the sandbox's mount, so sandboxed code
//!   cannot remove it) records it, with the directory's inode and birth
//!   time, so a file the agent deleted is not brought back; a directory
//!   removed and made again is seeded afresh (on a file system without
//!   birth times, only when it got a new inode number).
//!
//! [`prepare_sandbox_workspace`] is the one call every backend (Docker,
//! SSH, local) makes before the sandbox is used.

use std::os::fd::AsFd;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::backend::SandboxRequest;
use crate::error::SandboxError;
use crate::mounts::MountKind;
use crate::safe_fs::{
    Created, SkipReason, chown_fd, create_new_file, is_dir, judge_regular, lstat_at,
    open_dir_nofollow, read_regular, replace_file,
};
use crate::sandbox_config::WorkspaceAccess;

/// The agent workspace files a sandbox workspace is seeded with (those
/// present), as in OpenClaw.
pub const BOOTSTRAP_FILE_NAMES: [&str; 8] = [
    "AGENTS.md",
    "SOUL.md",
    "TOOLS.md",
    "IDENTITY.md",
    "USER.md",
    "HEARTBEAT.md",
    "BOOTSTRAP.md",
    "MEMORY.md",
];

/// The largest bootstrap file that is copied (2 MiB).
pub const MAX_BOOTSTRAP_FILE_BYTES: u64 = 2 * 1024 * 1024;

/// Appended to the sandbox workspace dir's name to name its marker.
pub const SEED_MARKER_SUFFIX: &str = ".talon-seeded";

/// A file that was not copied, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SkippedFile {
    /// The file, relative to the directory copied from.
    pub path: String,
    /// Why.
    pub reason: SkipReason,
}

/// What seeding a sandbox workspace did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SeedReport {
    /// The workspace had been seeded before; nothing was done.
    pub already_seeded: bool,
    /// Bootstrap files copied.
    pub copied: Vec<String>,
    /// Bootstrap files the sandbox workspace already had (kept as they
    /// are, whatever they are).
    pub kept: Vec<String>,
    /// Bootstrap files not copied, with the reason.
    pub skipped: Vec<SkippedFile>,
}

/// What [`prepare_sandbox_workspace`] did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PrepareReport {
    /// The seeding of the scope's sandbox workspace (`none` / `ro`);
    /// `None` for `rw`, where the sandbox works in the agent workspace.
    pub seed: Option<SeedReport>,
}

/// Why a sandbox workspace could not be prepared. Nothing is used when
/// this is returned: the backend refuses the sandbox.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum WorkspaceError {
    /// The directory could not be created.
    #[error("cannot create the sandbox workspace {}: {source}", path.display())]
    Create {
        /// The directory.
        path: PathBuf,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// Something other than a plain directory (a symlink, a file) is where
    /// the directory should be.
    #[error(
        "{} is not a plain directory (a symbolic link or another file is in its place); \
         Talon will not use it: remove it and retry",
        path.display()
    )]
    NotADirectory {
        /// The path.
        path: PathBuf,
        /// The OS error from opening it.
        #[source]
        source: std::io::Error,
    },
    /// Writing a file failed.
    #[error("cannot write {}: {source}", path.display())]
    Write {
        /// The file.
        path: PathBuf,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// The directory has no parent to hold its marker.
    #[error("the sandbox workspace {} has no parent directory to hold its seed marker", path.display())]
    NoParent {
        /// The directory.
        path: PathBuf,
    },
}

impl From<WorkspaceError> for SandboxError {
    fn from(e: WorkspaceError) -> Self {
        SandboxError::io(e.to_string()).with_source(e)
    }
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Marker {
    dev: u64,
    ino: u64,
    /// The directory's birth time (`statx`), where the file system keeps
    /// one: an inode number can be reused by a directory made again.
    birth: Option<(i64, u32)>,
}

/// The identity of an open directory: device, inode, birth time.
fn identity(dir: &std::os::fd::OwnedFd) -> std::io::Result<Marker> {
    use rustix::fs::{AtFlags, StatxFlags};
    let st = rustix::fs::statx(
        dir,
        "",
        AtFlags::EMPTY_PATH,
        StatxFlags::INO | StatxFlags::BTIME,
    )?;
    let birth = (st.stx_mask & StatxFlags::BTIME.bits() != 0)
        .then_some((st.stx_btime.tv_sec, st.stx_btime.tv_nsec));
    Ok(Marker {
        dev: rustix::fs::makedev(st.stx_dev_major, st.stx_dev_minor),
        ino: st.stx_ino,
        birth,
    })
}

/// The seed marker of a sandbox workspace dir: `<dir>.talon-seeded`
/// beside it.
pub fn seed_marker_path(sandbox_workspace_dir: &Path) -> Option<PathBuf> {
    let name = sandbox_workspace_dir.file_name()?;
    let mut marker = name.to_os_string();
    marker.push(SEED_MARKER_SUFFIX);
    Some(sandbox_workspace_dir.with_file_name(marker))
}

/// Create `dir` if needed and open it, refusing a symlink or a non-dir in
/// its place.
pub(crate) fn create_and_open_dir(dir: &Path) -> Result<std::os::fd::OwnedFd, WorkspaceError> {
    std::fs::create_dir_all(dir).map_err(|source| WorkspaceError::Create {
        path: dir.to_path_buf(),
        source,
    })?;
    open_dir_nofollow(dir).map_err(|e| WorkspaceError::NotADirectory {
        path: dir.to_path_buf(),
        source: e.into(),
    })
}

/// Seed `sandbox_workspace_dir` (created if missing) with the agent
/// workspace's bootstrap files, once (see the module docs). A missing
/// agent workspace seeds nothing.
pub fn seed_sandbox_workspace(
    agent_workspace_dir: &Path,
    sandbox_workspace_dir: &Path,
) -> Result<SeedReport, WorkspaceError> {
    let no_parent = || WorkspaceError::NoParent {
        path: sandbox_workspace_dir.to_path_buf(),
    };
    let marker_path = seed_marker_path(sandbox_workspace_dir).ok_or_else(no_parent)?;
    let marker_name = marker_path
        .file_name()
        .and_then(|n| n.to_str())
        .map(str::to_owned)
        .ok_or_else(no_parent)?;
    let parent = sandbox_workspace_dir
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .ok_or_else(no_parent)?;
    let dst = create_and_open_dir(sandbox_workspace_dir)?;
    let parent_fd = open_dir_nofollow(parent).map_err(|e| WorkspaceError::NotADirectory {
        path: parent.to_path_buf(),
        source: e.into(),
    })?;
    let marker = identity(&dst).map_err(|source| WorkspaceError::NotADirectory {
        path: sandbox_workspace_dir.to_path_buf(),
        source,
    })?;
    if let Ok(text) = std::fs::read(&marker_path)
        && let Ok(old) = serde_json::from_slice::<Marker>(&text)
        && old.dev == marker.dev
        && old.ino == marker.ino
        && old.birth == marker.birth
    {
        return Ok(SeedReport {
            already_seeded: true,
            ..SeedReport::default()
        });
    }
    let mut report = SeedReport::default();
    // The agent workspace is the configured path: a symlink there is the
    // operator's choice and is followed; nothing beneath it is.
    match rustix::fs::open(
        agent_workspace_dir,
        rustix::fs::OFlags::RDONLY | rustix::fs::OFlags::DIRECTORY | rustix::fs::OFlags::CLOEXEC,
        rustix::fs::Mode::empty(),
    ) {
        Ok(src) => {
            // The scratch copy belongs to whoever owns the agent workspace
            // (when Talon may give it away), so a sandbox that runs as the
            // workspace's owner can edit what was seeded.
            let owner = rustix::fs::fstat(&src)
                .ok()
                .map(|st| (st.st_uid, st.st_gid));
            if let Some((uid, gid)) = owner {
                chown_fd(dst.as_fd(), uid, gid);
            }
            for name in BOOTSTRAP_FILE_NAMES {
                seed_one(&src, &dst, name, owner, sandbox_workspace_dir, &mut report)?;
            }
        }
        Err(e) => {
            tracing::warn!(
                agent_workspace = %agent_workspace_dir.display(),
                "the agent workspace cannot be opened ({e}); the sandbox workspace is not seeded"
            );
        }
    }
    let text = serde_json::to_vec(&marker).unwrap_or_default();
    replace_file(parent_fd.as_fd(), &marker_name, &text).map_err(|source| {
        WorkspaceError::Write {
            path: marker_path.clone(),
            source,
        }
    })?;
    tracing::info!(
        sandbox_workspace = %sandbox_workspace_dir.display(),
        copied = ?report.copied,
        kept = ?report.kept,
        skipped = report.skipped.len(),
        "sandbox workspace seeded"
    );
    Ok(report)
}

fn seed_one(
    src: &impl AsFd,
    dst: &impl AsFd,
    name: &str,
    owner: Option<(u32, u32)>,
    sandbox_workspace_dir: &Path,
    report: &mut SeedReport,
) -> Result<(), WorkspaceError> {
    let mut skip = |reason: SkipReason| {
        tracing::warn!(
            file = name,
            "bootstrap file not copied into the sandbox workspace: {reason}"
        );
        report.skipped.push(SkippedFile {
            path: name.to_owned(),
            reason,
        });
    };
    let seen = match lstat_at(src.as_fd(), name) {
        Ok(Some(st)) => st,
        Ok(None) => return Ok(()),
        Err(e) => {
            skip(SkipReason::Unreadable {
                error: e.to_string(),
            });
            return Ok(());
        }
    };
    if let Err(reason) = judge_regular(&seen, MAX_BOOTSTRAP_FILE_BYTES) {
        skip(reason);
        return Ok(());
    }
    let (bytes, st) = match read_regular(src.as_fd(), name, &seen, MAX_BOOTSTRAP_FILE_BYTES) {
        Ok(read) => read,
        Err(reason) => {
            skip(reason);
            return Ok(());
        }
    };
    let mode = st.st_mode & 0o755 | 0o600;
    match create_new_file(dst.as_fd(), name, &bytes, mode, owner) {
        Ok(Created::Written) => report.copied.push(name.to_owned()),
        Ok(Created::Exists) => report.kept.push(name.to_owned()),
        Err(source) => {
            return Err(WorkspaceError::Write {
                path: sandbox_workspace_dir.join(name),
                source,
            });
        }
    }
    Ok(())
}

/// Prepare the sandbox workspace of `request` before its sandbox is used:
/// for `none` / `ro`, create the scope's directory and seed it once
/// ([`seed_sandbox_workspace`]); check that every read-only skills mount
/// source is a plain directory. Every backend calls this before creating
/// or reusing a sandbox; an error means the sandbox must not be used.
pub fn prepare_sandbox_workspace(request: &SandboxRequest) -> Result<PrepareReport, SandboxError> {
    let seed = match request.config.workspace_access {
        WorkspaceAccess::Rw => None,
        WorkspaceAccess::Ro | WorkspaceAccess::None => Some(seed_sandbox_workspace(
            &request.agent_workspace_dir,
            &request.workspace_dir,
        )?),
    };
    for entry in &request.mount_plan.entries {
        if entry.kind == MountKind::Skills {
            let st = rustix::fs::lstat(&entry.host_path).ok();
            if !st.as_ref().is_some_and(is_dir) {
                return Err(SandboxError::config(format!(
                    "the skills mount source {} is no longer a directory; retry so the mount \
                     plan is made again",
                    entry.host_path.display()
                )));
            }
        }
    }
    Ok(PrepareReport { seed })
}

#[cfg(test)]
#[path = "workspace_seed_tests.rs"]
mod tests;
