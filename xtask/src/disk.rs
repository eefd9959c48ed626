//! Disk room for `cargo xtask test`. A clean run builds four trees under
//! `target/` (clippy's and the tests' in `debug`, the MSRV check's in
//! `msrv`, the fuzz targets' in `fuzz`): together more than a small CI
//! disk holds. The one-shot trees (MSRV, packaging, fuzz builds) are
//! deleted once their step has passed when the disk is short of room, and
//! kept otherwise so that a rerun on a roomy machine stays incremental.

use std::path::Path;
use std::process::Command;

/// Below this much free space, a one-shot build tree is deleted after
/// its step: the test build that follows needs about 20 GiB.
const KEEP_TREES_ABOVE: u64 = 48 << 30;

/// Below this much free space at the start, the run says how much it
/// needs before it fails somewhere in the middle for want of it.
const WARN_BELOW: u64 = 25 << 30;

/// Free bytes on the filesystem holding `path`, by `df` (no `unsafe`
/// `statvfs` here); `None` when `df` cannot tell.
fn free_bytes(path: &Path) -> Option<u64> {
    let out = Command::new("df")
        .args(["-B1", "--output=avail"])
        .arg(path)
        .output()
        .ok()?;
    if !out.status.success() {
        return None;
    }
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .nth(1)?
        .trim()
        .parse()
        .ok()
}

fn gib(bytes: u64) -> String {
    format!("{:.1} GiB", bytes as f64 / f64::from(1u32 << 30))
}

/// Says so when the disk holding `target/` is short of what a clean run
/// needs.
pub(crate) fn warn_if_short() {
    let target = Path::new("target");
    let probe = if target.is_dir() {
        target
    } else {
        Path::new(".")
    };
    if let Some(free) = free_bytes(probe)
        && free < WARN_BELOW
    {
        println!(
            "xtask: only {} free under {}: a clean `cargo xtask test` needs about 25 GiB \
             (one-shot build trees are deleted as the run goes; `cargo clean` frees the rest)",
            gib(free),
            probe.display()
        );
    }
}

/// Deletes `dir` (a build tree a passed step no longer needs) when the
/// disk is short of room; a missing tree is fine.
pub(crate) fn reclaim(dir: &Path) -> Result<(), String> {
    if !dir.exists() {
        return Ok(());
    }
    match free_bytes(dir) {
        Some(free) if free >= KEEP_TREES_ABOVE => return Ok(()),
        Some(free) => println!(
            "xtask: {} free; deleting {} (its step passed)",
            gib(free),
            dir.display()
        ),
        None => println!(
            "xtask: cannot read the free space; deleting {} (its step passed)",
            dir.display()
        ),
    }
    std::fs::remove_dir_all(dir).map_err(|e| format!("cannot delete {}: {e}", dir.display()))
}
