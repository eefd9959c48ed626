//! The broker implementation, generic over where grants are remembered.

#[cfg(feature = "sqlite")]
use std::path::Path;
use std::sync::{Mutex, MutexGuard};

use async_trait::async_trait;
use talon_tool_catalog::CancellationToken;
use tokio::sync::{broadcast, oneshot};

#[cfg(feature = "sqlite")]
use crate::Result;
#[cfg(feature = "sqlite")]
use crate::approval::SqliteGrantStore;
use crate::approval::pending::{FINISHED_CAPACITY, PendingTable};
use crate::approval::{
    ApprovalBinding, ApprovalBroker, ApprovalDecision, ApprovalEvent, ApprovalRequest,
    ApprovalResolution, ApprovalSeverity, GrantStore, MemoryGrantStore, ResolveOutcome,
};

/// How many events a slow subscriber may fall behind before it misses some.
pub(crate) const EVENT_CAPACITY: usize = 1024;

/// The approval broker: pending requests in memory, `allow-always` grants
/// and the decision audit in a [`GrantStore`].
#[derive(Debug)]
pub struct Broker<S> {
    store: S,
    table: Mutex<PendingTable>,
    events: broadcast::Sender<ApprovalEvent>,
}

/// A broker whose grants last as long as the process.
pub type MemoryApprovalBroker = Broker<MemoryGrantStore>;

/// A broker whose grants and decisions are kept in SQLite, so an
/// `allow-always` survives a restart.
#[cfg(feature = "sqlite")]
pub type SqliteApprovalBroker = Broker<SqliteGrantStore>;

impl<S: GrantStore> Broker<S> {
    /// A broker remembering grants in `store`.
    pub fn new(store: S) -> Self {
        let (events, _) = broadcast::channel(EVENT_CAPACITY);
        Broker {
            store,
            table: Mutex::new(PendingTable::new(FINISHED_CAPACITY)),
            events,
        }
    }

    /// The grant store (to list or revoke grants).
    pub fn store(&self) -> &S {
        &self.store
    }

    /// The pending table; a poisoned lock is recovered, since no code
    /// panics while holding it and every update leaves it consistent.
    fn table(&self) -> MutexGuard<'_, PendingTable> {
        self.table
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Whether a remembered `allow-always` grant answers `request`.
    ///
    /// Never for a `critical` request or a key that is not rememberable
    /// ([`ApprovalRequest::is_rememberable`]), whatever the store holds. A
    /// store error is logged and read as "no grant", so a human is asked.
    /// Code that checks for a grant before asking should call this rather
    /// than the store, so it agrees with [`ApprovalBroker::request`].
    pub fn is_remembered(&self, request: &ApprovalRequest) -> bool {
        if !request.is_rememberable() {
            return false;
        }
        match self.store.is_granted(&request.grant_key()) {
            Ok(granted) => granted,
            Err(error) => {
                tracing::warn!(
                    approval_id = %request.id,
                    %error,
                    "approval grant lookup failed; asking a human instead"
                );
                false
            }
        }
    }

    /// Write the audit row for `request`, logging a failure.
    fn record(&self, request: &ApprovalRequest, decision: ApprovalDecision) {
        if let Err(error) = self.store.record_decision(request, decision) {
            tracing::warn!(
                approval_id = %request.id,
                decision = decision.as_str(),
                %error,
                "cannot record an approval decision"
            );
        }
    }

    /// Send an event; having no subscriber is not an error.
    fn emit(&self, event: ApprovalEvent) {
        let _ = self.events.send(event);
    }

    /// Everything that follows a final decision for a request that was
    /// pending: remember an `allow-always` (unless the request is
    /// `critical` or its key is not rememberable: then the call is allowed
    /// once and nothing is stored), record the decision and announce it.
    fn conclude(&self, request: &ApprovalRequest, decision: ApprovalDecision) {
        if decision == ApprovalDecision::AllowAlways {
            let key = request.grant_key();
            if request.command.is_some() {
                // Exec approvals keep their memory in the allowlist file
                // (the gate's resolution callback writes it).
            } else if request.severity == ApprovalSeverity::Critical {
                tracing::info!(
                    approval_id = %request.id,
                    tool = %request.tool_name,
                    plugin = %request.plugin_id,
                    "allow-always on a critical request is not remembered; \
                     this call is allowed once"
                );
            } else if !key.is_rememberable() {
                tracing::warn!(
                    approval_id = %request.id,
                    scope = request.scope.as_str(),
                    "allow-always without a session key or agent id is not remembered; \
                     this call is allowed once"
                );
            } else if let Err(error) = self.store.grant(&key, &request.id) {
                tracing::warn!(
                    approval_id = %request.id,
                    %error,
                    "cannot store an allow-always grant; this call is allowed once"
                );
            }
        }
        self.record(request, decision);
        tracing::info!(
            approval_id = %request.id,
            call_id = %request.call_id,
            tool = %request.tool_name,
            plugin = %request.plugin_id,
            decision = decision.as_str(),
            "approval resolved"
        );
        self.emit(ApprovalEvent::Resolved {
            id: request.id.clone(),
            call_id: request.call_id.clone(),
            decision,
        });
    }
}

impl Broker<MemoryGrantStore> {
    /// A broker with an empty in-memory grant store.
    pub fn in_memory() -> Self {
        Broker::new(MemoryGrantStore::new())
    }
}

impl Default for Broker<MemoryGrantStore> {
    fn default() -> Self {
        Broker::in_memory()
    }
}

