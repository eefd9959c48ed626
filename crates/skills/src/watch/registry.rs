//! One debounced `notify` watcher per skills root, shared by every agent.

use std::collections::HashMap;
use std::fmt;
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, Weak};
use std::time::Duration;

use notify::event::{AccessKind, AccessMode};
use notify::{EventKind, RecommendedWatcher, RecursiveMode};
use notify_debouncer_full::{
    DebounceEventResult, DebouncedEvent, Debouncer, RecommendedCache, new_debouncer,
};

/// The debounce time of [`WatchRegistry::default`].
pub const DEFAULT_DEBOUNCE: Duration = Duration::from_millis(250);

/// The shortest debounce time accepted (a shorter one is raised to it): the
/// debouncer's timer thread sleeps one debounce time per tick.
const MIN_DEBOUNCE: Duration = Duration::from_millis(5);

/// How many times arming retries when the directory it picked vanishes
/// before it could be watched.
const MAX_ARM_ATTEMPTS: usize = 16;

type SkillsDebouncer = Debouncer<RecommendedWatcher, RecommendedCache>;

/// Why a root could not be watched.
#[derive(Debug, thiserror::Error)]
pub enum WatchError {
    /// The root's path could not be made absolute or canonicalised.
    #[error("cannot resolve the skills root {}: {source}", path.display())]
    Resolve {
        /// The path as given.
        path: PathBuf,
        /// What failed.
        #[source]
        source: std::io::Error,
    },
    /// The file watcher could not be created (on Linux, usually the
    /// `fs.inotify.max_user_instances` limit).
    #[error("cannot start a file watcher for the skills root {}: {source}", path.display())]
    Start {
        /// The canonical root.
        path: PathBuf,
        /// What failed.
        #[source]
        source: notify::Error,
    },
    /// The root (or, while it does not exist, its nearest existing
    /// ancestor) could not be watched (permissions, or on Linux the
    /// `fs.inotify.max_user_watches` limit).
    #[error("cannot watch {} (for the skills root {}): {source}", watched.display(), path.display())]
    Watch {
        /// The canonical root.
        path: PathBuf,
        /// The directory that was being watched.
        watched: PathBuf,
        /// What failed.
        #[source]
        source: notify::Error,
    },
}

/// Hands out one debounced watcher per skills root directory.
///
/// Cloning is cheap and clones share the watchers. Watchers live as long as
/// some [`RootWatch`] for them does; the registry itself only keeps weak
/// references.
#[derive(Debug, Clone)]
pub struct WatchRegistry {
    inner: Arc<RegistryInner>,
}

#[derive(Debug)]
struct RegistryInner {
    debounce: Duration,
    roots: Mutex<HashMap<PathBuf, Weak<RootState>>>,
}

impl Default for WatchRegistry {
    fn default() -> Self {
        WatchRegistry::new(DEFAULT_DEBOUNCE)
    }
}

impl WatchRegistry {
    /// A registry whose watchers coalesce changes over `debounce` (raised to
    /// 5 ms if shorter). See the module documentation for what a burst is.
    pub fn new(debounce: Duration) -> Self {
        WatchRegistry {
            inner: Arc::new(RegistryInner {
                debounce: debounce.max(MIN_DEBOUNCE),
                roots: Mutex::new(HashMap::new()),
            }),
        }
    }

    /// The debounce time of the registry's watchers.
    pub fn debounce(&self) -> Duration {
        self.inner.debounce
    }

    /// A handle on the watcher of `root`, starting one if none is running.
    ///
    /// The root is made absolute and canonicalised first (symbolic links in
    /// the existing part resolved, `.` and `..` removed), so different
    /// spellings of one directory share one watcher. A root that does not
    /// exist yet is accepted and watched through its nearest existing
    /// ancestor until it appears (see the module documentation).
    pub fn watch(&self, root: &Path) -> Result<RootWatch, WatchError> {
        let key = canonical_root(root)?;
        let mut roots = lock(&self.inner.roots);
        roots.retain(|_, state| state.strong_count() > 0);
        if let Some(state) = roots.get(&key).and_then(Weak::upgrade) {
            return Ok(RootWatch { state });
        }
        let state = RootState::start(key.clone(), self.inner.debounce)?;
        roots.insert(key, Arc::downgrade(&state));
        Ok(RootWatch { state })
    }

