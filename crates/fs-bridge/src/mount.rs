//! The mount table: container paths mapped to pinned host directories, and
//! the lexical path normalisation every lookup starts with.

use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};

use rustix::fs::{Mode, OFlags};

use crate::bounds;
use crate::error::{FsError, FsErrorCode};

/// One entry of a bridge's mount table: the host directory `host_root`
/// appears at `container_path` in the bridge's namespace.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Mount {
    /// Absolute path in the bridge's namespace (`/workspace`, `/agent`, ...).
    pub container_path: String,
    /// The host directory behind it (must exist; symlinks in it are resolved
    /// once, when the bridge is built).
    pub host_root: PathBuf,
    /// Whether every mutation under it is refused with `read-only`.
    pub read_only: bool,
}

impl Mount {
    /// A writable mount.
    pub fn writable(container_path: impl Into<String>, host_root: impl Into<PathBuf>) -> Self {
        Mount {
            container_path: container_path.into(),
            host_root: host_root.into(),
            read_only: false,
        }
    }

    /// A read-only mount.
    pub fn read_only(container_path: impl Into<String>, host_root: impl Into<PathBuf>) -> Self {
        Mount {
            container_path: container_path.into(),
            host_root: host_root.into(),
            read_only: true,
        }
    }
}

/// Normalise `path` lexically: join a relative path to `cwd`, drop empty and
/// `.` segments, apply `..` (never above `/`). Refuses an empty path and a
/// NUL byte with [`invalid-path`](FsErrorCode::InvalidPath).
///
/// The result is absolute, has no `.`/`..` segment, no doubled or trailing
/// `/` (except `/` itself), and normalising it again returns it unchanged.
/// `cwd` is expected to be absolute (a relative `cwd` is treated as if it
/// started with `/`).
///
/// Refuses with [`path-too-long`](FsErrorCode::PathTooLong) a path longer
/// than [`MAX_PATH_BYTES`](crate::MAX_PATH_BYTES) as given or normalised, a
/// name longer than [`MAX_NAME_BYTES`](crate::MAX_NAME_BYTES), and a result
/// deeper than [`MAX_PATH_DEPTH`](crate::MAX_PATH_DEPTH) components.
pub fn normalize_path(path: &str, cwd: &str) -> Result<String, FsError> {
    if path.is_empty() {
        return Err(FsError::new(
            FsErrorCode::InvalidPath,
            path,
            "the path is empty; give a file path such as `src/main.rs`",
        ));
    }
    if path.contains('\0') {
        return Err(FsError::new(
            FsErrorCode::InvalidPath,
            path.replace('\0', "\\0"),
            "the path contains a NUL byte; remove it",
        ));
    }
    bounds::check_given(path)?;
    let mut segments: Vec<&str> = Vec::new();
    if !path.starts_with('/') {
        push_segments(&mut segments, cwd);
    }
    push_segments(&mut segments, path);
    bounds::check_segments(path, &segments)?;
    Ok(join_absolute(&segments))
}

fn push_segments<'a>(segments: &mut Vec<&'a str>, path: &'a str) {
    for seg in path.split('/') {
        match seg {
            "" | "." => {}
            ".." => {
                segments.pop();
            }
            other => segments.push(other),
        }
    }
}

pub(crate) fn join_absolute<S: AsRef<str>>(segments: &[S]) -> String {
    if segments.is_empty() {
        return "/".to_owned();
    }
    let mut out = String::new();
    for seg in segments {
        out.push('/');
        out.push_str(seg.as_ref());
    }
    out
}

/// The parent of a normalised absolute path (`/` for `/`).
pub(crate) fn parent_of(path: &str) -> &str {
    match path.rfind('/') {
        Some(0) | None => "/",
        Some(i) => &path[..i],
    }
}

/// A mount with its host root opened once (`O_PATH | O_DIRECTORY`).
#[derive(Debug)]
pub(crate) struct OpenMount {
    pub(crate) container_path: String,
    /// Canonical host path of the root (for messages and `resolve`).
    pub(crate) host_root: PathBuf,
    pub(crate) read_only: bool,
    pub(crate) root: OwnedFd,
    /// Whether another mount sits beneath this one (then symlinks under it
    /// are resolved by the walker, which knows about the nested mounts).
    pub(crate) has_nested: bool,
}

/// Mounts sorted by container path, de-duplicated, each root pinned.
#[derive(Debug)]
pub(crate) struct MountTable {
    pub(crate) mounts: Vec<OpenMount>,
}

fn invalid_mount(container_path: &str, message: String) -> FsError {
    FsError::new(FsErrorCode::InvalidPath, container_path, message)
}

