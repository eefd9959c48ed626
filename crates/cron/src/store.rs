//! The SQLite job store: jobs as JSON with indexed scheduling columns, and
//! the run history. Next-due selection is an index range scan
//! (`enabled, next_run_at`), never a scan of every job.

use std::path::{Path, PathBuf};

use rusqlite::{Connection, OptionalExtension, params};
use talon_tasks::{open_database, schema_version, set_schema_version};

use crate::error::{CronError, Result};
use crate::job::{CronJob, RunRecord, RunStatus};

const COMPONENT: &str = "cron";
const SCHEMA_VERSION: i64 = 1;

/// The job store (one SQLite connection; not `Sync` by itself — the
/// service wraps it in a mutex).
#[derive(Debug)]
pub struct CronStore {
    path: PathBuf,
    conn: Connection,
}

impl CronStore {
    /// Open (or create) the store in the database at `path`.
    pub fn open(path: &Path) -> Result<Self> {
        let db = |source| CronError::Db {
            path: path.display().to_string(),
            source,
        };
        let mut conn = open_database(path).map_err(db)?;
        let tx = conn.transaction().map_err(db)?;
        if schema_version(&tx, COMPONENT).map_err(db)? < 1 {
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
            set_schema_version(&tx, COMPONENT, SCHEMA_VERSION).map_err(db)?;
        }
        tx.commit().map_err(db)?;
        Ok(CronStore {
            path: path.to_path_buf(),
            conn,
        })
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn db(&self, source: rusqlite::Error) -> CronError {
        CronError::Db {
            path: self.path.display().to_string(),
            source,
        }
    }

    /// Insert or replace a job (one transaction).
    pub fn put(&mut self, job: &CronJob) -> Result<()> {
        let data = serde_json::to_string(job).map_err(|e| CronError::Persisted {
            id: job.id.clone(),
            message: e.to_string(),
        })?;
        self.conn
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

    /// Insert many jobs in one transaction.
    pub fn put_many(&mut self, jobs: &[CronJob]) -> Result<()> {
        let path = self.path.clone();
        let db = |source| CronError::Db {
            path: path.display().to_string(),
            source,
        };
        let tx = self.conn.transaction().map_err(db)?;
        {
            let mut stmt = tx
                .prepare_cached(
                    "INSERT OR REPLACE INTO cron_jobs (id, agent_id, enabled, next_run_at, running_at, data)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                )
                .map_err(db)?;
            for job in jobs {
                let data = serde_json::to_string(job).map_err(|e| CronError::Persisted {
                    id: job.id.clone(),
                    message: e.to_string(),
                })?;
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

    /// Delete a job (its run history stays). `false` when it did not exist.
    pub fn delete(&mut self, id: &str) -> Result<bool> {
        let n = self
            .conn
            .execute("DELETE FROM cron_jobs WHERE id = ?1", params![id])
            .map_err(|e| self.db(e))?;
        Ok(n > 0)
    }

    /// One job.
    pub fn get(&self, id: &str) -> Result<Option<CronJob>> {
        let data: Option<String> = self
            .conn
            .query_row(
                "SELECT data FROM cron_jobs WHERE id = ?1",
                params![id],
                |r| r.get(0),
            )
            .optional()
            .map_err(|e| self.db(e))?;
        data.map(|d| decode(id, &d)).transpose()
    }

    /// All jobs (optionally only enabled ones), ordered by next run.
    pub fn list(&self, include_disabled: bool) -> Result<Vec<CronJob>> {
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT id, data FROM cron_jobs WHERE (?1 OR enabled = 1)
                 ORDER BY next_run_at IS NULL, next_run_at, id",
            )
            .map_err(|e| self.db(e))?;
        let rows = stmt
            .query_map(params![include_disabled], |r| {
                Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?))
            })
            .map_err(|e| self.db(e))?;
        let mut out = Vec::new();
        for row in rows {
            let (id, data) = row.map_err(|e| self.db(e))?;
            out.push(decode(&id, &data)?);
        }
        Ok(out)
    }

    /// Enabled jobs due at `now_ms` that are not running, earliest first,
    /// at most `limit`.
    pub fn due(&self, now_ms: i64, limit: usize) -> Result<Vec<CronJob>> {
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT id, data FROM cron_jobs
                 WHERE enabled = 1 AND next_run_at IS NOT NULL AND next_run_at <= ?1
                   AND running_at IS NULL
                 ORDER BY next_run_at LIMIT ?2",
            )
            .map_err(|e| self.db(e))?;
        let rows = stmt
            .query_map(
                params![now_ms, i64::try_from(limit).unwrap_or(i64::MAX)],
                |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)),
            )
            .map_err(|e| self.db(e))?;
        let mut out = Vec::new();
        for row in rows {
            let (id, data) = row.map_err(|e| self.db(e))?;
            out.push(decode(&id, &data)?);
        }
        Ok(out)
    }

    /// The earliest next run of any enabled job (running ones included, so
    /// a stuck job keeps the timer at the minimum re-fire gap).
    pub fn next_wake(&self) -> Result<Option<i64>> {
        self.conn
            .query_row(
                "SELECT MIN(next_run_at) FROM cron_jobs WHERE enabled = 1 AND next_run_at IS NOT NULL",
                [],
                |r| r.get(0),
            )
            .map_err(|e| self.db(e))
    }

