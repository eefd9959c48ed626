//! The seam to the embedder: [`AgentRunner`] runs what a job fires.

use std::fmt::Debug;
use std::time::Duration;

use talon_tasks::CancellationToken;
use talon_tool_policy::{RunContext, Trigger};

use crate::job::{Delivery, WakeMode};

/// One isolated agent turn fired by a job.
#[derive(Debug, Clone)]
pub struct IsolatedRun {
    /// The job.
    pub job_id: String,
    /// The job's name.
    pub job_name: String,
    /// This run's id (also the task ledger's run id).
    pub run_id: String,
    /// The agent.
    pub agent_id: String,
    /// A fresh session key for this run alone
    /// (`agent:<agent>:cron:<job>:run:<run>`).
    pub session_key: String,
    /// The session that created the job.
    pub requester_session_key: Option<String>,
    /// The prompt.
    pub message: String,
    /// Model override.
    pub model: Option<String>,
    /// Thinking level override.
    pub thinking: Option<String>,
    /// The tools the run may have at most (the job's allowlist, capped by
    /// its creator). `None`: no cap (operator-created job).
    pub tools: Option<Vec<String>>,
    /// Where the result goes.
    pub delivery: Option<Delivery>,
    /// Fired when the run times out or the service stops: the runner must
    /// stop the turn.
    pub cancel: CancellationToken,
    /// The run's time budget (`timeoutSeconds`, or the service default).
    pub timeout: Duration,
    /// When the budget runs out: at this instant the service records the
    /// run as `timeout`, fires `cancel` and stops waiting for the runner,
    /// so a runner that sees `cancel` at or after it knows why.
    pub deadline: tokio::time::Instant,
}

impl IsolatedRun {
    /// Always [`Trigger::Cron`].
    pub fn trigger(&self) -> Trigger {
        Trigger::Cron
    }

    /// The policy context the embedder must assemble the run's tool table
    /// with: this agent, the fresh session, `trigger: cron`, and the job's
    /// tools as the `inherited` cap (so a later config change that widens
    /// the agent cannot widen the job). Pass [`IsolatedRun::job_id`] as the
    /// runtime's `RunSpec::cron_job_id` so the `cron` tool is narrowed to
    /// this job.
    pub fn run_context(&self) -> RunContext {
        let mut ctx = RunContext::new(self.agent_id.clone());
        ctx.session_key.clone_from(&self.session_key);
        ctx.trigger = Trigger::Cron;
        ctx.inherited.clone_from(&self.tools);
        ctx
    }
}

/// A system event for a session (a `systemEvent` job firing, or `wake`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SystemEventRequest {
    /// The agent.
    pub agent_id: String,
    /// The session; the agent's main session when `None`.
    pub session_key: Option<String>,
    /// The event text.
    pub text: String,
    /// Now or at the next heartbeat.
    pub wake_mode: WakeMode,
    /// The job that fired it, if any.
    pub job_id: Option<String>,
}

/// How a run ended well.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunReportStatus {
    /// It ran.
    Ok,
    /// The runner decided not to run it (counts as success for backoff).
    Skipped,
}

/// A finished run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunReport {
    /// Ok or skipped.
    pub status: RunReportStatus,
    /// A short summary for the run history.
    pub summary: Option<String>,
}

impl RunReport {
    /// A successful run with a summary.
    pub fn ok(summary: impl Into<String>) -> Self {
        RunReport {
            status: RunReportStatus::Ok,
            summary: Some(summary.into()),
        }
    }
}

/// A failed run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunFailure {
    /// What went wrong.
    pub message: String,
    /// Whether a retry may help (rate limit, overload, network, timeout,
    /// 5xx): one-shot jobs retry only transient failures.
    pub transient: bool,
    /// Whether the failure was the time budget running out (recorded as
    /// `timeout`).
    pub timed_out: bool,
}

impl RunFailure {
    /// A failure classified by its message ([`is_transient_error`]).
    pub fn new(message: impl Into<String>) -> Self {
        let message = message.into();
        RunFailure {
            transient: is_transient_error(&message),
            message,
            timed_out: false,
        }
    }

    /// The run ran past its time budget (recorded as `timeout`).
    pub fn timed_out(timeout: Duration) -> Self {
        RunFailure {
            message: format!(
                "timed out after {} s (the job's timeoutSeconds); the run was cancelled",
                timeout.as_secs_f64()
            ),
            transient: true,
            timed_out: true,
        }
    }

    /// A failure that retrying will not fix.
    pub fn permanent(message: impl Into<String>) -> Self {
        RunFailure {
            message: message.into(),
            transient: false,
            timed_out: false,
        }
    }
}

/// OpenClaw's transient categories: rate limit, overload, network, timeout,
/// and server errors (a 5xx only with HTTP/status context).
pub fn is_transient_error(message: &str) -> bool {
    let m = message.to_lowercase();
    const WORDS: &[&str] = &[
        "rate limit",
        "rate_limit",
        "ratelimit",
        "too many requests",
        "429",
        "overloaded",
        "capacity",
        "econnreset",
        "econnrefused",
        "etimedout",
        "enotfound",
        "socket hang up",
        "network",
        "connection reset",
        "connection refused",
        "timed out",
        "timeout",
        "temporarily unavailable",
        "service unavailable",
        "bad gateway",
        "gateway timeout",
        "internal server error",
    ];
    if WORDS.iter().any(|w| m.contains(w)) {
        return true;
    }
    // "HTTP 503", "status 502", "status code: 500".
    let with_context = m.contains("http") || m.contains("status");
    with_context
        && m.split(|c: char| !c.is_ascii_digit())
            .any(|d| d.len() == 3 && d.starts_with('5'))
}

/// What the cron service calls to run a job. The gateway implements it;
/// tests use a scripted runner.
#[async_trait::async_trait]
pub trait AgentRunner: Send + Sync + Debug {
    /// Run an isolated agent turn. Must honour `run.cancel` and must build
    /// the run's tool table from [`IsolatedRun::run_context`]. At
    /// `run.deadline` the service stops waiting and drops this future: an
    /// implementation that handed the run elsewhere must clean up on drop
    /// (the gateway's hub tells its runner with `runner.cancel`).
    async fn run_isolated(&self, run: IsolatedRun) -> Result<RunReport, RunFailure>;

    /// Deliver a system event to a session (and wake it per the mode).
    async fn system_event(&self, event: SystemEventRequest) -> Result<(), RunFailure>;
}
