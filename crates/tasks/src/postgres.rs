//! The PostgreSQL engine (`postgres` feature): several gateways share one
//! database through a [`PgPool`] each.
//!
//! Every rule the single SQLite writer gave for free is a statement here:
//! a duplicate task id is the primary key's unique violation; a change is
//! `UPDATE … WHERE task_id = $1 AND status = $from AND data = $as_read`
//! with the rows affected checked, so of two gateways finishing or
//! cancelling the same task at once exactly one writes and the other is
//! judged again against what it wrote (first terminal wins); prune deletes
//! only rows that are still terminal. Migrations are versioned
//! ([`PgPool::migrate`]`("tasks", …)`) and a newer schema is refused.

use talon_state::postgres::Row;
use talon_state::{PgPool, StateError};

use crate::backend::{LedgerBackend, Lookup, StoredTask};
use crate::error::{Result, TaskError};
use crate::ledger::TaskFilter;
use crate::record::{TaskRecord, TaskRuntime, TaskStatus, decode, encode};

/// The store's name in `talon_schema`.
pub const STORE: &str = "tasks";

/// The ledger's migrations: version `i + 1` is `MIGRATIONS[i]`.
pub const MIGRATIONS: &[&str] = &[
    "
    CREATE TABLE tasks (
        seq BIGINT GENERATED ALWAYS AS IDENTITY,
        task_id TEXT PRIMARY KEY,
        run_id TEXT,
        status TEXT NOT NULL,
        runtime TEXT NOT NULL,
        owner_key TEXT NOT NULL,
        created_at BIGINT NOT NULL,
        ended_at BIGINT,
        data TEXT NOT NULL
    );
    CREATE INDEX tasks_run_id ON tasks (run_id, created_at DESC, seq DESC);
    CREATE INDEX tasks_status ON tasks (status, created_at);
    CREATE INDEX tasks_created ON tasks (created_at DESC, seq DESC);
",
    "
    -- A session's tasks (`session_status` on every call, `subagents list`).
    CREATE INDEX tasks_owner ON tasks (owner_key, created_at DESC, seq DESC);
",
];

/// The ledger's rows in a PostgreSQL database.
#[derive(Debug, Clone)]
pub struct PgLedger {
    pool: PgPool,
}

impl PgLedger {
    /// Bring the `tasks` table up to date (refusing a newer schema) and use
    /// it through `pool`.
    pub fn open(pool: &PgPool) -> Result<Self> {
        pool.migrate(STORE, MIGRATIONS)?;
        Ok(PgLedger { pool: pool.clone() })
    }

    fn data_rows<F>(&self, query: F) -> Result<Vec<TaskRecord>>
    where
        F: FnOnce(&mut talon_state::Conn) -> std::result::Result<Vec<Row>, StateError>
            + Send
            + 'static,
    {
        let texts: Vec<String> = self.pool.run(move |c| {
            query(c)?
                .iter()
                .map(|r| r.try_get::<_, String>(0).map_err(StateError::from))
                .collect()
        })?;
        texts.iter().map(|d| decode(d)).collect()
    }
}

fn opt_limit(limit: usize) -> Option<i64> {
    (limit != 0).then(|| i64::try_from(limit).unwrap_or(i64::MAX))
}

impl LedgerBackend for PgLedger {
    fn location(&self) -> String {
        format!("postgres {}", self.pool.target())
    }

    fn insert(&self, record: &TaskRecord) -> Result<()> {
        let data = encode(record)?;
        let r = record.clone();
        let inserted = self.pool.run(move |c| {
            c.execute(
                "INSERT INTO tasks (task_id, run_id, status, runtime, owner_key, created_at, ended_at, data)
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
                &[
                    &r.task_id,
                    &r.run_id,
                    &r.status.as_str(),
                    &r.runtime.as_str(),
                    &r.owner_key,
                    &r.created_at,
                    &r.ended_at,
                    &data,
                ],
            )
            .map_err(StateError::from)
        });
        match inserted {
            Ok(_) => Ok(()),
            Err(StateError::Conflict { .. }) => Err(TaskError::duplicate_id(&record.task_id)),
            Err(e) => Err(e.into()),
        }
    }

