//! How the journal is opened.

use std::time::Duration;

/// How far a commit is pushed towards the disk before it counts as done.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum Durability {
    /// Every commit is synced to the device (SQLite `synchronous=FULL`): a
    /// `started` record survives the process being killed *and* the machine
    /// losing power. A lone commit costs one `fsync` (about 3 ms on the
    /// project's test machine); concurrent calls share it.
    #[default]
    Full,
    /// Commits reach the operating system but are synced only at WAL
    /// checkpoints (SQLite `synchronous=NORMAL` in WAL mode): records
    /// survive the process being killed (`SIGKILL`, panic, OOM kill), but
    /// the last ones may be lost if the machine loses power. About 0.1 ms
    /// per lone commit.
    ProcessCrash,
}

/// The default [`Retention::max_age`]: 30 days.
pub const DEFAULT_RETENTION_DAYS: u32 = 30;
/// The default [`Retention::max_bytes`]: 256 MiB.
pub const DEFAULT_MAX_BYTES: u64 = 256 * 1024 * 1024;
/// The default [`Retention::check_every`]: five minutes.
pub const DEFAULT_RETENTION_CHECK: Duration = Duration::from_secs(300);

/// How much history the journal keeps. The writer thread enforces it when
/// the journal opens and after a commit, at most once per
/// [`check_every`](Self::check_every). Only terminal records are ever
/// deleted, never a call in flight (no terminal record committed yet).
///
/// - Age: a terminal record that ended more than `max_age` ago goes.
/// - Size: while the live data is over `max_bytes`, the oldest terminal
///   records go, first those of calls that wrote no `started` record
///   (read-only tools) or were refused (`blocked`), then any, down to 90%
///   of the limit; freed pages are returned to the file system
///   (`auto_vacuum = INCREMENTAL`, then a truncating WAL checkpoint), so
///   the file shrinks, not only its free list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Retention {
    /// Terminal records older than this go; `None` keeps them (size
    /// permitting).
    pub max_age: Option<Duration>,
    /// The live data kept at most, in bytes; `None` for no limit. A journal
    /// whose calls in flight alone exceed it keeps them all.
    pub max_bytes: Option<u64>,
    /// How often the limits are checked (at most; checks happen only when
    /// the journal is written).
    pub check_every: Duration,
}

impl Default for Retention {
    fn default() -> Self {
        Retention {
            max_age: Some(Duration::from_secs(
                u64::from(DEFAULT_RETENTION_DAYS) * 86_400,
            )),
            max_bytes: Some(DEFAULT_MAX_BYTES),
            check_every: DEFAULT_RETENTION_CHECK,
        }
    }
}

impl Retention {
    /// Keep everything (no age or size limit).
    pub fn keep_all() -> Self {
        Retention {
            max_age: None,
            max_bytes: None,
            check_every: DEFAULT_RETENTION_CHECK,
        }
    }

    /// These limits, checked every [`DEFAULT_RETENTION_CHECK`].
    pub fn new(max_age: Option<Duration>, max_bytes: Option<u64>) -> Self {
        Retention {
            max_age,
            max_bytes,
            check_every: DEFAULT_RETENTION_CHECK,
        }
    }

    /// Builder: how often the limits are checked.
    pub fn checked_every(mut self, every: Duration) -> Self {
        self.check_every = every;
        self
    }
}

/// Options for [`CallJournal::open_with`](crate::CallJournal::open_with).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct JournalOptions {
    /// How far a commit is pushed towards the disk.
    pub durability: Durability,
    /// How much history is kept.
    pub retention: Retention,
}

impl JournalOptions {
    /// Options with this durability (and the default retention).
    pub fn with_durability(durability: Durability) -> Self {
        Self {
            durability,
            retention: Retention::default(),
        }
    }

    /// Builder: the retention limits.
    pub fn retention(mut self, retention: Retention) -> Self {
        self.retention = retention;
        self
    }
}
