//! Resolution of a normalised path beneath its mount root, without a
//! check-then-use window.
//!
//! Fast path: one `openat2(RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS)` of the
//! parent directory relative to the pinned mount root fd, then an
//! `fstatat(AT_SYMLINK_NOFOLLOW)` of the final name on that fd. Anything the
//! fast path cannot settle (the kernel refused with `EXDEV`, a final symlink
//! to follow, a missing ancestor, `openat2` unavailable, a concurrent rename)
//! goes to the walker, which opens one component at a time with
//! `O_PATH | O_NOFOLLOW` relative to the directory fd it already holds and
//! resolves symlinks itself: a relative target continues from the directory
//! holding the link, an absolute target is read as a path in the bridge's
//! namespace and mapped through the mount table, and `..` at a mount root
//! climbs in the namespace. Whatever lands under no mount is an `escape`.

use std::collections::VecDeque;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::sync::atomic::{AtomicBool, Ordering};

use rustix::fs::{AtFlags, FileType, Mode, OFlags, ResolveFlags};
use rustix::io::Errno;

use crate::bounds::{self, MAX_PATH_DEPTH};
use crate::error::{FsError, FsErrorCode};
use crate::mount::{MountTable, join_absolute, normalize_path, parent_of};

/// Most symlinks followed while resolving one path (Linux's own limit).
const MAX_SYMLINKS: u32 = 40;

/// The bridge's state shared by every operation.
#[derive(Debug)]
pub(crate) struct Core {
    pub(crate) table: MountTable,
    pub(crate) cwd: String,
    /// Host mode: one mount whose container path is the workspace root.
    pub(crate) host_mode: bool,
    /// Cleared when `openat2` turns out to be unavailable (ENOSYS/EPERM).
    pub(crate) openat2_available: AtomicBool,
    /// Set to bypass the `openat2` fast path (tests, benchmarks).
    pub(crate) walk_only: AtomicBool,
}

/// Where a path landed: the directory holding the final entry (pinned fd)
/// and the entry's name.
#[derive(Debug)]
pub(crate) struct Located {
    /// Index of the mount that holds the entry.
    pub(crate) mount: usize,
    /// `O_PATH` fd of the directory holding `name`; when `name` is `None`,
    /// the mount root itself.
    pub(crate) parent: OwnedFd,
    /// The entry's name in `parent`; `None` for the mount root.
    pub(crate) name: Option<String>,
    /// When the entry does not exist: the components that would follow it
    /// (`parent` is then the deepest existing ancestor and `name` the first
    /// missing component).
    pub(crate) missing: Vec<String>,
    /// Whether the entry exists.
    pub(crate) exists: bool,
}

pub(crate) fn errno_error(e: Errno, given: &str, action: &str) -> FsError {
    let (code, what, hint) = match e {
        Errno::NOENT => (
            FsErrorCode::NotFound,
            "no such file or directory",
            "check the path (list the parent directory to see what exists)",
        ),
        Errno::NOTDIR => (
            FsErrorCode::NotADirectory,
            "a component of the path is not a directory",
            "check the path",
        ),
        Errno::EXIST => (
            FsErrorCode::AlreadyExists,
            "it already exists",
            "choose another name or allow overwriting",
        ),
        Errno::ISDIR => (
            FsErrorCode::NotAFile,
            "it is a directory",
            "give a file path",
        ),
        Errno::XDEV => (
            FsErrorCode::Escape,
            "it resolves outside its mount",
            "use a path inside the mount",
        ),
        Errno::ROFS => (
            FsErrorCode::ReadOnly,
            "the file system is read-only",
            "write somewhere else",
        ),
        Errno::ACCESS | Errno::PERM => (
            FsErrorCode::Io,
            "permission denied",
            "check the file's permissions",
        ),
        Errno::NOTEMPTY => (
            FsErrorCode::Io,
            "the directory is not empty",
            "remove its contents first or ask for a recursive remove",
        ),
        Errno::LOOP => (
            FsErrorCode::Io,
            "too many levels of symbolic links, or a symbolic link appeared while it was in use",
            "check the symbolic links along the path and retry",
        ),
        Errno::NOSPC | Errno::DQUOT => (
            FsErrorCode::TooLarge,
            "no space left on the device",
            "free space or write less",
        ),
        Errno::NAMETOOLONG => (
            FsErrorCode::PathTooLong,
            "a name in the path is too long",
            "use shorter names",
        ),
        _ => (
            FsErrorCode::Io,
            "the operation failed",
            "retry or check the file",
        ),
    };
    FsError::new(
        code,
        given,
        format!("cannot {action} `{given}`: {what} ({e}); {hint}"),
    )
}

