//! The cron service: one re-armed timer, due-job selection from the store's
//! index, isolated runs through the [`AgentRunner`], backoff, restart
//! recovery and catch-up.

use std::collections::HashMap;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, Weak};
use std::time::Duration;

use serde::Serialize;
use talon_tasks::{
    CancellationToken, Clock, NewTask, SystemClock, TaskFilter, TaskLedger, TaskOutcome,
    TaskRuntime, TaskStatus, new_id,
};
use tokio::task::AbortHandle;

use crate::config::CronConfig;
use crate::error::{CronError, Result};
use crate::input::{Creator, JobPatch, JobSpec, apply_patch, build_job};
use crate::job::{CronJob, Payload, RunRecord, RunStatus, WakeMode};
use crate::quota::CronQuotas;
use crate::runner::{
    AgentRunner, IsolatedRun, RunFailure, RunReport, RunReportStatus, SystemEventRequest,
};
use crate::schedule::Schedule;
use crate::store::{BeginRun, CronStore};
use crate::webhook::WebhookGuard;

/// When the next run is already due, the timer still waits this long
/// (2 s): no hot loop while a job is stuck running.
pub const MIN_REFIRE_GAP_MS: i64 = 2_000;
/// The timer never sleeps longer than this (60 s): clock jumps and suspend
/// are noticed within a minute.
pub const MAX_TIMER_DELAY_MS: i64 = 60_000;
/// Backoff after consecutive errors: 30 s, 1 min, 5 min, 15 min, 60 min.
pub const ERROR_BACKOFF_MS: [i64; 5] = [30_000, 60_000, 300_000, 900_000, 3_600_000];
/// At most this many missed jobs run at a restart.
pub const MAX_MISSED_JOBS_PER_RESTART: usize = 5;
/// Missed jobs that do run at a restart are this far apart (5 s).
pub const MISSED_JOB_STAGGER_MS: i64 = 5_000;
/// Missed one-shot jobs beyond the first five run this much later (2 min).
pub const DEFERRED_MISSED_DELAY_MS: i64 = 120_000;
/// A run marked running for this long (2 h) is considered stuck.
pub const STUCK_RUN_MS: i64 = 2 * 60 * 60 * 1000;
/// The default time budget of an agent turn (10 min).
pub const DEFAULT_RUN_TIMEOUT: Duration = Duration::from_secs(600);
/// Consecutive schedule-computation errors that auto-disable a job.
pub const SCHEDULE_ERROR_LIMIT: u32 = 3;
/// How long the `cron` timer lease lasts unless renewed (5 s): a gateway
/// that dies stops firing, and another takes over, within this time.
pub const DEFAULT_LEASE_TTL: Duration = Duration::from_secs(5);
/// How often the lease holder renews it and the others try to take it
/// (1 s); also how often the holder re-reads the due jobs, so a job added
/// on another gateway is picked up within it.
pub const DEFAULT_LEASE_RENEW: Duration = Duration::from_secs(1);

/// A holder of the `cron` timer lease.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TimerGrant {
    /// The holding gateway (its fleet member id).
    pub holder: String,
    /// The fencing token: grows each time the lease changes hands.
    pub token: i64,
    /// When it lapses unless renewed (the database's clock, epoch ms).
    pub expires_at_ms: i64,
}

/// The lease that makes one process of a fleet the timer owner: only the
/// holder fires due jobs, and it fires each under its token, which the
/// store checks in the same transaction. Implemented on PostgreSQL
/// (`postgres::PgTimerLease`); a single process (SQLite) has none.
pub trait TimerLease: Send + Sync + std::fmt::Debug {
    /// Take the lease for `holder` when free or lapsed (a larger token), or
    /// renew it when `holder` holds it. `None`: another holds it.
    fn acquire(&self, holder: &str, ttl: Duration) -> Result<Option<TimerGrant>>;
    /// Renew a held lease; `None` when it was lost (another took it).
    fn renew(&self, held: &TimerGrant, ttl: Duration) -> Result<Option<TimerGrant>>;
    /// Give it up now, so another need not wait for it to lapse.
    fn release(&self, held: &TimerGrant) -> Result<()>;
    /// Who holds it now (a lapsed lease is nobody's).
    fn current(&self) -> Result<Option<TimerGrant>>;
}

/// The timer lease as `cron.status` and `talon gateway status` show it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TimerLeaseStatus {
    /// This gateway's member id.
    pub member_id: String,
    /// Who holds the lease now (`None`: nobody; the next renewal round
    /// takes it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub holder: Option<TimerGrant>,
    /// Whether this gateway is the timer owner.
    pub owner_here: bool,
}

/// How the service behaves.
#[derive(Debug, Clone)]
pub struct CronOptions {
    /// Runs in flight at once (default 1).
    pub max_concurrent_runs: usize,
    /// Retries of a one-shot job after transient errors (default 3).
    pub max_attempts: u32,
    /// The backoff schedule (default [`ERROR_BACKOFF_MS`]).
    pub backoff_ms: Vec<i64>,
    /// Default time budget of an agent turn.
    pub default_timeout: Duration,
    /// The wall clock.
    pub clock: Arc<dyn Clock>,
    /// Record each run in this task ledger (runtime `cron`).
    pub ledger: Option<TaskLedger>,
    /// Jobs per creator and per agent, and the shortest recurring interval
    /// (`cron.quotas`).
    pub quotas: CronQuotas,
    /// The egress rules a job's webhook URL passes
    /// (`cron.webhookSsrfAllowlist`).
    pub webhooks: WebhookGuard,
    /// The timer lease's time (fleet only; default [`DEFAULT_LEASE_TTL`]).
    pub lease_ttl: Duration,
    /// How often the lease is renewed or tried (fleet only; default
    /// [`DEFAULT_LEASE_RENEW`]; keep it well under `lease_ttl`).
    pub lease_renew_every: Duration,
}

impl Default for CronOptions {
    fn default() -> Self {
        CronOptions {
            max_concurrent_runs: 1,
            max_attempts: 3,
            backoff_ms: ERROR_BACKOFF_MS.to_vec(),
            default_timeout: DEFAULT_RUN_TIMEOUT,
            clock: Arc::new(SystemClock),
            ledger: None,
            quotas: CronQuotas::default(),
            webhooks: WebhookGuard::default(),
            lease_ttl: DEFAULT_LEASE_TTL,
            lease_renew_every: DEFAULT_LEASE_RENEW,
        }
    }
}

impl CronOptions {
    /// Options from the `cron` config section (unset keys keep defaults).
    pub fn from_config(config: &CronConfig) -> Self {
        let mut o = CronOptions {
            quotas: CronQuotas::from_config(config.quotas.as_ref()),
            webhooks: WebhookGuard::from_config(config.webhook_ssrf_allowlist.as_ref()),
            ..CronOptions::default()
        };
        if let Some(n) = config.max_concurrent_runs {
            o.max_concurrent_runs = usize::try_from(n.max(1)).unwrap_or(1);
        }
        if let Some(r) = &config.retry {
            if let Some(m) = r.max_attempts {
                o.max_attempts = m;
            }
            if let Some(b) = &r.backoff_ms
                && !b.is_empty()
            {
                o.backoff_ms = b
                    .iter()
                    .map(|v| i64::try_from(*v).unwrap_or(i64::MAX))
                    .collect();
            }
        }
        o
    }

