//! The blocking file operations, each anchored on the directory fd that
//! resolution returned (every call below is an `*at` call on that fd, with
//! `O_NOFOLLOW` / `AT_SYMLINK_NOFOLLOW` on the final name).

use std::ffi::OsStr;
use std::io::{Read, Write};
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime};

use rustix::fs::{AtFlags, FileType, Mode, OFlags, RenameFlags};
use rustix::io::Errno;

use crate::bounds;
use crate::bridge::{
    Access, DirEntry, FileContents, FileKind, FileStat, ResolvedPath, WriteOptions, WriteReport,
};
use crate::error::{FsError, FsErrorCode};
use crate::mount::is_under;
use crate::path_rules::{
    check_entry_name, demands_directory, directory_not_file, mount_root_refused,
    trailing_slash_creates_no_file, trailing_slash_on_non_directory,
};
use crate::resolve::{Core, Located, errno_error};

/// Mode of a newly created file (the process umask still applies).
const NEW_FILE_MODE: u32 = 0o644;
/// Mode of a newly created directory (the process umask still applies).
const NEW_DIR_MODE: u32 = 0o755;
/// Deepest directory tree a recursive remove descends.
const MAX_REMOVE_DEPTH: usize = 256;

static TEMP_COUNTER: AtomicU64 = AtomicU64::new(0);

/// What `edit` carries from its read to its replace.
#[derive(Debug)]
pub(crate) struct EditTarget {
    parent: OwnedFd,
    name: String,
    mode: u32,
    pub(crate) container_path: String,
}

fn kind_of(mode: u32) -> FileKind {
    match FileType::from_raw_mode(mode) {
        FileType::RegularFile => FileKind::File,
        FileType::Directory => FileKind::Directory,
        FileType::Symlink => FileKind::Symlink,
        _ => FileKind::Other,
    }
}

#[allow(clippy::cast_sign_loss, clippy::unnecessary_cast)]
fn size_of(st: &rustix::fs::Stat) -> u64 {
    st.st_size.max(0) as u64
}

#[allow(clippy::cast_sign_loss, clippy::unnecessary_cast)]
fn modified_of(st: &rustix::fs::Stat) -> Option<SystemTime> {
    let secs = st.st_mtime as i64;
    let nanos = (st.st_mtime_nsec as u64).min(999_999_999) as u32;
    if secs >= 0 {
        SystemTime::UNIX_EPOCH.checked_add(Duration::new(secs as u64, nanos))
    } else {
        SystemTime::UNIX_EPOCH
            .checked_sub(Duration::from_secs(secs.unsigned_abs()))
            .and_then(|t| t.checked_add(Duration::from_nanos(u64::from(nanos))))
    }
}

fn stat_of(st: &rustix::fs::Stat) -> FileStat {
    FileStat {
        kind: kind_of(st.st_mode),
        size: size_of(st),
        mode: st.st_mode & 0o7777,
        modified: modified_of(st),
    }
}

fn not_found(given: &str) -> FsError {
    FsError::new(
        FsErrorCode::NotFound,
        given,
        format!(
            "`{given}` does not exist; check the path (list the parent directory to see what exists)"
        ),
    )
}

fn dangling_dotdot(given: &str) -> FsError {
    FsError::new(
        FsErrorCode::InvalidPath,
        given,
        format!(
            "`{given}` goes through a dangling symbolic link whose target contains `..`; fix or remove the link, or use a path without it"
        ),
    )
}

fn changed(given: &str) -> FsError {
    FsError::new(
        FsErrorCode::Io,
        given,
        format!("`{given}` changed while it was being used (it became a symbolic link); retry"),
    )
}

fn io_error(e: &std::io::Error, given: &str, action: &str) -> FsError {
    match e.raw_os_error() {
        Some(raw) => errno_error(Errno::from_raw_os_error(raw), given, action),
        None => FsError::new(
            FsErrorCode::Io,
            given,
            format!("cannot {action} `{given}`: {e}"),
        ),
    }
}

/// A temp name in the same directory, short enough for any file system.
fn temp_name(name: &str) -> String {
    let mut stem = name;
    while stem.len() > 180 {
        let mut cut = 180;
        while !stem.is_char_boundary(cut) {
            cut -= 1;
        }
        stem = &stem[..cut];
    }
    let n = TEMP_COUNTER.fetch_add(1, Ordering::Relaxed);
    format!(".{stem}.{}.{n}.talon-tmp", std::process::id())
}

