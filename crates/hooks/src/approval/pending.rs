//! Requests waiting for a human, as a store keeps them: the rules every
//! engine applies ([`refusal`]) and the in-memory ledger the memory and
//! SQLite stores hold them in ([`PendingLedger`]).

use std::collections::{HashMap, VecDeque};

use crate::approval::{ApprovalBinding, ApprovalDecision, ApprovalRequest, ResolveOutcome};

/// How many finished ids are remembered, so a duplicate decision is told
/// apart from one for an id that never existed.
pub(crate) const FINISHED_CAPACITY: usize = 1024;

/// What a store knows of an approval id when a decision for it arrives.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Entry<'a> {
    /// Never issued, or forgotten.
    Missing,
    /// Already ended with this decision.
    Ended(ApprovalDecision),
    /// Waiting for a human.
    Waiting {
        /// The model's tool call id.
        call_id: &'a str,
        /// The hash of the frozen parameters.
        params_hash: &'a str,
        /// The decisions the approver may give.
        allowed: &'a [ApprovalDecision],
    },
}

/// Why `decision` does not end the request in `entry`, or `None` when it
/// does. Every engine answers with this one function, so a late, duplicate,
/// stale or not-allowed decision gets the same [`ResolveOutcome`] whatever
/// keeps the request.
pub(crate) fn refusal(
    entry: Entry<'_>,
    decision: ApprovalDecision,
    binding: Option<&ApprovalBinding>,
) -> Option<ResolveOutcome> {
    match entry {
        Entry::Missing => Some(ResolveOutcome::Unknown),
        Entry::Ended(previous) if previous.is_user_decision() => {
            Some(ResolveOutcome::AlreadyResolved)
        }
        // Timed out or cancelled: the decision is late.
        Entry::Ended(_) => Some(ResolveOutcome::Unknown),
        Entry::Waiting {
            call_id,
            params_hash,
            allowed,
        } => {
            if let Some(binding) = binding
                && (binding.call_id != call_id || binding.params_hash != params_hash)
            {
                return Some(ResolveOutcome::Stale);
            }
            if !decision.is_user_decision() || !allowed.contains(&decision) {
                return Some(ResolveOutcome::NotAllowed);
            }
            None
        }
    }
}

/// Requests waiting for a human and how recent requests ended, in memory
/// (the memory and SQLite stores; one process decides them).
#[derive(Debug)]
pub(crate) struct PendingLedger {
    next_seq: u64,
    pending: HashMap<String, (u64, ApprovalRequest)>,
    finished: HashMap<String, ApprovalDecision>,
    finished_order: VecDeque<String>,
    finished_capacity: usize,
}

impl Default for PendingLedger {
    fn default() -> Self {
        PendingLedger::new(FINISHED_CAPACITY)
    }
}

impl PendingLedger {
    /// An empty ledger remembering up to `finished_capacity` finished ids.
    pub(crate) fn new(finished_capacity: usize) -> Self {
        PendingLedger {
            next_seq: 0,
            pending: HashMap::new(),
            finished: HashMap::new(),
            finished_order: VecDeque::new(),
            finished_capacity: finished_capacity.max(1),
        }
    }

    /// Whether `id` is pending or recently finished (an approval id is
    /// single-use).
    pub(crate) fn knows(&self, id: &str) -> bool {
        self.pending.contains_key(id) || self.finished.contains_key(id)
    }

    /// Add a waiting request; `false` (and nothing added) if its id is
    /// already pending or recently finished.
    pub(crate) fn insert(&mut self, request: &ApprovalRequest) -> bool {
        if self.knows(&request.id) {
            return false;
        }
        let seq = self.next_seq;
        self.next_seq += 1;
        self.pending
            .insert(request.id.clone(), (seq, request.clone()));
        true
    }

    /// Apply a human's decision: the first one that fits ends the request.
    pub(crate) fn decide(
        &mut self,
        id: &str,
        decision: ApprovalDecision,
        binding: Option<&ApprovalBinding>,
    ) -> ResolveOutcome {
        let entry = match (self.pending.get(id), self.finished.get(id)) {
            (Some((_, request)), _) => Entry::Waiting {
                call_id: &request.call_id,
                params_hash: &request.params_hash,
                allowed: &request.allowed_decisions,
            },
            (None, Some(previous)) => Entry::Ended(*previous),
            (None, None) => Entry::Missing,
        };
        if let Some(outcome) = refusal(entry, decision, binding) {
            return outcome;
        }
        self.end(id, decision);
        ResolveOutcome::Applied
    }

    /// End a request without a human (timeout, cancellation): `fallback`
    /// if it was still pending, otherwise the decision that ended it first
    /// (`fallback` for an id this ledger does not know).
    pub(crate) fn finish(&mut self, id: &str, fallback: ApprovalDecision) -> ApprovalDecision {
        if self.pending.contains_key(id) {
            self.end(id, fallback);
            return fallback;
        }
        self.finished.get(id).copied().unwrap_or(fallback)
    }

    /// How `id` ended, if it did (and is still remembered).
    pub(crate) fn decision(&self, id: &str) -> Option<ApprovalDecision> {
        self.finished.get(id).copied()
    }

    /// The waiting requests, oldest first.
    pub(crate) fn list(&self) -> Vec<ApprovalRequest> {
        let mut entries: Vec<&(u64, ApprovalRequest)> = self.pending.values().collect();
        entries.sort_by_key(|(seq, _)| *seq);
        entries.into_iter().map(|(_, r)| r.clone()).collect()
    }

    /// Move `id` from pending to finished with `decision`, forgetting the
    /// oldest finished id when full.
    fn end(&mut self, id: &str, decision: ApprovalDecision) {
        self.pending.remove(id);
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
