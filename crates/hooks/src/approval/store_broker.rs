//! The broker implementation, generic over where approvals are kept.

use std::collections::HashMap;
#[cfg(feature = "sqlite")]
use std::path::Path;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use async_trait::async_trait;
use talon_tool_catalog::CancellationToken;
use tokio::sync::{broadcast, oneshot};

use crate::Result;
#[cfg(feature = "postgres")]
use crate::approval::PostgresGrantStore;
#[cfg(feature = "sqlite")]
use crate::approval::SqliteGrantStore;
use crate::approval::{
    ApprovalBinding, ApprovalBroker, ApprovalDecision, ApprovalEvent, ApprovalRequest,
    ApprovalResolution, ApprovalSeverity, GrantStore, MemoryGrantStore, ResolveOutcome,
};

/// How many events a slow subscriber may fall behind before it misses some.
pub(crate) const EVENT_CAPACITY: usize = 1024;

/// How often a waiting request reads a [shared](GrantStore::is_shared)
/// store for a decision another gateway handed in: a decision made
/// elsewhere reaches the waiter within this bound (plus one query).
pub const SHARED_POLL_INTERVAL: Duration = Duration::from_millis(100);

/// The approval broker: the logic of asking (grants, waiting, timeouts,
/// cancellation, events), once, over a [`GrantStore`] that keeps the
/// pending requests, the `allow-always` grants and the decision audit.
///
/// The broker itself holds only the wake-up channels of the requests raised
/// here; which request is pending and how it ended is the store's. With a
/// [shared](GrantStore::is_shared) store a request raised here can be
/// listed and resolved by another gateway on the same store, and the
/// waiter learns of that decision by polling the store every
/// [`SHARED_POLL_INTERVAL`].
#[derive(Debug)]
pub struct Broker<S> {
    store: S,
    waiters: Mutex<HashMap<String, oneshot::Sender<ApprovalDecision>>>,
    /// Requests raised by other gateways on a shared store that this
    /// broker has announced ([`Broker::sync_shared`]), by id.
    announced: Mutex<HashMap<String, ApprovalRequest>>,
    events: broadcast::Sender<ApprovalEvent>,
}

/// A broker whose grants last as long as the process.
pub type MemoryApprovalBroker = Broker<MemoryGrantStore>;

/// A broker whose pending requests, grants and decisions are shared by a
/// fleet of gateways on one PostgreSQL database.
#[cfg(feature = "postgres")]
pub type PostgresApprovalBroker = Broker<PostgresGrantStore>;