    fn load(&self, lookup: Lookup<'_>) -> Result<Option<StoredTask>> {
        let (sql, key) = match lookup {
            Lookup::RunId(k) => (
                "SELECT data FROM tasks WHERE run_id = $1 ORDER BY created_at DESC, seq DESC LIMIT 1",
                k.to_owned(),
            ),
            Lookup::TaskId(k) => ("SELECT data FROM tasks WHERE task_id = $1", k.to_owned()),
        };
        let data: Option<String> = self.pool.run(move |c| {
            c.query_opt(sql, &[&key])?
                .map(|r| r.try_get::<_, String>(0))
                .transpose()
                .map_err(StateError::from)
        })?;
        data.map(|version| {
            Ok(StoredTask {
                record: decode(&version)?,
                version,
            })
        })
        .transpose()
    }

    fn list(&self, filter: &TaskFilter) -> Result<Vec<TaskRecord>> {
        let status = filter.status.map(TaskStatus::as_str);
        let runtime = filter.runtime.map(TaskRuntime::as_str);
        let owner = filter.owner_key.clone();
        let limit = opt_limit(filter.limit);
        self.data_rows(move |c| {
            Ok(c.query(
                "SELECT data FROM tasks
                 WHERE ($1::text IS NULL OR status = $1) AND ($2::text IS NULL OR runtime = $2)
                   AND ($3::text IS NULL OR owner_key = $3)
                 ORDER BY created_at DESC, seq DESC LIMIT $4",
                &[&status, &runtime, &owner, &limit],
            )?)
        })
    }

    fn replace(&self, read: &StoredTask, record: &TaskRecord) -> Result<bool> {
        let data = encode(record)?;
        let id = record.task_id.clone();
        let status = record.status.as_str();
        let ended_at = record.ended_at;
        let run_id = record.run_id.clone();
        let from = read.record.status.as_str();
        let version = read.version.clone();
        let n = self.pool.run(move |c| {
            Ok(c.execute(
                "UPDATE tasks SET status = $2, ended_at = $3, run_id = $4, data = $5
                 WHERE task_id = $1 AND status = $6 AND data = $7",
                &[&id, &status, &ended_at, &run_id, &data, &from, &version],
            )?)
        })?;
        Ok(n == 1)
    }

    fn finished(&self) -> Result<Vec<TaskRecord>> {
        self.data_rows(|c| {
            Ok(c.query(
                "SELECT data FROM tasks WHERE status NOT IN ('queued', 'running')",
                &[],
            )?)
        })
    }

    fn delete_finished(&self, task_ids: &[String]) -> Result<usize> {
        let ids = task_ids.to_vec();
        let n = self.pool.run(move |c| {
            Ok(c.execute(
                "DELETE FROM tasks WHERE task_id = ANY($1) AND status NOT IN ('queued', 'running')",
                &[&ids],
            )?)
        })?;
        Ok(usize::try_from(n).unwrap_or(usize::MAX))
    }

    fn statuses(&self, task_ids: &[String]) -> Result<Vec<(String, TaskStatus)>> {
        if task_ids.is_empty() {
            return Ok(Vec::new());
        }
        let ids = task_ids.to_vec();
        let rows: Vec<(String, String)> = self.pool.run(move |c| {
            c.query(
                "SELECT task_id, status FROM tasks WHERE task_id = ANY($1)",
                &[&ids],
            )?
            .iter()
            .map(|r| Ok((r.try_get(0)?, r.try_get(1)?)))
            .collect::<std::result::Result<_, talon_state::postgres::Error>>()
            .map_err(StateError::from)
        })?;
        rows.into_iter()
            .map(|(id, s)| Ok((id, TaskStatus::parse_persisted(&s)?)))
            .collect()
    }
}
