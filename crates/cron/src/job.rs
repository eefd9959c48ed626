//! A cron job, its run state and its run history.

use serde::{Deserialize, Serialize};

use crate::schedule::Schedule;

/// What a job does when it fires.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(
    tag = "kind",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
pub enum Payload {
    /// Inject a system event into the agent's main session.
    SystemEvent {
        /// The event text.
        text: String,
    },
    /// Run an agent turn in a fresh, isolated session.
    AgentTurn {
        /// The prompt.
        message: String,
        /// Model override.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        model: Option<String>,
        /// Thinking level override.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        thinking: Option<String>,
        /// Timeout of the turn in seconds (the service default when absent).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        timeout_seconds: Option<f64>,
    },
}

impl Payload {
    /// `systemEvent` or `agentTurn`.
    pub fn kind(&self) -> &'static str {
        match self {
            Payload::SystemEvent { .. } => "systemEvent",
            Payload::AgentTurn { .. } => "agentTurn",
        }
    }
}

/// How a run's result is delivered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DeliveryMode {
    /// Not delivered.
    #[default]
    None,
    /// Announced on a channel.
    Announce,
    /// Posted to a webhook (through the embedder's guarded fetch).
    Webhook,
}

/// Where a run's result goes.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Delivery {
    /// The mode.
    pub mode: DeliveryMode,
    /// The channel (`telegram`, `slack`…).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub channel: Option<String>,
    /// The target (chat id, or the webhook URL).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub to: Option<String>,
    /// Thread / topic.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thread_id: Option<String>,
    /// Channel account.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub account_id: Option<String>,
    /// Do not fail the run when delivery fails.
    #[serde(default)]
    pub best_effort: bool,
}

/// Whether a woken session handles the event now or at its next heartbeat.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum WakeMode {
    /// Right away.
    #[default]
    Now,
    /// At the next heartbeat.
    NextHeartbeat,
}

/// How one run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RunStatus {
    /// Still running (or the process died while it ran).
    Running,
    /// Finished well.
    Ok,
    /// The runner chose not to run it.
    Skipped,
    /// Failed.
    Error,
    /// Ran past its time budget (`timeoutSeconds`) and was cancelled.
    Timeout,
    /// The process stopped while it ran; found at the next start.
    Interrupted,
}

impl RunStatus {
    /// The stored spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            RunStatus::Running => "running",
            RunStatus::Ok => "ok",
            RunStatus::Skipped => "skipped",
            RunStatus::Error => "error",
            RunStatus::Timeout => "timeout",
            RunStatus::Interrupted => "interrupted",
        }
    }

    /// Parse the stored spelling.
    pub fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "running" => RunStatus::Running,
            "ok" => RunStatus::Ok,
            "skipped" => RunStatus::Skipped,
            "error" => RunStatus::Error,
            "timeout" => RunStatus::Timeout,
            "interrupted" => RunStatus::Interrupted,
            _ => return None,
        })
    }
}

/// A job's scheduling state.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct JobState {
    /// The next run (epoch ms); `None` when nothing is scheduled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_run_at_ms: Option<i64>,
    /// Set while a run is in flight.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub running_at_ms: Option<i64>,
    /// When the last run started.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_run_at_ms: Option<i64>,
    /// How the last run ended.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_status: Option<RunStatus>,
    /// The last run's error.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_error: Option<String>,
    /// The last run's duration.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_duration_ms: Option<i64>,
    /// Failed runs in a row (reset by a good run).
    #[serde(default)]
    pub consecutive_errors: u32,
    /// Schedule computation failures in a row (3 auto-disable the job).
    #[serde(default)]
    pub schedule_errors: u32,
}

/// One scheduled job.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CronJob {
    /// The id.
    pub id: String,
    /// The agent that owns it.
    pub agent_id: String,
    /// A name.
    pub name: String,
    /// What it is for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// When it runs.
    pub schedule: Schedule,
    /// What it does.
    pub payload: Payload,
    /// Where its result goes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delivery: Option<Delivery>,
    /// Now or next heartbeat, for system events.
    #[serde(default)]
    pub wake_mode: WakeMode,
    /// Whether it is scheduled.
    pub enabled: bool,
    /// Delete (instead of disable) a one-shot job after a good run.
    #[serde(default)]
    pub delete_after_run: bool,
    /// Whether running it twice is harmless: only then is a one-shot run
    /// that a crash interrupted run again automatically (after the
    /// backoff). Otherwise it is recorded `interrupted` and waits for the
    /// operator (`cron.run`).
    #[serde(default)]
    pub idempotent: bool,
    /// The session that created it (for delivery inference and the run's
    /// requester).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub creator_session_key: Option<String>,
    /// The creating run's effective tools: the cap of every run of this
    /// job. `None` only for operator-created jobs (CLI, config).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub creator_tools: Option<Vec<String>>,
    /// The tools the job's runs may use (already capped).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools_allow: Option<Vec<String>>,
    /// Whether `tools_allow` was derived (not requested): re-derived on
    /// update.
    #[serde(default)]
    pub tools_allow_is_default: bool,
    /// Created (epoch ms).
    pub created_at_ms: i64,
    /// Last changed (epoch ms).
    pub updated_at_ms: i64,
    /// Scheduling state.
    #[serde(default)]
    pub state: JobState,
}

impl CronJob {
    /// The allowlist a run of this job gets: `tools_allow` intersected with
    /// the creator cap again at run time, so neither a stored value nor a
    /// later config change can widen it. `None`: no cap (operator job).
    pub fn effective_run_tools(&self) -> Option<Vec<String>> {
        match (&self.tools_allow, &self.creator_tools) {
            (Some(allow), Some(cap)) => Some(
                allow
                    .iter()
                    .filter(|t| cap.iter().any(|c| c == *t))
                    .cloned()
                    .collect(),
            ),
            (Some(allow), None) => Some(allow.clone()),
            (None, Some(cap)) => Some(cap.clone()),
            (None, None) => None,
        }
    }
}

/// One row of a job's run history.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RunRecord {
    /// The run id.
    pub run_id: String,
    /// The job.
    pub job_id: String,
    /// The isolated session the run used.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_key: Option<String>,
    /// Why it ran: `scheduled`, `catch-up`, `manual`.
    pub reason: String,
    /// Started (epoch ms).
    pub started_at_ms: i64,
    /// Ended (epoch ms).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ended_at_ms: Option<i64>,
    /// How it ended.
    pub status: RunStatus,
    /// The error.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The runner's summary.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary: Option<String>,
    /// The schedule slot this run fired (the job's `nextRunAtMs` that was
    /// due); absent for a manual run. A job has at most one run per slot.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slot_ms: Option<i64>,
}
