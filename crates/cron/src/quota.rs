//! How much one creator may schedule: jobs per creating session, jobs per
//! agent, and the shortest gap between two runs of a recurring job. A
//! change over a limit is refused with [`CronError::Quota`], naming the
//! limit and its config key; nothing is stored.

use crate::config::CronQuotasConfig;
use crate::error::{CronError, QuotaLimit, Result};
use crate::job::CronJob;
use crate::schedule::{CronExpr, Schedule};
use crate::store::{Admission, CronStore};

/// Default of `cron.quotas.maxJobsPerCreator`.
pub const DEFAULT_MAX_JOBS_PER_CREATOR: u64 = 100;
/// Default of `cron.quotas.maxJobsPerAgent`.
pub const DEFAULT_MAX_JOBS_PER_AGENT: u64 = 1_000;
/// Default of `cron.quotas.minIntervalSeconds` (60 s), in ms.
pub const DEFAULT_MIN_INTERVAL_MS: i64 = 60_000;

/// How many consecutive fire times of a `cron` expression are measured for
/// the shortest gap (enough to see every pattern within a day of
/// minute-resolution slots that repeats at least every 50 fires).
const GAP_SAMPLES: usize = 50;

/// The quotas in force.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CronQuotas {
    /// Most jobs one creating session may hold.
    pub max_jobs_per_creator: u64,
    /// Most jobs one agent may hold.
    pub max_jobs_per_agent: u64,
    /// The shortest gap between two runs of a recurring job (ms); 0 turns
    /// the check off.
    pub min_interval_ms: i64,
}

impl Default for CronQuotas {
    fn default() -> Self {
        CronQuotas {
            max_jobs_per_creator: DEFAULT_MAX_JOBS_PER_CREATOR,
            max_jobs_per_agent: DEFAULT_MAX_JOBS_PER_AGENT,
            min_interval_ms: DEFAULT_MIN_INTERVAL_MS,
        }
    }
}

impl CronQuotas {
    /// No limits (tests and embedders that enforce their own).
    pub fn unlimited() -> Self {
        CronQuotas {
            max_jobs_per_creator: u64::MAX,
            max_jobs_per_agent: u64::MAX,
            min_interval_ms: 0,
        }
    }

    /// The quotas of `cron.quotas` (unset keys keep the defaults).
    pub fn from_config(config: Option<&CronQuotasConfig>) -> Self {
        let mut q = CronQuotas::default();
        if let Some(c) = config {
            if let Some(n) = c.max_jobs_per_creator {
                q.max_jobs_per_creator = u64::from(n);
            }
            if let Some(n) = c.max_jobs_per_agent {
                q.max_jobs_per_agent = u64::from(n);
            }
            if let Some(s) = c.min_interval_seconds {
                q.min_interval_ms = i64::from(s) * 1000;
            }
        }
        q
    }

    /// Admit a new job into `store`: its schedule meets the minimum
    /// interval and neither its creating session nor its agent holds its
    /// most jobs. Call it and store the job under one lock (the service
    /// does; so does `talon cron add`).
    pub fn admit(self, store: &CronStore, job: &CronJob, now_ms: i64) -> Result<()> {
        self.check_interval(&job.schedule, now_ms, "job.schedule")?;
        if let Some(session) = &job.creator_session_key {
            self.check_creator(store.count_for_creator(session)?, session)?;
        }
        self.check_agent(store.count_for_agent(&job.agent_id)?, &job.agent_id)
    }

    /// The refusal of a job the store did not admit
    /// ([`CronStore::put_admitted`]), or `Ok` when it was stored.
    pub fn refusal(self, admission: Admission, job: &CronJob) -> Result<()> {
        match admission {
            Admission::CreatorFull(held) => {
                self.check_creator(held, job.creator_session_key.as_deref().unwrap_or_default())
            }
            Admission::AgentFull(held) => self.check_agent(held, &job.agent_id),
            Admission::Stored => Ok(()),
        }
    }

    /// Refuse one more job for a creating session that holds `held`.
    fn check_creator(self, held: u64, session_key: &str) -> Result<()> {
        check_count(
            QuotaLimit::JobsPerCreator,
            self.max_jobs_per_creator,
            held,
            &format!("session `{session_key}`"),
        )
    }

    /// Refuse one more job for an agent that holds `held`.
    fn check_agent(self, held: u64, agent_id: &str) -> Result<()> {
        check_count(
            QuotaLimit::JobsPerAgent,
            self.max_jobs_per_agent,
            held,
            &format!("agent `{agent_id}`"),
        )
    }

    /// Refuse a recurring schedule whose runs would come closer together
    /// than the minimum interval. `field` names the schedule
    /// (`job.schedule`, `patch.schedule`).
    pub fn check_interval(self, schedule: &Schedule, now_ms: i64, field: &str) -> Result<()> {
        if self.min_interval_ms <= 0 {
            return Ok(());
        }
        let Some((gap, key)) = shortest_gap(schedule, now_ms, field)? else {
            return Ok(());
        };
        if gap >= self.min_interval_ms {
            return Ok(());
        }
        let limit = QuotaLimit::MinInterval;
        let min_s = self.min_interval_ms / 1000;
        Err(CronError::Quota {
            limit,
            config_key: limit.config_key(),
            max: u64::try_from(min_s).unwrap_or(0),
            message: format!(
                "{key}: runs would come {gap} ms apart, but a recurring job may run at most once every {min_s} s; choose a longer interval or raise the limit by lowering `{}`",
                limit.config_key()
            ),
        })
    }
}

/// Refuse one more job when `held` already reach `max`.
fn check_count(limit: QuotaLimit, max: u64, held: u64, who: &str) -> Result<()> {
    if held < max {
        return Ok(());
    }
    Err(CronError::Quota {
        limit,
        config_key: limit.config_key(),
        max,
        message: format!(
            "{who} already holds {held} cron jobs, the most allowed; remove some (cron remove) or raise `{}`",
            limit.config_key()
        ),
    })
}

/// The shortest gap between consecutive runs of a recurring schedule, and
/// the field it comes from; `None` for a one-shot schedule or a `cron`
/// expression with fewer than two future fire times.
fn shortest_gap(schedule: &Schedule, now_ms: i64, field: &str) -> Result<Option<(i64, String)>> {
    match schedule {
        Schedule::At { .. } => Ok(None),
        Schedule::Every { every_ms, .. } => {
            Ok(Some(((*every_ms).max(1), format!("{field}.everyMs"))))
        }
        Schedule::Cron { expr, tz, .. } => {
            let parsed = CronExpr::parse(expr, tz.as_deref(), field)?;
            let times = parsed.upcoming(now_ms, GAP_SAMPLES)?;
            Ok(times
                .windows(2)
                .filter_map(|w| match w {
                    [a, b] => Some(b - a),
                    _ => None,
                })
                .min()
                .map(|gap| (gap, format!("{field}.expr"))))
        }
    }
}
