//! The broker contract: ask a human, wait for the answer, and tell anyone
//! listening what happened.

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use talon_tool_catalog::CancellationToken;
use tokio::sync::broadcast;

use crate::approval::{ApprovalBinding, ApprovalDecision, ApprovalRequest};

/// What the broker tells its subscribers (the gateway turns these into
/// `approval.requested` / `approval.resolved` notifications).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[allow(
    clippy::large_enum_variant,
    reason = "events are rare, and an unboxed request keeps matching plain"
)]
#[serde(
    tag = "type",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
pub enum ApprovalEvent {
    /// A request is waiting for a human.
    Requested(ApprovalRequest),
    /// A request ended (by a human, a timeout or a cancellation).
    Resolved {
        /// The approval id.
        id: String,
        /// The model's tool call id.
        call_id: String,
        /// How it ended.
        decision: ApprovalDecision,
    },
}

impl ApprovalEvent {
    /// The notification method the gateway uses for this event.
    pub fn method(&self) -> &'static str {
        match self {
            ApprovalEvent::Requested(_) => "approval.requested",
            ApprovalEvent::Resolved { .. } => "approval.resolved",
        }
    }

    /// The approval id the event is about.
    pub fn approval_id(&self) -> &str {
        match self {
            ApprovalEvent::Requested(request) => &request.id,
            ApprovalEvent::Resolved { id, .. } => id,
        }
    }
}

/// What happened to a decision handed to [`ApprovalBroker::resolve`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ResolveOutcome {
    /// The decision ended the pending request.
    Applied,
    /// No such pending request: the id was never issued, already timed out
    /// or was cancelled (a late decision). Ignored.
    Unknown,
    /// The request was already decided by an earlier resolve (a duplicate).
    /// Ignored.
    AlreadyResolved,
    /// The decision was bound to a different call id or parameters hash
    /// than the pending request. Ignored; the request keeps waiting.
    Stale,
    /// The request does not allow this decision, or it is `timeout` /
    /// `cancelled`, which only the broker may produce. Ignored; the request
    /// keeps waiting.
    NotAllowed,
    /// The store that holds the pending requests could not be reached (a
    /// fleet's database is down). Nothing was decided; the request keeps
    /// waiting (and denies at its timeout), so the decision may be handed
    /// in again.
    Unavailable,
}

impl ResolveOutcome {
    /// The wire name (`applied`, `unknown`, `already-resolved`, `stale`,
    /// `not-allowed`, `unavailable`).
    pub fn as_str(self) -> &'static str {
        match self {
            ResolveOutcome::Applied => "applied",
            ResolveOutcome::Unknown => "unknown",
            ResolveOutcome::AlreadyResolved => "already-resolved",
            ResolveOutcome::Stale => "stale",
            ResolveOutcome::NotAllowed => "not-allowed",
            ResolveOutcome::Unavailable => "unavailable",
        }
    }
}

/// How a request ended, as the gate sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ApprovalResolution {
    /// The final decision; only `allow-once` and `allow-always` let the call
    /// run.
    pub decision: ApprovalDecision,
    /// `true` when the answer came from a remembered `allow-always` grant
    /// and nobody was asked. Always `false` for a `critical` request.
    pub remembered: bool,
}

impl ApprovalResolution {
    /// A decision that was not remembered.
    pub fn decided(decision: ApprovalDecision) -> Self {
        ApprovalResolution {
            decision,
            remembered: false,
        }
    }

    /// Whether the call may run.
    pub fn allows(&self) -> bool {
        self.decision.allows()
    }
}

/// Asks a human whether a tool call may run.
///
/// An approval is single-use: it is bound to one call id and one hash of the
/// frozen parameters, it ends exactly once, and anything that does not end
/// it (a late, duplicate, stale or not-allowed decision) is ignored. An
/// unanswered request times out, and a timeout denies.
#[async_trait]
pub trait ApprovalBroker: Send + Sync {
    /// Ask, and wait for the answer.
    ///
    /// A matching `allow-always` grant answers at once (`remembered`).
    /// Otherwise the request is listed as pending and announced, then ends
    /// with the first of: a resolve, the timeout (`timeout`) or the abort
    /// signal (`cancelled`). An `allow-always` answer is remembered for the
    /// request's scope and question (its grant key, with the fingerprint
    /// of severity, title and description). A `critical` request is always
    /// asked: a grant never answers it, and `allow-always` on it allows the
    /// one call without remembering anything.
    async fn request(
        &self,
        request: ApprovalRequest,
        abort: &CancellationToken,
    ) -> ApprovalResolution;

    /// Hand in a human's decision for the pending request `approval_id`.
    /// With a `binding`, the decision only applies if the request has the
    /// same call id and parameters hash.
    fn resolve(
        &self,
        approval_id: &str,
        decision: ApprovalDecision,
        binding: Option<&ApprovalBinding>,
    ) -> ResolveOutcome;

    /// The requests waiting for a human, oldest first. With a shared store
    /// these are the whole fleet's; a store that cannot be read gives an
    /// empty list (and a warning).
    fn pending(&self) -> Vec<ApprovalRequest>;

    /// Listen to requests and resolutions from now on.
    fn subscribe(&self) -> broadcast::Receiver<ApprovalEvent>;
}

#[cfg(test)]
#[path = "broker_tests.rs"]
mod tests;
