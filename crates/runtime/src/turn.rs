//! Handing an agent turn to whoever runs the model.
//!
//! Talon runs no model. When a tool needs a turn of an agent to happen (a
//! sub-agent spawned by `sessions_spawn`, a message `sessions_send` puts
//! into another session), it describes the turn as an [`AgentTurn`] and
//! hands it to a [`TurnRunner`]: the gateway's connected WebSocket runners
//! (`runner.subscribe`), or an embedder's own loop implementing the trait.
//!
//! Every hand-off goes through [`run_turn`], which bounds it: the turn
//! ends at its deadline or when its token is cancelled, whatever the
//! runner does, with a typed [`TurnError`] saying which. A runner that
//! never answers therefore costs its caller at most the turn's timeout.
//!
//! ```
//! use std::time::Duration;
//! use talon_runtime::{AgentTurn, TurnError, TurnReply, TurnRunner, run_turn};
//! use talon_tool_catalog::CancellationToken;
//!
//! /// A "model" that answers every turn by echoing its message.
//! struct Echo;
//!
//! #[async_trait::async_trait]
//! impl TurnRunner for Echo {
//!     async fn run_turn(
//!         &self,
//!         turn: &AgentTurn,
//!         _cancel: &CancellationToken,
//!     ) -> Result<TurnReply, TurnError> {
//!         Ok(TurnReply { reply: Some(format!("echo: {}", turn.message)) })
//!     }
//! }
//!
//! # tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap().block_on(async {
//! let turn = AgentTurn::new("run-1", "main", "agent:main:subagent:1", "hello");
//! let reply = run_turn(&Echo, &turn, &CancellationToken::new()).await.unwrap();
//! assert_eq!(reply.reply.as_deref(), Some("echo: hello"));
//! # });
//! ```

use std::time::Duration;

use talon_tool_catalog::CancellationToken;

/// Why a turn was asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TurnTrigger {
    /// A sub-agent's run (`sessions_spawn`).
    #[default]
    Subagent,
    /// A message from another session (`sessions_send`).
    Send,
}

impl TurnTrigger {
    /// The wire spelling (`subagent`, `send`).
    pub fn as_str(self) -> &'static str {
        match self {
            TurnTrigger::Subagent => "subagent",
            TurnTrigger::Send => "send",
        }
    }
}

/// One turn of an agent in a session: run `message` in `session_key` and
/// answer with the reply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentTurn {
    /// The run's id (unique; the ledger task carries it).
    pub run_id: String,
    /// The agent whose turn it is.
    pub agent_id: String,
    /// The session the turn runs in (already open: its tools are decided).
    pub session_key: String,
    /// The session that asked for the turn.
    pub requester_session_key: Option<String>,
    /// What the agent is asked.
    pub message: String,
    /// A label for the run (`sessions_spawn`'s `label`).
    pub label: Option<String>,
    /// A model the requester asked for (the runner decides).
    pub model: Option<String>,
    /// A thinking level the requester asked for (the runner decides).
    pub thinking: Option<String>,
    /// The tools the session offers (for the runner's prompt; the gateway
    /// enforces them whatever the runner does).
    pub tools: Vec<String>,
    /// Why the turn runs.
    pub trigger: TurnTrigger,
    /// The turn's budget: [`run_turn`] ends it at this point.
    pub timeout: Duration,
}

impl AgentTurn {
    /// A sub-agent turn with a 60 s budget and nothing else set.
    pub fn new(
        run_id: impl Into<String>,
        agent_id: impl Into<String>,
        session_key: impl Into<String>,
        message: impl Into<String>,
    ) -> Self {
        AgentTurn {
            run_id: run_id.into(),
            agent_id: agent_id.into(),
            session_key: session_key.into(),
            requester_session_key: None,
            message: message.into(),
            label: None,
            model: None,
            thinking: None,
            tools: Vec::new(),
            trigger: TurnTrigger::Subagent,
            timeout: Duration::from_secs(60),
        }
    }
}

/// How a turn ended well.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct TurnReply {
    /// The agent's reply (its last assistant message), if it gave one.
    pub reply: Option<String>,
}

/// How a turn failed to end well.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum TurnErrorKind {
    /// No runner could take the turn (none subscribed, none registered).
    NoRunner,
    /// The turn ran past its budget; it was cancelled.
    TimedOut,
    /// The turn was cancelled (by `subagents cancel`, its task, shutdown).
    Cancelled,
    /// The runner went away during the turn.
    RunnerLost,
    /// The runner reported a failure.
    Failed,
}