    /// How many watchers are running (one per distinct root with a live
    /// handle).
    pub fn watcher_count(&self) -> usize {
        lock(&self.inner.roots)
            .values()
            .filter(|state| state.strong_count() > 0)
            .count()
    }

    /// The canonical roots being watched, sorted.
    pub fn watched_roots(&self) -> Vec<PathBuf> {
        let mut roots: Vec<PathBuf> = lock(&self.inner.roots)
            .iter()
            .filter(|(_, state)| state.strong_count() > 0)
            .map(|(root, _)| root.clone())
            .collect();
        roots.sort();
        roots
    }
}

/// A cheap handle on the watcher of one skills root.
///
/// Clones share the watcher; the watcher stops when the last handle (from
/// any agent) is dropped.
#[derive(Debug, Clone)]
pub struct RootWatch {
    state: Arc<RootState>,
}

impl RootWatch {
    /// The change counter of the root: starts at 0 and grows by one per
    /// debounced batch of changes under the root (including the root
    /// appearing or disappearing). Reading it is one atomic load; it never
    /// touches the file system.
    pub fn version(&self) -> u64 {
        self.state.version.load(Ordering::Acquire)
    }

    /// The canonical root.
    pub fn root(&self) -> &Path {
        &self.state.root
    }

    /// Whether the root existed when the watcher last looked (at start and
    /// after every change on the way to it). One atomic load.
    pub fn exists(&self) -> bool {
        self.state.present.load(Ordering::Acquire)
    }

    /// Whether both handles share one watcher.
    pub fn same_watcher(&self, other: &RootWatch) -> bool {
        Arc::ptr_eq(&self.state, &other.state)
    }

    /// How many handles share this watcher (including this one).
    pub fn handle_count(&self) -> usize {
        Arc::strong_count(&self.state)
    }
}

/// What the watcher is currently watching.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Target {
    /// The root itself, recursively.
    Root,
    /// The nearest existing ancestor of a missing root, non-recursively.
    Ancestor(PathBuf),
}

struct Armed {
    debouncer: Option<SkillsDebouncer>,
    target: Option<Target>,
}

/// The shared state of one root's watcher.
struct RootState {
    root: PathBuf,
    version: AtomicU64,
    present: AtomicBool,
    armed: Mutex<Armed>,
}

impl fmt::Debug for RootState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RootState")
            .field("root", &self.root)
            .field("version", &self.version.load(Ordering::Relaxed))
            .field("present", &self.present.load(Ordering::Relaxed))
            .finish_non_exhaustive()
    }
}

impl RootState {
    /// Start a debounced watcher for `root` (canonical) and arm it.
    fn start(root: PathBuf, debounce: Duration) -> Result<Arc<RootState>, WatchError> {
        let state = Arc::new(RootState {
            root,
            version: AtomicU64::new(0),
            present: AtomicBool::new(false),
            armed: Mutex::new(Armed {
                debouncer: None,
                target: None,
            }),
        });
        // The handler holds a weak reference: the debouncer is owned by the
        // state, so a strong one would keep the watcher alive forever.
        let weak = Arc::downgrade(&state);
        let debouncer = new_debouncer(debounce, Some(debounce), move |result| {
            if let Some(state) = weak.upgrade() {
                state.on_events(result);
            }
        })
        .map_err(|source| WatchError::Start {
            path: state.root.clone(),
            source,
        })?;
        {
            let mut armed = lock(&state.armed);
            armed.debouncer = Some(debouncer);
            state
                .arm(&mut armed)
                .map_err(|(watched, source)| WatchError::Watch {
                    path: state.root.clone(),
                    watched,
                    source,
                })?;
        }
        tracing::debug!(
            root = %state.root.display(),
            exists = state.present.load(Ordering::Acquire),
            "skills root watcher started"
        );
        Ok(state)
    }