    /// Admit a new job into `store`: its webhook target passes the egress
    /// rules and it fits the quotas ([`CronQuotas::admit`]). Call it and
    /// store the job under one lock (`talon cron add` does); the service
    /// counts and stores in one store transaction instead
    /// ([`CronStore::put_admitted`]), which also holds across a fleet.
    pub fn admit(&self, store: &CronStore, job: &CronJob, now_ms: i64) -> Result<()> {
        self.webhooks.vet(job.delivery.as_ref(), "delivery")?;
        self.quotas.admit(store, job, now_ms)
    }

    fn backoff(&self, consecutive_errors: u32) -> i64 {
        let i = usize::try_from(consecutive_errors.saturating_sub(1)).unwrap_or(usize::MAX);
        let last = self.backoff_ms.len().saturating_sub(1);
        self.backoff_ms.get(i.min(last)).copied().unwrap_or(30_000)
    }
}

/// Counters of the timer, for status and tests.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TimerStats {
    /// Times the timer was (re-)armed.
    pub arms: u64,
    /// Times the timer fired.
    pub fires: u64,
    /// The delay of the last arm (ms).
    pub last_delay_ms: Option<i64>,
    /// Runs started.
    pub runs_started: u64,
    /// Runs finished.
    pub runs_finished: u64,
    /// Fires the shared store refused because this gateway's lease token
    /// was no longer current (another gateway owns the timer); none ran.
    pub fenced: u64,
}

/// What [`CronService::start`] recovered.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RecoveryReport {
    /// Jobs found `running` (the previous process died mid-run): marked
    /// interrupted and rescheduled.
    pub interrupted: Vec<String>,
    /// Missed jobs that run now (at most 5, 5 s apart).
    pub caught_up: Vec<String>,
    /// Missed recurring jobs beyond the first five: moved to their next
    /// natural run.
    pub skipped: Vec<String>,
    /// Missed one-shot jobs beyond the first five: deferred by 2 min.
    pub deferred: Vec<String>,
}

/// The service's state, for the `status` action.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CronStatus {
    /// Whether the timer runs.
    pub started: bool,
    /// All jobs.
    pub jobs: usize,
    /// Enabled jobs.
    pub enabled_jobs: usize,
    /// The next wake (epoch ms).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_wake_at_ms: Option<i64>,
    /// Jobs running now.
    pub running: Vec<String>,
    /// Timer counters.
    pub timer: TimerStats,
    /// The timer lease, on a store a fleet shares (absent on SQLite).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lease: Option<TimerLeaseStatus>,
}

/// The outcome of [`CronService::run_now`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RunNow {
    /// Whether a run started.
    pub ran: bool,
    /// Why not (`not-due`, `already-running`), or `started`.
    pub reason: String,
    /// The run id, when it started.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub run_id: Option<String>,
}

/// A job just added or updated, and the requested tools the creator cap
/// dropped.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct JobChange {
    /// The job as stored.
    pub job: CronJob,
    /// Requested tools the creator does not have (not granted).
    pub dropped_tools: Vec<String>,
}

struct InFlight {
    token: CancellationToken,
    abort: Option<AbortHandle>,
}

/// A lease held: the grant and when this process stops trusting it (its
/// own clock, from before the call that got it, plus the lease time).
struct Held {
    grant: TimerGrant,
    until: tokio::time::Instant,
}

/// The fleet side of a service on a shared store.
struct Fleet {
    lease: Arc<dyn TimerLease>,
    member_id: String,
    held: Mutex<Option<Held>>,
    task: Mutex<Option<AbortHandle>>,
}

/// Whether this process may fire due jobs now, and under which token.
enum FireRight {
    /// The only process on its store (SQLite): always.
    Single,
    /// The fleet's timer owner, under this lease token.
    Token(i64),
    /// Another gateway owns the timer (or this one's hold ran out).
    NotOwner,
}

struct Inner {
    store: Mutex<CronStore>,
    fleet: Option<Fleet>,
    runner: Arc<dyn AgentRunner>,
    opts: CronOptions,
    timer: Mutex<Option<AbortHandle>>,
    in_flight: Mutex<HashMap<String, InFlight>>,
    stats: Mutex<TimerStats>,
    started: AtomicBool,
    stopped: AtomicBool,
    /// The wall clock and the monotonic clock at the last tick: a wall
    /// reading far behind what the monotonic clock predicts means the wall
    /// clock stepped back.
    last_tick: Mutex<Option<(i64, tokio::time::Instant)>>,
}

/// How many times a fleet member retries recording a run's outcome while
/// the shared database is unreachable, and the pause between tries.
const STORE_RETRIES: u32 = 60;
const STORE_RETRY_PAUSE: Duration = Duration::from_millis(500);

/// How many times an update is re-read and re-applied when a fire or a
/// finish moved the job between its read and its write.
const UPDATE_ATTEMPTS: u32 = 5;

/// How far the wall clock may run behind the monotonic clock between two
/// ticks before recurring jobs are rescheduled from the new time.
const CLOCK_STEP_BACK_TOLERANCE_MS: i64 = 1_000;

impl std::fmt::Debug for Inner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CronService")
            .field("runner", &self.runner)
            .field("started", &self.started)
            .finish_non_exhaustive()
    }
}

/// The cron service. Cheap to clone (all clones share one timer).
#[derive(Debug, Clone)]
pub struct CronService {
    inner: Arc<Inner>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    match m.lock() {
        Ok(g) => g,
        Err(poisoned) => poisoned.into_inner(),
    }
}

impl CronService {
    /// Open the store at `path` (the shared state database). The timer does
    /// not run until [`start`](Self::start).
    pub fn open(path: &Path, runner: Arc<dyn AgentRunner>, opts: CronOptions) -> Result<Self> {
        Ok(CronService::with_store(
            CronStore::open(path)?,
            None,
            runner,
            opts,
        ))
    }

    /// A service on a store a fleet of gateways shares: this one
    /// (`member_id`) fires due jobs only while it holds `lease`, each under
    /// the lease's token, and takes over (marking the previous owner's
    /// runs interrupted, never re-running them) when it acquires it. Job
    /// changes work on every member.
    pub fn open_fleet(
        store: CronStore,
        lease: Arc<dyn TimerLease>,
        member_id: impl Into<String>,
        runner: Arc<dyn AgentRunner>,
        opts: CronOptions,
    ) -> Result<Self> {
        let member_id = member_id.into();
        if member_id.trim().is_empty() {
            return Err(CronError::invalid(
                "member_id",
                "a fleet member needs a non-empty id (talon_state::members::new_member_id)",
            ));
        }
        if opts.lease_renew_every.is_zero() || opts.lease_renew_every >= opts.lease_ttl {
            return Err(CronError::invalid(
                "lease_renew_every",
                format!(
                    "the lease is renewed every {:?} but lasts {:?}: renew more often than it lasts (default every 1 s for 5 s)",
                    opts.lease_renew_every, opts.lease_ttl
                ),
            ));
        }
        let fleet = Fleet {
            lease,
            member_id,
            held: Mutex::new(None),
            task: Mutex::new(None),
        };
        Ok(CronService::with_store(store, Some(fleet), runner, opts))
    }

