//! Approvals: the broker that asks a human, and the stores that remember
//! `allow-always` grants.
//!
//! A `before_tool_call` handler that returns `requireApproval` makes the
//! gate build an [`ApprovalRequest`] (bound to the call id and the hash of
//! the frozen parameters) and hand it to an [`ApprovalBroker`]. The broker
//! answers at once from a remembered `allow-always` grant, or lists the
//! request as pending, announces it ([`ApprovalEvent::Requested`]) and
//! waits for [`ApprovalBroker::resolve`], the timeout or the abort token.
//! Unanswered requests deny. Every request ends exactly once; late,
//! duplicate, stale and not-allowed decisions are ignored and reported as a
//! [`ResolveOutcome`].
//!
//! [`Broker`] is the one implementation, generic over a [`GrantStore`]: the
//! broker holds the logic (grants, waiting, timeouts, cancellation,
//! events) once, and the store keeps the pending requests, the grants and
//! the decision audit. The engines give the same answers (the store and
//! broker tests run on each):
//!
//! - [`MemoryApprovalBroker`] keeps everything in memory and forgets it on
//!   exit.
//! - [`SqliteApprovalBroker`] keeps grants and the audit in
//!   `<state_dir>/approvals.sqlite` (cargo feature `sqlite`, on by
//!   default); pending requests wait in memory, each with a trace row that
//!   [`GrantStore::recover_pending`] denies after a crash.
//! - `PostgresApprovalBroker` (cargo feature `postgres`, off by default) is
//!   a fleet's: several gateways on one PostgreSQL database
//!   (`talon_state::PgPool`) share pending requests, grants and the audit.
//!   A request raised on one gateway is listed by every live member and can
//!   be resolved on any; the first decision wins in SQL, and the waiter on
//!   the raising gateway reads the store every [`SHARED_POLL_INTERVAL`], so
//!   it learns of a decision made elsewhere within that bound. A timeout or
//!   abort still ends the request where it was raised (and denies).
//!   [`Broker::follow_shared`] announces other gateways' requests (and how
//!   they ended) to this broker's subscribers;
//!   recovery denies only what members that are gone left waiting. A lost
//!   database never approves: a new request is denied, a waiting one times
//!   out, a decision answers [`ResolveOutcome::Unavailable`]
//!   ([`Broker::try_resolve`] and [`Broker::try_pending`] give the typed
//!   error, [`crate::Error::is_unavailable`]).
//!
//! [`DynApprovalBroker`] ([`Broker::into_dyn`]) holds either, for a host
//! that picks the engine from its configuration.
//!
//! A grant is bound to the question the approver answered (the
//! [fingerprint](ApprovalRequest::fingerprint) of its severity, title and
//! description), and a `critical` request is never remembered nor answered
//! from a grant. The approver sees the parameters
//! ([`ApprovalRequest::params_preview`]) and an exec command
//! ([`ApprovalRequest::command_display`]) whole, never cut: a request that
//! would show more than [`APPROVAL_DISPLAY_MAX_BYTES`] is refused instead.
//! Control, ANSI-escape, bidi and zero-width characters are written out
//! visibly by one renderer ([`display_command`]; [`display_json`] for JSON
//! text); hook-supplied titles and descriptions go through
//! [`display_text`] before they are printed.
//! Timeouts are clamped to [`MAX_APPROVAL_TIMEOUT`].

pub use self::broker::{ApprovalBroker, ApprovalEvent, ApprovalResolution, ResolveOutcome};
pub use self::decision::{ApprovalDecision, ApprovalScope, ApprovalSeverity};
pub(crate) use self::display::is_unsafe_char;
pub use self::display::{display_command, display_json, display_text};
pub use self::grants::{GrantStore, MemoryGrantStore};
#[cfg(feature = "postgres")]
pub use self::postgres::PostgresGrantStore;
pub use self::request::{
    APPROVAL_DISPLAY_MAX_BYTES, ApprovalBinding, ApprovalRequest, GrantKey, MAX_APPROVAL_TIMEOUT,
};
pub(crate) use self::request::{new_approval_id, now_ms};
#[cfg(feature = "sqlite")]
pub use self::sqlite::SqliteGrantStore;
#[cfg(feature = "postgres")]
pub use self::store_broker::PostgresApprovalBroker;
#[cfg(feature = "sqlite")]
pub use self::store_broker::SqliteApprovalBroker;
pub use self::store_broker::{
    Broker, DynApprovalBroker, MemoryApprovalBroker, SHARED_POLL_INTERVAL,
};

mod broker;
mod decision;
mod display;
mod grants;
mod pending;
#[cfg(feature = "postgres")]
mod postgres;
mod request;
#[cfg(feature = "sqlite")]
mod sqlite;
mod store_broker;
#[cfg(test)]
mod store_tests;
#[cfg(test)]
mod test_engines;
