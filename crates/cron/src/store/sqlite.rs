//! The SQLite engine: the embedded default, one process owns the file
//! (the shared state database, WAL, one transaction per change).

use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};

use rusqlite::{Connection, OptionalExtension, params};
use talon_tasks::{open_database, schema_version, set_schema_version};

use super::{Admission, BeginRun, CronBackend, INTERRUPTED_ERROR};
use crate::error::{CronError, Result};
use crate::job::{CronJob, RunRecord, RunStatus};

const COMPONENT: &str = "cron";
/// 1: jobs and runs; 2: a run's schedule slot, unique per job.
const SCHEMA_VERSION: i64 = 2;

/// The SQLite [`CronBackend`] (one connection behind a mutex).
#[derive(Debug)]
pub(crate) struct SqliteCronBackend {
    path: PathBuf,
    conn: Mutex<Connection>,
}

impl SqliteCronBackend {
    /// Open (or create) the store in the database at `path`.
    pub(crate) fn open(path: &Path) -> Result<Self> {
        let db = |source| CronError::Db {
            path: path.display().to_string(),
            source,
        };
        let mut conn = open_database(path).map_err(db)?;
        let tx = conn.transaction().map_err(db)?;
        let found = schema_version(&tx, COMPONENT).map_err(db)?;
        if found > SCHEMA_VERSION {
            return Err(CronError::SchemaNewer {
                location: path.display().to_string(),
                found,
                known: SCHEMA_VERSION,
            });
        }
        if found < 1 {
            tx.execute_batch(
                "CREATE TABLE IF NOT EXISTS cron_jobs (
                     id TEXT PRIMARY KEY,
                     agent_id TEXT NOT NULL,
                     enabled INTEGER NOT NULL,
                     next_run_at INTEGER,
                     running_at INTEGER,
                     data TEXT NOT NULL
                 );
                 CREATE INDEX IF NOT EXISTS cron_jobs_due ON cron_jobs(enabled, next_run_at);
                 CREATE TABLE IF NOT EXISTS cron_runs (
                     seq INTEGER PRIMARY KEY AUTOINCREMENT,
                     run_id TEXT NOT NULL UNIQUE,
                     job_id TEXT NOT NULL,
                     session_key TEXT,
                     reason TEXT NOT NULL,
                     started_at INTEGER NOT NULL,
                     ended_at INTEGER,
                     status TEXT NOT NULL,
                     error TEXT,
                     summary TEXT
                 );
                 CREATE INDEX IF NOT EXISTS cron_runs_job ON cron_runs(job_id, seq);
                 CREATE INDEX IF NOT EXISTS cron_runs_status ON cron_runs(status);",
            )
            .map_err(db)?;
        }
        if found < 2 {
            // NULL slots (manual runs) never collide.
            tx.execute_batch(
                "ALTER TABLE cron_runs ADD COLUMN slot INTEGER;
                 CREATE UNIQUE INDEX IF NOT EXISTS cron_runs_slot ON cron_runs(job_id, slot);",
            )
            .map_err(db)?;
        }
        if found < SCHEMA_VERSION {
            set_schema_version(&tx, COMPONENT, SCHEMA_VERSION).map_err(db)?;
        }
        tx.commit().map_err(db)?;
        Ok(SqliteCronBackend {
            path: path.to_path_buf(),
            conn: Mutex::new(conn),
        })
    }

    fn db(&self, source: rusqlite::Error) -> CronError {
        CronError::Db {
            path: self.path.display().to_string(),
            source,
        }
    }

    fn conn(&self) -> MutexGuard<'_, Connection> {
        match self.conn.lock() {
            Ok(g) => g,
            Err(poisoned) => poisoned.into_inner(),
        }
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

fn collect_jobs(
    rows: impl Iterator<Item = rusqlite::Result<(String, String)>>,
    db: impl Fn(rusqlite::Error) -> CronError,
) -> Result<Vec<CronJob>> {
    let mut out = Vec::new();
    for row in rows {
        let (id, data) = row.map_err(&db)?;
        out.push(decode(&id, &data)?);
    }
    Ok(out)
}

const RUN_COLUMNS: &str =
    "run_id, job_id, session_key, reason, started_at, ended_at, status, error, summary, slot";

impl CronBackend for SqliteCronBackend {
    fn location(&self) -> String {
        self.path.display().to_string()
    }

    fn path(&self) -> Option<&Path> {
        Some(&self.path)
    }