    /// Point the watcher at the root if it exists, else at its nearest
    /// existing ancestor; retry when the chosen directory changes under
    /// our feet. Runs at start and on the notify thread, never on the hot
    /// path.
    fn arm(&self, armed: &mut Armed) -> Result<(), (PathBuf, notify::Error)> {
        let Armed { debouncer, target } = armed;
        let Some(debouncer) = debouncer.as_mut() else {
            return Ok(());
        };
        let mut result = Ok(());
        for _ in 0..MAX_ARM_ATTEMPTS {
            let nearest = nearest_existing(&self.root);
            let desired = if nearest == self.root {
                Target::Root
            } else {
                Target::Ancestor(nearest.clone())
            };
            if target.as_ref() == Some(&desired) {
                result = Ok(());
                break;
            }
            if let Some(old) = target.take() {
                let old_path = match &old {
                    Target::Root => self.root.as_path(),
                    Target::Ancestor(path) => path.as_path(),
                };
                // Fails when the kernel already dropped the watch (the
                // directory was removed); nothing to undo then.
                if let Err(error) = debouncer.unwatch(old_path) {
                    tracing::trace!(path = %old_path.display(), %error, "unwatch");
                }
            }
            let mode = match desired {
                Target::Root => RecursiveMode::Recursive,
                Target::Ancestor(_) => RecursiveMode::NonRecursive,
            };
            match debouncer.watch(&nearest, mode) {
                // Loop once more: something deeper may have appeared
                // between looking and watching.
                Ok(()) => *target = Some(desired),
                Err(error) if is_not_found(&error) => result = Err((nearest, error)),
                Err(error) => {
                    result = Err((nearest, error));
                    break;
                }
            }
        }
        self.present
            .store(*target == Some(Target::Root), Ordering::Release);
        result
    }

    /// Handle one debounced batch: bump the version once if anything under
    /// the root changed, and move the watch when something on the way to
    /// the root appeared or disappeared.
    fn on_events(&self, result: DebounceEventResult) {
        let (mut changed, mut rearm) = (false, false);
        match result {
            Ok(events) => {
                for event in &events {
                    let (c, r) = self.classify(event);
                    changed |= c;
                    rearm |= r;
                }
            }
            Err(errors) => {
                for error in &errors {
                    tracing::warn!(root = %self.root.display(), %error, "skills watcher error");
                }
                // Something may have been missed: assume a change.
                changed = true;
                rearm = true;
            }
        }
        if rearm {
            let mut armed = lock(&self.armed);
            let was_present = self.present.load(Ordering::Acquire);
            if let Err((watched, error)) = self.arm(&mut armed) {
                tracing::warn!(
                    root = %self.root.display(),
                    watched = %watched.display(),
                    %error,
                    "cannot re-arm the skills root watcher"
                );
            }
            if self.present.load(Ordering::Acquire) != was_present {
                changed = true;
            }
        }
        if changed {
            let version = self.version.fetch_add(1, Ordering::AcqRel) + 1;
            tracing::debug!(root = %self.root.display(), version, "skills root changed");
        }
    }

    /// Whether an event is a change under the root, and whether it touches
    /// the root itself or a directory on the way to it.
    fn classify(&self, event: &DebouncedEvent) -> (bool, bool) {
        if event.need_rescan() {
            return (true, true);
        }
        match event.kind {
            // Opening or reading a file (the loader does that) is not a
            // change; closing a file written to is.
            EventKind::Access(AccessKind::Close(AccessMode::Write)) => {}
            EventKind::Access(_) | EventKind::Other => return (false, false),
            _ => {}
        }
        let mut changed = false;
        let mut rearm = false;
        for path in &event.paths {
            changed |= path.starts_with(&self.root);
            rearm |= self.root.starts_with(path);
        }
        (changed, rearm)
    }
}

fn is_not_found(error: &notify::Error) -> bool {
    match &error.kind {
        notify::ErrorKind::PathNotFound | notify::ErrorKind::WatchNotFound => true,
        notify::ErrorKind::Io(io) => io.kind() == std::io::ErrorKind::NotFound,
        _ => false,
    }
}

/// The root itself if it exists, else its nearest existing ancestor.
fn nearest_existing(root: &Path) -> PathBuf {
    root.ancestors()
        .find(|path| path.exists())
        .unwrap_or(root)
        .to_path_buf()
}

/// Absolute, lexically normalised, with the existing part canonicalised.
fn canonical_root(root: &Path) -> Result<PathBuf, WatchError> {
    let resolve = |source| WatchError::Resolve {
        path: root.to_path_buf(),
        source,
    };
    let absolute = std::path::absolute(root).map_err(resolve)?;
    let mut normal = PathBuf::new();
    for component in absolute.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                normal.pop();
            }
            other => normal.push(other),
        }
    }
    let existing = nearest_existing(&normal);
    let mut canonical = std::fs::canonicalize(&existing).map_err(resolve)?;
    if let Ok(rest) = normal.strip_prefix(&existing)
        && !rest.as_os_str().is_empty()
    {
        canonical.push(rest);
    }
    Ok(canonical)
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}