/// Write `data` to a fresh `O_EXCL` temp file in `dir`, fsync it, give it
/// `mode`, and rename it onto `name` (refusing to replace when `no_replace`).
/// The temp file is removed on any failure.
fn replace_atomically(
    dir: BorrowedFd<'_>,
    name: &str,
    data: &[u8],
    mode: Option<u32>,
    no_replace: bool,
    given: &str,
) -> Result<(), FsError> {
    let mut attempt = 0;
    let (tmp, fd) = loop {
        let tmp = temp_name(name);
        match rustix::fs::openat(
            dir,
            tmp.as_str(),
            OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::from_raw_mode(NEW_FILE_MODE),
        ) {
            Ok(fd) => break (tmp, fd),
            Err(Errno::EXIST) if attempt < 16 => attempt += 1,
            Err(e) => return Err(errno_error(e, given, "create a temporary file for")),
        }
    };
    let result = (|| {
        let mut file = std::fs::File::from(fd);
        file.write_all(data)
            .map_err(|e| io_error(&e, given, "write"))?;
        if let Some(mode) = mode {
            rustix::fs::fchmod(&file, Mode::from_raw_mode(mode))
                .map_err(|e| errno_error(e, given, "set the permissions of"))?;
        }
        file.sync_all().map_err(|e| io_error(&e, given, "flush"))?;
        drop(file);
        let flags = if no_replace {
            RenameFlags::NOREPLACE
        } else {
            RenameFlags::empty()
        };
        match rustix::fs::renameat_with(dir, tmp.as_str(), dir, name, flags) {
            Ok(()) => Ok(()),
            Err(Errno::INVAL) if no_replace => {
                // The file system lacks RENAME_NOREPLACE: check, then rename.
                match rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW) {
                    Ok(_) => Err(errno_error(Errno::EXIST, given, "create")),
                    Err(_) => rustix::fs::renameat(dir, tmp.as_str(), dir, name)
                        .map_err(|e| errno_error(e, given, "replace")),
                }
            }
            Err(e) => Err(errno_error(e, given, "replace")),
        }
    })();
    if result.is_err() {
        let _ = rustix::fs::unlinkat(dir, tmp.as_str(), AtFlags::empty());
    }
    result
}

