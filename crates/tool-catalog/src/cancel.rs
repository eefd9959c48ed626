//! Cancellation: a tool receives a [`CancellationToken`]; the side that
//! cancels a run (a user abort, a timeout, shutdown, the loop detector)
//! holds a [`Canceller`], which records why next to the token.
//!
//! Each call gets a [`child_token`](CancellationToken::child_token) of its
//! run's token. A child detaches from its parent when dropped and a
//! `cancelled()` future deregisters when dropped, so a run that lives for
//! a session keeps nothing per finished call.

use std::sync::{Arc, OnceLock};

use tokio_util::sync::CancellationToken;

use crate::error::ToolError;

/// The reason a tool reports when it sees its token fire. The tool cannot
/// know why; the runtime, which holds the run's [`Canceller`], replaces it
/// with the recorded reason.
pub const ABORTED_REASON: &str = "aborted";

/// Check points for tools: `abort.check()?`.
pub trait CancelExt {
    /// `Err` (an aborted [`ToolError`]) once the token fired.
    fn check(&self) -> Result<(), ToolError>;

    /// The error a tool returns after it saw the token fire (for example in
    /// a `select!` arm on `cancelled()`).
    fn abort_error(&self) -> ToolError;
}

impl CancelExt for CancellationToken {
    fn check(&self) -> Result<(), ToolError> {
        if self.is_cancelled() {
            Err(self.abort_error())
        } else {
            Ok(())
        }
    }

    fn abort_error(&self) -> ToolError {
        ToolError::aborted(ABORTED_REASON)
    }
}

/// The cancelling side of a run: its token and the reason given to the
/// first [`cancel`](Canceller::cancel). Cheap to clone; clones share both.
#[derive(Debug, Clone, Default)]
pub struct Canceller {
    token: CancellationToken,
    reason: Arc<OnceLock<String>>,
}

impl Canceller {
    /// A run that has not been cancelled.
    pub fn new() -> Self {
        Self::default()
    }

    /// Cancel the run (idempotent: the first reason is kept). The reason is
    /// recorded before the token fires, so whoever sees the token cancelled
    /// also sees the reason.
    pub fn cancel(&self, reason: impl Into<String>) {
        let _ = self.reason.set(reason.into());
        self.token.cancel();
    }

    /// Whether the run was cancelled.
    pub fn is_cancelled(&self) -> bool {
        self.token.is_cancelled()
    }

    /// The reason given to the first [`cancel`](Canceller::cancel); `None`
    /// when the run was not cancelled through this `Canceller`.
    pub fn reason(&self) -> Option<&str> {
        self.reason.get().map(String::as_str)
    }

    /// The run's token (for waits that belong to the run, such as an
    /// approval request).
    pub fn token(&self) -> &CancellationToken {
        &self.token
    }

    /// A token for one call: it fires with the run's, and detaches from it
    /// when dropped.
    pub fn child_token(&self) -> CancellationToken {
        self.token.child_token()
    }

    /// The aborted error for this run: the recorded reason, or
    /// [`ABORTED_REASON`].
    pub fn abort_error(&self) -> ToolError {
        ToolError::aborted(self.reason().unwrap_or(ABORTED_REASON))
    }
}

impl From<CancellationToken> for Canceller {
    /// A canceller over an existing token (for example a call's, when a
    /// tool runs hooks that take a run context); no reason recorded yet.
    fn from(token: CancellationToken) -> Self {
        Canceller {
            token,
            reason: Arc::default(),
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn the_first_reason_is_kept_and_reaches_the_error() {
        let c = Canceller::new();
        let call = c.child_token();
        assert!(call.check().is_ok());
        assert_eq!(c.reason(), None);
        c.cancel("user pressed stop");
        c.cancel("shutdown");
        assert!(c.is_cancelled() && call.is_cancelled());
        assert_eq!(c.reason(), Some("user pressed stop"));
        assert_eq!(c.abort_error(), ToolError::aborted("user pressed stop"));
        assert_eq!(call.check(), Err(ToolError::aborted(ABORTED_REASON)));
    }

    #[test]
    fn a_token_cancelled_directly_gives_the_generic_reason() {
        let c = Canceller::new();
        c.token().cancel();
        assert_eq!(c.abort_error(), ToolError::aborted(ABORTED_REASON));
    }

    #[test]
    fn cancelling_a_call_leaves_the_run_alone() {
        let c = Canceller::new();
        let call = c.child_token();
        call.cancel();
        assert!(!c.is_cancelled());
        assert!(c.child_token().check().is_ok());
    }
}
