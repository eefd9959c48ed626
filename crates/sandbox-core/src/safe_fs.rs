//! The few file operations the workspace seeding and the skills mirror
//! need, each anchored on a directory fd and never following a symlink:
//! both sides are hostile (the agent workspace is written by the agent,
//! the sandbox workspace by sandboxed code).

use std::io::{Read, Write};
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

use rustix::fs::{AtFlags, FileType, Mode, OFlags, RenameFlags, Stat};
use rustix::io::Errno;

/// Why a source entry was not copied.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase", tag = "kind")]
#[non_exhaustive]
pub enum SkipReason {
    /// It is a symbolic link (never followed).
    Symlink,
    /// It is not a regular file (FIFO, socket, device, ...).
    NotRegular {
        /// What it is.
        file_type: String,
    },
    /// It has more than one hard link, so it may alias a file elsewhere.
    HardLinked {
        /// Its link count.
        links: u64,
    },
    /// It is larger than the cap.
    TooLarge {
        /// Its size in bytes.
        bytes: u64,
        /// The cap in bytes.
        limit: u64,
    },
    /// It changed (was swapped) between the check and the open.
    Changed,
    /// It could not be read.
    Unreadable {
        /// The OS error.
        error: String,
    },
    /// Its name cannot be a directory name in the mirror (empty, hidden,
    /// too long, not UTF-8).
    UnusableName,
    /// A per-skill or overall limit (file count, total bytes, depth) was
    /// reached.
    Limit {
        /// Which limit.
        limit: String,
    },
}

impl std::fmt::Display for SkipReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SkipReason::Symlink => f.write_str("it is a symbolic link"),
            SkipReason::NotRegular { file_type } => {
                write!(f, "it is not a regular file ({file_type})")
            }
            SkipReason::HardLinked { links } => {
                write!(
                    f,
                    "it has {links} hard links and may alias a file elsewhere"
                )
            }
            SkipReason::TooLarge { bytes, limit } => {
                write!(f, "it is {bytes} bytes, over the {limit}-byte cap")
            }
            SkipReason::Changed => f.write_str("it changed while it was being copied"),
            SkipReason::Unreadable { error } => write!(f, "it cannot be read: {error}"),
            SkipReason::UnusableName => f.write_str("its name cannot be used as a directory name"),
            SkipReason::Limit { limit } => write!(f, "the {limit} limit was reached"),
        }
    }
}

pub(crate) fn file_type_name(st: &Stat) -> &'static str {
    match FileType::from_raw_mode(st.st_mode) {
        FileType::RegularFile => "regular file",
        FileType::Directory => "directory",
        FileType::Symlink => "symbolic link",
        FileType::Fifo => "FIFO",
        FileType::Socket => "socket",
        FileType::CharacterDevice => "character device",
        FileType::BlockDevice => "block device",
        FileType::Unknown => "unknown file type",
    }
}

pub(crate) fn is_dir(st: &Stat) -> bool {
    FileType::from_raw_mode(st.st_mode) == FileType::Directory
}

/// Open `path` as a directory, refusing a symlink as its last component.
pub(crate) fn open_dir_nofollow(path: &Path) -> Result<OwnedFd, Errno> {
    rustix::fs::open(
        path,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::empty(),
    )
}

/// Open the directory `name` beneath `dir`, never following a symlink.
pub(crate) fn open_subdir(dir: BorrowedFd<'_>, name: &str) -> Result<OwnedFd, Errno> {
    rustix::fs::openat(
        dir,
        name,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::empty(),
    )
}

/// `lstat` of `name` in `dir`; `None` when it does not exist.
pub(crate) fn lstat_at(dir: BorrowedFd<'_>, name: &str) -> Result<Option<Stat>, Errno> {
    match rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW) {
        Ok(st) => Ok(Some(st)),
        Err(Errno::NOENT) => Ok(None),
        Err(e) => Err(e),
    }
}

/// Judge an `lstat` result: only a regular file with one link, at most
/// `cap` bytes, may be copied.
pub(crate) fn judge_regular(st: &Stat, cap: u64) -> Result<(), SkipReason> {
    match FileType::from_raw_mode(st.st_mode) {
        FileType::RegularFile => {}
        FileType::Symlink => return Err(SkipReason::Symlink),
        _ => {
            return Err(SkipReason::NotRegular {
                file_type: file_type_name(st).to_owned(),
            });
        }
    }
    // `st_nlink` is `u64` on x86_64 but `u32` on other targets.
    #[allow(clippy::useless_conversion)]
    let links = u64::from(st.st_nlink);
    if links > 1 {
        return Err(SkipReason::HardLinked { links });
    }
    let bytes = u64::try_from(st.st_size).unwrap_or(u64::MAX);
    if bytes > cap {
        return Err(SkipReason::TooLarge { bytes, limit: cap });
    }
    Ok(())
}