/// A broker over a store chosen at run time (SQLite, or a fleet's
/// PostgreSQL): what a gateway holds when the engine is configuration.
pub type DynApprovalBroker = Broker<Arc<dyn GrantStore>>;

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
            waiters: Mutex::new(HashMap::new()),
            announced: Mutex::new(HashMap::new()),
            events,
        }
    }

    /// The grant store (to list or revoke grants).
    pub fn store(&self) -> &S {
        &self.store
    }

    /// The wake-up channels of the requests raised here; a poisoned lock is
    /// recovered, since no code panics while holding it.
    fn waiters(&self) -> MutexGuard<'_, HashMap<String, oneshot::Sender<ApprovalDecision>>> {
        self.waiters
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Hand in a human's decision, with the store's error as it is: the
    /// store decides whether it applies (first decision wins), and the
    /// waiter of a request raised here is woken at once. An error means
    /// nothing was decided.
    pub fn try_resolve(
        &self,
        approval_id: &str,
        decision: ApprovalDecision,
        binding: Option<&ApprovalBinding>,
    ) -> Result<ResolveOutcome> {
        let outcome = self.store.decide(approval_id, decision, binding)?;
        if outcome == ResolveOutcome::Applied
            && let Some(waiter) = self.waiters().remove(approval_id)
        {
            // A waiter that is gone reads the decision from the store.
            let _ = waiter.send(decision);
        }
        Ok(outcome)
    }

    /// The requests waiting for a human, oldest first, with the store's
    /// error as it is (with a shared store, every gateway's requests).
    pub fn try_pending(&self) -> Result<Vec<ApprovalRequest>> {
        self.store.pending()
    }

    /// With a shared store: announce to this broker's subscribers the
    /// requests other gateways raised ([`ApprovalEvent::Requested`]) and
    /// how those ended ([`ApprovalEvent::Resolved`]) since the last call,
    /// so a client of this gateway hears of every request it could
    /// resolve. Requests raised here are announced by
    /// [`ApprovalBroker::request`] as always. Does nothing on a store that
    /// is not shared. An error leaves the announced set as it was (the next
    /// call catches up).
    pub fn sync_shared(&self) -> Result<()> {
        if !self.store.is_shared() {
            return Ok(());
        }
        let pending = self.store.pending()?;
        let mut fresh = Vec::new();
        {
            let waiters = self.waiters();
            let announced = self.announced();
            for request in &pending {
                if !waiters.contains_key(&request.id) && !announced.contains_key(&request.id) {
                    fresh.push(request.clone());
                }
            }
        }
        let gone: Vec<ApprovalRequest> = self
            .announced()
            .values()
            .filter(|r| !pending.iter().any(|p| p.id == r.id))
            .cloned()
            .collect();
        let mut ended = Vec::with_capacity(gone.len());
        for request in gone {
            // No decision stored (the row was pruned): it is no longer
            // waiting, and nothing here ran it.
            let decision = self
                .store
                .decision(&request.id)?
                .unwrap_or(ApprovalDecision::Cancelled);
            ended.push((request, decision));
        }
        let mut announced = self.announced();
        for (request, decision) in ended {
            announced.remove(&request.id);
            self.emit(ApprovalEvent::Resolved {
                id: request.id,
                call_id: request.call_id,
                decision,
            });
        }
        for request in fresh {
            announced.insert(request.id.clone(), request.clone());
            self.emit(ApprovalEvent::Requested(request));
        }
        Ok(())
    }

    /// Call [`Broker::sync_shared`] every [`SHARED_POLL_INTERVAL`] until
    /// `stop` fires (a failure is logged and retried at the next tick).
    /// Returns at once for a store that is not shared. A gateway on a
    /// shared store runs this on a task of its own.
    pub async fn follow_shared(&self, stop: &CancellationToken) {
        if !self.store.is_shared() {
            return;
        }
        let mut tick = tokio::time::interval(SHARED_POLL_INTERVAL);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                () = stop.cancelled() => return,
                _ = tick.tick() => {
                    if let Err(error) = self.sync_shared() {
                        tracing::warn!(%error, "cannot follow the fleet's pending approvals");
                    }
                }
            }
        }
    }

    /// The requests of other gateways announced here; a poisoned lock is
    /// recovered, since no code panics while holding it.
    fn announced(&self) -> MutexGuard<'_, HashMap<String, ApprovalRequest>> {
        self.announced
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

#[cfg(feature = "postgres")]
impl Broker<PostgresGrantStore> {
    /// A broker over the fleet's approval store on `pool`, waiting for
    /// requests as member `member_id` ([`PostgresGrantStore::open`]).
    pub fn open_postgres(pool: &talon_state::PgPool, member_id: impl Into<String>) -> Result<Self> {
        Ok(Broker::new(PostgresGrantStore::open(pool, member_id)?))
    }
}

