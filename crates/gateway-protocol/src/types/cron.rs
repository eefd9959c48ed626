//! `cron.*`: the cron service's API (jobs are created as the default
//! agent's main session, capped by its tools).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// `cron.list`'s params.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CronListParams {
    /// Include disabled jobs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub include_disabled: Option<bool>,
    /// Only this agent's jobs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_id: Option<String>,
}

/// Names one job.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CronJobRef {
    /// The job id (alias `id`).
    #[serde(alias = "id")]
    pub job_id: String,
}

/// `cron.runs`'s params.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CronRunsParams {
    /// The job id (alias `id`).
    #[serde(alias = "id")]
    pub job_id: String,
    /// Most runs to return, 1–200 (default 20).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<u64>,
}

/// `cron.add`'s params.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CronAddParams {
    /// The job: `name`, `schedule` (`{kind: at, at}`, `{kind: every,
    /// everyMs}` or `{kind: cron, expr, tz?}`), `payload` (`{kind:
    /// agentTurn, message, …}` or `{kind: systemEvent, text}`), and
    /// optionally `description`, `delivery`, `wakeMode`, `enabled`,
    /// `deleteAfterRun`, `agentId`, `toolsAllow`. Checked by the cron
    /// service, whose errors name the field (`job.schedule.everyMs`, …).
    pub job: Map<String, Value>,
}

/// `cron.update`'s params.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CronUpdateParams {
    /// The job id (alias `id`).
    #[serde(alias = "id")]
    pub job_id: String,
    /// The fields to change (those of `cron.add`'s `job`); omitted fields
    /// stay unchanged.
    pub patch: Map<String, Value>,
}

/// When `cron.run` runs the job.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum CronRunMode {
    /// Only if the job is due.
    #[default]
    Due,
    /// Now, whatever its schedule (disabled jobs too).
    Force,
}

/// `cron.run`'s params.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CronRunParams {
    /// The job id (alias `id`).
    #[serde(alias = "id")]
    pub job_id: String,
    /// `due` (default) or `force`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_mode: Option<CronRunMode>,
}

/// `cron.wake`'s params.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CronWakeParams {
    /// The system event's text.
    pub text: String,
    /// `now` (default) or `next-heartbeat`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<String>,
    /// The agent to wake (default: the default agent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_id: Option<String>,
    /// The session to wake (default: the agent's main session); must be
    /// one of the agent's (`agent:<id>:…`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_key: Option<String>,
}

/// `cron.status`'s answer: the service's state (talon-cron's
/// `CronStatus`: started, job counts, next wake, running jobs, timer
/// counters).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(transparent)]
pub struct CronStatusResponse(pub Value);

/// `cron.list`'s answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CronJobsResponse {
    /// The jobs, ordered by next run (talon-cron's `CronJob`).
    pub jobs: Vec<Value>,
}

/// `cron.get`'s answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CronJobResponse {
    /// The job (talon-cron's `CronJob`: id, name, schedule, payload,
    /// delivery, state, …).
    pub job: Value,
}

/// `cron.add`'s and `cron.update`'s answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CronChangeResponse {
    /// Always `true`.
    pub ok: bool,
    /// The job as stored.
    pub job: Value,
    /// Requested tools the creator cap dropped (present when any were).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dropped_tools: Option<Vec<String>>,
    /// Why tools were dropped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// `cron.remove`'s answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct CronRemoveResponse {
    /// Always `true` (an unknown job is a not-found error).
    pub ok: bool,
    /// The removed job's id.
    pub removed: String,
}

/// `cron.run`'s answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CronRunResponse {
    /// Whether a run started.
    pub ran: bool,
    /// `started`, `not-due` or `already-running`.
    pub reason: String,
    /// The run id, when it started.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_id: Option<String>,
}

/// `cron.runs`'s answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CronRunsResponse {
    /// The job's runs, newest first (talon-cron's `RunRecord`).
    pub runs: Vec<Value>,
}