/// Read the regular file `name` in `dir` (already judged from `seen`):
/// opened `O_NOFOLLOW | O_NONBLOCK` (a FIFO swapped in cannot block),
/// re-checked by `fstat` to be the same inode, read up to `cap` bytes.
pub(crate) fn read_regular(
    dir: BorrowedFd<'_>,
    name: &str,
    seen: &Stat,
    cap: u64,
) -> Result<(Vec<u8>, Stat), SkipReason> {
    let fd = rustix::fs::openat(
        dir,
        name,
        OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::NOCTTY | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .map_err(|e| match e {
        Errno::LOOP => SkipReason::Symlink,
        Errno::NOENT => SkipReason::Changed,
        other => SkipReason::Unreadable {
            error: other.to_string(),
        },
    })?;
    let st = rustix::fs::fstat(&fd).map_err(|e| SkipReason::Unreadable {
        error: e.to_string(),
    })?;
    if st.st_dev != seen.st_dev || st.st_ino != seen.st_ino {
        return Err(SkipReason::Changed);
    }
    judge_regular(&st, cap)?;
    let mut bytes = Vec::new();
    std::fs::File::from(fd)
        .take(cap.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|e| SkipReason::Unreadable {
            error: e.to_string(),
        })?;
    let len = u64::try_from(bytes.len()).unwrap_or(u64::MAX);
    if len > cap {
        return Err(SkipReason::TooLarge {
            bytes: len,
            limit: cap,
        });
    }
    Ok((bytes, st))
}

static TEMP_COUNTER: AtomicU64 = AtomicU64::new(0);

/// A fresh hidden temp name for `name` in the same directory.
pub(crate) fn temp_name(name: &str) -> String {
    let n = TEMP_COUNTER.fetch_add(1, Ordering::Relaxed);
    format!(".{name}.{}.{n}.talon-tmp", std::process::id())
}

/// What [`create_new_file`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Created {
    /// The file was created.
    Written,
    /// Something (of any type, a symlink included) already had the name;
    /// it was left alone.
    Exists,
}

/// Create `name` in `dir` holding `data`, never replacing anything that
/// exists and never writing through a symlink: the data goes to an
/// `O_EXCL | O_NOFOLLOW` temp file in `dir`, which is then renamed onto
/// `name` with `RENAME_NOREPLACE` (or hard-linked, which also refuses an
/// existing name, where the file system lacks it).
pub(crate) fn create_new_file(
    dir: BorrowedFd<'_>,
    name: &str,
    data: &[u8],
    mode: u32,
    owner: Option<(u32, u32)>,
) -> std::io::Result<Created> {
    if lstat_at(dir, name)?.is_some() {
        return Ok(Created::Exists);
    }
    let mut attempt = 0;
    let (tmp, fd) = loop {
        let tmp = temp_name(name);
        match rustix::fs::openat(
            dir,
            tmp.as_str(),
            OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::from_raw_mode(mode),
        ) {
            Ok(fd) => break (tmp, fd),
            Err(Errno::EXIST) if attempt < 16 => attempt += 1,
            Err(e) => return Err(e.into()),
        }
    };
    let result = (|| -> std::io::Result<Created> {
        let mut file = std::fs::File::from(fd);
        file.write_all(data)?;
        if let Some((uid, gid)) = owner {
            chown_fd(file.as_fd(), uid, gid);
        }
        rustix::fs::fchmod(file.as_fd(), Mode::from_raw_mode(mode))?;
        file.sync_all()?;
        drop(file);
        match rustix::fs::renameat_with(dir, tmp.as_str(), dir, name, RenameFlags::NOREPLACE) {
            Ok(()) => Ok(Created::Written),
            Err(Errno::EXIST) => Ok(Created::Exists),
            Err(Errno::INVAL | Errno::NOSYS) => {
                match rustix::fs::linkat(dir, tmp.as_str(), dir, name, AtFlags::empty()) {
                    Ok(()) => Ok(Created::Written),
                    Err(Errno::EXIST) => Ok(Created::Exists),
                    Err(e) => Err(e.into()),
                }
            }
            Err(e) => Err(e.into()),
        }
    })();
    // Gone after a rename; the second name after a link; ours on failure.
    let _ = rustix::fs::unlinkat(dir, tmp.as_str(), AtFlags::empty());
    result
}

/// Make the directory `name` in `dir` (mode 0755) and open it; an
/// existing directory is opened, anything else is an error.
pub(crate) fn make_subdir(dir: BorrowedFd<'_>, name: &str) -> std::io::Result<OwnedFd> {
    match rustix::fs::mkdirat(dir, name, Mode::from_raw_mode(0o755)) {
        Ok(()) | Err(Errno::EXIST) => {}
        Err(e) => return Err(e.into()),
    }
    Ok(open_subdir(dir, name)?)
}

/// Write `data` to `name` in `dir` through a fresh `O_EXCL | O_NOFOLLOW`
/// temp file renamed over it (for Talon's own bookkeeping files).
pub(crate) fn replace_file(dir: BorrowedFd<'_>, name: &str, data: &[u8]) -> std::io::Result<()> {
    let tmp = temp_name(name);
    let fd = rustix::fs::openat(
        dir,
        tmp.as_str(),
        OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::from_raw_mode(0o644),
    )?;
    let result = (|| -> std::io::Result<()> {
        let mut file = std::fs::File::from(fd);
        file.write_all(data)?;
        file.sync_all()?;
        drop(file);
        rustix::fs::renameat(dir, tmp.as_str(), dir, name)?;
        Ok(())
    })();
    if result.is_err() {
        let _ = rustix::fs::unlinkat(dir, tmp.as_str(), AtFlags::empty());
    }
    result
}

/// Give an open file or directory to `uid:gid`, when this process may (as
/// root, or when it already is theirs); otherwise leave it.
pub(crate) fn chown_fd(fd: BorrowedFd<'_>, uid: u32, gid: u32) {
    // The ids come from a `stat`, so they are never -1.
    let uid = rustix::fs::Uid::from_raw(uid);
    let gid = rustix::fs::Gid::from_raw(gid);
    if let Err(e) = rustix::fs::fchown(fd, Some(uid), Some(gid)) {
        tracing::debug!("cannot change the owner of a sandbox file ({e}); kept as is");
    }
}