    /// [`open_fleet`](Self::open_fleet) on PostgreSQL: the job store on
    /// `pool` (migrated at open; a newer schema is refused) and the `cron`
    /// lease there.
    #[cfg(feature = "postgres")]
    pub fn open_postgres(
        pool: &talon_state::PgPool,
        member_id: &str,
        runner: Arc<dyn AgentRunner>,
        opts: CronOptions,
    ) -> Result<Self> {
        let store = crate::postgres::open_store(pool)?;
        let lease = Arc::new(crate::postgres::PgTimerLease::new(pool));
        CronService::open_fleet(store, lease, member_id, runner, opts)
    }

    fn with_store(
        store: CronStore,
        fleet: Option<Fleet>,
        runner: Arc<dyn AgentRunner>,
        opts: CronOptions,
    ) -> Self {
        CronService {
            inner: Arc::new(Inner {
                store: Mutex::new(store),
                fleet,
                runner,
                opts,
                timer: Mutex::new(None),
                in_flight: Mutex::new(HashMap::new()),
                stats: Mutex::new(TimerStats::default()),
                started: AtomicBool::new(false),
                stopped: AtomicBool::new(false),
                last_tick: Mutex::new(None),
            }),
        }
    }

    fn now(&self) -> i64 {
        self.inner.opts.clock.now_ms()
    }

    /// Recover from the previous process and start the timer (needs a
    /// tokio runtime). Jobs left `running` are marked interrupted and
    /// rescheduled (recurring: next natural slot; one-shot marked
    /// `idempotent`: retried after the backoff, counted as an error so a job
    /// that keeps killing the process stops; any other one-shot: not
    /// re-run, left for the operator); missed jobs follow the catch-up policy: the five
    /// earliest run from 2 s after start, 5 s apart; further recurring jobs move to their
    /// next natural slot, further one-shot jobs are deferred by 2 min.
    pub fn start(&self) -> Result<RecoveryReport> {
        if tokio::runtime::Handle::try_current().is_err() {
            return Err(CronError::NotRunning(
                "start() must be called inside a tokio runtime".into(),
            ));
        }
        if let Some(fleet) = &self.inner.fleet {
            // On a shared store the previous owner may be alive: nothing
            // is recovered until this gateway holds the timer lease (the
            // takeover marks the runs of earlier owners interrupted).
            self.inner.stopped.store(false, Ordering::SeqCst);
            self.inner.started.store(true, Ordering::SeqCst);
            let report = Inner::lease_step(&self.inner).unwrap_or_default();
            Inner::spawn_lease_loop(&self.inner, fleet);
            tracing::info!(
                member = %fleet.member_id,
                owner = lock(&fleet.held).is_some(),
                interrupted = report.interrupted.len(),
                "cron service started (fleet)"
            );
            return Ok(report);
        }
        let now = self.now();
        let mut report = RecoveryReport::default();
        {
            let mut store = lock(&self.inner.store);
            store.interrupt_running_runs(now)?;
            for job in store.running()? {
                let job = self.inner.reschedule_interrupted(job, now);
                store.put(&job)?;
                tracing::warn!(job = %job.id, "cron job was running when the process stopped; rescheduled");
                report.interrupted.push(job.id);
            }
            let missed = store.due(now - 1, usize::MAX)?;
            let mut deferred = 0;
            for (i, mut job) in missed.into_iter().enumerate() {
                if i < MAX_MISSED_JOBS_PER_RESTART {
                    // The first after the minimum re-fire gap, then 5 s apart.
                    job.state.next_run_at_ms = Some(
                        now + MIN_REFIRE_GAP_MS
                            + i64::try_from(i).unwrap_or(0) * MISSED_JOB_STAGGER_MS,
                    );
                    report.caught_up.push(job.id.clone());
                } else if job.schedule.is_one_shot() {
                    job.state.next_run_at_ms =
                        Some(now + DEFERRED_MISSED_DELAY_MS + deferred * MISSED_JOB_STAGGER_MS);
                    deferred += 1;
                    report.deferred.push(job.id.clone());
                } else {
                    job.state.next_run_at_ms =
                        job.schedule.next_after(now, &job.id).unwrap_or(None);
                    report.skipped.push(job.id.clone());
                }
                store.put(&job)?;
            }
        }
        if let Some(ledger) = &self.inner.opts.ledger {
            let orphans = ledger.list(&TaskFilter {
                status: Some(TaskStatus::Running),
                runtime: Some(TaskRuntime::Cron),
                ..TaskFilter::default()
            })?;
            for t in orphans {
                let _ = ledger.finish(
                    &t.task_id,
                    TaskStatus::Lost,
                    TaskOutcome {
                        error: Some("the process stopped while this cron run was in flight".into()),
                        ..TaskOutcome::default()
                    },
                );
            }
        }
        self.inner.stopped.store(false, Ordering::SeqCst);
        self.inner.started.store(true, Ordering::SeqCst);
        Inner::arm(&self.inner);
        tracing::info!(
            interrupted = report.interrupted.len(),
            caught_up = report.caught_up.len(),
            "cron service started"
        );
        Ok(report)
    }

    /// Stop the timer and abort runs in flight. Aborted runs keep their
    /// `running` records, exactly as after a crash: the next
    /// [`start`](Self::start) marks them interrupted.
    ///
    /// On a shared store the lease is released, so another gateway takes
    /// the timer over at its next renewal round rather than after the
    /// lease time; it marks this one's aborted runs interrupted.
    pub fn stop(&self) {
        self.inner.stopped.store(true, Ordering::SeqCst);
        self.inner.started.store(false, Ordering::SeqCst);
        if let Some(fleet) = &self.inner.fleet
            && let Some(t) = lock(&fleet.task).take()
        {
            t.abort();
        }
        if let Some(h) = lock(&self.inner.timer).take() {
            h.abort();
        }
        self.inner.abort_in_flight();
        if let Some(fleet) = &self.inner.fleet {
            let held = lock(&fleet.held).take();
            if let Some(held) = held
                && let Err(e) = fleet.lease.release(&held.grant)
            {
                tracing::warn!(error = %e, "cron: cannot release the timer lease; another gateway takes it when it lapses");
            }
        }
    }

    /// Who owns the timer, on a store a fleet shares (`None` on SQLite,
    /// where this process always does). Reads the lease from the database.
    pub fn timer_lease(&self) -> Result<Option<TimerLeaseStatus>> {
        let Some(fleet) = &self.inner.fleet else {
            return Ok(None);
        };
        let holder = fleet.lease.current()?;
        let owner_here = matches!(self.inner.fire_right(), FireRight::Token(_))
            && holder.as_ref().is_some_and(|h| h.holder == fleet.member_id);
        Ok(Some(TimerLeaseStatus {
            member_id: fleet.member_id.clone(),
            holder,
            owner_here,
        }))
    }