impl<S: GrantStore + 'static> Broker<S> {
    /// This broker with its store behind a trait object, for a holder that
    /// picks the engine at run time ([`DynApprovalBroker`]).
    pub fn into_dyn(self) -> DynApprovalBroker {
        Broker {
            store: Arc::new(self.store) as Arc<dyn GrantStore>,
            waiters: self.waiters,
            announced: self.announced,
            events: self.events,
        }
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
        {
            let mut waiters = self.waiters();
            if waiters.contains_key(&request.id) {
                drop(waiters);
                tracing::warn!(approval_id = %request.id, "approval id reused; the request is cancelled");
                return ApprovalResolution::decided(ApprovalDecision::Cancelled);
            }
            // Registered before the store lists the request, so a decision
            // handed in here at once finds its waiter.
            waiters.insert(request.id.clone(), sender);
        }
        match self.store.add_pending(&request) {
            Ok(true) => {}
            Ok(false) => {
                self.waiters().remove(&request.id);
                tracing::warn!(approval_id = %request.id, "approval id reused; the request is cancelled");
                return ApprovalResolution::decided(ApprovalDecision::Cancelled);
            }
            Err(error) => {
                // Fail closed: a request that could not be made durable (or
                // shared) is not put to a human. Should the store have kept
                // it after all, it is ended as denied there too.
                self.waiters().remove(&request.id);
                tracing::warn!(approval_id = %request.id, %error, "cannot record a pending approval; the call is denied");
                let _ = self.store.finish(&request.id, ApprovalDecision::Deny);
                self.record(&request, ApprovalDecision::Deny);
                return ApprovalResolution::decided(ApprovalDecision::Deny);
            }
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
        let outcome = match self.try_resolve(approval_id, decision, binding) {
            Ok(outcome) => outcome,
            Err(error) => {
                tracing::warn!(
                    approval_id,
                    decision = decision.as_str(),
                    %error,
                    "cannot hand in an approval decision; nothing was decided"
                );
                ResolveOutcome::Unavailable
            }
        };
        tracing::debug!(
            approval_id,
            decision = decision.as_str(),
            outcome = outcome.as_str(),
            "approval decision handed in"
        );
        outcome
    }

    fn pending(&self) -> Vec<ApprovalRequest> {
        self.try_pending().unwrap_or_else(|error| {
            tracing::warn!(%error, "cannot list pending approvals");
            Vec::new()
        })
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
    /// A human's decision arrived (here, or read from a shared store), or
    /// the channel closed (`None`).
    Answer(Option<ApprovalDecision>),
    /// The timeout or the abort token fired first.
    Fallback(ApprovalDecision),
}

impl<S: GrantStore> Waiter<'_, S> {
    /// Wait for a decision, the timeout or the abort, whichever is first.
    /// With a shared store the store is also read every
    /// [`SHARED_POLL_INTERVAL`] for a decision handed in elsewhere; a read
    /// that fails is logged and the wait goes on (the timeout still denies).
    async fn wait(mut self, abort: &CancellationToken) -> ApprovalDecision {
        let timeout = tokio::time::sleep(self.request.timeout());
        tokio::pin!(timeout);
        let shared = self.broker.store.is_shared();
        let mut poll = tokio::time::interval(SHARED_POLL_INTERVAL);
        poll.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let wake = loop {
            tokio::select! {
                biased;
                answer = &mut self.answer => break Wake::Answer(answer.ok()),
                () = abort.cancelled() => break Wake::Fallback(ApprovalDecision::Cancelled),
                () = &mut timeout => break Wake::Fallback(ApprovalDecision::Timeout),
                _ = poll.tick(), if shared => {
                    match self.broker.store.decision(&self.request.id) {
                        Ok(Some(decision)) => break Wake::Answer(Some(decision)),
                        Ok(None) => {}
                        Err(error) => tracing::warn!(
                            approval_id = %self.request.id,
                            %error,
                            "cannot read the approval store for a decision; still waiting"
                        ),
                    }
                }
            }
        };
        match wake {
            Wake::Answer(Some(decision)) => self.settle(Some(decision), decision),
            Wake::Answer(None) => self.settle(None, ApprovalDecision::Cancelled),
            Wake::Fallback(fallback) => self.settle(None, fallback),
        }
    }

    /// Take the final decision and conclude the request. Without an answer
    /// in hand, the store ends the request with `fallback` if it is still
    /// pending; otherwise a human's decision got there first and stands. A
    /// store that cannot be reached gives `fallback` (which denies).
    fn settle(
        &mut self,
        answer: Option<ApprovalDecision>,
        fallback: ApprovalDecision,
    ) -> ApprovalDecision {
        let decision = match answer {
            Some(decision) => decision,
            None => match self.broker.store.finish(&self.request.id, fallback) {
                Ok(decision) => decision,
                Err(error) => {
                    tracing::warn!(
                        approval_id = %self.request.id,
                        %error,
                        fallback = fallback.as_str(),
                        "cannot end the approval in its store; it is denied here"
                    );
                    fallback
                }
            },
        };
        self.broker.waiters().remove(&self.request.id);
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
