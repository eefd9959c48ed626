//! Where `allow-always` grants are remembered, and the in-memory store.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};

use crate::Result;
use crate::approval::{ApprovalDecision, ApprovalRequest, GrantKey};

/// Remembers `allow-always` grants and keeps an audit trail of decisions.
///
/// Implementations are synchronous and quick; the broker calls them between
/// awaits, never while holding its own lock. An error is never read as a
/// grant: the broker asks a human instead.
pub trait GrantStore: Send + Sync {
    /// Whether a grant exists for `key`.
    fn is_granted(&self, key: &GrantKey) -> Result<bool>;

    /// Remember a grant for `key`, given by the approval `approval_id`.
    /// Granting an existing key again replaces the approval id.
    fn grant(&self, key: &GrantKey, approval_id: &str) -> Result<()>;

    /// Forget the grant for `key`; `true` if there was one.
    fn revoke(&self, key: &GrantKey) -> Result<bool>;

    /// Every grant, oldest first.
    fn list(&self) -> Result<Vec<GrantKey>>;

    /// Record how `request` ended (an audit row). Stores without an audit
    /// trail may do nothing.
    fn record_decision(&self, request: &ApprovalRequest, decision: ApprovalDecision) -> Result<()>;

    /// Record that `request` is waiting for a human, so a crash leaves a
    /// trace that the next start resolves as denied
    /// ([`crate::approval::SqliteGrantStore::recover_pending`]). The
    /// matching [`GrantStore::record_decision`] clears it. Stores without
    /// durable state may do nothing.
    fn record_pending(&self, request: &ApprovalRequest) -> Result<()> {
        let _ = request;
        Ok(())
    }
}

impl<S: GrantStore + ?Sized> GrantStore for Arc<S> {
    fn is_granted(&self, key: &GrantKey) -> Result<bool> {
        (**self).is_granted(key)
    }

    fn grant(&self, key: &GrantKey, approval_id: &str) -> Result<()> {
        (**self).grant(key, approval_id)
    }

    fn revoke(&self, key: &GrantKey) -> Result<bool> {
        (**self).revoke(key)
    }

    fn record_pending(&self, request: &ApprovalRequest) -> Result<()> {
        (**self).record_pending(request)
    }

    fn list(&self) -> Result<Vec<GrantKey>> {
        (**self).list()
    }

    fn record_decision(&self, request: &ApprovalRequest, decision: ApprovalDecision) -> Result<()> {
        (**self).record_decision(request, decision)
    }
}

/// Grants kept in memory; they are gone when the process exits. Decisions
/// are not recorded.
#[derive(Debug, Default)]
pub struct MemoryGrantStore {
    inner: Mutex<MemoryGrants>,
}

/// The grants with the order they were first given in.
#[derive(Debug, Default)]
struct MemoryGrants {
    next_seq: u64,
    grants: HashMap<GrantKey, MemoryGrant>,
}

/// One remembered grant.
#[derive(Debug)]
struct MemoryGrant {
    seq: u64,
    approval_id: String,
}

impl MemoryGrantStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    /// The approval id that gave the grant for `key`, if any.
    pub fn approval_id(&self, key: &GrantKey) -> Option<String> {
        self.lock().grants.get(key).map(|g| g.approval_id.clone())
    }

    /// The lock; a poisoned lock is recovered, since every update below
    /// leaves the map consistent.
    fn lock(&self) -> MutexGuard<'_, MemoryGrants> {
        self.inner
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

impl GrantStore for MemoryGrantStore {
    fn is_granted(&self, key: &GrantKey) -> Result<bool> {
        Ok(self.lock().grants.contains_key(key))
    }

    fn grant(&self, key: &GrantKey, approval_id: &str) -> Result<()> {
        let mut inner = self.lock();
        let seq = inner.next_seq;
        inner.next_seq += 1;
        inner
            .grants
            .entry(key.clone())
            .and_modify(|g| g.approval_id = approval_id.to_owned())
            .or_insert_with(|| MemoryGrant {
                seq,
                approval_id: approval_id.to_owned(),
            });
        Ok(())
    }

    fn revoke(&self, key: &GrantKey) -> Result<bool> {
        Ok(self.lock().grants.remove(key).is_some())
    }

    fn list(&self) -> Result<Vec<GrantKey>> {
        let inner = self.lock();
        let mut grants: Vec<(&GrantKey, u64)> =
            inner.grants.iter().map(|(k, g)| (k, g.seq)).collect();
        grants.sort_by_key(|(_, seq)| *seq);
        Ok(grants.into_iter().map(|(k, _)| k.clone()).collect())
    }

    fn record_decision(
        &self,
        _request: &ApprovalRequest,
        _decision: ApprovalDecision,
    ) -> Result<()> {
        Ok(())
    }
}

#[cfg(test)]
#[path = "grants_tests.rs"]
mod tests;
