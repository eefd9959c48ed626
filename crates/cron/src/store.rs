//! The job store: one seam ([`CronBackend`]), two engines. SQLite (the
//! embedded default, [`sqlite`]) and, behind the `postgres` feature,
//! PostgreSQL shared by a fleet of gateways. Jobs are JSON with indexed
//! scheduling columns; next-due selection is an index range scan
//! (`enabled, next_run_at`), never a scan of every job. The rules both
//! engines enforce in their own storage, not in this process: a job runs
//! at most once at a time (`running_at` claimed in the same transaction
//! that writes the `running` history row), at most one run per schedule
//! slot (`cron_runs` unique on `(job_id, slot)`), and a run's first terminal
//! record wins (a run a new timer owner marked `interrupted` is never
//! overwritten by the process that started it).

use std::fmt::Debug;
use std::path::Path;

use crate::error::Result;
use crate::job::{CronJob, RunRecord};

pub(crate) mod sqlite;

/// The outcome of [`CronBackend::begin_run`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum BeginRun {
    /// The job was claimed and its `running` row written.
    Started,
    /// The job is already running (or no longer exists): nothing written.
    AlreadyRunning,
    /// A run of this job for this slot is already recorded: nothing
    /// written (the slot ran; it never runs twice).
    SlotTaken,
}

/// The outcome of [`CronBackend::put_admitted`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Admission {
    /// Under both limits: stored.
    Stored,
    /// The creating session already holds this many jobs (the limit or
    /// more): nothing stored.
    CreatorFull(u64),
    /// The agent already holds this many jobs: nothing stored.
    AgentFull(u64),
}

/// The storage of cron jobs and their runs. Synchronous and `Send + Sync`:
/// the service calls it under its own lock, from its timer task or a
/// blocking thread. Persistence only: clocks, schedules, backoff and
/// recovery decisions live once, above it, in [`crate::CronService`].
///
/// `fence` is the cron timer lease token the calling process holds, on an
/// engine several processes share. Such an engine checks it first in the
/// same transaction (`talon_state::lease::fence`): a token that is no
/// longer current fails the call with a fenced error and writes nothing.
/// `None` writes unfenced (the SQLite engine, which one process owns,
/// ignores the token).
pub trait CronBackend: Send + Sync + Debug {
    /// Where the store lives, for messages (a file path, or `postgres`).
    fn location(&self) -> String;

    /// The database file, for an engine that has one.
    fn path(&self) -> Option<&Path> {
        None
    }

    /// Insert or replace a job (one transaction).
    fn put(&self, job: &CronJob) -> Result<()>;

    /// Store a new job only if its creating session holds fewer than
    /// `max_per_creator` jobs and its agent fewer than `max_per_agent`:
    /// counted and inserted in one transaction, serialised against every
    /// other admission on the store (across processes on a shared engine),
    /// so concurrent adds cannot both pass the count.
    fn put_admitted(
        &self,
        job: &CronJob,
        max_per_creator: u64,
        max_per_agent: u64,
    ) -> Result<Admission>;

    /// Replace a stored job only if its scheduling columns still hold what
    /// the caller read (`running_at`, `next_run_at`): a compare-and-set, so
    /// an edit made from a stale read cannot undo a fire or a finish that
    /// another process wrote meanwhile. `false`: it changed (or is gone);
    /// nothing written.
    fn put_if_unchanged(
        &self,
        job: &CronJob,
        read_running_at: Option<i64>,
        read_next_run_at: Option<i64>,
    ) -> Result<bool>;

    /// Insert or replace many jobs in one transaction.
    fn put_many(&self, jobs: &[CronJob]) -> Result<()>;

    /// Delete a job (its run history stays). `false` when it did not exist.
    fn delete(&self, id: &str) -> Result<bool>;

    /// One job.
    fn get(&self, id: &str) -> Result<Option<CronJob>>;

    /// All jobs (optionally only enabled ones), ordered by next run, then id.
    fn list(&self, include_disabled: bool) -> Result<Vec<CronJob>>;

