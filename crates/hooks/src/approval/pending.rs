//! The broker's table of waiting requests and recently finished ids.

use std::collections::{HashMap, VecDeque};

use tokio::sync::oneshot;

use crate::approval::{ApprovalBinding, ApprovalDecision, ApprovalRequest, ResolveOutcome};

/// How many finished ids are remembered, so a duplicate decision is told
/// apart from one for an id that never existed.
pub(crate) const FINISHED_CAPACITY: usize = 1024;

/// Requests waiting for a human, and how recent requests ended.
#[derive(Debug)]
pub(crate) struct PendingTable {
    next_seq: u64,
    pending: HashMap<String, PendingEntry>,
    finished: HashMap<String, ApprovalDecision>,
    finished_order: VecDeque<String>,
    finished_capacity: usize,
}

/// One waiting request and the channel its decision goes to.
#[derive(Debug)]
struct PendingEntry {
    seq: u64,
    request: ApprovalRequest,
    answer: oneshot::Sender<ApprovalDecision>,
}

impl PendingTable {
    /// An empty table remembering up to `finished_capacity` finished ids.
    pub(crate) fn new(finished_capacity: usize) -> Self {
        PendingTable {
            next_seq: 0,
            pending: HashMap::new(),
            finished: HashMap::new(),
            finished_order: VecDeque::new(),
            finished_capacity: finished_capacity.max(1),
        }
    }

    /// Add a waiting request; `false` (and nothing added) if its id is
    /// already pending or recently finished, since an approval id is
    /// single-use.
    pub(crate) fn insert(
        &mut self,
        request: ApprovalRequest,
        answer: oneshot::Sender<ApprovalDecision>,
    ) -> bool {
        if self.pending.contains_key(&request.id) || self.finished.contains_key(&request.id) {
            return false;
        }
        let seq = self.next_seq;
        self.next_seq += 1;
        self.pending.insert(
            request.id.clone(),
            PendingEntry {
                seq,
                request,
                answer,
            },
        );
        true
    }

    /// Apply a human's decision. On success the request leaves the table
    /// and the decision is sent to its waiter while the caller still holds
    /// the table's lock, so a waiter that finds its entry gone can always
    /// read the decision.
    pub(crate) fn resolve(
        &mut self,
        id: &str,
        decision: ApprovalDecision,
        binding: Option<&ApprovalBinding>,
    ) -> ResolveOutcome {
        let Some(entry) = self.pending.get(id) else {
            return match self.finished.get(id) {
                Some(previous) if previous.is_user_decision() => ResolveOutcome::AlreadyResolved,
                _ => ResolveOutcome::Unknown,
            };
        };
        if let Some(binding) = binding
            && (binding.call_id != entry.request.call_id
                || binding.params_hash != entry.request.params_hash)
        {
            return ResolveOutcome::Stale;
        }
        if !decision.is_user_decision() || !entry.request.allowed_decisions.contains(&decision) {
            return ResolveOutcome::NotAllowed;
        }
        let Some(entry) = self.pending.remove(id) else {
            return ResolveOutcome::Unknown;
        };
        self.remember_finished(id, decision);
        match entry.answer.send(decision) {
            Ok(()) => ResolveOutcome::Applied,
            // The waiter is gone; nothing was decided for a live call.
            Err(_) => ResolveOutcome::Unknown,
        }
    }

    /// End a request without a human (timeout, cancellation). `true` if it
    /// was still pending; `false` if a human's decision got there first.
    pub(crate) fn finish(&mut self, id: &str, decision: ApprovalDecision) -> bool {
        if self.pending.remove(id).is_none() {
            return false;
        }
        self.remember_finished(id, decision);
        true
    }

    /// The waiting requests, oldest first.
    pub(crate) fn list(&self) -> Vec<ApprovalRequest> {
        let mut entries: Vec<&PendingEntry> = self.pending.values().collect();
        entries.sort_by_key(|e| e.seq);
        entries.into_iter().map(|e| e.request.clone()).collect()
    }

    /// Remember how `id` ended, forgetting the oldest id when full.
    fn remember_finished(&mut self, id: &str, decision: ApprovalDecision) {
        if self.finished.insert(id.to_owned(), decision).is_none() {
            self.finished_order.push_back(id.to_owned());
        }
        while self.finished_order.len() > self.finished_capacity {
            if let Some(oldest) = self.finished_order.pop_front() {
                self.finished.remove(&oldest);
            }
        }
    }
}

#[cfg(test)]
#[path = "pending_tests.rs"]
mod tests;