    /// Add a job for `creator` (its tools cap the job's). Refused with
    /// [`CronError::Quota`] when the creating session or the agent already
    /// holds its most jobs, or a recurring schedule runs more often than
    /// the minimum interval (`cron.quotas`).
    pub fn add(&self, spec: JobSpec, creator: &Creator) -> Result<JobChange> {
        let now = self.now();
        let (job, dropped_tools) = build_job(new_id("job"), spec, creator, now)?;
        let opts = &self.inner.opts;
        opts.webhooks.vet(job.delivery.as_ref(), "delivery")?;
        opts.quotas
            .check_interval(&job.schedule, now, "job.schedule")?;
        // Counted and stored in one store transaction, serialised against
        // every other admission (other gateways on a shared store too):
        // concurrent adds cannot both pass the count.
        let admission = lock(&self.inner.store).put_admitted(
            &job,
            opts.quotas.max_jobs_per_creator,
            opts.quotas.max_jobs_per_agent,
        )?;
        opts.quotas.refusal(admission, &job)?;
        tracing::info!(job = %job.id, agent = %job.agent_id, kind = job.schedule.kind(), "cron job added");
        Inner::arm(&self.inner);
        Ok(JobChange { job, dropped_tools })
    }

    /// Change a job (re-capped by its creator's and `creator`'s tools).
    pub fn update(&self, id: &str, patch: JobPatch, creator: &Creator) -> Result<JobChange> {
        let now = self.now();
        let mut attempts = 0;
        let job = loop {
            let mut store = lock(&self.inner.store);
            let mut job = store
                .get(id)?
                .ok_or_else(|| CronError::NotFound(id.to_owned()))?;
            let read = (job.state.running_at_ms, job.state.next_run_at_ms);
            let patch = patch.clone();
            let before = job.schedule.clone();
            let dropped_tools = apply_patch(&mut job, patch, creator, now)?;
            self.inner
                .opts
                .webhooks
                .vet(job.delivery.as_ref(), "patch.delivery")?;
            // A schedule that changed meets the minimum interval (an
            // unchanged one, stored before a lower limit, is left alone).
            if job.schedule != before {
                self.inner
                    .opts
                    .quotas
                    .check_interval(&job.schedule, now, "patch.schedule")?;
            }
            // Written only if no fire or finish (here or on another
            // gateway) moved the job since it was read.
            if store.put_if_unchanged(&job, read.0, read.1)? {
                break JobChange { job, dropped_tools };
            }
            attempts += 1;
            if attempts >= UPDATE_ATTEMPTS {
                return Err(CronError::Changed(id.to_owned()));
            }
        };
        Inner::arm(&self.inner);
        Ok(job)
    }

    /// Remove a job (cancelling its run in flight). `false` if unknown.
    pub fn remove(&self, id: &str) -> Result<bool> {
        let removed = lock(&self.inner.store).delete(id)?;
        if let Some(f) = lock(&self.inner.in_flight).get(id) {
            f.token.cancel();
        }
        Inner::arm(&self.inner);
        Ok(removed)
    }

    /// One job.
    pub fn get(&self, id: &str) -> Result<Option<CronJob>> {
        lock(&self.inner.store).get(id)
    }

    /// Jobs ordered by next run.
    pub fn list(&self, include_disabled: bool) -> Result<Vec<CronJob>> {
        lock(&self.inner.store).list(include_disabled)
    }

    /// A job's run history, newest first.
    pub fn runs(&self, id: &str, limit: usize) -> Result<Vec<RunRecord>> {
        lock(&self.inner.store).runs(id, limit)
    }

    /// The service's state.
    pub fn status(&self) -> Result<CronStatus> {
        let (jobs, enabled_jobs, next_wake_at_ms) = {
            let store = lock(&self.inner.store);
            let (t, e, _) = store.counts()?;
            (t, e, store.next_wake()?)
        };
        let mut running: Vec<String> = lock(&self.inner.in_flight).keys().cloned().collect();
        running.sort();
        Ok(CronStatus {
            started: self.inner.started.load(Ordering::SeqCst),
            jobs,
            enabled_jobs,
            next_wake_at_ms,
            running,
            timer: self.stats(),
            lease: self.timer_lease()?,
        })
    }

    /// Timer counters.
    pub fn stats(&self) -> TimerStats {
        lock(&self.inner.stats).clone()
    }

    /// Run a job now: `force` runs it whatever its schedule (disabled jobs
    /// too); otherwise only if it is due. Returns once the run started.
    pub fn run_now(&self, id: &str, force: bool) -> Result<RunNow> {
        let now = self.now();
        let job = self
            .get(id)?
            .ok_or_else(|| CronError::NotFound(id.to_owned()))?;
        if job.state.running_at_ms.is_some() || lock(&self.inner.in_flight).contains_key(id) {
            return Ok(RunNow {
                ran: false,
                reason: "already-running".into(),
                run_id: None,
            });
        }
        let due = job.enabled && job.state.next_run_at_ms.is_some_and(|t| t <= now);
        if !force && !due {
            return Ok(RunNow {
                ran: false,
                reason: "not-due".into(),
                run_id: None,
            });
        }
        if let FireRight::NotOwner = self.inner.fire_right() {
            // Another gateway owns the timer: make the job due now there
            // (it re-reads the due jobs within a lease renewal period).
            if !job.enabled {
                return Ok(RunNow {
                    ran: false,
                    reason: "not-timer-owner".into(),
                    run_id: None,
                });
            }
            let mut store = lock(&self.inner.store);
            let mut queued = false;
            if let Some(mut current) = store.get(id)?
                && current.state.running_at_ms.is_none()
            {
                let read = current.state.next_run_at_ms;
                current.state.next_run_at_ms = Some(read.map_or(now, |t| t.min(now)));
                // Not if the owner fired it meanwhile.
                queued = store.put_if_unchanged(&current, None, read)?;
            }
            return Ok(RunNow {
                ran: false,
                reason: if queued {
                    "queued-on-timer-owner"
                } else {
                    "already-running"
                }
                .into(),
                run_id: None,
            });
        }
        if tokio::runtime::Handle::try_current().is_err() {
            return Err(CronError::NotRunning(
                "run_now needs a tokio runtime".into(),
            ));
        }
        let run_id = Inner::launch(&self.inner, job, "manual", now)?;
        let reason = match (&run_id, self.inner.fire_right()) {
            (Some(_), _) => "started",
            // The store refused the run under this gateway's lease token.
            (None, FireRight::NotOwner) => "not-timer-owner",
            (None, _) => "already-running",
        };
        Ok(RunNow {
            ran: run_id.is_some(),
            reason: reason.into(),
            run_id,
        })
    }

