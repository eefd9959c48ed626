//! Following the memory files of a host workspace with `notify` (as the
//! skills loader does): an event on `MEMORY.md`, under `memory/` or under
//! an extra directory marks the index dirty, and the next search syncs.
//! Only the workspace root (not recursively), `memory/` and the extra
//! directories are watched, so a large workspace costs no watches.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use notify::{EventKind, RecommendedWatcher, RecursiveMode, Watcher};

use crate::error::{MemoryError, MemoryErrorKind, Result};
use crate::index::MemoryIndex;

/// A running watch (dropping it stops it).
pub(crate) struct Watch {
    watcher: RecommendedWatcher,
    root: PathBuf,
    dirs: Vec<PathBuf>,
    watched: HashSet<PathBuf>,
}

/// Whether a change at `path` concerns memory files.
fn concerns_memory(path: &Path, root: &Path, dirs: &[PathBuf]) -> bool {
    if dirs.iter().any(|d| path.starts_with(d)) {
        return true;
    }
    match path.strip_prefix(root) {
        Ok(rel) => {
            let mut comps = rel.components();
            let first = comps
                .next()
                .map(|c| c.as_os_str().to_string_lossy().into_owned());
            matches!(
                first.as_deref(),
                Some("MEMORY.md") | Some("memory.md") | Some("memory")
            )
        }
        Err(_) => false,
    }
}

/// Start watching the memory files of the host workspace `root` for
/// `index` (its extra paths relative to `root`, or absolute).
pub(crate) fn watch(index: &MemoryIndex, root: &Path) -> Result<()> {
    let root = std::fs::canonicalize(root).map_err(|e| {
        MemoryError::new(
            MemoryErrorKind::Index,
            format!("memory watch: workspace {}: {e}", root.display()),
        )
    })?;
    let mut dirs = vec![root.join("memory")];
    for extra in &index.settings().extra_paths {
        dirs.push(root.join(extra));
    }
    let flag: Arc<AtomicBool> = index.dirty_flag();
    let (r, d) = (root.clone(), dirs.clone());
    let watcher = notify::recommended_watcher(move |res: notify::Result<notify::Event>| {
        match res {
            Ok(event) => {
                if matches!(event.kind, EventKind::Access(_)) {
                    return;
                }
                if event.paths.iter().any(|p| concerns_memory(p, &r, &d)) {
                    flag.store(true, Ordering::SeqCst);
                }
            }
            // A lost event (queue overflow): assume anything changed.
            Err(_) => flag.store(true, Ordering::SeqCst),
        }
    })
    .map_err(|e| {
        MemoryError::new(
            MemoryErrorKind::Index,
            format!("memory watch: cannot start a file watcher: {e}"),
        )
    })?;
    let mut w = Watch {
        watcher,
        root,
        dirs,
        watched: HashSet::new(),
    };
    add_watches(&mut w)?;
    if let Ok(mut slot) = index.watcher.lock() {
        *slot = Some(w);
    }
    index.set_watching(true);
    Ok(())
}

fn add_watches(w: &mut Watch) -> Result<()> {
    if !w.watched.contains(&w.root) {
        w.watcher
            .watch(&w.root, RecursiveMode::NonRecursive)
            .map_err(|e| {
                MemoryError::new(
                    MemoryErrorKind::Index,
                    format!("memory watch: {}: {e}", w.root.display()),
                )
            })?;
        w.watched.insert(w.root.clone());
    }
    for dir in w.dirs.clone() {
        if w.watched.contains(&dir) || !dir.is_dir() {
            continue;
        }
        if w.watcher.watch(&dir, RecursiveMode::Recursive).is_ok() {
            w.watched.insert(dir);
        }
    }
    Ok(())
}

/// After a sync: watch directories created since (a new `memory/`).
pub(crate) fn refresh(index: &MemoryIndex) {
    if let Ok(mut slot) = index.watcher.lock()
        && let Some(w) = slot.as_mut()
        && add_watches(w).is_err()
    {
        // The root went away: fall back to syncing before every search.
        *slot = None;
        index.set_watching(false);
    }
}