#[cfg(feature = "sqlite")]
impl Broker<SqliteGrantStore> {
    /// A broker over the SQLite grant store at `path`.
    pub fn open(path: &Path) -> Result<Self> {
        Ok(Broker::new(SqliteGrantStore::open(path)?))
    }

    /// A broker over `<state_dir>/approvals.sqlite`.
    pub fn open_in_state_dir(state_dir: &Path) -> Result<Self> {
        Ok(Broker::new(SqliteGrantStore::open_in_state_dir(state_dir)?))
    }
}

#[async_trait]
impl<S: GrantStore> ApprovalBroker for Broker<S> {
    async fn request(
        &self,
        request: ApprovalRequest,
        abort: &CancellationToken,
    ) -> ApprovalResolution {
        if abort.is_cancelled() {
            self.record(&request, ApprovalDecision::Cancelled);
            return ApprovalResolution::decided(ApprovalDecision::Cancelled);
        }
        if self.is_remembered(&request) {
            tracing::debug!(approval_id = %request.id, "approval answered by an allow-always grant");
            self.record(&request, ApprovalDecision::AllowAlways);
            return ApprovalResolution {
                decision: ApprovalDecision::AllowAlways,
                remembered: true,
            };
        }
        let (sender, answer) = oneshot::channel();
        if !self.table().insert(request.clone(), sender) {
            tracing::warn!(approval_id = %request.id, "approval id reused; the request is cancelled");
            return ApprovalResolution::decided(ApprovalDecision::Cancelled);
        }
        if let Err(error) = self.store.record_pending(&request) {
            // Fail closed: a request that could not be made durable is not
            // put to a human (a crash would leave no trace of it).
            tracing::warn!(approval_id = %request.id, %error, "cannot record a pending approval; the call is denied");
            self.table().finish(&request.id, ApprovalDecision::Deny);
            self.record(&request, ApprovalDecision::Deny);
            return ApprovalResolution::decided(ApprovalDecision::Deny);
        }
        tracing::info!(
            approval_id = %request.id,
            call_id = %request.call_id,
            tool = %request.tool_name,
            plugin = %request.plugin_id,
            timeout_ms = request.timeout_ms,
            "approval requested"
        );
        self.emit(ApprovalEvent::Requested(request.clone()));
        let waiter = Waiter {
            broker: self,
            request,
            answer,
            done: false,
        };
        ApprovalResolution::decided(waiter.wait(abort).await)
    }

    fn resolve(
        &self,
        approval_id: &str,
        decision: ApprovalDecision,
        binding: Option<&ApprovalBinding>,
    ) -> ResolveOutcome {
        let outcome = self.table().resolve(approval_id, decision, binding);
        tracing::debug!(
            approval_id,
            decision = decision.as_str(),
            outcome = outcome.as_str(),
            "approval decision handed in"
        );
        outcome
    }

    fn pending(&self) -> Vec<ApprovalRequest> {
        self.table().list()
    }

    fn subscribe(&self) -> broadcast::Receiver<ApprovalEvent> {
        self.events.subscribe()
    }
}

/// A registered request waiting for its decision. If the waiting future is
/// dropped, the request ends as `cancelled` so it does not linger.
struct Waiter<'a, S: GrantStore> {
    broker: &'a Broker<S>,
    request: ApprovalRequest,
    answer: oneshot::Receiver<ApprovalDecision>,
    done: bool,
}

/// What woke a waiter.
enum Wake {
    /// A human's decision arrived (or the channel closed: `None`).
    Answer(Option<ApprovalDecision>),
    /// The timeout or the abort token fired first.
    Fallback(ApprovalDecision),
}

impl<S: GrantStore> Waiter<'_, S> {
    /// Wait for a decision, the timeout or the abort, whichever is first.
    async fn wait(mut self, abort: &CancellationToken) -> ApprovalDecision {
        let timeout = tokio::time::sleep(self.request.timeout());
        let wake = tokio::select! {
            biased;
            answer = &mut self.answer => Wake::Answer(answer.ok()),
            () = abort.cancelled() => Wake::Fallback(ApprovalDecision::Cancelled),
            () = timeout => Wake::Fallback(ApprovalDecision::Timeout),
        };
        match wake {
            Wake::Answer(Some(decision)) => self.settle(Some(decision), decision),
            Wake::Answer(None) => self.settle(None, ApprovalDecision::Cancelled),
            Wake::Fallback(fallback) => self.settle(None, fallback),
        }
    }

    /// Take the final decision and conclude the request. Without an answer
    /// in hand, the request ends with `fallback` if it is still pending;
    /// otherwise a human's decision got there first and is read from the
    /// channel (it was sent under the table lock, so it is there).
    fn settle(
        &mut self,
        answer: Option<ApprovalDecision>,
        fallback: ApprovalDecision,
    ) -> ApprovalDecision {
        let decision = match answer {
            Some(decision) => decision,
            None => {
                let mut table = self.broker.table();
                if table.finish(&self.request.id, fallback) {
                    fallback
                } else {
                    self.answer.try_recv().unwrap_or(fallback)
                }
            }
        };
        self.done = true;
        self.broker.conclude(&self.request, decision);
        decision
    }
}

impl<S: GrantStore> Drop for Waiter<'_, S> {
    fn drop(&mut self) {
        if !self.done {
            tracing::debug!(approval_id = %self.request.id, "approval wait dropped");
            self.settle(None, ApprovalDecision::Cancelled);
        }
    }
}

#[cfg(test)]
#[path = "store_broker_tests.rs"]
mod tests;