    /// Send a system event to an agent's session (the `wake` action).
    pub async fn wake(&self, event: SystemEventRequest) -> Result<()> {
        self.inner.runner.system_event(event).await.map_err(|f| {
            CronError::NotRunning(format!("the runner refused the wake: {}", f.message))
        })
    }
}

impl Inner {
    /// Whether this process may fire due jobs now.
    fn fire_right(&self) -> FireRight {
        let Some(fleet) = &self.fleet else {
            return FireRight::Single;
        };
        match lock(&fleet.held).as_ref() {
            Some(h) if tokio::time::Instant::now() < h.until => FireRight::Token(h.grant.token),
            _ => FireRight::NotOwner,
        }
    }

    /// Cancel and abort every run in flight; their `running` records stay
    /// for whoever recovers next.
    fn abort_in_flight(&self) {
        for (_, f) in lock(&self.in_flight).drain() {
            f.token.cancel();
            if let Some(a) = f.abort {
                a.abort();
            }
        }
    }

    /// A job found running whose process is gone: recurring jobs move to
    /// their next natural slot; a one-shot job marked `idempotent` is
    /// retried after the backoff (counted as an error); any other one-shot
    /// job is not re-run.
    fn reschedule_interrupted(&self, mut job: CronJob, now: i64) -> CronJob {
        job.state.running_at_ms = None;
        job.state.last_status = Some(RunStatus::Interrupted);
        job.state.last_error = Some("the process stopped while this job was running".into());
        if job.schedule.is_one_shot() && !job.idempotent {
            // It may have done part of its work: never run it again
            // behind the operator's back.
            job.state.next_run_at_ms = None;
            job.state.last_error = Some(
                "the process stopped while this one-shot job was running; it is not marked idempotent, so it was not re-run (run it again with cron.run, or set idempotent: true)".into(),
            );
        } else if job.schedule.is_one_shot() {
            job.state.consecutive_errors += 1;
            if job.state.consecutive_errors <= self.opts.max_attempts {
                job.state.next_run_at_ms =
                    Some(now + self.opts.backoff(job.state.consecutive_errors));
            } else {
                job.enabled = false;
                job.state.next_run_at_ms = None;
            }
        } else {
            job.state.next_run_at_ms = job.schedule.next_after(now, &job.id).unwrap_or(None);
        }
        job
    }

    /// One renewal round of the timer lease: renew it when held (losing it
    /// when another took it, or when it could not be renewed before it ran
    /// out), else try to take it, and on taking it recover from the
    /// previous owner. Blocks on the database.
    fn lease_step(this: &Arc<Inner>) -> Option<RecoveryReport> {
        let fleet = this.fleet.as_ref()?;
        if this.stopped.load(Ordering::SeqCst) {
            return None;
        }
        let ttl = this.opts.lease_ttl;
        let asked = tokio::time::Instant::now();
        let held = lock(&fleet.held)
            .as_ref()
            .map(|h| (h.grant.clone(), h.until));
        match held {
            Some((grant, until)) => match fleet.lease.renew(&grant, ttl) {
                Ok(Some(grant)) => {
                    *lock(&fleet.held) = Some(Held {
                        grant,
                        until: asked + ttl,
                    });
                    // A tick that found the hold run out (a slow renewal)
                    // left no timer: the renewed hold arms it again.
                    if lock(&this.timer).is_none() {
                        Inner::arm(this);
                    }
                    None
                }
                Ok(None) => {
                    Inner::lose_lease(this, "another gateway took the cron timer lease");
                    None
                }
                Err(e) => {
                    tracing::warn!(error = %e, "cron: cannot renew the timer lease");
                    if tokio::time::Instant::now() >= until {
                        Inner::lose_lease(
                            this,
                            "the cron timer lease ran out before it could be renewed",
                        );
                    }
                    None
                }
            },
            None => match fleet.lease.acquire(&fleet.member_id, ttl) {
                Ok(Some(grant)) => {
                    let token = grant.token;
                    *lock(&fleet.held) = Some(Held {
                        grant,
                        until: asked + ttl,
                    });
                    match Inner::take_over(this, token) {
                        Ok(report) => {
                            tracing::info!(
                                member = %fleet.member_id,
                                token,
                                interrupted = report.interrupted.len(),
                                "cron: this gateway owns the timer"
                            );
                            Inner::arm(this);
                            Some(report)
                        }
                        Err(e) => {
                            // Not trusted to fire before the previous
                            // owner's runs are settled: the next round
                            // takes the lease again (same token) and retries.
                            tracing::warn!(error = %e, "cron: cannot take the timer over yet");
                            lock(&fleet.held).take();
                            None
                        }
                    }
                }
                Ok(None) => None,
                Err(e) => {
                    tracing::debug!(error = %e, "cron: cannot try the timer lease");
                    None
                }
            },
        }
    }

    /// This gateway no longer owns the timer: stop firing and abort its
    /// runs in flight (their `running` records are the new owner's to mark
    /// interrupted; nothing more is written under the old token).
    fn lose_lease(this: &Arc<Inner>, why: &str) {
        let Some(fleet) = &this.fleet else {
            return;
        };
        let was = lock(&fleet.held).take();
        if let Some(h) = lock(&this.timer).take() {
            h.abort();
        }
        let runs = lock(&this.in_flight).len();
        this.abort_in_flight();
        if let Some(was) = was {
            tracing::warn!(member = %fleet.member_id, token = was.grant.token, runs_aborted = runs, "cron: {why}; this gateway stopped firing jobs");
        }
    }

    /// A new timer owner (lease token `token`) settles what earlier owners
    /// left: their `running` runs are marked interrupted (fenced: refused
    /// if the lease moved on again), and every job still marked running
    /// whose newest run is not `running` is rescheduled like a job found
    /// running at a restart. Their ledger tasks are recorded lost.
    fn take_over(this: &Arc<Inner>, token: i64) -> Result<RecoveryReport> {
        let now = this.opts.clock.now_ms();
        let mut report = RecoveryReport::default();
        let interrupted = {
            let mut store = lock(&this.store);
            let interrupted = store.interrupt_runs_before(now, token)?;
            for job in store.running()? {
                let newest = store.runs(&job.id, 1)?;
                if newest
                    .first()
                    .is_some_and(|r| r.status == RunStatus::Running)
                {
                    continue;
                }
                let job = this.reschedule_interrupted(job, now);
                store.put(&job)?;
                tracing::warn!(job = %job.id, "cron job was running under the previous timer owner; marked interrupted and rescheduled");
                report.interrupted.push(job.id);
            }
            interrupted
        };
        if let Some(ledger) = &this.opts.ledger {
            for run in &interrupted {
                if let Err(e) = ledger.finalize_by_run_id(
                    &run.run_id,
                    TaskStatus::Lost,
                    TaskOutcome {
                        ended_at: Some(now),
                        error: Some(
                            "the gateway that owned the cron timer stopped while this run was in flight"
                                .into(),
                        ),
                        summary: None,
                    },
                ) {
                    tracing::warn!(error = %e, run = %run.run_id, "cron: cannot record the interrupted run's task lost");
                }
            }
        }
        Ok(report)
    }

