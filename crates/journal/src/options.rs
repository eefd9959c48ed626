//! How the journal is opened.

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

/// Options for [`CallJournal::open_with`](crate::CallJournal::open_with).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct JournalOptions {
    /// How far a commit is pushed towards the disk.
    pub durability: Durability,
}

impl JournalOptions {
    /// Options with this durability.
    pub fn with_durability(durability: Durability) -> Self {
        Self { durability }
    }
}
