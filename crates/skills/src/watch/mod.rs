//! Watching skill roots and reusing snapshots.
//!
//! OpenClaw keeps one file watcher per skills directory, shared by every
//! agent workspace that uses it, so the number of watch handles grows with
//! directories and not with agents. A change under a directory bumps a
//! version number; the next time a run assembles its skills snapshot it
//! compares the versions, the prompt format version and the agent's skill
//! filter with the ones the cached snapshot was built from, and rebuilds
//! only when one of them differs. The hot path never stats or re-reads a
//! file: it reads a few atomics and compares a small key.
//!
//! The pieces:
//!
//! * [`WatchRegistry`] hands out [`RootWatch`] handles, one debounced
//!   `notify` watcher per canonicalised root directory. Asking twice for the
//!   same root returns a handle to the same watcher; dropping the last
//!   handle stops it.
//! * [`RootWatch::version`] is the root's change counter: bumped once per
//!   debounced burst of changes (create, modify, remove, rename of anything
//!   under the root).
//! * [`SnapshotCache`] keeps the last value built for a [`SnapshotKey`] and
//!   rebuilds only when the key changes.
//! * [`SkillsSnapshotter`] ties them together for one agent: its roots, its
//!   limits and eligibility context, a watch on every root, and a cache of
//!   [`SkillsSnapshot`]s loaded with [`crate::load_skills`].
//!
//! # Debouncing
//!
//! `notify-debouncer-full` delivers an event `debounce` after it happened
//! (duplicates of the same kind on the same path are merged) and checks for
//! due events once per tick. The registry sets the tick to the debounce
//! time, so every burst of changes shorter than the debounce time is
//! delivered in at most two batches (one if it does not straddle a tick),
//! and the version is bumped once per batch. Consumers only care that the
//! version changed, so an occasional second bump costs at most one extra
//! rebuild. A change becomes visible between one and two debounce times
//! after it happened.
//!
//! # Roots that do not exist yet
//!
//! A root that does not exist when it is watched is watched through its
//! nearest existing ancestor, non-recursively (so watching
//! `~/.agents/skills` before it exists does not watch the whole home
//! directory recursively). When a directory on the way to the root appears,
//! the watch moves down to it; when the root itself appears, the watch
//! moves onto the root (recursively) and the version is bumped. If the root
//! is later removed or renamed away, the watch moves back up to the nearest
//! existing ancestor and the version is bumped again. While a root does not
//! exist, [`RootWatch::exists`] is `false`.
//!
//! # Limits and caveats
//!
//! * On Linux every root costs one inotify instance (the default
//!   `fs.inotify.max_user_instances` is 128 per user) plus one inotify
//!   watch per directory under the root (`fs.inotify.max_user_watches`).
//!   When a limit is hit, [`WatchRegistry::watch`] fails with
//!   [`WatchError::Watch`] naming the path.
//! * Each watcher runs two threads (notify's event loop and the debouncer's
//!   timer); dropping the last handle stops both (the timer thread exits
//!   within one tick).
//! * Renaming an *ancestor* of a watched root is not noticed: the kernel
//!   keeps watching the moved directories under their new names.
//! * Roots are canonicalised with symbolic links resolved for the part of
//!   the path that exists; the missing tail is normalised lexically.
//! * Network file systems and some container mounts do not deliver inotify
//!   events at all; there the version never changes.

mod registry;
mod snapshot;

pub use registry::{DEFAULT_DEBOUNCE, RootWatch, WatchError, WatchRegistry};
pub use snapshot::{SkillsSnapshot, SkillsSnapshotter, SnapshotCache, SnapshotKey};

#[cfg(test)]
mod tests;
