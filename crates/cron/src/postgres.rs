//! The PostgreSQL engine (feature `postgres`): the job store shared by a
//! fleet of gateways, and the `cron` timer lease that lets exactly one of
//! them fire due jobs.
//!
//! Everything [`CronBackend`] promises is enforced in SQL, because several
//! processes write at once: a job is claimed with
//! `UPDATE … WHERE running_at IS NULL`, `cron_runs` is unique on
//! `(job_id, slot)`, a run is finished with `UPDATE … WHERE status =
//! 'running'` (first terminal record wins), and a fired run records the
//! lease token it was fired under. A write under a token starts with
//! [`talon_state::lease::fence`], so a gateway that lost the lease without
//! noticing cannot claim a job or insert a run: its transaction fails with
//! [`StateError::Fenced`] and nothing is written.

use std::time::Duration;

use talon_state::Conn;
use talon_state::postgres::Row;
use talon_state::{PgPool, StateError, lease};

use crate::error::{CronError, Result};
use crate::job::{CronJob, RunRecord, RunStatus};
use crate::service::{TimerGrant, TimerLease};
use crate::store::sqlite::decode;
use crate::store::{Admission, BeginRun, CronBackend, CronStore, INTERRUPTED_ERROR};

/// The store's name in `talon_schema`.
pub const STORE: &str = "cron";
/// The lease whose holder fires due jobs.
pub const LEASE: &str = "cron";

/// The transaction-scoped advisory lock every admission takes, so two
/// gateways adding jobs at once cannot both pass the job-count limits.
const ADMISSION_LOCK: i64 = 0x7461_6c6f_6e63_726e;

