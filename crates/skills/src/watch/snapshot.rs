//! Snapshots rebuilt only when a root's version, the prompt format version
//! or the agent's skill filter changed.

use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, PoisonError, RwLock};

use crate::loader::{EligibilityContext, SkillLimits, SkillRoots, SkillSet, load_skills};
use crate::watch::registry::{RootWatch, WatchError, WatchRegistry};

/// What a snapshot was built from. Two equal keys mean the snapshot can be
/// reused as is.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct SnapshotKey {
    /// The version of every root ([`RootWatch::version`]), in source order
    /// (extra roots, bundled, managed, personal, project, workspace).
    pub versions: Vec<u64>,
    /// The version of the prompt format the snapshot was rendered with.
    pub prompt_format_version: u32,
    /// The agent's skill filter (`None`: every skill). Compared exactly;
    /// [`SnapshotKey::new`] sorts and deduplicates it so that the order in
    /// which an agent lists its skills does not matter.
    pub filter: Option<Vec<String>>,
}

impl SnapshotKey {
    /// A key with the filter trimmed, sorted and deduplicated.
    pub fn new(versions: Vec<u64>, prompt_format_version: u32, filter: Option<&[String]>) -> Self {
        let filter = filter.map(|names| {
            let mut names: Vec<String> = names.iter().map(|n| n.trim().to_owned()).collect();
            names.sort();
            names.dedup();
            names
        });
        SnapshotKey {
            versions,
            prompt_format_version,
            filter,
        }
    }

    /// Whether the filter lets `name` through.
    pub fn allows(&self, name: &str) -> bool {
        match &self.filter {
            None => true,
            Some(names) => names.iter().any(|n| n == name),
        }
    }
}

/// The last value built, with the key it was built for.
struct Cached<T> {
    key: SnapshotKey,
    value: Arc<T>,
}

/// Keeps the value built for the last key and rebuilds only when asked with
/// a different key.
///
/// One cache serves one consumer (an agent, a session): it holds a single
/// entry, so consumers with different filters should not share a cache.
/// Concurrent callers with the same key build once; the others wait and get
/// the same `Arc`.
pub struct SnapshotCache<T> {
    slot: RwLock<Option<Cached<T>>>,
    builds: AtomicU64,
    hits: AtomicU64,
}

impl<T> fmt::Debug for SnapshotCache<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let slot = self.slot.read().unwrap_or_else(PoisonError::into_inner);
        f.debug_struct("SnapshotCache")
            .field("key", &slot.as_ref().map(|cached| &cached.key))
            .field("builds", &self.builds())
            .field("hits", &self.hits())
            .finish()
    }
}

impl<T> Default for SnapshotCache<T> {
    fn default() -> Self {
        SnapshotCache::new()
    }
}

impl<T> SnapshotCache<T> {
    /// An empty cache.
    pub fn new() -> Self {
        SnapshotCache {
            slot: RwLock::new(None),
            builds: AtomicU64::new(0),
            hits: AtomicU64::new(0),
        }
    }

    /// The cached value if it was built for `key`, else `build()`'s, which
    /// replaces it. Reuse costs a read lock and a key comparison.
    pub fn get_or_build(&self, key: &SnapshotKey, build: impl FnOnce() -> T) -> Arc<T> {
        if let Some(value) = self.get(key) {
            return value;
        }
        let mut slot = self.slot.write().unwrap_or_else(PoisonError::into_inner);
        // Someone may have built it while we waited for the lock.
        if let Some(cached) = slot.as_ref()
            && cached.key == *key
        {
            self.hits.fetch_add(1, Ordering::Relaxed);
            return Arc::clone(&cached.value);
        }
        let value = Arc::new(build());
        self.builds.fetch_add(1, Ordering::Relaxed);
        *slot = Some(Cached {
            key: key.clone(),
            value: Arc::clone(&value),
        });
        value
    }

    /// The cached value if it was built for `key`.
    pub fn get(&self, key: &SnapshotKey) -> Option<Arc<T>> {
        let slot = self.slot.read().unwrap_or_else(PoisonError::into_inner);
        let cached = slot.as_ref().filter(|cached| cached.key == *key)?;
        self.hits.fetch_add(1, Ordering::Relaxed);
        Some(Arc::clone(&cached.value))
    }

    /// The key of the cached value, if any.
    pub fn cached_key(&self) -> Option<SnapshotKey> {
        let slot = self.slot.read().unwrap_or_else(PoisonError::into_inner);
        slot.as_ref().map(|cached| cached.key.clone())
    }

    /// Forget the cached value: the next call builds.
    pub fn invalidate(&self) {
        *self.slot.write().unwrap_or_else(PoisonError::into_inner) = None;
    }

    /// How many times a build closure ran.
    pub fn builds(&self) -> u64 {
        self.builds.load(Ordering::Relaxed)
    }

    /// How many calls reused the cached value.
    pub fn hits(&self) -> u64 {
        self.hits.load(Ordering::Relaxed)
    }
}

/// One agent's skills at one point: what was loaded and what was rendered
/// from it.
#[derive(Debug, Clone, PartialEq)]
pub struct SkillsSnapshot<P = ()> {
    /// What it was built from.
    pub key: SnapshotKey,
    /// The loaded skills, with the agent's filter applied (rejected
    /// directories and warnings are kept whole).
    pub skills: Arc<SkillSet>,
    /// What the snapshotter's renderer returned (the prompt index, say);
    /// `()` without a renderer.
    pub prompt: P,
}

type Renderer<P> = Box<dyn Fn(&SkillSet, &SnapshotKey) -> P + Send + Sync>;

