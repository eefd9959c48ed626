//! Where `allow-always` grants are remembered, and the in-memory store.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};

use crate::Result;
use crate::approval::pending::PendingLedger;
use crate::approval::{
    ApprovalBinding, ApprovalDecision, ApprovalRequest, GrantKey, ResolveOutcome,
};

/// Where approvals are kept: the requests waiting for a human, the
/// `allow-always` grants and an audit trail of decisions.
///
/// This is the one seam between the broker ([`crate::approval::Broker`],
/// which holds the logic: grants, waiting, timeouts, events) and an
/// engine: memory ([`MemoryGrantStore`]), SQLite
/// ([`crate::approval::SqliteGrantStore`]) or PostgreSQL (a fleet's shared
/// store, cargo feature `postgres`). Every engine gives the same answers:
/// an approval id is single-use, the first decision that fits ends a
/// request and later ones get the same [`ResolveOutcome`] everywhere.
///
/// Implementations are synchronous; the broker calls them between awaits,
/// never while holding a lock of its own. An error is never read as a
/// grant or as an approval: the broker asks a human, or denies.
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

    /// Record how `request` ended (an audit row), once the broker has
    /// concluded it. Stores without an audit trail may do nothing.
    fn record_decision(&self, request: &ApprovalRequest, decision: ApprovalDecision) -> Result<()>;

    /// List `request` as waiting for a human. `Ok(false)`, and nothing
    /// added, when its id is already pending or recently ended (an
    /// approval id is single-use). A durable store writes it before
    /// answering, so a crash leaves a trace that
    /// [`GrantStore::recover_pending`] denies; on an error nothing may be
    /// left pending (the broker denies the call).
    fn add_pending(&self, request: &ApprovalRequest) -> Result<bool>;

    /// A human's decision for the pending request `approval_id`: the first
    /// decision that fits ends it ([`ResolveOutcome::Applied`]); anything
    /// else is refused as [`ResolveOutcome::Unknown`],
    /// [`ResolveOutcome::AlreadyResolved`], [`ResolveOutcome::Stale`] or
    /// [`ResolveOutcome::NotAllowed`] and changes nothing. A shared store
    /// decides this in one statement, so two gateways deciding at once
    /// cannot both apply.
    fn decide(
        &self,
        approval_id: &str,
        decision: ApprovalDecision,
        binding: Option<&ApprovalBinding>,
    ) -> Result<ResolveOutcome>;

    /// End `approval_id` without a human (its timeout or cancellation):
    /// `fallback` if it was still pending, otherwise the decision that
    /// ended it first (a human's, which then stands).
    fn finish(&self, approval_id: &str, fallback: ApprovalDecision) -> Result<ApprovalDecision>;

    /// How `approval_id` ended, if it did: `None` while it is pending (or
    /// for an id the store does not know). A waiter polls this when the
    /// store [is shared](GrantStore::is_shared).
    fn decision(&self, approval_id: &str) -> Result<Option<ApprovalDecision>>;

    /// The requests waiting for a human, oldest first (with a shared store,
    /// those of every gateway).
    fn pending(&self) -> Result<Vec<ApprovalRequest>>;

    /// Whether another process may decide this store's requests (a fleet's
    /// database): a waiting request then polls
    /// [`GrantStore::decision`] as well as waiting for a local decision.
    fn is_shared(&self) -> bool {
        false
    }

    /// At start: end as `deny` every request left waiting by a gateway that
    /// is gone (this process before a crash, or with a shared store a fleet
    /// member that is no longer live), with an audit row each, and return
    /// their ids. Nothing is ever approved by a recovery. Stores without
    /// durable state have nothing to recover.
    fn recover_pending(&self) -> Result<Vec<String>> {
        Ok(Vec::new())
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

    fn list(&self) -> Result<Vec<GrantKey>> {
        (**self).list()
    }

    fn record_decision(&self, request: &ApprovalRequest, decision: ApprovalDecision) -> Result<()> {
        (**self).record_decision(request, decision)
    }

    fn add_pending(&self, request: &ApprovalRequest) -> Result<bool> {
        (**self).add_pending(request)
    }

    fn decide(
        &self,
        approval_id: &str,
        decision: ApprovalDecision,
        binding: Option<&ApprovalBinding>,
    ) -> Result<ResolveOutcome> {
        (**self).decide(approval_id, decision, binding)
    }

    fn finish(&self, approval_id: &str, fallback: ApprovalDecision) -> Result<ApprovalDecision> {
        (**self).finish(approval_id, fallback)
    }

    fn decision(&self, approval_id: &str) -> Result<Option<ApprovalDecision>> {
        (**self).decision(approval_id)
    }

    fn pending(&self) -> Result<Vec<ApprovalRequest>> {
        (**self).pending()
    }

    fn is_shared(&self) -> bool {
        (**self).is_shared()
    }

    fn recover_pending(&self) -> Result<Vec<String>> {
        (**self).recover_pending()
    }
}

/// Grants and pending requests kept in memory; they are gone when the
/// process exits. Decisions are not recorded.
#[derive(Debug, Default)]
pub struct MemoryGrantStore {
    inner: Mutex<MemoryGrants>,
    pending: Mutex<PendingLedger>,
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

    /// The pending ledger, recovered from poisoning the same way.
    fn ledger(&self) -> MutexGuard<'_, PendingLedger> {
        lock_ledger(&self.pending)
    }
}

/// Lock a pending ledger; a poisoned lock is recovered, since every update
/// of the ledger leaves it consistent.
pub(crate) fn lock_ledger(ledger: &Mutex<PendingLedger>) -> MutexGuard<'_, PendingLedger> {
    ledger
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
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

    fn add_pending(&self, request: &ApprovalRequest) -> Result<bool> {
        Ok(self.ledger().insert(request))
    }

    fn decide(
        &self,
        approval_id: &str,
        decision: ApprovalDecision,
        binding: Option<&ApprovalBinding>,
    ) -> Result<ResolveOutcome> {
        Ok(self.ledger().decide(approval_id, decision, binding))
    }

    fn finish(&self, approval_id: &str, fallback: ApprovalDecision) -> Result<ApprovalDecision> {
        Ok(self.ledger().finish(approval_id, fallback))
    }

    fn decision(&self, approval_id: &str) -> Result<Option<ApprovalDecision>> {
        Ok(self.ledger().decision(approval_id))
    }

    fn pending(&self) -> Result<Vec<ApprovalRequest>> {
        Ok(self.ledger().list())
    }
}

#[cfg(test)]
#[path = "grants_tests.rs"]
mod tests;