impl TurnErrorKind {
    /// The stable code (`runner.no_runner`, `runner.timed_out`,
    /// `runner.cancelled`, `runner.lost`, `runner.failed`).
    pub fn code(self) -> &'static str {
        match self {
            TurnErrorKind::NoRunner => "runner.no_runner",
            TurnErrorKind::TimedOut => "runner.timed_out",
            TurnErrorKind::Cancelled => "runner.cancelled",
            TurnErrorKind::RunnerLost => "runner.lost",
            TurnErrorKind::Failed => "runner.failed",
        }
    }
}

/// A turn that did not end with a reply: its kind and what happened.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct TurnError {
    /// What kind of failure.
    pub kind: TurnErrorKind,
    /// What happened, for the model and the log.
    pub message: String,
}

impl TurnError {
    /// A failure of `kind`.
    pub fn new(kind: TurnErrorKind, message: impl Into<String>) -> Self {
        TurnError {
            kind,
            message: message.into(),
        }
    }

    /// The stable code.
    pub fn code(&self) -> &'static str {
        self.kind.code()
    }
}

/// Whoever runs the model for a turn.
///
/// The gateway implements it for its connected WebSocket runners (a
/// `runner.run` notification with `trigger: "subagent"` or `"send"`,
/// answered by `runner.complete`); an embedder running its own agent loop
/// implements it and gives it to the gateway or calls [`run_turn`] itself.
///
/// An implementation should watch `cancel` and stop the turn's work when it
/// fires, but it need not enforce the budget: [`run_turn`] does, and drops
/// the future at the deadline.
#[async_trait::async_trait]
pub trait TurnRunner: Send + Sync {
    /// Run one turn and return its reply.
    async fn run_turn(
        &self,
        turn: &AgentTurn,
        cancel: &CancellationToken,
    ) -> Result<TurnReply, TurnError>;
}

/// Run `turn` on `runner`, bounded by the turn's budget and by `cancel`:
/// the only way tools hand a turn out. At the deadline the turn's future is
/// dropped, `cancel` is fired (so the runner's work and the session's calls
/// watching it stop) and the result is [`TurnErrorKind::TimedOut`];
/// cancelled first, [`TurnErrorKind::Cancelled`].
pub async fn run_turn(
    runner: &dyn TurnRunner,
    turn: &AgentTurn,
    cancel: &CancellationToken,
) -> Result<TurnReply, TurnError> {
    let budget = turn.timeout;
    tokio::select! {
        r = runner.run_turn(turn, cancel) => r,
        () = tokio::time::sleep(budget) => {
            cancel.cancel();
            Err(TurnError::new(
                TurnErrorKind::TimedOut,
                format!(
                    "run `{}` in session `{}` did not end within {} s; it was cancelled",
                    turn.run_id,
                    turn.session_key,
                    budget.as_secs_f64()
                ),
            ))
        }
        () = cancel.cancelled() => Err(TurnError::new(
            TurnErrorKind::Cancelled,
            format!("run `{}` in session `{}` was cancelled", turn.run_id, turn.session_key),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Never;

    #[async_trait::async_trait]
    impl TurnRunner for Never {
        async fn run_turn(
            &self,
            _turn: &AgentTurn,
            _cancel: &CancellationToken,
        ) -> Result<TurnReply, TurnError> {
            std::future::pending().await
        }
    }

    #[tokio::test]
    async fn a_runner_that_never_answers_times_out_and_fires_the_token() {
        let mut turn = AgentTurn::new("r", "main", "agent:main:subagent:x", "hi");
        turn.timeout = Duration::from_millis(30);
        let cancel = CancellationToken::new();
        let started = std::time::Instant::now();
        let err = run_turn(&Never, &turn, &cancel).await.unwrap_err();
        assert_eq!(err.kind, TurnErrorKind::TimedOut);
        assert_eq!(err.code(), "runner.timed_out");
        assert!(cancel.is_cancelled());
        assert!(started.elapsed() < Duration::from_secs(5));
    }

    #[tokio::test]
    async fn a_cancelled_turn_ends_as_cancelled() {
        let turn = AgentTurn::new("r", "main", "agent:main:subagent:x", "hi");
        let cancel = CancellationToken::new();
        cancel.cancel();
        let err = run_turn(&Never, &turn, &cancel).await.unwrap_err();
        assert_eq!(err.kind, TurnErrorKind::Cancelled);
    }
}
