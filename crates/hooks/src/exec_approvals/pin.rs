//! Binding an exec approval to what will run: the canonical working
//! directory and the SHA-256 of every file operand, taken when the
//! approver is asked ([`ExecPin::take`]) and checked again immediately
//! before the command starts ([`ExecPin::verify`]).

use std::fs::File;
use std::io::Read;
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use sha2::{Digest, Sha256};
use talon_tool_catalog::{ToolError, ToolErrorCode};

use crate::exec_approvals::operands::{Operand, file_operands};

/// A file larger than this is pinned by size, modification time, device
/// and inode instead of its hash (hashing it would stall the approval).
pub const MAX_HASHED_BYTES: u64 = 64 * 1024 * 1024;

/// Resolves an exec call's `workdir` to the canonical directory the
/// command would start in, exactly as the launcher that runs it does (for
/// the host: `HostLauncher`'s own resolution). The runtime puts one on the
/// [`HookContext`](crate::HookContext) of a run whose `exec` runs on the
/// host.
pub trait ExecWorkdir: Send + Sync + std::fmt::Debug {
    /// The canonical directory, or why there is none.
    fn resolve(&self, workdir: Option<&str>) -> Result<PathBuf, ExecPinError>;
}

/// Why an approval could not be bound, or no longer matches.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ExecPinError {
    /// The working directory does not resolve.
    #[error("the working directory cannot be resolved: {reason}")]
    Workdir {
        /// Why.
        reason: String,
    },
    /// The command names files that cannot be pinned down before it runs.
    #[error(
        "the approval cannot be bound to the files this command runs: {}; write the command so \
         every script and program it runs is named plainly (no variables, globs or `~`)",
        .reasons.join("; ")
    )]
    Unpinnable {
        /// What could not be pinned.
        reasons: Vec<String>,
    },
    /// The canonical working directory changed after approval (a symlink
    /// on its path was rebound, or the directory moved).
    #[error(
        "refused: the working directory changed after approval (approved {approved}, now {now}); \
         a symlink on its path was rebound or the directory moved; nothing was run. Ask again"
    )]
    CwdChanged {
        /// The directory approved.
        approved: PathBuf,
        /// The directory it resolves to now.
        now: PathBuf,
    },
    /// A file operand changed after approval.
    #[error(
        "refused: the {role} `{written}` ({path}) changed after approval ({change}); nothing was \
         run. Ask again so the approver sees the current file"
    )]
    OperandChanged {
        /// The word as written.
        written: String,
        /// The path checked.
        path: PathBuf,
        /// What it is in the command.
        role: &'static str,
        /// What changed.
        change: String,
    },
}

impl ExecPinError {
    /// The stable code: `approval.pin_failed`, `approval.cwd_changed` or
    /// `approval.operand_changed`.
    pub fn code(&self) -> ToolErrorCode {
        match self {
            ExecPinError::Workdir { .. } | ExecPinError::Unpinnable { .. } => {
                ToolErrorCode::ApprovalPinFailed
            }
            ExecPinError::CwdChanged { .. } => ToolErrorCode::ApprovalCwdChanged,
            ExecPinError::OperandChanged { .. } => ToolErrorCode::ApprovalOperandChanged,
        }
    }
}

impl From<ExecPinError> for ToolError {
    fn from(e: ExecPinError) -> Self {
        ToolError::new(e.code(), e.to_string())
    }
}

/// What a path was when it was pinned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OperandState {
    /// Nothing there.
    Missing,
    /// A regular file and the SHA-256 (hex) of its bytes.
    File {
        /// SHA-256, lower-case hex.
        sha256: String,
    },
    /// A regular file over [`MAX_HASHED_BYTES`]: identified, not hashed.
    LargeFile {
        /// Size in bytes.
        len: u64,
        /// Modification time (seconds, nanoseconds).
        mtime: (i64, i64),
        /// Device and inode.
        id: (u64, u64),
    },
    /// A directory.
    Directory,
    /// Something else (device, FIFO, socket): never opened.
    Special,
    /// It exists and cannot be read (its error kind).
    Unreadable(String),
}

impl OperandState {
    fn describe(&self) -> String {
        match self {
            OperandState::Missing => "absent".to_owned(),
            OperandState::File { sha256 } => format!("sha256 {}", &sha256[..16.min(sha256.len())]),
            OperandState::LargeFile { len, .. } => format!("a {len}-byte file"),
            OperandState::Directory => "a directory".to_owned(),
            OperandState::Special => "a special file".to_owned(),
            OperandState::Unreadable(why) => format!("unreadable ({why})"),
        }
    }
}

/// One pinned operand.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PinnedOperand {
    /// The operand as the command names it.
    pub operand: Operand,
    /// What it was at approval time.
    pub state: OperandState,
}

/// The canonical working directory and the state of every file operand of
/// one approved command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExecPin {
    cwd: PathBuf,
    operands: Vec<PinnedOperand>,
}