    /// How many jobs are enabled, and how many of those have no next run.
    pub fn counts(&self) -> Result<(usize, usize, usize)> {
        self.conn
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

    /// How many jobs `agent_id` holds.
    pub fn count_for_agent(&self, agent_id: &str) -> Result<u64> {
        self.conn
            .query_row(
                "SELECT COUNT(*) FROM cron_jobs WHERE agent_id = ?1",
                params![agent_id],
                |r| r.get::<_, i64>(0),
            )
            .map(|n| u64::try_from(n).unwrap_or(0))
            .map_err(|e| self.db(e))
    }

    /// How many jobs the session `session_key` created.
    pub fn count_for_creator(&self, session_key: &str) -> Result<u64> {
        self.conn
            .query_row(
                "SELECT COUNT(*) FROM cron_jobs
                 WHERE json_extract(data, '$.creatorSessionKey') = ?1",
                params![session_key],
                |r| r.get::<_, i64>(0),
            )
            .map(|n| u64::try_from(n).unwrap_or(0))
            .map_err(|e| self.db(e))
    }

    /// Jobs whose `running_at` is set (in flight, or orphaned by a crash).
    pub fn running(&self) -> Result<Vec<CronJob>> {
        let mut stmt = self
            .conn
            .prepare_cached("SELECT id, data FROM cron_jobs WHERE running_at IS NOT NULL")
            .map_err(|e| self.db(e))?;
        let rows = stmt
            .query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)))
            .map_err(|e| self.db(e))?;
        let mut out = Vec::new();
        for row in rows {
            let (id, data) = row.map_err(|e| self.db(e))?;
            out.push(decode(&id, &data)?);
        }
        Ok(out)
    }

    /// Start a run: set the job's running marker and write the `running`
    /// history row, in one transaction (write-ahead: a crash leaves a
    /// record). `false` when the job is already running.
    pub fn begin_run(&mut self, job: &CronJob, run: &RunRecord) -> Result<bool> {
        let path = self.path.clone();
        let db = |source| CronError::Db {
            path: path.display().to_string(),
            source,
        };
        let data = serde_json::to_string(job).map_err(|e| CronError::Persisted {
            id: job.id.clone(),
            message: e.to_string(),
        })?;
        let tx = self.conn.transaction().map_err(db)?;
        let claimed = tx
            .execute(
                "UPDATE cron_jobs SET running_at = ?2, data = ?3 WHERE id = ?1 AND running_at IS NULL",
                params![job.id, job.state.running_at_ms, data],
            )
            .map_err(db)?;
        if claimed == 0 {
            return Ok(false);
        }
        tx.execute(
            "INSERT INTO cron_runs (run_id, job_id, session_key, reason, started_at, status)
             VALUES (?1, ?2, ?3, ?4, ?5, 'running')",
            params![
                run.run_id,
                run.job_id,
                run.session_key,
                run.reason,
                run.started_at_ms
            ],
        )
        .map_err(db)?;
        tx.commit().map_err(db)?;
        Ok(true)
    }

    /// Finish a run: the history row and the job (updated, or deleted when
    /// `job` is `None`), in one transaction.
    pub fn finish_run(
        &mut self,
        job_id: &str,
        job: Option<&CronJob>,
        run: &RunRecord,
    ) -> Result<()> {
        let path = self.path.clone();
        let db = |source| CronError::Db {
            path: path.display().to_string(),
            source,
        };
        let tx = self.conn.transaction().map_err(db)?;
        tx.execute(
            "UPDATE cron_runs SET ended_at = ?2, status = ?3, error = ?4, summary = ?5 WHERE run_id = ?1",
            params![
                run.run_id,
                run.ended_at_ms,
                run.status.as_str(),
                run.error,
                run.summary
            ],
        )
        .map_err(db)?;
        match job {
            Some(job) => {
                let data = serde_json::to_string(job).map_err(|e| CronError::Persisted {
                    id: job.id.clone(),
                    message: e.to_string(),
                })?;
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
        tx.commit().map_err(db)
    }

    /// Run history of a job, newest first (`limit` 0 = all).
    pub fn runs(&self, job_id: &str, limit: usize) -> Result<Vec<RunRecord>> {
        let limit = if limit == 0 {
            -1
        } else {
            i64::try_from(limit).unwrap_or(i64::MAX)
        };
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT run_id, job_id, session_key, reason, started_at, ended_at, status, error, summary
                 FROM cron_runs WHERE job_id = ?1 ORDER BY seq DESC LIMIT ?2",
            )
            .map_err(|e| self.db(e))?;
        let rows = stmt
            .query_map(params![job_id, limit], row_to_run)
            .map_err(|e| self.db(e))?;
        let mut out = Vec::new();
        for row in rows {
            out.push(row.map_err(|e| self.db(e))?);
        }
        Ok(out)
    }

    /// Mark every `running` history row `interrupted` (at start-up: the
    /// process that ran them is gone). Returns how many.
    pub fn interrupt_running_runs(&mut self, now_ms: i64) -> Result<usize> {
        self.conn
            .execute(
                "UPDATE cron_runs SET status = 'interrupted', ended_at = ?1,
                   error = 'the process stopped while this run was in flight'
                 WHERE status = 'running'",
                params![now_ms],
            )
            .map_err(|e| self.db(e))
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
    })
}

fn decode(id: &str, data: &str) -> Result<CronJob> {
    serde_json::from_str(data).map_err(|e| CronError::Persisted {
        id: id.to_owned(),
        message: e.to_string(),
    })
}