    /// Renew (or try) the timer lease every `lease_renew_every`, off the
    /// async threads.
    fn spawn_lease_loop(this: &Arc<Inner>, fleet: &Fleet) {
        let weak = Arc::downgrade(this);
        let every = this.opts.lease_renew_every;
        let handle = tokio::spawn(async move {
            let mut ticks = tokio::time::interval(every);
            ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            // The first tick is now: `start` just did a round.
            ticks.tick().await;
            loop {
                ticks.tick().await;
                let Some(inner) = weak.upgrade() else {
                    return;
                };
                if inner.stopped.load(Ordering::SeqCst) {
                    return;
                }
                if tokio::task::spawn_blocking(move || Inner::lease_step(&inner))
                    .await
                    .is_err()
                {
                    tracing::error!("cron: a timer lease round failed to run");
                }
            }
        })
        .abort_handle();
        if let Some(old) = lock(&fleet.task).replace(handle) {
            old.abort();
        }
    }

    /// (Re-)arm the single timer from the store's earliest next run.
    fn arm(this: &Arc<Inner>) {
        if !this.started.load(Ordering::SeqCst) || this.stopped.load(Ordering::SeqCst) {
            return;
        }
        // In a fleet only the timer owner has a timer, and it re-reads the
        // due jobs at least every renewal period: jobs change on every
        // member.
        let max_delay = match (&this.fleet, this.fire_right()) {
            (Some(_), FireRight::NotOwner) => {
                if let Some(old) = lock(&this.timer).take() {
                    old.abort();
                }
                return;
            }
            (Some(_), _) => i64::try_from(this.opts.lease_renew_every.as_millis())
                .unwrap_or(MAX_TIMER_DELAY_MS)
                .clamp(1, MAX_TIMER_DELAY_MS),
            (None, _) => MAX_TIMER_DELAY_MS,
        };
        let now = this.opts.clock.now_ms();
        let next = match lock(&this.store).next_wake() {
            Ok(n) => n,
            Err(e) => {
                tracing::error!(error = %e, "cron: cannot read the next wake; retrying within a minute");
                None
            }
        };
        let delay = match next {
            Some(t) => (t - now).max(0),
            None => MAX_TIMER_DELAY_MS,
        };
        let delay = if delay == 0 { MIN_REFIRE_GAP_MS } else { delay }.min(max_delay);
        let weak: Weak<Inner> = Arc::downgrade(this);
        // A shared database may stall (lost, reconnecting): a fleet's tick
        // runs off the async threads. A single process keeps it inline, so
        // tests on tokio's paused clock stay deterministic.
        let off_thread = this.fleet.is_some();
        let handle = tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(u64::try_from(delay).unwrap_or(0))).await;
            if let Some(inner) = weak.upgrade() {
                if off_thread {
                    if tokio::task::spawn_blocking(move || Inner::on_timer(&inner))
                        .await
                        .is_err()
                    {
                        tracing::error!("cron: a timer tick failed to run");
                    }
                } else {
                    Inner::on_timer(&inner);
                }
            }
        })
        .abort_handle();
        if let Some(old) = lock(&this.timer).replace(handle) {
            old.abort();
        }
        let mut s = lock(&this.stats);
        s.arms += 1;
        s.last_delay_ms = Some(delay);
    }

    /// The timer callback. Deliberately not async: it starts due runs as
    /// their own tasks and re-arms, so nothing awaits a run here.
    fn on_timer(this: &Arc<Inner>) {
        // This task is finishing; forget its handle so `arm` does not abort
        // the task that is calling it.
        lock(&this.timer).take();
        lock(&this.stats).fires += 1;
        if let Err(e) = Inner::tick(this) {
            tracing::error!(error = %e, "cron tick failed");
        }
        Inner::arm(this);
    }

    fn tick(this: &Arc<Inner>) -> Result<()> {
        if let FireRight::NotOwner = this.fire_right() {
            return Ok(());
        }
        let now = this.opts.clock.now_ms();
        let mono = tokio::time::Instant::now();
        let previous = lock(&this.last_tick).replace((now, mono));
        if let Some((wall, at)) = previous {
            let elapsed = i64::try_from(mono.duration_since(at).as_millis()).unwrap_or(i64::MAX);
            let expected = wall.saturating_add(elapsed);
            if now < expected - CLOCK_STEP_BACK_TOLERANCE_MS {
                Inner::rebase_after_step_back(this, now, expected - now)?;
            }
        }
        Inner::reap_stuck(this, now)?;
        let in_flight = lock(&this.in_flight).len();
        let capacity = this.opts.max_concurrent_runs.saturating_sub(in_flight);
        if capacity == 0 {
            return Ok(());
        }
        let due = lock(&this.store).due(now, capacity)?;
        for job in due {
            Inner::launch(this, job, "scheduled", now)?;
        }
        Ok(())
    }

    /// The wall clock stepped back by `step_ms`: a recurring job whose next
    /// run is later than its natural next slot from `now` would stall for
    /// the size of the step, so it moves to that slot. One-shot jobs keep
    /// their absolute time.
    fn rebase_after_step_back(this: &Arc<Inner>, now: i64, step_ms: i64) -> Result<()> {
        let mut store = lock(&this.store);
        let mut moved = 0_u32;
        for mut job in store.list(false)? {
            if job.schedule.is_one_shot() || job.state.running_at_ms.is_some() {
                continue;
            }
            let mut changed = false;
            // An `every` job's slot grid is `anchor + k·every`. An anchor
            // that was already past before the step but lies ahead of the
            // new time moves back by whole intervals (phase kept), or every
            // later run would wait for it.
            if let Schedule::Every {
                every_ms,
                anchor_ms: Some(anchor),
            } = &mut job.schedule
                && *anchor > now
                && *anchor <= now + step_ms
            {
                let every = (*every_ms).max(1);
                let k = (now - *anchor).div_euclid(every);
                *anchor = anchor.saturating_add(k.saturating_mul(every));
                changed = true;
            }
            let natural = job.schedule.next_after(now, &job.id).unwrap_or(None);
            if let (Some(next), Some(natural)) = (job.state.next_run_at_ms, natural)
                && next > natural
            {
                job.state.next_run_at_ms = Some(natural);
                changed = true;
            }
            if changed {
                store.put(&job)?;
                moved += 1;
            }
        }
        tracing::warn!(
            step_ms,
            moved,
            "cron: the wall clock stepped back; recurring jobs rescheduled from the new time"
        );
        Ok(())
    }

    /// Clear markers of runs stuck for 2 h (their task is gone or hung).
    fn reap_stuck(this: &Arc<Inner>, now: i64) -> Result<()> {
        let mut store = lock(&this.store);
        for mut job in store.running()? {
            let since = job.state.running_at_ms.unwrap_or(now);
            if now - since < STUCK_RUN_MS {
                continue;
            }
            if let Some(f) = lock(&this.in_flight).remove(&job.id) {
                f.token.cancel();
                if let Some(a) = f.abort {
                    a.abort();
                }
            }
            job.state.running_at_ms = None;
            job.state.last_status = Some(RunStatus::Error);
            job.state.last_error = Some("run stuck for 2 h; cleared".into());
            job.state.consecutive_errors += 1;
            let natural = job.schedule.next_after(now, &job.id).unwrap_or(None);
            job.state.next_run_at_ms = if job.schedule.is_one_shot() {
                None
            } else {
                natural
            };
            if job.schedule.is_one_shot() {
                job.enabled = false;
            }
            store.put(&job)?;
            tracing::warn!(job = %job.id, "cron run stuck for 2 h; marker cleared");
        }
        Ok(())
    }

    /// Mark the job running, write the history row, start the run task.
    fn launch(
        this: &Arc<Inner>,
        mut job: CronJob,
        reason: &str,
        now: i64,
    ) -> Result<Option<String>> {
        let run_id = new_id("cronrun");
        let session_key = format!("agent:{}:cron:{}:run:{}", job.agent_id, job.id, run_id);
        // A scheduled run fires the slot that was due; a manual one none.
        let slot = if reason == "manual" {
            None
        } else {
            job.state.next_run_at_ms
        };
        job.state.running_at_ms = Some(now);
        job.state.last_run_at_ms = Some(now);
        let record = RunRecord {
            run_id: run_id.clone(),
            job_id: job.id.clone(),
            session_key: Some(session_key.clone()),
            reason: reason.to_owned(),
            started_at_ms: now,
            ended_at_ms: None,
            status: RunStatus::Running,
            error: None,
            summary: None,
            slot_ms: slot,
        };
        let fence = match this.fire_right() {
            FireRight::Single => None,
            FireRight::Token(t) => Some(t),
            FireRight::NotOwner => return Ok(None),
        };
        let begun = lock(&this.store).begin_fenced_run(&job, &record, fence);
        let begun = match begun {
            Err(e) if e.is_fenced() => {
                lock(&this.stats).fenced += 1;
                // Another gateway took the lease: this one's write was
                // refused and the job does not run here.
                Inner::lose_lease(this, "the store refused a fire under a stale lease token");
                return Ok(None);
            }
            other => other?,
        };
        match begun {
            BeginRun::Started => {}
            BeginRun::AlreadyRunning => return Ok(None),
            BeginRun::SlotTaken => {
                // This slot already ran (the clock stepped back onto it):
                // move on to the next one rather than firing it again.
                let mut store = lock(&this.store);
                if let Some(mut current) = store.get(&job.id)?
                    && current.state.running_at_ms.is_none()
                    && current.state.next_run_at_ms == slot
                {
                    let after = slot.unwrap_or(now).max(now);
                    current.state.next_run_at_ms = current
                        .schedule
                        .next_after(after, &current.id)
                        .unwrap_or(None);
                    store.put(&current)?;
                }
                tracing::warn!(job = %job.id, slot = ?slot, "cron slot already ran; moved to the next one");
                return Ok(None);
            }
        }
        // With a ledger, the run's token is its task's: `tasks cancel`
        // (or the ledger's sweep) stops the run.
        let mut token = CancellationToken::new();
        if let Some(ledger) = &this.opts.ledger {
            match ledger.create(NewTask {
                runtime: Some(TaskRuntime::Cron),
                task_kind: Some(job.payload.kind().to_owned()),
                source_id: Some(job.id.clone()),
                requester_session_key: job
                    .creator_session_key
                    .clone()
                    .unwrap_or_else(|| format!("cron:{}", job.id)),
                child_session_key: Some(session_key.clone()),
                agent_id: Some(job.agent_id.clone()),
                run_id: Some(run_id.clone()),
                label: Some(job.name.clone()),
                task: format!("cron job {}", job.name),
                start_running: true,
                ..NewTask::default()
            }) {
                Ok(task) => token = ledger.token(&task.task_id),
                Err(e) => {
                    tracing::warn!(error = %e, job = %job.id, "cron: cannot record the run in the task ledger");
                }
            }
        }
        lock(&this.in_flight).insert(
            job.id.clone(),
            InFlight {
                token: token.clone(),
                abort: None,
            },
        );
        lock(&this.stats).runs_started += 1;
        let inner = Arc::clone(this);
        let job_id = job.id.clone();
        let handle = tokio::spawn(async move {
            let result = Inner::execute(&inner, &job, &record, token).await;
            if inner.fleet.is_some() {
                // A shared database may be unreachable for a while: the
                // outcome is recorded (with retries) off the async threads.
                let (done, id) = (Arc::clone(&inner), job.id.clone());
                if tokio::task::spawn_blocking(move || Inner::complete(&done, &id, record, result))
                    .await
                    .is_err()
                {
                    tracing::error!(job = %job.id, "cron: recording a run's outcome failed to run");
                }
            } else {
                Inner::complete(&inner, &job.id, record, result);
            }
            lock(&inner.in_flight).remove(&job.id);
            lock(&inner.stats).runs_finished += 1;
            Inner::arm(&inner);
        });
        if let Some(f) = lock(&this.in_flight).get_mut(&job_id) {
            f.abort = Some(handle.abort_handle());
        }
        tracing::info!(job = %job_id, run = %run_id, reason, "cron run started");
        Ok(Some(run_id))
    }

    async fn execute(
        this: &Arc<Inner>,
        job: &CronJob,
        record: &RunRecord,
        token: CancellationToken,
    ) -> std::result::Result<RunReport, RunFailure> {
        match &job.payload {
            Payload::SystemEvent { text } => this
                .runner
                .system_event(SystemEventRequest {
                    agent_id: job.agent_id.clone(),
                    session_key: None,
                    text: text.clone(),
                    wake_mode: job.wake_mode,
                    job_id: Some(job.id.clone()),
                })
                .await
                .map(|()| RunReport {
                    status: RunReportStatus::Ok,
                    summary: Some("system event delivered".into()),
                }),
            Payload::AgentTurn {
                message,
                model,
                thinking,
                timeout_seconds,
            } => {
                let timeout = match timeout_seconds {
                    Some(s) if *s > 0.0 => {
                        Duration::try_from_secs_f64(*s).unwrap_or(this.opts.default_timeout)
                    }
                    _ => this.opts.default_timeout,
                };
                // A budget too large to add (1e15 s) is as good as none.
                let start = tokio::time::Instant::now();
                let deadline = start
                    .checked_add(timeout)
                    .unwrap_or_else(|| start + Duration::from_secs(100 * 365 * 86_400));
                let run = IsolatedRun {
                    job_id: job.id.clone(),
                    job_name: job.name.clone(),
                    run_id: record.run_id.clone(),
                    agent_id: job.agent_id.clone(),
                    session_key: record.session_key.clone().unwrap_or_default(),
                    requester_session_key: job.creator_session_key.clone(),
                    message: message.clone(),
                    model: model.clone(),
                    thinking: thinking.clone(),
                    tools: job.effective_run_tools(),
                    // Vetted again now: the allowlist may have narrowed
                    // since the job was stored. A refused target is not
                    // handed to the runner; the run goes on undelivered.
                    delivery: job.delivery.clone().filter(|d| {
                        this.opts
                            .webhooks
                            .vet(Some(d), "job.delivery")
                            .inspect_err(|_| {
                                // Not the URL: webhook URLs often carry a token.
                                tracing::warn!(job = %job.id, "cron webhook target refused by the egress rules; the run is not delivered");
                            })
                            .is_ok()
                    }),
                    cancel: token.clone(),
                    timeout,
                    deadline,
                };
                // At `deadline` the run is over whatever the runner does:
                // the token is cancelled and the runner's future dropped
                // (the runner tells the timeout from other cancellations by
                // the deadline having passed).
                tokio::select! {
                    biased;
                    () = tokio::time::sleep_until(deadline) => {
                        token.cancel();
                        Err(RunFailure::timed_out(timeout))
                    }
                    r = this.runner.run_isolated(run) => r,
                    () = token.cancelled() => Err(RunFailure::permanent("cancelled (job removed or service stopped)")),
                }
            }
        }
    }

    /// Whether to try a failed store call again after a pause: only in a
    /// fleet (where this runs on a blocking thread), only while the shared
    /// database is unreachable and this gateway still owns the timer (a
    /// new owner settles the run otherwise), at most
    /// [`STORE_RETRIES`] times.
    fn retry_store(this: &Arc<Inner>, e: &CronError, attempts: &mut u32) -> bool {
        let again = this.fleet.is_some()
            && e.is_unavailable()
            && *attempts < STORE_RETRIES
            && matches!(this.fire_right(), FireRight::Token(_));
        if again {
            *attempts += 1;
            tracing::warn!(error = %e, attempt = *attempts, "cron: the store is unreachable; recording the run's outcome again shortly");
            std::thread::sleep(STORE_RETRY_PAUSE);
        }
        again
    }

    /// Record the outcome and compute the next run (backoff, one-shot rules).
    fn complete(
        this: &Arc<Inner>,
        job_id: &str,
        mut record: RunRecord,
        result: std::result::Result<RunReport, RunFailure>,
    ) {
        let now = this.opts.clock.now_ms();
        let opts = &this.opts;
        record.ended_at_ms = Some(now);
        let started = record;
        let mut attempts = 0_u32;
        let (record, task_status, task_error) = loop {
            let mut record = started.clone();
            let mut store = lock(&this.store);
            // The job may have been changed or removed while it ran.
            let current = match store.get(job_id) {
                Ok(j) => j,
                Err(e) => {
                    drop(store);
                    if Inner::retry_store(this, &e, &mut attempts) {
                        continue;
                    }
                    // Never finish without the job: that would delete it. The
                    // run stays `running` for the next recovery to mark.
                    tracing::error!(error = %e, job = %job_id, "cron: cannot reload the job after its run; its outcome is not recorded");
                    return;
                }
            };
            let mut task_status = TaskStatus::Succeeded;
            let mut task_error = None;
            let next_job = current.and_then(|mut job| {
            job.state.running_at_ms = None;
            job.state.last_duration_ms = Some(now - record.started_at_ms);
            let natural = |job: &mut CronJob| match job.schedule.next_after(now, &job.id) {
                Ok(n) => {
                    job.state.schedule_errors = 0;
                    n
                }
                Err(e) => {
                    job.state.schedule_errors += 1;
                    job.state.last_error = Some(format!("schedule error: {e}"));
                    if job.state.schedule_errors >= SCHEDULE_ERROR_LIMIT {
                        job.enabled = false;
                        tracing::warn!(job = %job.id, "cron job auto-disabled after {} consecutive schedule errors", job.state.schedule_errors);
                        None
                    } else {
                        Some(now + MAX_TIMER_DELAY_MS)
                    }
                }
            };
            match &result {
                Ok(report) => {
                    record.status = match report.status {
                        RunReportStatus::Ok => RunStatus::Ok,
                        RunReportStatus::Skipped => RunStatus::Skipped,
                    };
                    record.summary.clone_from(&report.summary);
                    job.state.last_status = Some(record.status);
                    job.state.last_error = None;
                    job.state.consecutive_errors = 0;
                    if job.schedule.is_one_shot() {
                        if job.delete_after_run && record.status == RunStatus::Ok {
                            return None;
                        }
                        job.enabled = false;
                        job.state.next_run_at_ms = None;
                    } else {
                        job.state.next_run_at_ms = natural(&mut job);
                    }
                }
                Err(f) => {
                    record.status = if f.timed_out {
                        RunStatus::Timeout
                    } else {
                        RunStatus::Error
                    };
                    record.error = Some(f.message.clone());
                    task_status = if f.timed_out { TaskStatus::TimedOut } else { TaskStatus::Failed };
                    task_error = Some(f.message.clone());
                    job.state.last_status = Some(record.status);
                    job.state.last_error = Some(f.message.clone());
                    job.state.consecutive_errors += 1;
                    let backoff = opts.backoff(job.state.consecutive_errors);
                    if job.schedule.is_one_shot() {
                        if f.transient && job.state.consecutive_errors <= opts.max_attempts {
                            job.state.next_run_at_ms = Some(now + backoff);
                        } else {
                            // Kept (disabled) for inspection.
                            job.enabled = false;
                            job.state.next_run_at_ms = None;
                        }
                    } else {
                        let n = natural(&mut job);
                        job.state.next_run_at_ms = n.map(|t| t.max(now + backoff));
                    }
                }
            }
            job.updated_at_ms = now;
            Some(job)
        });
            match store.finish_run(job_id, next_job.as_ref(), &record) {
                Ok(true) => {}
                Ok(false) => {
                    tracing::warn!(job = %job_id, run = %record.run_id, "cron: the run was already recorded ended (interrupted by a new timer owner); its outcome is not written");
                }
                Err(e) => {
                    drop(store);
                    if Inner::retry_store(this, &e, &mut attempts) {
                        continue;
                    }
                    tracing::error!(error = %e, job = %job_id, "cron: cannot record the run's outcome");
                }
            }
            break (record, task_status, task_error);
        };
        if let Some(ledger) = &opts.ledger
            && let Err(e) = ledger.finalize_by_run_id(
                &record.run_id,
                task_status,
                TaskOutcome {
                    ended_at: Some(now),
                    error: task_error,
                    summary: record.summary.clone(),
                },
            )
        {
            tracing::warn!(error = %e, run = %record.run_id, "cron: cannot finalise the run's task");
        }
        tracing::info!(job = %job_id, run = %record.run_id, status = record.status.as_str(), "cron run finished");
    }
}

/// Wake-mode helper for the tool: parse `now` / `next-heartbeat`.
pub fn parse_wake_mode(s: Option<&str>) -> Result<WakeMode> {
    match s.map(str::trim) {
        None | Some("") | Some("now") => Ok(WakeMode::Now),
        Some("next-heartbeat") => Ok(WakeMode::NextHeartbeat),
        Some(other) => Err(CronError::invalid(
            "mode",
            format!("`{other}` is not a wake mode; use now or next-heartbeat"),
        )),
    }
}