/// The store's migrations: version `i + 1` is `MIGRATIONS[i]`.
pub const MIGRATIONS: &[&str] = &["
    CREATE TABLE cron_jobs (
        id TEXT PRIMARY KEY,
        agent_id TEXT NOT NULL,
        enabled BOOLEAN NOT NULL,
        next_run_at BIGINT,
        running_at BIGINT,
        creator_session_key TEXT,
        data TEXT NOT NULL
    );
    CREATE INDEX cron_jobs_due ON cron_jobs (enabled, next_run_at);
    CREATE INDEX cron_jobs_agent ON cron_jobs (agent_id);
    CREATE INDEX cron_jobs_creator ON cron_jobs (creator_session_key);
    CREATE TABLE cron_runs (
        seq BIGSERIAL PRIMARY KEY,
        run_id TEXT NOT NULL UNIQUE,
        job_id TEXT NOT NULL,
        slot BIGINT,
        lease_token BIGINT,
        session_key TEXT,
        reason TEXT NOT NULL,
        started_at BIGINT NOT NULL,
        ended_at BIGINT,
        status TEXT NOT NULL,
        error TEXT,
        summary TEXT,
        UNIQUE (job_id, slot)
    );
    CREATE INDEX cron_runs_job ON cron_runs (job_id, seq);
    CREATE INDEX cron_runs_running ON cron_runs (status) WHERE status = 'running';
"];

/// Open the job store on `pool`, bringing its tables up to date (refused
/// when the database holds a newer schema).
pub fn open_store(pool: &PgPool) -> Result<CronStore> {
    Ok(CronStore::from_backend(Box::new(PgCronBackend::open(
        pool,
    )?)))
}

/// The PostgreSQL [`CronBackend`]. Cheap to clone.
#[derive(Debug, Clone)]
pub struct PgCronBackend {
    pool: PgPool,
    location: String,
}

impl PgCronBackend {
    /// Run the migrations and open the store.
    pub fn open(pool: &PgPool) -> Result<Self> {
        let location = format!("postgres {}", pool.target());
        pool.migrate(STORE, MIGRATIONS)
            .map_err(|source| CronError::State {
                location: location.clone(),
                source,
            })?;
        Ok(PgCronBackend {
            pool: pool.clone(),
            location,
        })
    }

    fn run<T, F>(&self, f: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(&mut Conn) -> std::result::Result<T, Fail> + Send + 'static,
    {
        // Decode errors travel through the pool as a state error's message
        // would lose their type, so the closure returns `Fail`.
        let out = self.pool.run(move |c| Ok(f(c)));
        match out {
            Ok(Ok(v)) => Ok(v),
            Ok(Err(Fail::State(source))) | Err(source) => Err(CronError::State {
                location: self.location.clone(),
                source,
            }),
            Ok(Err(Fail::Cron(e))) => Err(e),
        }
    }
}

/// A failure inside a pooled call: the database's, or the store's own
/// (a job that does not encode or decode).
#[derive(Debug)]
enum Fail {
    State(StateError),
    Cron(CronError),
}

impl From<StateError> for Fail {
    fn from(e: StateError) -> Self {
        Fail::State(e)
    }
}

impl From<talon_state::postgres::Error> for Fail {
    fn from(e: talon_state::postgres::Error) -> Self {
        Fail::State(StateError::from(e))
    }
}

impl From<CronError> for Fail {
    fn from(e: CronError) -> Self {
        Fail::Cron(e)
    }
}

fn encode(job: &CronJob) -> Result<String> {
    serde_json::to_string(job).map_err(|e| CronError::Persisted {
        id: job.id.clone(),
        message: e.to_string(),
    })
}

fn sql_limit(limit: usize) -> i64 {
    i64::try_from(limit).unwrap_or(i64::MAX)
}

fn count(n: i64) -> usize {
    usize::try_from(n).unwrap_or(0)
}

fn jobs(rows: &[Row]) -> std::result::Result<Vec<CronJob>, Fail> {
    rows.iter()
        .map(|r| decode(r.get::<_, &str>(0), r.get::<_, &str>(1)).map_err(Fail::Cron))
        .collect()
}

const RUN_COLUMNS: &str =
    "run_id, job_id, session_key, reason, started_at, ended_at, status, error, summary, slot";

fn run_row(r: &Row) -> RunRecord {
    RunRecord {
        run_id: r.get(0),
        job_id: r.get(1),
        session_key: r.get(2),
        reason: r.get(3),
        started_at_ms: r.get(4),
        ended_at_ms: r.get(5),
        status: RunStatus::parse(r.get::<_, &str>(6)).unwrap_or(RunStatus::Error),
        error: r.get(7),
        summary: r.get(8),
        slot_ms: r.get(9),
    }
}

/// The columns a job is stored under.
struct JobRow {
    id: String,
    agent_id: String,
    enabled: bool,
    next_run_at: Option<i64>,
    running_at: Option<i64>,
    creator: Option<String>,
    data: String,
}

impl JobRow {
    fn of(job: &CronJob) -> Result<JobRow> {
        Ok(JobRow {
            id: job.id.clone(),
            agent_id: job.agent_id.clone(),
            enabled: job.enabled,
            next_run_at: job.state.next_run_at_ms,
            running_at: job.state.running_at_ms,
            creator: job.creator_session_key.clone(),
            data: encode(job)?,
        })
    }
}

const UPSERT: &str = "INSERT INTO cron_jobs
        (id, agent_id, enabled, next_run_at, running_at, creator_session_key, data)
     VALUES ($1, $2, $3, $4, $5, $6, $7)
     ON CONFLICT (id) DO UPDATE SET agent_id = EXCLUDED.agent_id,
         enabled = EXCLUDED.enabled, next_run_at = EXCLUDED.next_run_at,
         running_at = EXCLUDED.running_at,
         creator_session_key = EXCLUDED.creator_session_key, data = EXCLUDED.data";

fn upsert(
    c: &mut impl talon_state::postgres::GenericClient,
    j: &JobRow,
) -> std::result::Result<(), Fail> {
    c.execute(
        UPSERT,
        &[
            &j.id,
            &j.agent_id,
            &j.enabled,
            &j.next_run_at,
            &j.running_at,
            &j.creator,
            &j.data,
        ],
    )?;
    Ok(())
}

impl CronBackend for PgCronBackend {
    fn location(&self) -> String {
        self.location.clone()
    }

    fn put(&self, job: &CronJob) -> Result<()> {
        let row = JobRow::of(job)?;
        self.run(move |c| upsert(c.client(), &row))
    }

    fn put_admitted(
        &self,
        job: &CronJob,
        max_per_creator: u64,
        max_per_agent: u64,
    ) -> Result<Admission> {
        let row = JobRow::of(job)?;
        let limit = |max: u64| i64::try_from(max).unwrap_or(i64::MAX);
        let (max_creator, max_agent) = (limit(max_per_creator), limit(max_per_agent));
        let held = |n: i64| u64::try_from(n).unwrap_or(0);
        self.run(move |c| {
            let mut tx = c.transaction()?;
            tx.execute("SELECT pg_advisory_xact_lock($1)", &[&ADMISSION_LOCK])?;
            if let Some(session) = &row.creator {
                let n: i64 = tx
                    .query_one(
                        "SELECT COUNT(*) FROM cron_jobs WHERE creator_session_key = $1",
                        &[session],
                    )?
                    .get(0);
                if n >= max_creator {
                    return Ok(Admission::CreatorFull(held(n)));
                }
            }
            let n: i64 = tx
                .query_one(
                    "SELECT COUNT(*) FROM cron_jobs WHERE agent_id = $1",
                    &[&row.agent_id],
                )?
                .get(0);
            if n >= max_agent {
                return Ok(Admission::AgentFull(held(n)));
            }
            tx.execute(
                "INSERT INTO cron_jobs
                     (id, agent_id, enabled, next_run_at, running_at, creator_session_key, data)
                 VALUES ($1, $2, $3, $4, $5, $6, $7)",
                &[
                    &row.id,
                    &row.agent_id,
                    &row.enabled,
                    &row.next_run_at,
                    &row.running_at,
                    &row.creator,
                    &row.data,
                ],
            )?;
            tx.commit()?;
            Ok(Admission::Stored)
        })
    }

    fn put_if_unchanged(
        &self,
        job: &CronJob,
        read_running_at: Option<i64>,
        read_next_run_at: Option<i64>,
    ) -> Result<bool> {
        let j = JobRow::of(job)?;
        self.run(move |c| {
            let n = c.execute(
                "UPDATE cron_jobs SET agent_id = $2, enabled = $3, next_run_at = $4,
                     running_at = $5, creator_session_key = $6, data = $7
                 WHERE id = $1 AND running_at IS NOT DISTINCT FROM $8
                   AND next_run_at IS NOT DISTINCT FROM $9",
                &[
                    &j.id,
                    &j.agent_id,
                    &j.enabled,
                    &j.next_run_at,
                    &j.running_at,
                    &j.creator,
                    &j.data,
                    &read_running_at,
                    &read_next_run_at,
                ],
            )?;
            Ok(n > 0)
        })
    }

    fn put_many(&self, jobs: &[CronJob]) -> Result<()> {
        let rows = jobs.iter().map(JobRow::of).collect::<Result<Vec<_>>>()?;
        self.run(move |c| {
            let mut tx = c.transaction()?;
            for row in &rows {
                upsert(&mut tx, row)?;
            }
            tx.commit()?;
            Ok(())
        })
    }

    fn delete(&self, id: &str) -> Result<bool> {
        let id = id.to_owned();
        self.run(move |c| Ok(c.execute("DELETE FROM cron_jobs WHERE id = $1", &[&id])? > 0))
    }

    fn get(&self, id: &str) -> Result<Option<CronJob>> {
        let id = id.to_owned();
        self.run(move |c| {
            let rows = c.query("SELECT id, data FROM cron_jobs WHERE id = $1", &[&id])?;
            Ok(jobs(&rows)?.pop())
        })
    }

    fn list(&self, include_disabled: bool) -> Result<Vec<CronJob>> {
        self.run(move |c| {
            let rows = c.query(
                "SELECT id, data FROM cron_jobs WHERE ($1 OR enabled)
                 ORDER BY next_run_at NULLS LAST, id",
                &[&include_disabled],
            )?;
            jobs(&rows)
        })
    }

    fn due(&self, now_ms: i64, limit: usize) -> Result<Vec<CronJob>> {
        let limit = sql_limit(limit);
        self.run(move |c| {
            let rows = c.query(
                "SELECT id, data FROM cron_jobs
                 WHERE enabled AND next_run_at IS NOT NULL AND next_run_at <= $1
                   AND running_at IS NULL
                 ORDER BY next_run_at, id LIMIT $2",
                &[&now_ms, &limit],
            )?;
            jobs(&rows)
        })
    }

    fn next_wake(&self) -> Result<Option<i64>> {
        self.run(|c| {
            let row = c.query_one(
                "SELECT MIN(next_run_at) FROM cron_jobs WHERE enabled AND next_run_at IS NOT NULL",
                &[],
            )?;
            Ok(row.get(0))
        })
    }

    fn counts(&self) -> Result<(usize, usize, usize)> {
        self.run(|c| {
            let r = c.query_one(
                "SELECT COUNT(*), COUNT(*) FILTER (WHERE enabled),
                        COUNT(*) FILTER (WHERE enabled AND next_run_at IS NULL)
                 FROM cron_jobs",
                &[],
            )?;
            Ok((count(r.get(0)), count(r.get(1)), count(r.get(2))))
        })
    }

    fn count_for_agent(&self, agent_id: &str) -> Result<u64> {
        let agent_id = agent_id.to_owned();
        self.run(move |c| {
            let r = c.query_one(
                "SELECT COUNT(*) FROM cron_jobs WHERE agent_id = $1",
                &[&agent_id],
            )?;
            Ok(u64::try_from(r.get::<_, i64>(0)).unwrap_or(0))
        })
    }

    fn count_for_creator(&self, session_key: &str) -> Result<u64> {
        let key = session_key.to_owned();
        self.run(move |c| {
            let r = c.query_one(
                "SELECT COUNT(*) FROM cron_jobs WHERE creator_session_key = $1",
                &[&key],
            )?;
            Ok(u64::try_from(r.get::<_, i64>(0)).unwrap_or(0))
        })
    }

    fn running(&self) -> Result<Vec<CronJob>> {
        self.run(|c| {
            let rows = c.query(
                "SELECT id, data FROM cron_jobs WHERE running_at IS NOT NULL ORDER BY id",
                &[],
            )?;
            jobs(&rows)
        })
    }

    fn begin_run(&self, job: &CronJob, run: &RunRecord, fence: Option<i64>) -> Result<BeginRun> {
        let (id, running_at, data) = (job.id.clone(), job.state.running_at_ms, encode(job)?);
        let run = run.clone();
        self.run(move |c| {
            let mut tx = c.transaction()?;
            if let Some(token) = fence {
                lease::fence(&mut tx, LEASE, token)?;
            }
            let claimed = tx.execute(
                "UPDATE cron_jobs SET running_at = $2, data = $3
                 WHERE id = $1 AND running_at IS NULL",
                &[&id, &running_at, &data],
            )?;
            if claimed == 0 {
                // Dropping the transaction rolls it back.
                return Ok(BeginRun::AlreadyRunning);
            }
            let inserted = tx.execute(
                "INSERT INTO cron_runs
                     (run_id, job_id, slot, lease_token, session_key, reason, started_at, status)
                 VALUES ($1, $2, $3, $4, $5, $6, $7, 'running')
                 ON CONFLICT (job_id, slot) DO NOTHING",
                &[
                    &run.run_id,
                    &run.job_id,
                    &run.slot_ms,
                    &fence,
                    &run.session_key,
                    &run.reason,
                    &run.started_at_ms,
                ],
            )?;
            if inserted == 0 {
                return Ok(BeginRun::SlotTaken);
            }
            tx.commit()?;
            Ok(BeginRun::Started)
        })
    }

    fn finish_run(&self, job_id: &str, job: Option<&CronJob>, run: &RunRecord) -> Result<bool> {
        let job_id = job_id.to_owned();
        let job = job.map(JobRow::of).transpose()?;
        let run = run.clone();
        self.run(move |c| {
            let mut tx = c.transaction()?;
            let recorded = tx.execute(
                "UPDATE cron_runs SET ended_at = $2, status = $3, error = $4, summary = $5
                 WHERE run_id = $1 AND status = 'running'",
                &[
                    &run.run_id,
                    &run.ended_at_ms,
                    &run.status.as_str(),
                    &run.error,
                    &run.summary,
                ],
            )?;
            if recorded == 0 {
                return Ok(false);
            }
            match &job {
                Some(j) => {
                    tx.execute(
                        "UPDATE cron_jobs SET enabled = $2, next_run_at = $3, running_at = $4,
                             creator_session_key = $5, data = $6
                         WHERE id = $1",
                        &[
                            &j.id,
                            &j.enabled,
                            &j.next_run_at,
                            &j.running_at,
                            &j.creator,
                            &j.data,
                        ],
                    )?;
                }
                None => {
                    tx.execute("DELETE FROM cron_jobs WHERE id = $1", &[&job_id])?;
                }
            }
            tx.commit()?;
            Ok(true)
        })
    }

    fn runs(&self, job_id: &str, limit: usize) -> Result<Vec<RunRecord>> {
        let job_id = job_id.to_owned();
        let limit = if limit == 0 {
            i64::MAX
        } else {
            sql_limit(limit)
        };
        self.run(move |c| {
            let rows = c.query(
                &format!(
                    "SELECT {RUN_COLUMNS} FROM cron_runs WHERE job_id = $1
                     ORDER BY seq DESC LIMIT $2"
                ),
                &[&job_id, &limit],
            )?;
            Ok(rows.iter().map(run_row).collect())
        })
    }

    fn interrupt_running_runs(&self, now_ms: i64, fence: Option<i64>) -> Result<Vec<RunRecord>> {
        self.run(move |c| {
            let mut tx = c.transaction()?;
            if let Some(token) = fence {
                lease::fence(&mut tx, LEASE, token)?;
            }
            let rows = tx.query(
                &format!(
                    "UPDATE cron_runs SET status = 'interrupted', ended_at = $1, error = $2
                     WHERE status = 'running'
                       AND ($3::BIGINT IS NULL OR lease_token IS NULL OR lease_token < $3)
                     RETURNING {RUN_COLUMNS}"
                ),
                &[&now_ms, &INTERRUPTED_ERROR, &fence],
            )?;
            tx.commit()?;
            let mut out: Vec<RunRecord> = rows.iter().map(run_row).collect();
            out.sort_by(|a, b| a.run_id.cmp(&b.run_id));
            Ok(out)
        })
    }
}

/// The `cron` lease on PostgreSQL ([`talon_state::lease`]).
#[derive(Debug, Clone)]
pub struct PgTimerLease {
    pool: PgPool,
    location: String,
}

impl PgTimerLease {
    /// The `cron` lease on `pool`.
    pub fn new(pool: &PgPool) -> Self {
        PgTimerLease {
            pool: pool.clone(),
            location: format!("postgres {}", pool.target()),
        }
    }

    fn err(&self, source: StateError) -> CronError {
        CronError::State {
            location: self.location.clone(),
            source,
        }
    }
}

fn timer_grant(g: lease::LeaseGrant) -> TimerGrant {
    TimerGrant {
        holder: g.holder,
        token: g.token,
        expires_at_ms: g.expires_at_ms,
    }
}

fn lease_grant(g: &TimerGrant) -> lease::LeaseGrant {
    lease::LeaseGrant {
        name: LEASE.to_owned(),
        holder: g.holder.clone(),
        token: g.token,
        expires_at_ms: g.expires_at_ms,
    }
}

impl TimerLease for PgTimerLease {
    fn acquire(&self, holder: &str, ttl: Duration) -> Result<Option<TimerGrant>> {
        lease::acquire(&self.pool, LEASE, holder, ttl)
            .map(|g| g.map(timer_grant))
            .map_err(|e| self.err(e))
    }

    fn renew(&self, held: &TimerGrant, ttl: Duration) -> Result<Option<TimerGrant>> {
        lease::renew(&self.pool, &lease_grant(held), ttl)
            .map(|g| g.map(timer_grant))
            .map_err(|e| self.err(e))
    }

    fn release(&self, held: &TimerGrant) -> Result<()> {
        lease::release(&self.pool, &lease_grant(held)).map_err(|e| self.err(e))
    }

    fn current(&self) -> Result<Option<TimerGrant>> {
        lease::current(&self.pool, LEASE)
            .map(|g| g.map(timer_grant))
            .map_err(|e| self.err(e))
    }
}
