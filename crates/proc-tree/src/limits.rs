//! Resource limits for one leaf.

use std::fmt;

/// Resource limits of one leaf; `None` leaves a resource unlimited.
///
/// Each limit that is set is enforced by a cgroup controller: a cgroup2
/// controller enabled for the owner cgroup, else the cgroup v1 hierarchy of
/// that controller. A limit that no controller can enforce is an error
/// ([`crate::ProcTreeError::LimitUnavailable`]), never silently dropped.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Limits {
    /// Memory limit in bytes (cgroup2 `memory.max`, v1
    /// `memory.limit_in_bytes`).
    pub memory_bytes: Option<u64>,
    /// Maximum number of processes and threads (`pids.max`).
    pub pids: Option<u64>,
    /// CPU bandwidth in CPUs, e.g. `0.5` or `2.0` (cgroup2 `cpu.max`, v1
    /// `cpu.cfs_quota_us` / `cpu.cfs_period_us`).
    pub cpus: Option<f64>,
}

impl Limits {
    /// No limits.
    pub const NONE: Limits = Limits {
        memory_bytes: None,
        pids: None,
        cpus: None,
    };

    /// Whether no limit is set.
    pub fn is_empty(&self) -> bool {
        self.memory_bytes.is_none() && self.pids.is_none() && self.cpus.is_none()
    }
}

/// One kind of limit, for errors and for [`crate::Containment`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[non_exhaustive]
pub enum LimitKind {
    /// [`Limits::memory_bytes`].
    Memory,
    /// [`Limits::pids`].
    Pids,
    /// [`Limits::cpus`].
    Cpus,
}

impl LimitKind {
    /// Every kind, in a fixed order.
    pub const ALL: [LimitKind; 3] = [LimitKind::Memory, LimitKind::Pids, LimitKind::Cpus];

    /// The cgroup controller that enforces it.
    pub fn controller(self) -> &'static str {
        match self {
            LimitKind::Memory => "memory",
            LimitKind::Pids => "pids",
            LimitKind::Cpus => "cpu",
        }
    }

    /// The `Limits` field name.
    pub fn field(self) -> &'static str {
        match self {
            LimitKind::Memory => "memory_bytes",
            LimitKind::Pids => "pids",
            LimitKind::Cpus => "cpus",
        }
    }
}

impl fmt::Display for LimitKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.field())
    }
}