    fn put(&self, job: &CronJob) -> Result<()> {
        let data = encode(job)?;
        self.conn()
            .execute(
                "INSERT INTO cron_jobs (id, agent_id, enabled, next_run_at, running_at, data)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6)
                 ON CONFLICT(id) DO UPDATE SET agent_id = excluded.agent_id,
                   enabled = excluded.enabled, next_run_at = excluded.next_run_at,
                   running_at = excluded.running_at, data = excluded.data",
                params![
                    job.id,
                    job.agent_id,
                    job.enabled,
                    job.state.next_run_at_ms,
                    job.state.running_at_ms,
                    data
                ],
            )
            .map_err(|e| self.db(e))?;
        Ok(())
    }

    fn put_admitted(
        &self,
        job: &CronJob,
        max_per_creator: u64,
        max_per_agent: u64,
    ) -> Result<Admission> {
        let db = |e| self.db(e);
        let data = encode(job)?;
        let mut conn = self.conn();
        // IMMEDIATE: the write lock is taken before counting, so another
        // process's admission waits (busy timeout) instead of racing.
        let tx = conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
            .map_err(db)?;
        let held = |sql: &str, key: &str| -> Result<u64> {
            tx.query_row(sql, params![key], |r| r.get::<_, i64>(0))
                .map(|n| u64::try_from(n).unwrap_or(0))
                .map_err(db)
        };
        if let Some(session) = &job.creator_session_key {
            let n = held(
                "SELECT COUNT(*) FROM cron_jobs WHERE json_extract(data, '$.creatorSessionKey') = ?1",
                session,
            )?;
            if n >= max_per_creator {
                return Ok(Admission::CreatorFull(n));
            }
        }
        let n = held(
            "SELECT COUNT(*) FROM cron_jobs WHERE agent_id = ?1",
            &job.agent_id,
        )?;
        if n >= max_per_agent {
            return Ok(Admission::AgentFull(n));
        }
        tx.execute(
            "INSERT INTO cron_jobs (id, agent_id, enabled, next_run_at, running_at, data)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            params![
                job.id,
                job.agent_id,
                job.enabled,
                job.state.next_run_at_ms,
                job.state.running_at_ms,
                data
            ],
        )
        .map_err(db)?;
        tx.commit().map_err(db)?;
        Ok(Admission::Stored)
    }

    fn put_if_unchanged(
        &self,
        job: &CronJob,
        read_running_at: Option<i64>,
        read_next_run_at: Option<i64>,
    ) -> Result<bool> {
        let data = encode(job)?;
        let n = self
            .conn()
            .execute(
                "UPDATE cron_jobs SET agent_id = ?2, enabled = ?3, next_run_at = ?4,
                     running_at = ?5, data = ?6
                 WHERE id = ?1 AND running_at IS ?7 AND next_run_at IS ?8",
                params![
                    job.id,
                    job.agent_id,
                    job.enabled,
                    job.state.next_run_at_ms,
                    job.state.running_at_ms,
                    data,
                    read_running_at,
                    read_next_run_at
                ],
            )
            .map_err(|e| self.db(e))?;
        Ok(n > 0)
    }

    fn put_many(&self, jobs: &[CronJob]) -> Result<()> {
        let db = |e| self.db(e);
        let mut conn = self.conn();
        let tx = conn.transaction().map_err(db)?;
        {
            let mut stmt = tx
                .prepare_cached(
                    "INSERT OR REPLACE INTO cron_jobs (id, agent_id, enabled, next_run_at, running_at, data)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                )
                .map_err(db)?;
            for job in jobs {
                let data = encode(job)?;
                stmt.execute(params![
                    job.id,
                    job.agent_id,
                    job.enabled,
                    job.state.next_run_at_ms,
                    job.state.running_at_ms,
                    data
                ])
                .map_err(db)?;
            }
        }
        tx.commit().map_err(db)
    }

    fn delete(&self, id: &str) -> Result<bool> {
        let n = self
            .conn()
            .execute("DELETE FROM cron_jobs WHERE id = ?1", params![id])
            .map_err(|e| self.db(e))?;
        Ok(n > 0)
    }

    fn get(&self, id: &str) -> Result<Option<CronJob>> {
        let data: Option<String> = self
            .conn()
            .query_row(
                "SELECT data FROM cron_jobs WHERE id = ?1",
                params![id],
                |r| r.get(0),
            )
            .optional()
            .map_err(|e| self.db(e))?;
        data.map(|d| decode(id, &d)).transpose()
    }

    fn list(&self, include_disabled: bool) -> Result<Vec<CronJob>> {
        let db = |e| self.db(e);
        let conn = self.conn();
        let mut stmt = conn
            .prepare_cached(
                "SELECT id, data FROM cron_jobs WHERE (?1 OR enabled = 1)
                 ORDER BY next_run_at IS NULL, next_run_at, id",
            )
            .map_err(db)?;
        let rows = stmt
            .query_map(params![include_disabled], |r| Ok((r.get(0)?, r.get(1)?)))
            .map_err(db)?;
        collect_jobs(rows, db)
    }

    fn due(&self, now_ms: i64, limit: usize) -> Result<Vec<CronJob>> {
        let db = |e| self.db(e);
        let conn = self.conn();
        let mut stmt = conn
            .prepare_cached(
                "SELECT id, data FROM cron_jobs
                 WHERE enabled = 1 AND next_run_at IS NOT NULL AND next_run_at <= ?1
                   AND running_at IS NULL
                 ORDER BY next_run_at LIMIT ?2",
            )
            .map_err(db)?;
        let rows = stmt
            .query_map(params![now_ms, sql_limit(limit)], |r| {
                Ok((r.get(0)?, r.get(1)?))
            })
            .map_err(db)?;
        collect_jobs(rows, db)
    }

    fn next_wake(&self) -> Result<Option<i64>> {
        self.conn()
            .query_row(
                "SELECT MIN(next_run_at) FROM cron_jobs WHERE enabled = 1 AND next_run_at IS NOT NULL",
                [],
                |r| r.get(0),
            )
            .map_err(|e| self.db(e))
    }

    fn counts(&self) -> Result<(usize, usize, usize)> {
        self.conn()
            .query_row(
                "SELECT COUNT(*), COALESCE(SUM(enabled), 0),
                        COALESCE(SUM(enabled = 1 AND next_run_at IS NULL), 0)
                 FROM cron_jobs",
                [],
                |r| {
                    let total: i64 = r.get(0)?;
                    let enabled: i64 = r.get(1)?;
                    let idle: i64 = r.get(2)?;
                    Ok((
                        usize::try_from(total).unwrap_or(0),
                        usize::try_from(enabled).unwrap_or(0),
                        usize::try_from(idle).unwrap_or(0),
                    ))
                },
            )
            .map_err(|e| self.db(e))
    }

    fn count_for_agent(&self, agent_id: &str) -> Result<u64> {
        self.conn()
            .query_row(
                "SELECT COUNT(*) FROM cron_jobs WHERE agent_id = ?1",
                params![agent_id],
                |r| r.get::<_, i64>(0),
            )
            .map(|n| u64::try_from(n).unwrap_or(0))
            .map_err(|e| self.db(e))
    }

    fn count_for_creator(&self, session_key: &str) -> Result<u64> {
        self.conn()
            .query_row(
                "SELECT COUNT(*) FROM cron_jobs
                 WHERE json_extract(data, '$.creatorSessionKey') = ?1",
                params![session_key],
                |r| r.get::<_, i64>(0),
            )
            .map(|n| u64::try_from(n).unwrap_or(0))
            .map_err(|e| self.db(e))
    }

    fn running(&self) -> Result<Vec<CronJob>> {
        let db = |e| self.db(e);
        let conn = self.conn();
        let mut stmt = conn
            .prepare_cached(
                "SELECT id, data FROM cron_jobs WHERE running_at IS NOT NULL ORDER BY id",
            )
            .map_err(db)?;
        let rows = stmt
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
            .map_err(db)?;
        collect_jobs(rows, db)
    }

    fn begin_run(&self, job: &CronJob, run: &RunRecord, _fence: Option<i64>) -> Result<BeginRun> {
        let db = |e| self.db(e);
        let data = encode(job)?;
        let mut conn = self.conn();
        let tx = conn.transaction().map_err(db)?;
        let claimed = tx
            .execute(
                "UPDATE cron_jobs SET running_at = ?2, data = ?3 WHERE id = ?1 AND running_at IS NULL",
                params![job.id, job.state.running_at_ms, data],
            )
            .map_err(db)?;
        if claimed == 0 {
            return Ok(BeginRun::AlreadyRunning);
        }
        let inserted = tx
            .execute(
                "INSERT INTO cron_runs (run_id, job_id, session_key, reason, started_at, status, slot)
                 VALUES (?1, ?2, ?3, ?4, ?5, 'running', ?6)
                 ON CONFLICT(job_id, slot) DO NOTHING",
                params![
                    run.run_id,
                    run.job_id,
                    run.session_key,
                    run.reason,
                    run.started_at_ms,
                    run.slot_ms
                ],
            )
            .map_err(db)?;
        if inserted == 0 {
            // Dropping the transaction rolls the claim back.
            return Ok(BeginRun::SlotTaken);
        }
        tx.commit().map_err(db)?;
        Ok(BeginRun::Started)
    }

    fn finish_run(&self, job_id: &str, job: Option<&CronJob>, run: &RunRecord) -> Result<bool> {
        let db = |e| self.db(e);
        let mut conn = self.conn();
        let tx = conn.transaction().map_err(db)?;
        let recorded = tx
            .execute(
                "UPDATE cron_runs SET ended_at = ?2, status = ?3, error = ?4, summary = ?5
                 WHERE run_id = ?1 AND status = 'running'",
                params![
                    run.run_id,
                    run.ended_at_ms,
                    run.status.as_str(),
                    run.error,
                    run.summary
                ],
            )
            .map_err(db)?;
        if recorded == 0 {
            return Ok(false);
        }
        match job {
            Some(job) => {
                let data = encode(job)?;
                tx.execute(
                    "UPDATE cron_jobs SET enabled = ?2, next_run_at = ?3, running_at = ?4, data = ?5 WHERE id = ?1",
                    params![
                        job.id,
                        job.enabled,
                        job.state.next_run_at_ms,
                        job.state.running_at_ms,
                        data
                    ],
                )
                .map_err(db)?;
            }
            None => {
                tx.execute("DELETE FROM cron_jobs WHERE id = ?1", params![job_id])
                    .map_err(db)?;
            }
        }
        tx.commit().map_err(db)?;
        Ok(true)
    }

    fn runs(&self, job_id: &str, limit: usize) -> Result<Vec<RunRecord>> {
        let db = |e| self.db(e);
        let limit = if limit == 0 { -1 } else { sql_limit(limit) };
        let conn = self.conn();
        let mut stmt = conn
            .prepare_cached(&format!(
                "SELECT {RUN_COLUMNS} FROM cron_runs WHERE job_id = ?1 ORDER BY seq DESC LIMIT ?2"
            ))
            .map_err(db)?;
        let rows = stmt
            .query_map(params![job_id, limit], row_to_run)
            .map_err(db)?;
        let mut out = Vec::new();
        for row in rows {
            out.push(row.map_err(db)?);
        }
        Ok(out)
    }

    fn interrupt_running_runs(&self, now_ms: i64, _fence: Option<i64>) -> Result<Vec<RunRecord>> {
        let db = |e| self.db(e);
        let mut conn = self.conn();
        let tx = conn.transaction().map_err(db)?;
        let mut out = Vec::new();
        {
            let mut stmt = tx
                .prepare_cached(&format!(
                    "UPDATE cron_runs SET status = 'interrupted', ended_at = ?1, error = ?2
                     WHERE status = 'running' RETURNING {RUN_COLUMNS}"
                ))
                .map_err(db)?;
            let rows = stmt
                .query_map(params![now_ms, INTERRUPTED_ERROR], row_to_run)
                .map_err(db)?;
            for row in rows {
                out.push(row.map_err(db)?);
            }
        }
        tx.commit().map_err(db)?;
        out.sort_by(|a, b| a.run_id.cmp(&b.run_id));
        Ok(out)
    }
}

fn row_to_run(r: &rusqlite::Row<'_>) -> rusqlite::Result<RunRecord> {
    let status: String = r.get(6)?;
    Ok(RunRecord {
        run_id: r.get(0)?,
        job_id: r.get(1)?,
        session_key: r.get(2)?,
        reason: r.get(3)?,
        started_at_ms: r.get(4)?,
        ended_at_ms: r.get(5)?,
        status: RunStatus::parse(&status).unwrap_or(RunStatus::Error),
        error: r.get(7)?,
        summary: r.get(8)?,
        slot_ms: r.get(9)?,
    })
}

pub(crate) fn decode(id: &str, data: &str) -> Result<CronJob> {
    serde_json::from_str(data).map_err(|e| CronError::Persisted {
        id: id.to_owned(),
        message: e.to_string(),
    })
}