/// One agent's skills, reloaded only when needed.
///
/// Holds the agent's roots, limits and eligibility context, a
/// [`RootWatch`] on every root (shared through the [`WatchRegistry`] with
/// every other agent using the same directories) and a one-entry
/// [`SnapshotCache`]. [`SkillsSnapshotter::snapshot`] reads the roots'
/// versions (atomics, no file system access) and calls [`load_skills`]
/// and the renderer only when the key changed.
pub struct SkillsSnapshotter<P = ()> {
    registry: WatchRegistry,
    roots: SkillRoots,
    limits: SkillLimits,
    eligibility: EligibilityContext,
    config: Option<crate::config::SkillsConfig>,
    watches: Vec<RootWatch>,
    render: Renderer<P>,
    cache: SnapshotCache<SkillsSnapshot<P>>,
}

impl<P> fmt::Debug for SkillsSnapshotter<P> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SkillsSnapshotter")
            .field("roots", &self.roots)
            .field("watches", &self.watches)
            .field("cache", &self.cache)
            .finish_non_exhaustive()
    }
}

impl SkillsSnapshotter<()> {
    /// A snapshotter without a renderer (snapshots carry `()` as prompt).
    pub fn new(
        registry: &WatchRegistry,
        roots: SkillRoots,
        limits: SkillLimits,
        eligibility: EligibilityContext,
    ) -> Result<Self, WatchError> {
        SkillsSnapshotter::with_renderer(registry, roots, limits, eligibility, |_, _| ())
    }
}

impl<P> SkillsSnapshotter<P> {
    /// A snapshotter whose snapshots carry `render(skills, key)` (the
    /// prompt index for `key.prompt_format_version`, say). Starts (or
    /// Builder: load with the `skills` config section (its limits replace
    /// the ones given, and its narrowing applies), as the CLI does. Drops
    /// any cached snapshot.
    pub fn with_config(mut self, config: crate::config::SkillsConfig) -> Self {
        self.limits = crate::config::config_limits(&config);
        self.config = Some(config);
        self.cache.invalidate();
        self
    }

    /// joins) a watcher for every root.
    pub fn with_renderer(
        registry: &WatchRegistry,
        roots: SkillRoots,
        limits: SkillLimits,
        eligibility: EligibilityContext,
        render: impl Fn(&SkillSet, &SnapshotKey) -> P + Send + Sync + 'static,
    ) -> Result<Self, WatchError> {
        let watches = root_paths(&roots)
            .into_iter()
            .map(|root| registry.watch(root))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(SkillsSnapshotter {
            registry: registry.clone(),
            roots,
            limits,
            eligibility,
            config: None,
            watches,
            render: Box::new(render),
            cache: SnapshotCache::new(),
        })
    }

    /// The current versions of the roots, in source order.
    pub fn versions(&self) -> Vec<u64> {
        self.watches.iter().map(RootWatch::version).collect()
    }

    /// The key a snapshot taken now would have.
    pub fn key(&self, prompt_format_version: u32, filter: Option<&[String]>) -> SnapshotKey {
        SnapshotKey::new(self.versions(), prompt_format_version, filter)
    }

    /// The snapshot for the current versions, `prompt_format_version` and
    /// `filter` (`None`: every skill): the cached one when none of them
    /// changed, else freshly loaded, filtered and rendered.
    pub fn snapshot(
        &self,
        prompt_format_version: u32,
        filter: Option<&[String]>,
    ) -> Arc<SkillsSnapshot<P>> {
        let key = self.key(prompt_format_version, filter);
        self.cache.get_or_build(&key, || self.build(&key))
    }

    /// The skills of [`SkillsSnapshotter::snapshot`].
    pub fn skills(&self, prompt_format_version: u32, filter: Option<&[String]>) -> Arc<SkillSet> {
        Arc::clone(&self.snapshot(prompt_format_version, filter).skills)
    }

    fn build(&self, key: &SnapshotKey) -> SkillsSnapshot<P> {
        // With a config, exactly what `talon skills list|prompt` load:
        // allowBundled, disabled entries and per-skill env applied.
        let mut skills = match &self.config {
            Some(config) => {
                crate::configured::load_skills_with_config(&self.roots, config, &self.eligibility)
            }
            None => load_skills(&self.roots, &self.limits, &self.eligibility),
        };
        if key.filter.is_some() {
            skills.skills.retain(|skill| key.allows(&skill.name));
        }
        let prompt = (self.render)(&skills, key);
        tracing::debug!(
            skills = skills.skills.len(),
            versions = ?key.versions,
            "skills snapshot rebuilt"
        );
        SkillsSnapshot {
            key: key.clone(),
            skills: Arc::new(skills),
            prompt,
        }
    }

    /// How many snapshots were built (calls to [`load_skills`]).
    pub fn builds(&self) -> u64 {
        self.cache.builds()
    }

    /// How many calls reused the cached snapshot.
    pub fn hits(&self) -> u64 {
        self.cache.hits()
    }

    /// Forget the cached snapshot: the next call rebuilds.
    pub fn invalidate(&self) {
        self.cache.invalidate();
    }

    /// The watch on every root, in source order.
    pub fn watches(&self) -> &[RootWatch] {
        &self.watches
    }

    /// The roots.
    pub fn roots(&self) -> &SkillRoots {
        &self.roots
    }

    /// The registry the watches come from.
    pub fn registry(&self) -> &WatchRegistry {
        &self.registry
    }
}

/// Every configured root, in source order.
fn root_paths(roots: &SkillRoots) -> Vec<&std::path::Path> {
    let mut paths: Vec<&std::path::Path> = roots.extra.iter().map(|p| p.as_path()).collect();
    paths.extend(
        [
            &roots.bundled,
            &roots.managed,
            &roots.personal,
            &roots.project,
            &roots.workspace,
        ]
        .into_iter()
        .filter_map(|root| root.as_deref()),
    );
    paths
}