    /// Enabled jobs due at `now_ms` that are not running, earliest first,
    /// at most `limit`.
    fn due(&self, now_ms: i64, limit: usize) -> Result<Vec<CronJob>>;

    /// The earliest next run of any enabled job (running ones included).
    fn next_wake(&self) -> Result<Option<i64>>;

    /// All jobs, enabled jobs, and enabled jobs with no next run.
    fn counts(&self) -> Result<(usize, usize, usize)>;

    /// How many jobs `agent_id` holds.
    fn count_for_agent(&self, agent_id: &str) -> Result<u64>;

    /// How many jobs the session `session_key` created.
    fn count_for_creator(&self, session_key: &str) -> Result<u64>;

    /// Jobs whose `running_at` is set.
    fn running(&self) -> Result<Vec<CronJob>>;

    /// Start a run in one transaction: claim the job (`running_at`, only if
    /// not running) and insert the `running` history row (unique on
    /// `(job_id, slot)` when `run.slot_ms` is set), checking `fence` first.
    fn begin_run(&self, job: &CronJob, run: &RunRecord, fence: Option<i64>) -> Result<BeginRun>;

    /// Finish a run in one transaction: its history row (only while it is
    /// still `running`: the first terminal record wins) and the job
    /// (updated, or deleted when `job` is `None`). `false` when the run was
    /// no longer `running` (a new timer owner marked it interrupted): then
    /// nothing is written.
    fn finish_run(&self, job_id: &str, job: Option<&CronJob>, run: &RunRecord) -> Result<bool>;

    /// Run history of a job, newest first (`limit` 0 = all).
    fn runs(&self, job_id: &str, limit: usize) -> Result<Vec<RunRecord>>;

    /// Mark `running` history rows `interrupted` and return them (as now
    /// stored). With `fence`, only rows started under an older lease token
    /// (or none), after checking `fence` is current; without, every
    /// `running` row.
    fn interrupt_running_runs(&self, now_ms: i64, fence: Option<i64>) -> Result<Vec<RunRecord>>;
}

/// The job store: a [`CronBackend`] behind the API the service, the CLI and
/// the audit use. Its changes take `&mut self`: the service keeps it under
/// one lock, so "count then store" (quotas) is one step in this process.
#[derive(Debug)]
pub struct CronStore {
    backend: Box<dyn CronBackend>,
}

impl CronStore {
    /// Open (or create) the store in the SQLite database at `path`.
    pub fn open(path: &Path) -> Result<Self> {
        Ok(CronStore::from_backend(Box::new(
            sqlite::SqliteCronBackend::open(path)?,
        )))
    }

    /// A store over any engine.
    pub fn from_backend(backend: Box<dyn CronBackend>) -> Self {
        CronStore { backend }
    }

    /// The engine.
    pub fn backend(&self) -> &dyn CronBackend {
        self.backend.as_ref()
    }

    /// The database file (SQLite), `None` on a server engine.
    pub fn path(&self) -> Option<&Path> {
        self.backend.path()
    }

    /// Where the store lives, for messages.
    pub fn location(&self) -> String {
        self.backend.location()
    }

    /// Insert or replace a job (one transaction).
    pub fn put(&mut self, job: &CronJob) -> Result<()> {
        self.backend.put(job)
    }

    /// Store a new job under the job-count limits, counted and inserted in
    /// one step ([`CronBackend::put_admitted`]).
    pub fn put_admitted(
        &mut self,
        job: &CronJob,
        max_per_creator: u64,
        max_per_agent: u64,
    ) -> Result<Admission> {
        self.backend
            .put_admitted(job, max_per_creator, max_per_agent)
    }

    /// Replace a job only if its running marker and next run still hold
    /// the values read ([`CronBackend::put_if_unchanged`]).
    pub fn put_if_unchanged(
        &mut self,
        job: &CronJob,
        read_running_at: Option<i64>,
        read_next_run_at: Option<i64>,
    ) -> Result<bool> {
        self.backend
            .put_if_unchanged(job, read_running_at, read_next_run_at)
    }

