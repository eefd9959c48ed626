//! The SQLite engine: the shared state database (`talon.db`, WAL, one
//! connection per ledger).

use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};

use rusqlite::{Connection, OptionalExtension, params};

use crate::backend::{LedgerBackend, Lookup, StoredTask};
use crate::db::{open_database, schema_version, set_schema_version};
use crate::error::{Result, TaskError};
use crate::ledger::TaskFilter;
use crate::record::{TaskRecord, TaskRuntime, TaskStatus, decode, encode};

const COMPONENT: &str = "tasks";
const SCHEMA_VERSION: i64 = 1;

/// The ledger's rows in a SQLite file.
#[derive(Debug)]
pub struct SqliteLedger {
    path: PathBuf,
    conn: Mutex<Connection>,
}

impl SqliteLedger {
    /// Open (or create) the `tasks` table in the database at `path`.
    pub fn open(path: &Path) -> Result<Self> {
        let db = |source| TaskError::Db {
            path: path.display().to_string(),
            source,
        };
        let mut conn = open_database(path).map_err(db)?;
        migrate(&mut conn).map_err(db)?;
        Ok(SqliteLedger {
            path: path.to_path_buf(),
            conn: Mutex::new(conn),
        })
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn conn(&self) -> MutexGuard<'_, Connection> {
        match self.conn.lock() {
            Ok(g) => g,
            Err(poisoned) => poisoned.into_inner(),
        }
    }

    fn db(&self, source: rusqlite::Error) -> TaskError {
        TaskError::Db {
            path: self.path.display().to_string(),
            source,
        }
    }

    fn records(&self, sql: &str, values: &[&dyn rusqlite::ToSql]) -> Result<Vec<TaskRecord>> {
        let conn = self.conn();
        let mut stmt = conn.prepare_cached(sql).map_err(|e| self.db(e))?;
        let rows = stmt
            .query_map(values, |r| r.get::<_, String>(0))
            .map_err(|e| self.db(e))?;
        let mut out = Vec::new();
        for row in rows {
            out.push(decode(&row.map_err(|e| self.db(e))?)?);
        }
        Ok(out)
    }
}

impl LedgerBackend for SqliteLedger {
    fn location(&self) -> String {
        self.path.display().to_string()
    }

    fn insert(&self, record: &TaskRecord) -> Result<()> {
        let data = encode(record)?;
        self.conn()
            .execute(
                "INSERT INTO tasks (task_id, run_id, status, runtime, owner_key, created_at, ended_at, data)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
                params![
                    record.task_id,
                    record.run_id,
                    record.status.as_str(),
                    record.runtime.as_str(),
                    record.owner_key,
                    record.created_at,
                    record.ended_at,
                    data
                ],
            )
            .map_err(|e| match e {
                rusqlite::Error::SqliteFailure(f, _)
                    if f.code == rusqlite::ErrorCode::ConstraintViolation =>
                {
                    TaskError::duplicate_id(&record.task_id)
                }
                other => self.db(other),
            })?;
        Ok(())
    }

    fn load(&self, lookup: Lookup<'_>) -> Result<Option<StoredTask>> {
        let (sql, key) = match lookup {
            Lookup::RunId(k) => (
                "SELECT data FROM tasks WHERE run_id = ?1 ORDER BY created_at DESC, rowid DESC LIMIT 1",
                k,
            ),
            Lookup::TaskId(k) => ("SELECT data FROM tasks WHERE task_id = ?1", k),
        };
        let data: Option<String> = self
            .conn()
            .prepare_cached(sql)
            .and_then(|mut s| s.query_row(params![key], |r| r.get(0)).optional())
            .map_err(|e| self.db(e))?;
        data.map(|version| {
            Ok(StoredTask {
                record: decode(&version)?,
                version,
            })
        })
        .transpose()
    }

