//! The typed `cron` config section (OpenClaw's keys that Talon honours;
//! any other key is an error naming it).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// `cron.retry`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CronRetryConfig {
    /// Retries of a one-shot job after transient errors (default 3).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_attempts: Option<u32>,
    /// The backoff schedule in ms (default 30 s, 1 min, 5 min, 15 min, 60 min).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backoff_ms: Option<Vec<u64>>,
}

/// `cron.quotas`: how much one creator may schedule. Talon keys (OpenClaw
/// has no quota); unset keys keep the defaults.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CronQuotasConfig {
    /// Most jobs one creating session may hold (default 100). Jobs created
    /// without a session (the CLI) count only against `maxJobsPerAgent`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_jobs_per_creator: Option<u32>,
    /// Most jobs one agent may hold, whoever created them (default 1000).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_jobs_per_agent: Option<u32>,
    /// The shortest gap between two runs of a recurring job, in seconds
    /// (default 60): an `every` interval, or the smallest gap between
    /// consecutive fire times of a `cron` expression.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_interval_seconds: Option<u32>,
}

/// The `cron` section.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CronConfig {
    /// Whether the scheduler runs (default true).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enabled: Option<bool>,
    /// Runs in flight at once (default 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_concurrent_runs: Option<u32>,
    /// Retry policy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry: Option<CronRetryConfig>,
    /// Per-creator and per-agent job quotas.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quotas: Option<CronQuotasConfig>,
    /// Private webhook targets opened on purpose (`hosts`, `cidrs`, as in
    /// `tools.web.fetch.ssrfAllowlist`). Without it a job whose webhook
    /// URL is loopback, private or link-local is refused; a cloud metadata
    /// endpoint is refused whatever it says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub webhook_ssrf_allowlist: Option<crate::sections::web::SsrfAllowlistConfig>,
}
