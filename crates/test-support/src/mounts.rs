//! File-system attack helpers for the sandbox bind tests: a writable
//! submount inside a directory that gets bound read-only, and an atomic
//! swap of two paths for symlink races. Both need root (the tests run as
//! root); a failure panics naming what went wrong.

use std::path::{Path, PathBuf};
use std::process::Command;

/// A writable tmpfs mounted at a directory (created when missing) with
/// one file, `inside-submount`, holding `original\n`; unmounted on drop.
#[derive(Debug)]
pub struct TmpfsSubmount {
    /// Where it is mounted.
    pub path: PathBuf,
}

impl TmpfsSubmount {
    /// Mount it at `dir`. Panics unless `mount -t tmpfs` works (root).
    pub fn new(dir: &Path) -> TmpfsSubmount {
        if let Err(e) = std::fs::create_dir_all(dir) {
            panic!("cannot create {}: {e}", dir.display());
        }
        let status = Command::new("mount")
            .args(["-t", "tmpfs", "-o", "size=1m,mode=0777", "talon-test"])
            .arg(dir)
            .status();
        match status {
            Ok(s) if s.success() => {}
            other => panic!(
                "mount -t tmpfs at {} failed ({other:?}); these tests need root",
                dir.display()
            ),
        }
        if let Err(e) = std::fs::write(dir.join("inside-submount"), "original\n") {
            panic!("cannot write into the tmpfs at {}: {e}", dir.display());
        }
        TmpfsSubmount {
            path: dir.to_path_buf(),
        }
    }
}

impl Drop for TmpfsSubmount {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.path).status();
    }
}

/// Swap two paths atomically (`renameat2(RENAME_EXCHANGE)`): at every
/// instant each name exists, as one or the other. Panics on failure.
pub fn exchange(a: &Path, b: &Path) {
    if let Err(e) = rustix::fs::renameat_with(
        rustix::fs::CWD,
        a,
        rustix::fs::CWD,
        b,
        rustix::fs::RenameFlags::EXCHANGE,
    ) {
        panic!("cannot exchange {} and {}: {e}", a.display(), b.display());
    }
}