    /// Insert many jobs in one transaction.
    pub fn put_many(&mut self, jobs: &[CronJob]) -> Result<()> {
        self.backend.put_many(jobs)
    }

    /// Delete a job (its run history stays). `false` when it did not exist.
    pub fn delete(&mut self, id: &str) -> Result<bool> {
        self.backend.delete(id)
    }

    /// One job.
    pub fn get(&self, id: &str) -> Result<Option<CronJob>> {
        self.backend.get(id)
    }

    /// All jobs (optionally only enabled ones), ordered by next run.
    pub fn list(&self, include_disabled: bool) -> Result<Vec<CronJob>> {
        self.backend.list(include_disabled)
    }

    /// Enabled jobs due at `now_ms` that are not running, earliest first,
    /// at most `limit`.
    pub fn due(&self, now_ms: i64, limit: usize) -> Result<Vec<CronJob>> {
        self.backend.due(now_ms, limit)
    }

    /// The earliest next run of any enabled job (running ones included, so
    /// a stuck job keeps the timer at the minimum re-fire gap).
    pub fn next_wake(&self) -> Result<Option<i64>> {
        self.backend.next_wake()
    }

    /// How many jobs there are, how many are enabled, and how many of those
    /// have no next run.
    pub fn counts(&self) -> Result<(usize, usize, usize)> {
        self.backend.counts()
    }

    /// How many jobs `agent_id` holds.
    pub fn count_for_agent(&self, agent_id: &str) -> Result<u64> {
        self.backend.count_for_agent(agent_id)
    }

    /// How many jobs the session `session_key` created.
    pub fn count_for_creator(&self, session_key: &str) -> Result<u64> {
        self.backend.count_for_creator(session_key)
    }

    /// Jobs whose `running_at` is set (in flight, or orphaned by a crash).
    pub fn running(&self) -> Result<Vec<CronJob>> {
        self.backend.running()
    }

    /// Start a run: set the job's running marker and write the `running`
    /// history row, in one transaction (write-ahead: a crash leaves a
    /// record). `false` when the job is already running or the run's slot
    /// already ran.
    pub fn begin_run(&mut self, job: &CronJob, run: &RunRecord) -> Result<bool> {
        Ok(self.backend.begin_run(job, run, None)? == BeginRun::Started)
    }

    /// [`begin_run`](Self::begin_run) under the timer lease token `fence`
    /// (a stale token fails with a fenced error, nothing written), telling
    /// why a run did not start.
    pub fn begin_fenced_run(
        &mut self,
        job: &CronJob,
        run: &RunRecord,
        fence: Option<i64>,
    ) -> Result<BeginRun> {
        self.backend.begin_run(job, run, fence)
    }

    /// Finish a run: the history row and the job (updated, or deleted when
    /// `job` is `None`), in one transaction. `false` (nothing written) when
    /// the run already has a terminal record.
    pub fn finish_run(
        &mut self,
        job_id: &str,
        job: Option<&CronJob>,
        run: &RunRecord,
    ) -> Result<bool> {
        self.backend.finish_run(job_id, job, run)
    }

    /// Run history of a job, newest first (`limit` 0 = all).
    pub fn runs(&self, job_id: &str, limit: usize) -> Result<Vec<RunRecord>> {
        self.backend.runs(job_id, limit)
    }

    /// Mark every `running` history row `interrupted` (at start-up: the
    /// process that ran them is gone). Returns how many.
    pub fn interrupt_running_runs(&mut self, now_ms: i64) -> Result<usize> {
        Ok(self.backend.interrupt_running_runs(now_ms, None)?.len())
    }

    /// Mark the `running` rows of earlier timer owners `interrupted` under
    /// the lease token `fence` (a new owner taking over), returning them.
    pub fn interrupt_runs_before(&mut self, now_ms: i64, fence: i64) -> Result<Vec<RunRecord>> {
        self.backend.interrupt_running_runs(now_ms, Some(fence))
    }
}

/// The text every engine stores for a run cut off by its process.
pub(crate) const INTERRUPTED_ERROR: &str = "the process stopped while this run was in flight";
