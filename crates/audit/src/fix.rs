//! `--fix`: tighten file modes, never widen them.

use std::path::{Path, PathBuf};

use rustix::fs::{Mode, OFlags};
use serde::Serialize;

use crate::error::{AuditError, Result};
use crate::fs_perms::GATEWAY_TOKEN_FILE;

/// One mode change `--fix` made.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FixChange {
    /// The file or directory.
    pub path: PathBuf,
    /// Its mode before (permission bits, e.g. `0o644`).
    pub from_mode: u32,
    /// Its mode now.
    pub to_mode: u32,
}

impl std::fmt::Display for FixChange {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}: mode {:04o} -> {:04o}",
            self.path.display(),
            self.from_mode,
            self.to_mode
        )
    }
}

/// Tighten the config file to at most `0600`, the state directory to at
/// most `0700` and the gateway token file to at most `0600`: group and
/// other bits (and the file's owner execute bit) are cleared, nothing is
/// ever added, so a `0400` file stays `0400`. A path that does not exist
/// or is a symlink is left alone (a symlink is reported by the audit;
/// changing its target's mode would change a file the config does not
/// name). Returns what changed; a second run returns nothing.
pub fn fix_permissions(config_file: Option<&Path>, state_dir: &Path) -> Result<Vec<FixChange>> {
    let mut changes = Vec::new();
    if let Some(file) = config_file {
        changes.extend(tighten(file, 0o600)?);
    }
    changes.extend(tighten(state_dir, 0o700)?);
    changes.extend(tighten(&state_dir.join(GATEWAY_TOKEN_FILE), 0o600)?);
    Ok(changes)
}

/// Clear every mode bit outside `keep` on `path`, through a descriptor
/// opened without following a symlink (so the mode checked is the mode
/// changed).
fn tighten(path: &Path, keep: u32) -> Result<Option<FixChange>> {
    let err = |action: &'static str| {
        move |e: rustix::io::Errno| AuditError::Fix {
            action,
            path: path.to_path_buf(),
            source: e.into(),
        }
    };
    let fd = match rustix::fs::open(
        path,
        OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC | OFlags::NONBLOCK,
        Mode::empty(),
    ) {
        Ok(fd) => fd,
        // Absent, or a symlink (`ELOOP` under `O_NOFOLLOW`): nothing to do.
        Err(rustix::io::Errno::NOENT | rustix::io::Errno::LOOP) => return Ok(None),
        Err(e) => return Err(err("open")(e)),
    };
    let stat = rustix::fs::fstat(&fd).map_err(err("stat"))?;
    let from_mode = stat.st_mode & 0o7777;
    let to_mode = from_mode & keep;
    if to_mode == from_mode {
        return Ok(None);
    }
    rustix::fs::fchmod(&fd, Mode::from_raw_mode(to_mode)).map_err(err("change the mode of"))?;
    Ok(Some(FixChange {
        path: path.to_path_buf(),
        from_mode,
        to_mode,
    }))
}