/// Open `name` in `dir` for reading, refusing anything but a regular file.
fn open_regular(
    dir: BorrowedFd<'_>,
    name: &str,
    given: &str,
) -> Result<(std::fs::File, rustix::fs::Stat), FsError> {
    let fd = rustix::fs::openat(
        dir,
        name,
        OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .map_err(|e| match e {
        Errno::LOOP => changed(given),
        other => errno_error(other, given, "read"),
    })?;
    let st = rustix::fs::fstat(&fd).map_err(|e| errno_error(e, given, "read"))?;
    if file_type_of(&st) != FileType::RegularFile {
        return Err(not_a_file(given, &st));
    }
    Ok((std::fs::File::from(fd), st))
}

fn file_type_of(st: &rustix::fs::Stat) -> FileType {
    FileType::from_raw_mode(st.st_mode)
}

fn not_a_file(given: &str, st: &rustix::fs::Stat) -> FsError {
    let what = match file_type_of(st) {
        FileType::Directory => "a directory (list it instead)",
        FileType::Symlink => "a symbolic link",
        _ => "not a regular file",
    };
    FsError::new(
        FsErrorCode::NotAFile,
        given,
        format!("`{given}` is {what}; give the path of a regular file"),
    )
}

impl Core {
    fn check_writable(&self, loc: &Located, given: &str) -> Result<(), FsError> {
        let Some(m) = self.table.mounts.get(loc.mount) else {
            return Err(FsError::new(
                FsErrorCode::Io,
                given,
                "mount table index out of range",
            ));
        };
        if m.read_only {
            let writable: Vec<&str> = self
                .table
                .mounts
                .iter()
                .filter(|m| !m.read_only)
                .map(|m| m.container_path.as_str())
                .collect();
            let hint = if writable.is_empty() {
                "nothing in this bridge is writable".to_owned()
            } else {
                format!("write under {} instead", writable.join(", "))
            };
            return Err(FsError::new(
                FsErrorCode::ReadOnly,
                given,
                format!(
                    "`{given}` is in the read-only mount {}; it cannot be changed ({hint})",
                    m.container_path
                ),
            ));
        }
        Ok(())
    }

    /// Whether the existing entry at `loc` is a directory (a mount root is).
    fn is_directory(loc: &Located, given: &str) -> Result<bool, FsError> {
        match &loc.name {
            None => Ok(true),
            Some(name) => rustix::fs::statat(&loc.parent, name.as_str(), AtFlags::SYMLINK_NOFOLLOW)
                .map(|st| file_type_of(&st) == FileType::Directory)
                .map_err(|e| errno_error(e, given, "stat")),
        }
    }

    /// A read-side trailing slash: an existing non-directory is refused
    /// with `not-a-directory` (what is missing or a directory is left to
    /// the operation).
    fn check_trailing_slash(&self, loc: &Located, given: &str) -> Result<(), FsError> {
        if demands_directory(given) && loc.exists && !Self::is_directory(loc, given)? {
            return Err(trailing_slash_on_non_directory(given));
        }
        Ok(())
    }

    /// Before `remove` or `rename` touches `given`: a path that is a mount
    /// root (however spelled: `.`, `sub/..`, `/workspace/`) is refused with
    /// `mount-root`, and a trailing slash on an existing non-directory with
    /// `not-a-directory`; then the entry-name check.
    fn check_mutation_target(&self, given: &str) -> Result<(), FsError> {
        let ns = self.normalize(given)?;
        if self.table.exact(&ns).is_some() {
            return Err(mount_root_refused(given, "remove or rename"));
        }
        if demands_directory(given) {
            // `link/` or `link/.` names what the link points to, which may
            // be a mount root.
            let loc = self.locate(given, &ns, true)?;
            if loc.exists && loc.name.is_none() {
                return Err(mount_root_refused(given, "remove or rename"));
            }
            self.check_trailing_slash(&loc, given)?;
        }
        check_entry_name(given)
    }

    /// Two table entries over the same host directory (host mode's alias).
    fn same_host_root(&self, a: usize, b: usize) -> bool {
        match (self.table.mounts.get(a), self.table.mounts.get(b)) {
            (Some(a), Some(b)) => a.host_root == b.host_root,
            _ => false,
        }
    }

    fn mount_container_path(&self, mount: usize) -> String {
        self.table
            .mounts
            .get(mount)
            .map(|m| m.container_path.clone())
            .unwrap_or_default()
    }

    /// Refuse removing or renaming a directory that has a mount beneath it.
    fn check_no_mount_below(&self, ns: &str, given: &str, action: &str) -> Result<(), FsError> {
        if let Some(m) = self
            .table
            .mounts
            .iter()
            .find(|m| m.container_path != ns && is_under(&m.container_path, ns))
        {
            return Err(FsError::new(
                FsErrorCode::InvalidPath,
                given,
                format!(
                    "cannot {action} `{given}`: the mount {} lies beneath it; pick entries inside it instead",
                    m.container_path
                ),
            ));
        }
        Ok(())
    }

    /// Depth below its mount root and host path length of the directory
    /// `parent` of mount `mount` (read back from the kernel, so symlinks
    /// followed on the way count as what they are); `None` when `/proc` is
    /// unavailable or the answer is not under the mount root.
    fn parent_extent(&self, mount: usize, parent: BorrowedFd<'_>) -> Option<(usize, usize)> {
        let m = self.table.mounts.get(mount)?;
        let proc = format!("/proc/self/fd/{}", parent.as_raw_fd());
        let target = rustix::fs::readlink(proc.as_str(), Vec::new()).ok()?;
        let host = PathBuf::from(OsStr::from_bytes(target.as_bytes()));
        let rel = host.strip_prefix(&m.host_root).ok()?;
        Some((rel.components().count(), host.as_os_str().len()))
    }

    /// Refuse creating the entries `new` (names, outermost first) in
    /// `parent` when the deepest would lie more than
    /// [`MAX_PATH_DEPTH`](crate::MAX_PATH_DEPTH) levels below the mount
    /// root or have a host path longer than `PATH_MAX`; `extra` adds the
    /// depth and length of a subtree moved along (a rename).
    fn check_creation(
        &self,
        mount: usize,
        parent: BorrowedFd<'_>,
        ns: &str,
        new: &[&str],
        extra: (usize, usize),
        given: &str,
    ) -> Result<(), FsError> {
        let added: usize = new.iter().map(|c| c.len() + 1).sum();
        let (depth, len) = match self.parent_extent(mount, parent) {
            Some((depth, len)) => (depth + new.len(), len + added),
            None => {
                // No /proc: the lexical mapping of the namespace path.
                let (mount, rel) = self
                    .table
                    .lookup(ns)
                    .ok_or_else(|| self.outside_mounts(given))?;
                let root_len = self
                    .table
                    .mounts
                    .get(mount)
                    .map_or(0, |m| m.host_root.as_os_str().len());
                (
                    rel.split('/').filter(|c| !c.is_empty()).count(),
                    root_len + 1 + rel.len(),
                )
            }
        };
        bounds::check_created(given, depth + extra.0, len + extra.1)
    }

    /// Create the missing directories of `loc` (all but the last missing
    /// component when `include_last` is false), one `mkdirat` at a time on
    /// the fd of the directory before; returns the directory that holds the
    /// final entry and the entry's name.
    fn create_missing(
        &self,
        loc: Located,
        given: &str,
        include_last: bool,
    ) -> Result<(OwnedFd, String), FsError> {
        let Some(first) = loc.name else {
            return Err(mount_root_refused(given, "create"));
        };
        let mut components = Vec::with_capacity(loc.missing.len() + 1);
        components.push(first);
        components.extend(loc.missing);
        if components
            .iter()
            .any(|c| c == ".." || c == "." || c.is_empty())
        {
            return Err(dangling_dotdot(given));
        }
        let last = if include_last { None } else { components.pop() };
        let mut dir = loc.parent;
        for c in &components {
            match rustix::fs::mkdirat(&dir, c.as_str(), Mode::from_raw_mode(NEW_DIR_MODE)) {
                Ok(()) | Err(Errno::EXIST) => {}
                Err(e) => return Err(errno_error(e, given, "create the directories of")),
            }
            dir = rustix::fs::openat(
                &dir,
                c.as_str(),
                OFlags::PATH | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
                Mode::empty(),
            )
            .map_err(|e| match e {
                Errno::LOOP => changed(given),
                other => errno_error(other, given, "create the directories of"),
            })?;
        }
        match last {
            Some(name) => Ok((dir, name)),
            None => Ok((dir, String::new())),
        }
    }

    fn host_path_of(&self, loc: &Located, ns: &str) -> Option<PathBuf> {
        let proc = format!("/proc/self/fd/{}", loc.parent.as_raw_fd());
        let mut path = match rustix::fs::readlink(proc.as_str(), Vec::new()) {
            Ok(target) => PathBuf::from(OsStr::from_bytes(target.as_bytes())),
            Err(_) => {
                // No /proc: the lexical mapping is the best available answer.
                let (mount, rel) = self.table.lookup(ns)?;
                let m = self.table.mounts.get(mount)?;
                return Some(if rel.is_empty() {
                    m.host_root.clone()
                } else {
                    m.host_root.join(rel)
                });
            }
        };
        if let Some(name) = &loc.name {
            path.push(name);
        }
        for c in &loc.missing {
            path.push(c);
        }
        Some(path)
    }

    pub(crate) fn resolve(&self, given: &str, access: Access) -> Result<ResolvedPath, FsError> {
        let ns = self.normalize(given)?;
        let loc = self.locate(given, &ns, true)?;
        self.check_trailing_slash(&loc, given)?;
        if access == Access::Write {
            self.check_writable(&loc, given)?;
        }
        if loc.missing.iter().any(|c| c == "..") {
            return Err(dangling_dotdot(given));
        }
        let m = self.table.mounts.get(loc.mount).ok_or_else(|| {
            FsError::new(FsErrorCode::Io, given, "mount table index out of range")
        })?;
        Ok(ResolvedPath {
            host_path: self.host_path_of(&loc, &ns),
            container_path: ns,
            mount: m.container_path.clone(),
            read_only: m.read_only,
            exists: loc.exists,
        })
    }

    pub(crate) fn read(
        &self,
        given: &str,
        max_bytes: Option<u64>,
    ) -> Result<FileContents, FsError> {
        let ns = self.normalize(given)?;
        let loc = self.locate(given, &ns, true)?;
        if !loc.exists {
            return Err(not_found(given));
        }
        self.check_trailing_slash(&loc, given)?;
        let Some(name) = &loc.name else {
            return Err(FsError::new(
                FsErrorCode::NotAFile,
                given,
                format!("`{given}` is a directory (a mount root); list it instead"),
            ));
        };
        let (file, st) = open_regular(loc.parent.as_fd(), name, given)?;
        let total_size = size_of(&st);
        let limit = max_bytes.unwrap_or(u64::MAX);
        let mut bytes = Vec::with_capacity(usize::try_from(total_size.min(limit)).unwrap_or(0));
        file.take(limit)
            .read_to_end(&mut bytes)
            .map_err(|e| io_error(&e, given, "read"))?;
        let truncated = max_bytes.is_some_and(|max| total_size > max);
        Ok(FileContents {
            bytes,
            total_size,
            truncated,
        })
    }

    pub(crate) fn write(
        &self,
        given: &str,
        data: &[u8],
        options: WriteOptions,
    ) -> Result<WriteReport, FsError> {
        if demands_directory(given) {
            let ns = self.normalize(given)?;
            let loc = self.locate(given, &ns, true)?;
            if loc.exists && Self::is_directory(&loc, given)? {
                return Err(directory_not_file(given));
            }
            if loc.exists {
                return Err(trailing_slash_on_non_directory(given));
            }
            return Err(trailing_slash_creates_no_file(given));
        }
        check_entry_name(given)?;
        let ns = self.normalize(given)?;
        let loc = self.locate(given, &ns, true)?;
        self.check_writable(&loc, given)?;
        if loc.name.is_none() {
            return Err(FsError::new(
                FsErrorCode::NotAFile,
                given,
                format!("`{given}` is a directory (a mount root); give a file path inside it"),
            ));
        }
        if !loc.missing.is_empty() && !options.create_parents {
            return Err(FsError::new(
                FsErrorCode::NotFound,
                given,
                format!(
                    "the parent directory of `{given}` does not exist; create it first (mkdir) or allow creating parents"
                ),
            ));
        }
        if !loc.exists {
            let new = created_names(&loc);
            self.check_creation(loc.mount, loc.parent.as_fd(), &ns, &new, (0, 0), given)?;
        }
        let (dir, name) = self.create_missing(loc, given, false)?;
        let existing = match rustix::fs::statat(&dir, name.as_str(), AtFlags::SYMLINK_NOFOLLOW) {
            Ok(st) => Some(st),
            Err(Errno::NOENT) => None,
            Err(e) => return Err(errno_error(e, given, "write")),
        };
        let mode = match &existing {
            Some(st) if file_type_of(st) == FileType::RegularFile => {
                if options.create_new {
                    return Err(FsError::new(
                        FsErrorCode::AlreadyExists,
                        given,
                        format!(
                            "`{given}` already exists; edit it, or write without create-new to replace it"
                        ),
                    ));
                }
                Some(st.st_mode & 0o7777)
            }
            Some(st) if file_type_of(st) == FileType::Symlink => return Err(changed(given)),
            Some(st) => return Err(not_a_file(given, st)),
            None => None,
        };
        replace_atomically(dir.as_fd(), &name, data, mode, options.create_new, given)?;
        Ok(WriteReport {
            container_path: ns,
            created: existing.is_none(),
            bytes: data.len() as u64,
        })
    }

    /// First half of `edit`: resolve, check writability, read the file.
    pub(crate) fn edit_read(&self, given: &str) -> Result<(EditTarget, Vec<u8>), FsError> {
        if demands_directory(given) {
            let ns = self.normalize(given)?;
            let loc = self.locate(given, &ns, true)?;
            if !loc.exists {
                return Err(not_found(given));
            }
            if Self::is_directory(&loc, given)? {
                return Err(directory_not_file(given));
            }
            return Err(trailing_slash_on_non_directory(given));
        }
        check_entry_name(given)?;
        let ns = self.normalize(given)?;
        let loc = self.locate(given, &ns, true)?;
        self.check_writable(&loc, given)?;
        if !loc.exists {
            return Err(not_found(given));
        }
        let Some(name) = loc.name else {
            return Err(mount_root_refused(given, "edit"));
        };
        let (mut file, st) = open_regular(loc.parent.as_fd(), &name, given)?;
        let mut bytes = Vec::with_capacity(usize::try_from(size_of(&st)).unwrap_or(0));
        file.read_to_end(&mut bytes)
            .map_err(|e| io_error(&e, given, "read"))?;
        Ok((
            EditTarget {
                parent: loc.parent,
                name,
                mode: st.st_mode & 0o7777,
                container_path: ns,
            },
            bytes,
        ))
    }

    /// Second half of `edit`: atomically replace the same resolved file.
    pub(crate) fn edit_replace(
        &self,
        target: EditTarget,
        data: &[u8],
        given: &str,
    ) -> Result<WriteReport, FsError> {
        replace_atomically(
            target.parent.as_fd(),
            &target.name,
            data,
            Some(target.mode),
            false,
            given,
        )?;
        Ok(WriteReport {
            container_path: target.container_path,
            created: false,
            bytes: data.len() as u64,
        })
    }

    pub(crate) fn stat(&self, given: &str) -> Result<FileStat, FsError> {
        let ns = self.normalize(given)?;
        let loc = self.locate(given, &ns, true)?;
        if !loc.exists {
            return Err(not_found(given));
        }
        self.check_trailing_slash(&loc, given)?;
        let st = match &loc.name {
            Some(name) => rustix::fs::statat(&loc.parent, name.as_str(), AtFlags::SYMLINK_NOFOLLOW),
            None => rustix::fs::fstat(&loc.parent),
        }
        .map_err(|e| errno_error(e, given, "stat"))?;
        Ok(stat_of(&st))
    }

    pub(crate) fn list(&self, given: &str) -> Result<Vec<DirEntry>, FsError> {
        let ns = self.normalize(given)?;
        let loc = self.locate(given, &ns, true)?;
        if !loc.exists {
            return Err(not_found(given));
        }
        let name = loc.name.as_deref().unwrap_or(".");
        let dir_fd = rustix::fs::openat(
            &loc.parent,
            name,
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map_err(|e| match e {
            Errno::NOTDIR => FsError::new(
                FsErrorCode::NotADirectory,
                given,
                format!("`{given}` is not a directory; read it instead"),
            ),
            Errno::LOOP => changed(given),
            other => errno_error(other, given, "list"),
        })?;
        let reader_fd = dir_fd
            .try_clone()
            .map_err(|e| io_error(&e, given, "list"))?;
        let dir = rustix::fs::Dir::new(reader_fd).map_err(|e| errno_error(e, given, "list"))?;
        let mut entries = Vec::new();
        for entry in dir {
            let entry = entry.map_err(|e| errno_error(e, given, "list"))?;
            let raw = entry.file_name();
            let bytes = raw.to_bytes();
            if bytes == b"." || bytes == b".." {
                continue;
            }
            let (kind, size) = match rustix::fs::statat(&dir_fd, raw, AtFlags::SYMLINK_NOFOLLOW) {
                Ok(st) => {
                    let kind = kind_of(st.st_mode);
                    let size = if kind == FileKind::File {
                        size_of(&st)
                    } else {
                        0
                    };
                    (kind, size)
                }
                // Removed between readdir and stat: skip it.
                Err(Errno::NOENT) => continue,
                Err(e) => return Err(errno_error(e, given, "list")),
            };
            entries.push(DirEntry {
                name: String::from_utf8_lossy(bytes).into_owned(),
                kind,
                size,
            });
        }
        entries.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(entries)
    }

    pub(crate) fn mkdir(&self, given: &str, recursive: bool) -> Result<(), FsError> {
        let trimmed = given.trim_end_matches('/');
        let entry = if trimmed.is_empty() { given } else { trimmed };
        check_entry_name(entry)?;
        let ns = self.normalize(entry)?;
        let loc = self.locate(given, &ns, true)?;
        self.check_writable(&loc, given)?;
        if loc.exists {
            let is_dir = match &loc.name {
                None => true,
                Some(name) => {
                    rustix::fs::statat(&loc.parent, name.as_str(), AtFlags::SYMLINK_NOFOLLOW)
                        .map(|st| file_type_of(&st) == FileType::Directory)
                        .map_err(|e| errno_error(e, given, "create the directory"))?
                }
            };
            if is_dir && recursive {
                return Ok(());
            }
            return Err(FsError::new(
                FsErrorCode::AlreadyExists,
                given,
                if is_dir {
                    format!("the directory `{given}` already exists")
                } else {
                    format!("`{given}` already exists and is not a directory; choose another name")
                },
            ));
        }
        if !loc.missing.is_empty() && !recursive {
            return Err(FsError::new(
                FsErrorCode::NotFound,
                given,
                format!(
                    "the parent directory of `{given}` does not exist; create it first or ask for a recursive mkdir"
                ),
            ));
        }
        let new = created_names(&loc);
        self.check_creation(loc.mount, loc.parent.as_fd(), &ns, &new, (0, 0), given)?;
        self.create_missing(loc, given, true).map(|_| ())
    }

    pub(crate) fn remove(&self, given: &str, recursive: bool) -> Result<(), FsError> {
        self.check_mutation_target(given)?;
        let ns = self.normalize(given)?;
        let loc = self.locate(given, &ns, false)?;
        self.check_writable(&loc, given)?;
        if !loc.exists {
            return Err(not_found(given));
        }
        let Some(name) = &loc.name else {
            return Err(mount_root_refused(given, "remove"));
        };
        let st = rustix::fs::statat(&loc.parent, name.as_str(), AtFlags::SYMLINK_NOFOLLOW)
            .map_err(|e| errno_error(e, given, "remove"))?;
        if file_type_of(&st) != FileType::Directory {
            return rustix::fs::unlinkat(&loc.parent, name.as_str(), AtFlags::empty())
                .map_err(|e| errno_error(e, given, "remove"));
        }
        self.check_no_mount_below(&ns, given, "remove")?;
        match rustix::fs::unlinkat(&loc.parent, name.as_str(), AtFlags::REMOVEDIR) {
            Ok(()) => Ok(()),
            Err(Errno::NOTEMPTY | Errno::EXIST) if recursive => {
                remove_tree(loc.parent.as_fd(), name, given, 0)
            }
            Err(Errno::NOTEMPTY | Errno::EXIST) => Err(FsError::new(
                FsErrorCode::Io,
                given,
                format!(
                    "cannot remove `{given}`: the directory is not empty; remove its contents first or ask for a recursive remove"
                ),
            )),
            Err(e) => Err(errno_error(e, given, "remove")),
        }
    }

    pub(crate) fn rename(&self, from: &str, to: &str, overwrite: bool) -> Result<(), FsError> {
        self.check_mutation_target(from)?;
        self.check_mutation_target(to)?;
        let from_ns = self.normalize(from)?;
        let to_ns = self.normalize(to)?;
        let src = self.locate(from, &from_ns, false)?;
        let dst = self.locate(to, &to_ns, false)?;
        self.check_writable(&src, from)?;
        self.check_writable(&dst, to)?;
        if src.mount != dst.mount && !self.same_host_root(src.mount, dst.mount) {
            return Err(FsError::new(
                FsErrorCode::InvalidPath,
                from,
                format!(
                    "cannot rename `{from}` to `{to}`: they are in different mounts ({} and {}); copy the file (read + write) and remove the original instead",
                    self.mount_container_path(src.mount),
                    self.mount_container_path(dst.mount)
                ),
            ));
        }
        if !src.exists {
            return Err(not_found(from));
        }
        let Some(src_name) = &src.name else {
            return Err(mount_root_refused(from, "rename"));
        };
        let Some(dst_name) = &dst.name else {
            return Err(mount_root_refused(to, "replace"));
        };
        if !dst.missing.is_empty() {
            return Err(FsError::new(
                FsErrorCode::NotFound,
                to,
                format!("the parent directory of `{to}` does not exist; create it first (mkdir)"),
            ));
        }
        self.check_no_mount_below(&from_ns, from, "rename")?;
        let src_is_dir =
            rustix::fs::statat(&src.parent, src_name.as_str(), AtFlags::SYMLINK_NOFOLLOW)
                .is_ok_and(|st| file_type_of(&st) == FileType::Directory);
        let extra = if src_is_dir {
            // What moves along: the source's own tree, measured within what
            // the destination leaves of the budgets.
            let (dst_depth, dst_len) = self
                .parent_extent(dst.mount, dst.parent.as_fd())
                .unwrap_or((0, 0));
            let depth_budget = bounds::MAX_PATH_DEPTH.saturating_sub(dst_depth + 1);
            let len_budget = bounds::MAX_PATH_BYTES.saturating_sub(dst_len + dst_name.len() + 1);
            subtree_extent(
                src.parent.as_fd(),
                src_name,
                depth_budget,
                len_budget,
                from,
            )?
            .ok_or_else(|| {
                FsError::new(
                    FsErrorCode::PathTooLong,
                    bounds::shown(from),
                    format!(
                        "cannot rename `{}` to `{}`: the tree it holds would end up more than {} levels below the mount root or past PATH_MAX; move a part of it or choose a shallower destination",
                        bounds::shown(from),
                        bounds::shown(to),
                        bounds::MAX_PATH_DEPTH
                    ),
                )
            })?
        } else {
            (0, 0)
        };
        self.check_creation(
            dst.mount,
            dst.parent.as_fd(),
            &to_ns,
            &[dst_name.as_str()],
            extra,
            to,
        )?;
        let flags = if overwrite {
            RenameFlags::empty()
        } else {
            RenameFlags::NOREPLACE
        };
        let renamed = rustix::fs::renameat_with(
            &src.parent,
            src_name.as_str(),
            &dst.parent,
            dst_name.as_str(),
            flags,
        );
        let renamed = match renamed {
            Err(Errno::INVAL) if !overwrite => {
                // No RENAME_NOREPLACE on this file system: check, then rename.
                if rustix::fs::statat(&dst.parent, dst_name.as_str(), AtFlags::SYMLINK_NOFOLLOW)
                    .is_ok()
                {
                    Err(Errno::EXIST)
                } else {
                    rustix::fs::renameat(
                        &src.parent,
                        src_name.as_str(),
                        &dst.parent,
                        dst_name.as_str(),
                    )
                }
            }
            other => other,
        };
        renamed.map_err(|e| match e {
            Errno::EXIST if !overwrite => FsError::new(
                FsErrorCode::AlreadyExists,
                to,
                format!("cannot rename `{from}` to `{to}`: `{to}` already exists; choose another name or allow overwriting"),
            ),
            Errno::INVAL => FsError::new(
                FsErrorCode::InvalidPath,
                from,
                format!("cannot rename `{from}` to `{to}`: a directory cannot move inside itself"),
            ),
            other => errno_error(other, from, "rename"),
        })
    }
}

/// The names a mutation at `loc` would create, outermost first.
fn created_names(loc: &Located) -> Vec<&str> {
    loc.name
        .iter()
        .chain(loc.missing.iter())
        .map(String::as_str)
        .collect()
}

/// Depth and longest relative path (bytes, with separators) of the tree
/// below directory `name` in `parent`, or `None` as soon as either passes
/// its budget. Symlinks are not followed; entries that vanish are skipped.
fn subtree_extent(
    parent: BorrowedFd<'_>,
    name: &str,
    depth_budget: usize,
    len_budget: usize,
    given: &str,
) -> Result<Option<(usize, usize)>, FsError> {
    let dir_fd = match rustix::fs::openat(
        parent,
        name,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::empty(),
    ) {
        Ok(fd) => fd,
        Err(Errno::NOTDIR | Errno::LOOP | Errno::NOENT) => return Ok(Some((0, 0))),
        Err(e) => return Err(errno_error(e, given, "measure")),
    };
    let reader = dir_fd
        .try_clone()
        .map_err(|e| io_error(&e, given, "measure"))?;
    let dir = rustix::fs::Dir::new(reader).map_err(|e| errno_error(e, given, "measure"))?;
    let mut deepest = (0usize, 0usize);
    for entry in dir {
        let entry = entry.map_err(|e| errno_error(e, given, "measure"))?;
        let bytes = entry.file_name().to_bytes();
        if bytes == b"." || bytes == b".." {
            continue;
        }
        let len = bytes.len() + 1;
        if depth_budget == 0 || len > len_budget {
            return Ok(None);
        }
        if entry.file_type() == FileType::Directory
            && let Ok(child) = std::str::from_utf8(bytes)
        {
            match subtree_extent(
                dir_fd.as_fd(),
                child,
                depth_budget - 1,
                len_budget - len,
                given,
            )? {
                None => return Ok(None),
                Some((d, l)) => {
                    deepest.0 = deepest.0.max(d + 1);
                    deepest.1 = deepest.1.max(l + len);
                }
            }
        } else {
            deepest.0 = deepest.0.max(1);
            deepest.1 = deepest.1.max(len);
        }
    }
    Ok(Some(deepest))
}

/// Remove directory `name` in `parent` and everything below it, each step
/// on the fd of the directory above (symlinks are removed, not followed).
fn remove_tree(
    parent: BorrowedFd<'_>,
    name: &str,
    given: &str,
    depth: usize,
) -> Result<(), FsError> {
    if depth > MAX_REMOVE_DEPTH {
        return Err(FsError::new(
            FsErrorCode::Io,
            given,
            format!(
                "cannot remove `{given}`: the tree is deeper than {MAX_REMOVE_DEPTH} levels; remove it in parts"
            ),
        ));
    }
    let dir_fd = rustix::fs::openat(
        parent,
        name,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .map_err(|e| errno_error(e, given, "remove"))?;
    let reader = dir_fd
        .try_clone()
        .map_err(|e| io_error(&e, given, "remove"))?;
    let dir = rustix::fs::Dir::new(reader).map_err(|e| errno_error(e, given, "remove"))?;
    let mut children = Vec::new();
    for entry in dir {
        let entry = entry.map_err(|e| errno_error(e, given, "remove"))?;
        let bytes = entry.file_name().to_bytes();
        if bytes == b"." || bytes == b".." {
            continue;
        }
        children.push(entry.file_name().to_owned());
    }
    for child in children {
        let st = match rustix::fs::statat(&dir_fd, child.as_c_str(), AtFlags::SYMLINK_NOFOLLOW) {
            Ok(st) => st,
            Err(Errno::NOENT) => continue,
            Err(e) => return Err(errno_error(e, given, "remove")),
        };
        if file_type_of(&st) == FileType::Directory {
            let child_name = child.to_str().map_err(|_| {
                FsError::new(
                    FsErrorCode::Io,
                    given,
                    format!("cannot remove `{given}`: it holds a directory whose name is not UTF-8; remove it by hand"),
                )
            })?;
            remove_tree(dir_fd.as_fd(), child_name, given, depth + 1)?;
        } else {
            match rustix::fs::unlinkat(&dir_fd, child.as_c_str(), AtFlags::empty()) {
                Ok(()) | Err(Errno::NOENT) => {}
                Err(e) => return Err(errno_error(e, given, "remove")),
            }
        }
    }
    rustix::fs::unlinkat(parent, name, AtFlags::REMOVEDIR)
        .map_err(|e| errno_error(e, given, "remove"))
}