impl ExecPin {
    /// Pin `command` run in `cwd` (already canonical: from an
    /// [`ExecWorkdir`]). Refused when the command names a file that cannot
    /// be pinned down ([`ExecPinError::Unpinnable`]).
    pub fn take(cwd: PathBuf, command: &str) -> Result<ExecPin, ExecPinError> {
        let found = file_operands(command);
        if !found.unpinnable.is_empty() {
            return Err(ExecPinError::Unpinnable {
                reasons: found.unpinnable,
            });
        }
        let operands = found
            .operands
            .into_iter()
            .map(|operand| {
                let state = state_of(&cwd.join(&operand.path));
                PinnedOperand { operand, state }
            })
            .collect();
        Ok(ExecPin { cwd, operands })
    }

    /// The canonical working directory approved.
    pub fn cwd(&self) -> &Path {
        &self.cwd
    }

    /// The pinned operands.
    pub fn operands(&self) -> &[PinnedOperand] {
        &self.operands
    }

    /// Check, immediately before the command starts in `cwd` (canonical,
    /// resolved again by the launcher), that the directory is the one
    /// approved and every operand is as it was.
    pub fn verify(&self, cwd: &Path) -> Result<(), ExecPinError> {
        if cwd != self.cwd {
            return Err(ExecPinError::CwdChanged {
                approved: self.cwd.clone(),
                now: cwd.to_path_buf(),
            });
        }
        for pinned in &self.operands {
            let path = cwd.join(&pinned.operand.path);
            let now = state_of(&path);
            if now != pinned.state {
                let change = match (&pinned.state, &now) {
                    (OperandState::Missing, _) => {
                        format!("it was absent and is now {}", now.describe())
                    }
                    (_, OperandState::Missing) => "it was removed".to_owned(),
                    (OperandState::File { .. }, OperandState::File { .. }) => {
                        format!(
                            "its content changed: {} → {}",
                            pinned.state.describe(),
                            now.describe()
                        )
                    }
                    _ => format!(
                        "it was {} and is now {}",
                        pinned.state.describe(),
                        now.describe()
                    ),
                };
                return Err(ExecPinError::OperandChanged {
                    written: pinned.operand.written.clone(),
                    path,
                    role: pinned.operand.role.as_str(),
                    change,
                });
            }
        }
        Ok(())
    }

    /// A one-line summary for the approver: `run.py (sha256 0123…)`.
    pub fn summary(&self) -> String {
        let parts: Vec<String> = self
            .operands
            .iter()
            .map(|p| {
                format!(
                    "`{}` ({})",
                    crate::approval::display_command(&p.operand.path),
                    p.state.describe()
                )
            })
            .collect();
        format!(
            "Bound to working directory {} and {}",
            crate::approval::display_command(&self.cwd.to_string_lossy()),
            if parts.is_empty() {
                "no file operands".to_owned()
            } else {
                parts.join(", ")
            }
        )
    }
}

impl talon_tool_catalog::RunBinding for ExecPin {
    fn verify_before_run(&self, cwd: &Path) -> Result<(), ToolError> {
        self.verify(cwd).map_err(ToolError::from)
    }
}

/// The pin as what the tool context carries.
impl From<ExecPin> for talon_tool_catalog::ApprovalPin {
    fn from(pin: ExecPin) -> Self {
        talon_tool_catalog::ApprovalPin::new(Arc::new(pin))
    }
}

/// What `path` is now (symlinks followed; a special file is never opened,
/// and a regular file is opened non-blocking and checked again, so a FIFO
/// swapped in cannot stall the check).
fn state_of(path: &Path) -> OperandState {
    let meta = match std::fs::metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return OperandState::Missing,
        Err(e) if e.raw_os_error() == Some(nix::libc::ENOTDIR) => return OperandState::Missing,
        Err(e) => return OperandState::Unreadable(format!("{:?}", e.kind())),
    };
    let kind = meta.file_type();
    if kind.is_dir() {
        return OperandState::Directory;
    }
    if kind.is_fifo() || kind.is_socket() || kind.is_block_device() || kind.is_char_device() {
        return OperandState::Special;
    }
    let file = match std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(nix::libc::O_NONBLOCK | nix::libc::O_NOCTTY)
        .open(path)
    {
        Ok(f) => f,
        Err(e) => return OperandState::Unreadable(format!("{:?}", e.kind())),
    };
    let meta = match file.metadata() {
        Ok(m) if m.file_type().is_file() => m,
        Ok(_) => return OperandState::Special,
        Err(e) => return OperandState::Unreadable(format!("{:?}", e.kind())),
    };
    if meta.len() > MAX_HASHED_BYTES {
        return OperandState::LargeFile {
            len: meta.len(),
            mtime: (meta.mtime(), meta.mtime_nsec()),
            id: (meta.dev(), meta.ino()),
        };
    }
    match hash_file(file) {
        Ok(sha256) => OperandState::File { sha256 },
        Err(e) => OperandState::Unreadable(format!("{:?}", e.kind())),
    }
}

fn hash_file(mut file: File) -> std::io::Result<String> {
    let mut hasher = Sha256::new();
    let mut buf = vec![0_u8; 64 * 1024];
    let mut total: u64 = 0;
    loop {
        let n = file.read(&mut buf)?;
        if n == 0 {
            break;
        }
        total += n as u64;
        if total > MAX_HASHED_BYTES {
            return Err(std::io::Error::other("grew past the hashing limit"));
        }
        hasher.update(&buf[..n]);
    }
    Ok(format!("{:x}", hasher.finalize()))
}

#[cfg(test)]
#[path = "pin_tests.rs"]
mod tests;