fn validate_container_path(raw: &str) -> Result<String, FsError> {
    if !raw.starts_with('/') {
        return Err(invalid_mount(
            raw,
            format!(
                "mount target `{raw}` is not an absolute container path; write it like `/workspace`"
            ),
        ));
    }
    if raw.split('/').any(|s| s == "..") {
        return Err(invalid_mount(
            raw,
            format!("mount target `{raw}` contains `..`; write the plain absolute path"),
        ));
    }
    normalize_path(raw, "/")
}

fn open_root(container_path: &str, host_root: &Path) -> Result<(PathBuf, OwnedFd), FsError> {
    if !host_root.is_absolute() {
        return Err(invalid_mount(
            container_path,
            format!(
                "mount `{container_path}`: host directory `{}` is not absolute; give an absolute host path",
                host_root.display()
            ),
        ));
    }
    let canonical = std::fs::canonicalize(host_root).map_err(|e| {
        let code = if e.kind() == std::io::ErrorKind::NotFound {
            FsErrorCode::NotFound
        } else {
            FsErrorCode::Io
        };
        FsError::new(
            code,
            container_path,
            format!(
                "mount `{container_path}`: host directory `{}` cannot be resolved ({e}); create it or fix the mount",
                host_root.display()
            ),
        )
    })?;
    let fd = rustix::fs::open(
        &canonical,
        OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC | OFlags::NOFOLLOW,
        Mode::empty(),
    )
    .map_err(|e| {
        let code = if e == rustix::io::Errno::NOTDIR {
            FsErrorCode::NotADirectory
        } else {
            FsErrorCode::Io
        };
        FsError::new(
            code,
            container_path,
            format!(
                "mount `{container_path}`: host path `{}` cannot be opened as a directory ({e}); point the mount at a directory",
                canonical.display()
            ),
        )
    })?;
    Ok((canonical, fd))
}

impl MountTable {
    pub(crate) fn open(mounts: Vec<Mount>) -> Result<Self, FsError> {
        if mounts.is_empty() {
            return Err(FsError::new(
                FsErrorCode::InvalidPath,
                "",
                "the mount table is empty; give at least one mount (for example `/workspace`)",
            ));
        }
        let mut open: Vec<OpenMount> = Vec::with_capacity(mounts.len());
        for mount in mounts {
            let container_path = validate_container_path(&mount.container_path)?;
            let (host_root, root) = open_root(&container_path, &mount.host_root)?;
            if let Some(existing) = open.iter_mut().find(|m| m.container_path == container_path) {
                if existing.host_root != host_root {
                    return Err(invalid_mount(
                        &container_path,
                        format!(
                            "two mounts at `{container_path}` (`{}` and `{}`); keep only one",
                            existing.host_root.display(),
                            host_root.display()
                        ),
                    ));
                }
                // The same mount twice: keep one, the stricter access wins.
                existing.read_only |= mount.read_only;
                continue;
            }
            open.push(OpenMount {
                container_path,
                host_root,
                read_only: mount.read_only,
                root,
                has_nested: false,
            });
        }
        open.sort_by(|a, b| a.container_path.cmp(&b.container_path));
        let paths: Vec<String> = open.iter().map(|m| m.container_path.clone()).collect();
        for m in &mut open {
            m.has_nested = paths
                .iter()
                .any(|p| p != &m.container_path && is_under(p, &m.container_path));
        }
        Ok(MountTable { mounts: open })
    }

    /// Longest-prefix lookup of a normalised absolute path: the mount index
    /// and the path relative to the mount root (`""` for the root itself).
    pub(crate) fn lookup<'p>(&self, path: &'p str) -> Option<(usize, &'p str)> {
        let mut best: Option<(usize, usize)> = None;
        for (i, m) in self.mounts.iter().enumerate() {
            if is_under(path, &m.container_path)
                && best.is_none_or(|(_, len)| m.container_path.len() > len)
            {
                best = Some((i, m.container_path.len()));
            }
        }
        best.map(|(i, len)| (i, path[len..].trim_start_matches('/')))
    }

    /// The index of the mount whose container path is exactly `path`.
    pub(crate) fn exact(&self, path: &str) -> Option<usize> {
        self.mounts.iter().position(|m| m.container_path == path)
    }

    /// The mount points, for messages.
    pub(crate) fn list(&self) -> String {
        self.mounts
            .iter()
            .map(|m| m.container_path.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// Whether normalised absolute `path` is `prefix` or beneath it.
pub(crate) fn is_under(path: &str, prefix: &str) -> bool {
    if prefix == "/" {
        return true;
    }
    path.strip_prefix(prefix)
        .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
}

#[cfg(test)]
#[path = "mount_tests.rs"]
mod tests;