fn split_components(rel: &str) -> impl Iterator<Item = String> + '_ {
    rel.split('/')
        .filter(|s| !s.is_empty() && *s != ".")
        .map(str::to_owned)
}

fn file_type(st: &rustix::fs::Stat) -> FileType {
    FileType::from_raw_mode(st.st_mode)
}

impl Core {
    /// What the bridge confines paths to, for messages.
    pub(crate) fn scope(&self) -> String {
        if self.host_mode {
            format!("the workspace root {}", self.cwd)
        } else {
            format!("the sandbox mounts ({})", self.table.list())
        }
    }

    fn inside_hint(&self) -> &'static str {
        if self.host_mode {
            "use a path inside it"
        } else {
            "use a path inside one of them"
        }
    }

    pub(crate) fn outside_mounts(&self, given: &str) -> FsError {
        tracing::debug!(
            path = given,
            "file bridge: path outside every mount refused"
        );
        FsError::new(
            FsErrorCode::OutsideMounts,
            given,
            format!(
                "`{given}` resolves outside {}; {}",
                self.scope(),
                self.inside_hint()
            ),
        )
    }

    pub(crate) fn escape(&self, given: &str) -> FsError {
        tracing::debug!(
            path = given,
            "file bridge: escape through a symlink refused"
        );
        FsError::new(
            FsErrorCode::Escape,
            given,
            format!(
                "`{given}` leads outside {} through a symbolic link or `..`; {} that does not go through that link",
                self.scope(),
                self.inside_hint()
            ),
        )
    }

    /// Normalise a caller's path against the bridge's cwd.
    pub(crate) fn normalize(&self, given: &str) -> Result<String, FsError> {
        normalize_path(given, &self.cwd)
    }

    /// Resolve normalised `ns` beneath its mount. A final symlink is
    /// followed when `follow_final` (and then never reported as the entry).
    pub(crate) fn locate(
        &self,
        given: &str,
        ns: &str,
        follow_final: bool,
    ) -> Result<Located, FsError> {
        let (mount, rel) = self
            .table
            .lookup(ns)
            .ok_or_else(|| self.outside_mounts(given))?;
        if !rel.is_empty()
            && !self.walk_only.load(Ordering::Relaxed)
            && self.openat2_available.load(Ordering::Relaxed)
            && let Some(found) = self.locate_fast(mount, rel, follow_final)
        {
            return Ok(found);
        }
        self.walk(given, ns, follow_final)
    }

    /// The `openat2` fast path; `None` hands over to the walker.
    fn locate_fast(&self, mount: usize, rel: &str, follow_final: bool) -> Option<Located> {
        let m = self.table.mounts.get(mount)?;
        let (parent_rel, name) = match rel.rfind('/') {
            Some(i) => (&rel[..i], &rel[i + 1..]),
            None => (".", rel),
        };
        let mut how = ResolveFlags::BENEATH | ResolveFlags::NO_MAGICLINKS;
        if m.has_nested {
            // A symlink could lead into a nested mount's host directory;
            // only the walker knows to switch mounts there.
            how |= ResolveFlags::NO_SYMLINKS;
        }
        let parent = match rustix::fs::openat2(
            &m.root,
            parent_rel,
            OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
            how,
        ) {
            Ok(fd) => fd,
            Err(e @ (Errno::NOSYS | Errno::PERM)) => {
                tracing::warn!(
                    errno = %e,
                    "openat2 is unavailable; file bridge falls back to a component-by-component walk"
                );
                self.openat2_available.store(false, Ordering::Relaxed);
                return None;
            }
            Err(_) => return None,
        };
        match rustix::fs::statat(&parent, name, AtFlags::SYMLINK_NOFOLLOW) {
            Ok(st) if file_type(&st) == FileType::Symlink && follow_final => None,
            Ok(_) => Some(Located {
                mount,
                parent,
                name: Some(name.to_owned()),
                missing: Vec::new(),
                exists: true,
            }),
            Err(Errno::NOENT) => Some(Located {
                mount,
                parent,
                name: Some(name.to_owned()),
                missing: Vec::new(),
                exists: false,
            }),
            Err(_) => None,
        }
    }

    /// The component-by-component walk (see the module docs).
    pub(crate) fn walk(
        &self,
        given: &str,
        ns: &str,
        follow_final: bool,
    ) -> Result<Located, FsError> {
        let mut state = WalkState {
            mount: 0,
            stack: Vec::new(),
            names: Vec::new(),
            pending: VecDeque::new(),
        };
        if !self.jump(&mut state, ns) {
            return Err(self.outside_mounts(given));
        }
        let mut links = 0u32;
        loop {
            let Some(comp) = state.pending.pop_front() else {
                return self.finish_at_current(state, given);
            };
            if comp == "." {
                continue;
            }
            if comp == ".." {
                if state.stack.pop().is_some() {
                    state.names.pop();
                    continue;
                }
                let mount_path = self.mount_path(state.mount)?;
                if mount_path == "/" {
                    continue;
                }
                let up = parent_of(&mount_path).to_owned();
                if !self.jump(&mut state, &up) {
                    return Err(self.escape(given));
                }
                continue;
            }
            let is_last = state.pending.is_empty();
            let opened = rustix::fs::openat(
                self.top(&state)?,
                comp.as_str(),
                OFlags::PATH | OFlags::NOFOLLOW | OFlags::CLOEXEC,
                Mode::empty(),
            );
            let fd = match opened {
                Ok(fd) => fd,
                Err(Errno::NOENT) => {
                    let parent = self.take_top(&mut state)?;
                    return Ok(Located {
                        mount: state.mount,
                        parent,
                        name: Some(comp),
                        missing: state.pending.into_iter().collect(),
                        exists: false,
                    });
                }
                Err(e) => return Err(errno_error(e, given, "resolve")),
            };
            let st = rustix::fs::fstat(&fd).map_err(|e| errno_error(e, given, "resolve"))?;
            let kind = file_type(&st);
            if kind == FileType::Symlink && (!is_last || follow_final) {
                links += 1;
                if links > MAX_SYMLINKS {
                    return Err(errno_error(Errno::LOOP, given, "resolve"));
                }
                let target = rustix::fs::readlinkat(&fd, "", Vec::new())
                    .map_err(|e| errno_error(e, given, "read the symbolic link in"))?;
                let target = target.to_str().map_err(|_| {
                    FsError::new(
                        FsErrorCode::InvalidPath,
                        given,
                        format!("`{given}` goes through a symbolic link whose target is not UTF-8; use another path"),
                    )
                })?;
                if target.is_empty() {
                    return Err(errno_error(Errno::NOENT, given, "resolve"));
                }
                if target.starts_with('/') {
                    let target_ns = normalize_path(target, "/")?;
                    if !self.jump(&mut state, &target_ns) {
                        return Err(self.escape(given));
                    }
                } else {
                    for (i, c) in split_components(target).enumerate() {
                        state.pending.insert(i, c);
                    }
                }
                continue;
            }
            if kind == FileType::Directory {
                if state.stack.len() >= MAX_PATH_DEPTH {
                    return Err(bounds::resolves_too_deep(given));
                }
                state.stack.push(fd);
                state.names.push(comp);
                self.enter_nested_mount(&mut state)?;
                continue;
            }
            if !is_last {
                return Err(FsError::new(
                    FsErrorCode::NotADirectory,
                    given,
                    format!(
                        "cannot resolve `{given}`: `{comp}` is not a directory; check the path"
                    ),
                ));
            }
            let parent = self.take_top(&mut state)?;
            return Ok(Located {
                mount: state.mount,
                parent,
                name: Some(comp),
                missing: Vec::new(),
                exists: true,
            });
        }
    }

    fn mount_path(&self, mount: usize) -> Result<String, FsError> {
        self.table
            .mounts
            .get(mount)
            .map(|m| m.container_path.clone())
            .ok_or_else(|| FsError::new(FsErrorCode::Io, "", "mount table index out of range"))
    }

    /// Restart the walk at namespace path `ns`, keeping what is still
    /// pending after it. `false` when `ns` is under no mount.
    fn jump(&self, state: &mut WalkState, ns: &str) -> bool {
        let Some((mount, rel)) = self.table.lookup(ns) else {
            return false;
        };
        state.mount = mount;
        state.stack.clear();
        state.names.clear();
        for (i, c) in split_components(rel).enumerate() {
            state.pending.insert(i, c);
        }
        true
    }

    /// After descending into a directory: if a nested mount sits exactly
    /// there, continue in that mount instead of the host directory.
    fn enter_nested_mount(&self, state: &mut WalkState) -> Result<(), FsError> {
        let here_mount =
            self.table.mounts.get(state.mount).ok_or_else(|| {
                FsError::new(FsErrorCode::Io, "", "mount table index out of range")
            })?;
        if !here_mount.has_nested {
            return Ok(());
        }
        let mut segments: Vec<&str> = here_mount
            .container_path
            .split('/')
            .filter(|s| !s.is_empty())
            .collect();
        segments.extend(state.names.iter().map(String::as_str));
        let here = join_absolute(&segments);
        if let Some(nested) = self.table.exact(&here)
            && nested != state.mount
        {
            state.mount = nested;
            state.stack.clear();
            state.names.clear();
        }
        Ok(())
    }

    fn top<'s>(&'s self, state: &'s WalkState) -> Result<BorrowedFd<'s>, FsError> {
        match state.stack.last() {
            Some(fd) => Ok(fd.as_fd()),
            None => self
                .table
                .mounts
                .get(state.mount)
                .map(|m| m.root.as_fd())
                .ok_or_else(|| FsError::new(FsErrorCode::Io, "", "mount table index out of range")),
        }
    }

    fn take_top(&self, state: &mut WalkState) -> Result<OwnedFd, FsError> {
        match state.stack.pop() {
            Some(fd) => Ok(fd),
            None => self.root_clone(state.mount),
        }
    }

    pub(crate) fn root_clone(&self, mount: usize) -> Result<OwnedFd, FsError> {
        let m =
            self.table.mounts.get(mount).ok_or_else(|| {
                FsError::new(FsErrorCode::Io, "", "mount table index out of range")
            })?;
        m.root.try_clone().map_err(|e| {
            FsError::new(
                FsErrorCode::Io,
                m.container_path.clone(),
                format!(
                    "cannot duplicate the root fd of mount {}: {e}",
                    m.container_path
                ),
            )
        })
    }

    /// The walk consumed every component: the target is the directory the
    /// walk stands in.
    fn finish_at_current(&self, mut state: WalkState, _given: &str) -> Result<Located, FsError> {
        // The directory itself sits on the stack; its parent holds it.
        match (state.stack.pop(), state.names.pop()) {
            (Some(_dir), Some(name)) => {
                let parent = self.take_top(&mut state)?;
                Ok(Located {
                    mount: state.mount,
                    parent,
                    name: Some(name),
                    missing: Vec::new(),
                    exists: true,
                })
            }
            _ => Ok(Located {
                mount: state.mount,
                parent: self.root_clone(state.mount)?,
                name: None,
                missing: Vec::new(),
                exists: true,
            }),
        }
    }
}

#[derive(Debug)]
struct WalkState {
    mount: usize,
    /// Directory fds below the mount root, deepest last.
    stack: Vec<OwnedFd>,
    /// Their names (parallel to `stack`).
    names: Vec<String>,
    /// Components still to resolve.
    pending: VecDeque<String>,
}
