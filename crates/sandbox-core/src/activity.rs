//! Calls in flight per sandbox, for this process: [`SandboxActivity`].
//!
//! Every launch and file operation in a sandbox holds a [`SandboxLease`]
//! for as long as it runs (a launched process: until it ends or its handle
//! is dropped). Pruning asks for a [`RemovalGuard`], which is refused while
//! a lease is held; while the guard is held, new leases wait, and when it
//! is dropped the sandbox's generation moves on so a cached handle to the
//! removed sandbox is ensured again instead of used.
//!
//! In-flight calls are a fact about the process, not about one runtime:
//! after a gateway reload, calls started by the previous configuration
//! still run. So there is one table per process ([`SandboxActivity::process`]).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use tokio::sync::Notify;

/// A sandbox by backend id and name.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
pub struct SandboxKey {
    /// The backend id (`docker`, `ssh`, `local`, ...).
    pub backend: String,
    /// The sandbox name (container name, remote directory).
    pub name: String,
}

impl SandboxKey {
    /// The key of `name` on `backend`.
    pub fn new(backend: &str, name: &str) -> Self {
        SandboxKey {
            backend: backend.trim().to_lowercase(),
            name: name.to_owned(),
        }
    }
}

#[derive(Debug, Default)]
struct Slot {
    leases: usize,
    removing: bool,
    generation: u64,
}

impl Slot {
    fn idle(&self) -> bool {
        self.leases == 0 && !self.removing && self.generation == 0
    }
}

/// Calls in flight per sandbox (see the module docs).
#[derive(Debug, Default)]
pub struct SandboxActivity {
    slots: Mutex<HashMap<SandboxKey, Slot>>,
    changed: Notify,
}

impl SandboxActivity {
    /// A table of its own (tests; a process uses [`Self::process`]).
    pub fn new() -> Arc<Self> {
        Arc::new(Self::default())
    }

    /// The process-wide table.
    pub fn process() -> Arc<Self> {
        static TABLE: OnceLock<Arc<SandboxActivity>> = OnceLock::new();
        Arc::clone(TABLE.get_or_init(SandboxActivity::new))
    }

    fn with<T>(&self, f: impl FnOnce(&mut HashMap<SandboxKey, Slot>) -> T) -> T {
        let mut slots = self.slots.lock().unwrap_or_else(PoisonError::into_inner);
        f(&mut slots)
    }

    /// Take a lease on `key`, waiting while the sandbox is being removed.
    pub async fn lease(self: &Arc<Self>, key: &SandboxKey) -> SandboxLease {
        loop {
            let notified = self.changed.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            let taken = self.with(|slots| {
                let slot = slots.entry(key.clone()).or_default();
                if slot.removing {
                    None
                } else {
                    slot.leases += 1;
                    Some(slot.generation)
                }
            });
            if let Some(generation) = taken {
                return SandboxLease {
                    activity: Arc::clone(self),
                    key: key.clone(),
                    generation,
                };
            }
            notified.await;
        }
    }

    /// How many leases are held on `key`.
    pub fn in_flight(&self, key: &SandboxKey) -> usize {
        self.with(|slots| slots.get(key).map_or(0, |s| s.leases))
    }

    /// Every sandbox with a lease held, sorted.
    pub fn busy(&self) -> Vec<SandboxKey> {
        let mut out: Vec<SandboxKey> = self.with(|slots| {
            slots
                .iter()
                .filter(|(_, s)| s.leases > 0)
                .map(|(k, _)| k.clone())
                .collect()
        });
        out.sort();
        out
    }

    /// How many times `key` was removed by this process (a handle ensured
    /// before the last removal is stale).
    pub fn generation(&self, key: &SandboxKey) -> u64 {
        self.with(|slots| slots.get(key).map_or(0, |s| s.generation))
    }

    /// Start removing `key`: `None` when a lease is held (or another
    /// removal runs); otherwise new leases wait until the guard is
    /// dropped.
    pub fn begin_removal(self: &Arc<Self>, key: &SandboxKey) -> Option<RemovalGuard> {
        let started = self.with(|slots| {
            let slot = slots.entry(key.clone()).or_default();
            if slot.leases > 0 || slot.removing {
                false
            } else {
                slot.removing = true;
                true
            }
        });
        started.then(|| RemovalGuard {
            activity: Arc::clone(self),
            key: key.clone(),
        })
    }
}

/// A call in flight in one sandbox; released on drop.
#[derive(Debug)]
pub struct SandboxLease {
    activity: Arc<SandboxActivity>,
    key: SandboxKey,
    generation: u64,
}

impl SandboxLease {
    /// The sandbox.
    pub fn key(&self) -> &SandboxKey {
        &self.key
    }

    /// The sandbox's removal generation when the lease was taken.
    pub fn generation(&self) -> u64 {
        self.generation
    }
}

impl Drop for SandboxLease {
    fn drop(&mut self) {
        self.activity.with(|slots| {
            if let Some(slot) = slots.get_mut(&self.key) {
                slot.leases = slot.leases.saturating_sub(1);
                if slot.idle() {
                    slots.remove(&self.key);
                }
            }
        });
        self.activity.changed.notify_waiters();
    }
}

/// A removal in progress; dropping it lets leases through again and moves
/// the sandbox's generation on.
#[derive(Debug)]
pub struct RemovalGuard {
    activity: Arc<SandboxActivity>,
    key: SandboxKey,
}

impl Drop for RemovalGuard {
    fn drop(&mut self) {
        self.activity.with(|slots| {
            let slot = slots.entry(self.key.clone()).or_default();
            slot.removing = false;
            slot.generation = slot.generation.wrapping_add(1);
        });
        self.activity.changed.notify_waiters();
    }
}

#[cfg(test)]
#[path = "activity_tests.rs"]
mod tests;
