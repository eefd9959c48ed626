//! `runner.*`: a client that runs the agent turns cron needs.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// `runner.subscribe`'s answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct RunnerSubscribeResponse {
    /// Always `true`.
    pub subscribed: bool,
    /// How many runner connections are subscribed now.
    pub runners: usize,
}

/// How a run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum RunnerStatus {
    /// It ran.
    Ok,
    /// It was skipped.
    Skipped,
    /// It failed (`error` says why).
    Error,
}

/// `runner.complete`'s params.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RunnerCompleteParams {
    /// The run (from the `runner.run` notification).
    pub run_id: String,
    /// `ok`, `skipped` or `error`.
    pub status: RunnerStatus,
    /// What the run did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary: Option<String>,
    /// With `error`: why.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// `runner.complete`'s answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct RunnerCompleteResponse {
    /// Always `true`.
    pub accepted: bool,
}