    fn list(&self, filter: &TaskFilter) -> Result<Vec<TaskRecord>> {
        let limit = if filter.limit == 0 {
            -1
        } else {
            i64::try_from(filter.limit).unwrap_or(i64::MAX)
        };
        self.records(
            "SELECT data FROM tasks
             WHERE (?1 IS NULL OR status = ?1) AND (?2 IS NULL OR runtime = ?2)
               AND (?3 IS NULL OR owner_key = ?3)
             ORDER BY created_at DESC, rowid DESC LIMIT ?4",
            params![
                filter.status.map(TaskStatus::as_str),
                filter.runtime.map(TaskRuntime::as_str),
                filter.owner_key,
                limit
            ],
        )
    }

    fn replace(&self, read: &StoredTask, record: &TaskRecord) -> Result<bool> {
        let n = self
            .conn()
            .execute(
                "UPDATE tasks SET status = ?2, ended_at = ?3, run_id = ?4, data = ?5
                 WHERE task_id = ?1 AND status = ?6 AND data = ?7",
                params![
                    record.task_id,
                    record.status.as_str(),
                    record.ended_at,
                    record.run_id,
                    encode(record)?,
                    read.record.status.as_str(),
                    read.version
                ],
            )
            .map_err(|e| self.db(e))?;
        Ok(n == 1)
    }

    fn finished(&self) -> Result<Vec<TaskRecord>> {
        self.records(
            "SELECT data FROM tasks WHERE status NOT IN ('queued', 'running')",
            params![],
        )
    }

    fn delete_finished(&self, task_ids: &[String]) -> Result<usize> {
        let mut conn = self.conn();
        let tx = conn.transaction().map_err(|e| self.db(e))?;
        let mut n = 0;
        for id in task_ids {
            n += tx
                .execute(
                    "DELETE FROM tasks WHERE task_id = ?1 AND status NOT IN ('queued', 'running')",
                    params![id],
                )
                .map_err(|e| self.db(e))?;
        }
        tx.commit().map_err(|e| self.db(e))?;
        Ok(n)
    }

    fn statuses(&self, task_ids: &[String]) -> Result<Vec<(String, TaskStatus)>> {
        if task_ids.is_empty() {
            return Ok(Vec::new());
        }
        let ids = serde_json::to_string(task_ids).map_err(|e| TaskError::Invalid {
            field: "taskId",
            message: format!("cannot encode the ids: {e}"),
        })?;
        let conn = self.conn();
        let mut stmt = conn
            .prepare_cached(
                "SELECT task_id, status FROM tasks
                 WHERE task_id IN (SELECT value FROM json_each(?1))",
            )
            .map_err(|e| self.db(e))?;
        let rows = stmt
            .query_map(params![ids], |r| {
                Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?))
            })
            .map_err(|e| self.db(e))?;
        let mut out = Vec::new();
        for row in rows {
            let (id, status) = row.map_err(|e| self.db(e))?;
            out.push((id, TaskStatus::parse_persisted(&status)?));
        }
        Ok(out)
    }
}

fn migrate(conn: &mut Connection) -> rusqlite::Result<()> {
    let tx = conn.transaction()?;
    if schema_version(&tx, COMPONENT)? < 1 {
        tx.execute_batch(
            "CREATE TABLE IF NOT EXISTS tasks (
                 task_id TEXT PRIMARY KEY,
                 run_id TEXT,
                 status TEXT NOT NULL,
                 runtime TEXT NOT NULL,
                 owner_key TEXT NOT NULL,
                 created_at INTEGER NOT NULL,
                 ended_at INTEGER,
                 data TEXT NOT NULL
             );
             CREATE INDEX IF NOT EXISTS tasks_run_id ON tasks(run_id);
             CREATE INDEX IF NOT EXISTS tasks_status ON tasks(status, created_at);
             CREATE INDEX IF NOT EXISTS tasks_created ON tasks(created_at);",
        )?;
        set_schema_version(&tx, COMPONENT, SCHEMA_VERSION)?;
    }
    // A session's tasks (`session_status` on every call, `subagents
    // list`); an index, so a file without it reads the same to an older
    // build and no version step is needed.
    tx.execute_batch("CREATE INDEX IF NOT EXISTS tasks_owner ON tasks(owner_key, created_at);")?;
    tx.commit()
}
