//! The SQLite-backed ledger.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};

use rusqlite::{Connection, OptionalExtension, params};
use tokio_util::sync::CancellationToken;

use crate::clock::{Clock, SystemClock};
use crate::db::{open_database, schema_version, set_schema_version};
use crate::error::{Result, TaskError};
use crate::id::new_id;
use crate::record::{
    DeliveryStatus, NewTask, NotifyPolicy, ScopeKind, TaskRecord, TaskRuntime, TaskStatus,
};
use crate::transition::check_transition;

/// Terminal tasks are pruned this long after they ended (7 days).
pub const TERMINAL_RETENTION_MS: i64 = 7 * 24 * 60 * 60 * 1000;
/// `lost` tasks are pruned this long after they ended (1 day).
pub const LOST_RETENTION_MS: i64 = 24 * 60 * 60 * 1000;
/// A running task with no event for this long is marked `lost` (30 min).
pub const STALE_RUNNING_MS: i64 = 30 * 60 * 1000;
/// How often the embedder should call [`TaskLedger::sweep`] (60 s).
pub const SWEEP_INTERVAL_MS: i64 = 60 * 1000;

const COMPONENT: &str = "tasks";
const SCHEMA_VERSION: i64 = 1;

/// Which tasks [`TaskLedger::list`] returns.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TaskFilter {
    /// Only this status.
    pub status: Option<TaskStatus>,
    /// Only this runtime.
    pub runtime: Option<TaskRuntime>,
    /// Only tasks owned by this key.
    pub owner_key: Option<String>,
    /// At most this many (newest first); 0 means no limit.
    pub limit: usize,
}

/// How a task ended, for [`TaskLedger::finish`] and
/// [`TaskLedger::finalize_by_run_id`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TaskOutcome {
    /// When the work really ended (epoch ms); now when `None`.
    pub ended_at: Option<i64>,
    /// The error, for failures.
    pub error: Option<String>,
    /// A final summary.
    pub summary: Option<String>,
}

/// What one maintenance sweep did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SweepReport {
    /// Tasks marked `lost` (running with no event for 30 min).
    pub lost: Vec<String>,
    /// Tasks pruned by retention.
    pub pruned: usize,
    /// In-process tokens fired because the task was cancelled elsewhere
    /// (another process, e.g. `talon tasks cancel`).
    pub cancelled_tokens: usize,
}

/// The detached-task ledger. Cheap to clone; all clones share one
/// connection and one token table.
#[derive(Debug, Clone)]
pub struct TaskLedger {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    path: PathBuf,
    conn: Mutex<Connection>,
    tokens: Mutex<HashMap<String, CancellationToken>>,
    clock: Arc<dyn Clock>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    match m.lock() {
        Ok(g) => g,
        Err(poisoned) => poisoned.into_inner(),
    }
}

impl TaskLedger {
    /// Open (or create) the ledger in the database at `path`, on the system
    /// clock.
    pub fn open(path: &Path) -> Result<Self> {
        Self::open_with_clock(path, Arc::new(SystemClock))
    }

    /// Open with an injected clock.
    pub fn open_with_clock(path: &Path, clock: Arc<dyn Clock>) -> Result<Self> {
        let db = |source| TaskError::Db {
            path: path.display().to_string(),
            source,
        };
        let mut conn = open_database(path).map_err(db)?;
        migrate(&mut conn).map_err(db)?;
        Ok(TaskLedger {
            inner: Arc::new(Inner {
                path: path.to_path_buf(),
                conn: Mutex::new(conn),
                tokens: Mutex::new(HashMap::new()),
                clock,
            }),
        })
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.inner.path
    }

    fn now(&self) -> i64 {
        self.inner.clock.now_ms()
    }

    fn db(&self, source: rusqlite::Error) -> TaskError {
        TaskError::Db {
            path: self.inner.path.display().to_string(),
            source,
        }
    }

    /// Record a new task (`queued`, or `running` with `start_running`).
    pub fn create(&self, new: NewTask) -> Result<TaskRecord> {
        let runtime = new.runtime.ok_or_else(|| TaskError::Invalid {
            field: "runtime",
            message: "required: one of subagent, acp, cli, cron".into(),
        })?;
        if new.requester_session_key.trim().is_empty() {
            return Err(TaskError::Invalid {
                field: "requesterSessionKey",
                message: "required: the session that asked for the task".into(),
            });
        }
        if new.task.trim().is_empty() {
            return Err(TaskError::Invalid {
                field: "task",
                message: "required: say what the task is about".into(),
            });
        }
        let now = self.now();
        let record = TaskRecord {
            task_id: new.task_id.unwrap_or_else(|| new_id("task")),
            runtime,
            task_kind: new.task_kind,
            source_id: new.source_id,
            owner_key: new
                .owner_key
                .unwrap_or_else(|| new.requester_session_key.clone()),
            requester_session_key: new.requester_session_key,
            scope_kind: if new.system_scope {
                ScopeKind::System
            } else {
                ScopeKind::Session
            },
            child_session_key: new.child_session_key,
            parent_task_id: new.parent_task_id,
            agent_id: new.agent_id,
            run_id: new.run_id,
            label: new.label,
            task: new.task,
            status: if new.start_running {
                TaskStatus::Running
            } else {
                TaskStatus::Queued
            },
            delivery_status: DeliveryStatus::Pending,
            notify_policy: new.notify_policy.unwrap_or(NotifyPolicy::DoneOnly),
            created_at: now,
            started_at: new.start_running.then_some(now),
            ended_at: None,
            last_event_at: Some(now),
            cleanup_after: None,
            tool_use_count: None,
            last_tool_name: None,
            error: None,
            progress_summary: None,
            terminal_summary: None,
            detail: None,
        };
        let conn = lock(&self.inner.conn);
        let data = encode(&record)?;
        let inserted = conn
            .execute(
                "INSERT INTO tasks (task_id, run_id, status, runtime, owner_key, created_at, ended_at, data)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, NULL, ?7)",
                params![
                    record.task_id,
                    record.run_id,
                    record.status.as_str(),
                    record.runtime.as_str(),
                    record.owner_key,
                    record.created_at,
                    data
                ],
            )
            .map_err(|e| match e {
                rusqlite::Error::SqliteFailure(f, _)
                    if f.code == rusqlite::ErrorCode::ConstraintViolation =>
                {
                    TaskError::Invalid {
                        field: "taskId",
                        message: format!("`{}` already exists", record.task_id),
                    }
                }
                other => self.db(other),
            })?;
        debug_assert_eq!(inserted, 1);
        tracing::debug!(task = %record.task_id, runtime = %record.runtime, "task created");
        Ok(record)
    }

    /// The task with this id.
    pub fn get(&self, task_id: &str) -> Result<Option<TaskRecord>> {
        let conn = lock(&self.inner.conn);
        load(&conn, "task_id", task_id).map_err(|e| self.wrap(e))
    }

    /// The newest task with this run id.
    pub fn get_by_run_id(&self, run_id: &str) -> Result<Option<TaskRecord>> {
        let conn = lock(&self.inner.conn);
        load(&conn, "run_id", run_id).map_err(|e| self.wrap(e))
    }

    fn wrap(&self, e: LoadError) -> TaskError {
        match e {
            LoadError::Db(e) => self.db(e),
            LoadError::Task(t) => t,
        }
    }

    /// Tasks matching `filter`, newest first.
    pub fn list(&self, filter: &TaskFilter) -> Result<Vec<TaskRecord>> {
        let conn = lock(&self.inner.conn);
        let limit = if filter.limit == 0 {
            -1
        } else {
            i64::try_from(filter.limit).unwrap_or(i64::MAX)
        };
        let mut stmt = conn
            .prepare_cached(
                "SELECT data FROM tasks
                 WHERE (?1 IS NULL OR status = ?1) AND (?2 IS NULL OR runtime = ?2)
                   AND (?3 IS NULL OR owner_key = ?3)
                 ORDER BY created_at DESC, rowid DESC LIMIT ?4",
            )
            .map_err(|e| self.db(e))?;
        let rows = stmt
            .query_map(
                params![
                    filter.status.map(TaskStatus::as_str),
                    filter.runtime.map(TaskRuntime::as_str),
                    filter.owner_key,
                    limit
                ],
                |r| r.get::<_, String>(0),
            )
            .map_err(|e| self.db(e))?;
        let mut out = Vec::new();
        for row in rows {
            out.push(decode(&row.map_err(|e| self.db(e))?)?);
        }
        Ok(out)
    }

    /// Read, change and write one task in one transaction.
    fn update<F>(&self, key_col: &'static str, key: &str, change: F) -> Result<TaskRecord>
    where
        F: FnOnce(&mut TaskRecord) -> Result<()>,
    {
        let mut conn = lock(&self.inner.conn);
        let tx = conn.transaction().map_err(|e| self.db(e))?;
        let mut record = load(&tx, key_col, key)
            .map_err(|e| self.wrap(e))?
            .ok_or_else(|| TaskError::NotFound {
                what: if key_col == "run_id" { "run id" } else { "id" },
                id: key.to_owned(),
            })?;
        change(&mut record)?;
        tx.execute(
            "UPDATE tasks SET status = ?2, ended_at = ?3, run_id = ?4, data = ?5 WHERE task_id = ?1",
            params![
                record.task_id,
                record.status.as_str(),
                record.ended_at,
                record.run_id,
                encode(&record)?
            ],
        )
        .map_err(|e| self.db(e))?;
        tx.commit().map_err(|e| self.db(e))?;
        Ok(record)
    }

    /// Move `queued` → `running` and hand out the task's cancellation token
    /// (the running work must watch it).
    pub fn start(&self, task_id: &str) -> Result<(TaskRecord, CancellationToken)> {
        let now = self.now();
        let record = self.update("task_id", task_id, |r| {
            apply_status(r, TaskStatus::Running, now, None)?;
            r.started_at.get_or_insert(now);
            Ok(())
        })?;
        Ok((record, self.token(task_id)))
    }

    /// The task's cancellation token (created on first use). A token for a
    /// task that is already cancelled comes back cancelled.
    pub fn token(&self, task_id: &str) -> CancellationToken {
        let token = lock(&self.inner.tokens)
            .entry(task_id.to_owned())
            .or_default()
            .clone();
        if let Ok(Some(r)) = self.get(task_id)
            && r.status == TaskStatus::Cancelled
        {
            token.cancel();
        }
        token
    }

    /// Record progress: a summary line and/or the tool just used.
    pub fn progress(
        &self,
        task_id: &str,
        summary: Option<&str>,
        tool_name: Option<&str>,
    ) -> Result<TaskRecord> {
        let now = self.now();
        self.update("task_id", task_id, |r| {
            if r.status.is_terminal() {
                return Err(TaskError::IllegalTransition {
                    id: r.task_id.clone(),
                    from: r.status,
                    to: r.status,
                    why: "a finished task takes no more progress",
                });
            }
            if let Some(s) = summary {
                r.progress_summary = Some(s.to_owned());
            }
            if let Some(t) = tool_name {
                r.last_tool_name = Some(t.to_owned());
                r.tool_use_count = Some(r.tool_use_count.unwrap_or(0) + 1);
            }
            r.last_event_at = Some(now);
            Ok(())
        })
    }

    /// Move a task to `to` (terminal or not), under the transition rules.
    pub fn finish(
        &self,
        task_id: &str,
        to: TaskStatus,
        outcome: TaskOutcome,
    ) -> Result<TaskRecord> {
        let now = self.now();
        let record = self.update("task_id", task_id, |r| {
            apply_status(r, to, now, Some(&outcome))
        })?;
        self.drop_token_if_terminal(&record);
        Ok(record)
    }

    /// Finish the newest task carrying `run_id` (the run finished; its
    /// runtime knows the run id, not the task id).
    pub fn finalize_by_run_id(
        &self,
        run_id: &str,
        to: TaskStatus,
        outcome: TaskOutcome,
    ) -> Result<TaskRecord> {
        let now = self.now();
        let record = self.update("run_id", run_id, |r| {
            apply_status(r, to, now, Some(&outcome))
        })?;
        self.drop_token_if_terminal(&record);
        Ok(record)
    }

    /// Record whether the task's result reached its requester (after it
    /// ended, too: the announce-back comes after the terminal state).
    pub fn set_delivery(&self, task_id: &str, delivery: DeliveryStatus) -> Result<TaskRecord> {
        let now = self.now();
        self.update("task_id", task_id, |r| {
            r.delivery_status = delivery;
            r.last_event_at = Some(now);
            Ok(())
        })
    }

    /// Cancel a task: mark it `cancelled` and fire its token so the running
    /// work stops. Cancelling a finished task is refused.
    pub fn cancel(&self, task_id: &str, reason: Option<&str>) -> Result<TaskRecord> {
        let now = self.now();
        let record = self.update("task_id", task_id, |r| {
            if r.status.is_terminal() && r.status != TaskStatus::Cancelled {
                return Err(TaskError::IllegalTransition {
                    id: r.task_id.clone(),
                    from: r.status,
                    to: TaskStatus::Cancelled,
                    why: "the task already finished",
                });
            }
            let outcome = TaskOutcome {
                ended_at: Some(now),
                error: reason.map(str::to_owned),
                summary: None,
            };
            apply_status(r, TaskStatus::Cancelled, now, Some(&outcome))
        })?;
        if let Some(token) = lock(&self.inner.tokens).remove(task_id) {
            token.cancel();
        }
        tracing::info!(task = %task_id, "task cancelled");
        Ok(record)
    }

    fn drop_token_if_terminal(&self, record: &TaskRecord) {
        if record.status.is_terminal() {
            let token = lock(&self.inner.tokens).remove(&record.task_id);
            // Work that was cancelled, timed out or lost must stop.
            if matches!(
                record.status,
                TaskStatus::Cancelled | TaskStatus::Lost | TaskStatus::TimedOut
            ) && let Some(t) = token
            {
                t.cancel();
            }
        }
    }

    /// Prune finished tasks past retention: 7 days after they ended
    /// (`endedAt ?? lastEventAt ?? createdAt`), 1 day for `lost`; cron tasks
    /// only when `lost`; an explicit `cleanupAfter` wins (for `lost`, the
    /// earlier of the two). Returns how many were removed.
    pub fn prune(&self) -> Result<usize> {
        let now = self.now();
        let mut conn = lock(&self.inner.conn);
        let tx = conn.transaction().map_err(|e| self.db(e))?;
        let doomed: Vec<String> = {
            let mut stmt = tx
                .prepare("SELECT data FROM tasks WHERE status NOT IN ('queued', 'running')")
                .map_err(|e| self.db(e))?;
            let rows = stmt
                .query_map([], |r| r.get::<_, String>(0))
                .map_err(|e| self.db(e))?;
            let mut doomed = Vec::new();
            for row in rows {
                let r = decode(&row.map_err(|e| self.db(e))?)?;
                if prune_at(&r).is_some_and(|at| now >= at) {
                    doomed.push(r.task_id);
                }
            }
            doomed
        };
        for id in &doomed {
            tx.execute("DELETE FROM tasks WHERE task_id = ?1", params![id])
                .map_err(|e| self.db(e))?;
        }
        tx.commit().map_err(|e| self.db(e))?;
        Ok(doomed.len())
    }

    /// The maintenance sweep (call every [`SWEEP_INTERVAL_MS`]): mark
    /// running tasks with no event for [`STALE_RUNNING_MS`] as `lost` (and
    /// fire their tokens), fire tokens of tasks cancelled by another
    /// process, then [`prune`](Self::prune).
    pub fn sweep(&self) -> Result<SweepReport> {
        let now = self.now();
        let running = self.list(&TaskFilter {
            status: Some(TaskStatus::Running),
            ..TaskFilter::default()
        })?;
        let mut report = SweepReport::default();
        for r in running {
            let last = r.last_event_at.or(r.started_at).unwrap_or(r.created_at);
            if now - last >= STALE_RUNNING_MS {
                let outcome = TaskOutcome {
                    ended_at: Some(now),
                    error: Some(format!(
                        "no progress for {} min; marked lost by the maintenance sweep",
                        (now - last) / 60_000
                    )),
                    summary: None,
                };
                match self.finish(&r.task_id, TaskStatus::Lost, outcome) {
                    Ok(_) => {
                        tracing::warn!(task = %r.task_id, "stale running task marked lost");
                        report.lost.push(r.task_id);
                    }
                    // Finished concurrently: nothing to do.
                    Err(TaskError::IllegalTransition { .. }) => {}
                    Err(e) => return Err(e),
                }
            }
        }
        let live: Vec<String> = lock(&self.inner.tokens).keys().cloned().collect();
        for id in live {
            if let Some(r) = self.get(&id)?
                && r.status == TaskStatus::Cancelled
                && let Some(t) = lock(&self.inner.tokens).remove(&id)
            {
                t.cancel();
                report.cancelled_tokens += 1;
            }
        }
        report.pruned = self.prune()?;
        Ok(report)
    }
}

/// When a finished task becomes prunable (`None`: never).
fn prune_at(r: &TaskRecord) -> Option<i64> {
    let ended = r.ended_at.or(r.last_event_at).unwrap_or(r.created_at);
    match r.status {
        TaskStatus::Queued | TaskStatus::Running => None,
        TaskStatus::Lost => {
            let by_period = ended.saturating_add(LOST_RETENTION_MS);
            Some(r.cleanup_after.map_or(by_period, |c| c.min(by_period)))
        }
        _ if r.runtime == TaskRuntime::Cron => r.cleanup_after,
        _ => Some(
            r.cleanup_after
                .unwrap_or_else(|| ended.saturating_add(TERMINAL_RETENTION_MS)),
        ),
    }
}

fn apply_status(
    r: &mut TaskRecord,
    to: TaskStatus,
    now: i64,
    outcome: Option<&TaskOutcome>,
) -> Result<()> {
    let real_end = outcome.and_then(|o| o.ended_at);
    let predates = r.status == TaskStatus::Cancelled
        && matches!((real_end, r.ended_at), (Some(real), Some(cancelled)) if real < cancelled);
    check_transition(r.status, to, predates).map_err(|why| TaskError::IllegalTransition {
        id: r.task_id.clone(),
        from: r.status,
        to,
        why,
    })?;
    r.status = to;
    r.last_event_at = Some(now);
    if to == TaskStatus::Running {
        r.started_at.get_or_insert(now);
    }
    if to.is_terminal() {
        r.ended_at = Some(real_end.unwrap_or(now));
        if let Some(o) = outcome {
            if o.error.is_some() {
                r.error.clone_from(&o.error);
            }
            if o.summary.is_some() {
                r.terminal_summary.clone_from(&o.summary);
            }
        }
    }
    Ok(())
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
    tx.commit()
}

enum LoadError {
    Db(rusqlite::Error),
    Task(TaskError),
}

fn load(
    conn: &Connection,
    key_col: &'static str,
    key: &str,
) -> std::result::Result<Option<TaskRecord>, LoadError> {
    let sql = if key_col == "run_id" {
        "SELECT data FROM tasks WHERE run_id = ?1 ORDER BY created_at DESC, rowid DESC LIMIT 1"
    } else {
        "SELECT data FROM tasks WHERE task_id = ?1"
    };
    let data: Option<String> = conn
        .query_row(sql, params![key], |r| r.get(0))
        .optional()
        .map_err(LoadError::Db)?;
    data.map(|d| decode(&d))
        .transpose()
        .map_err(LoadError::Task)
}

fn encode(r: &TaskRecord) -> Result<String> {
    serde_json::to_string(r).map_err(|e| TaskError::Invalid {
        field: "record",
        message: format!("cannot encode: {e}"),
    })
}

fn decode(data: &str) -> Result<TaskRecord> {
    serde_json::from_str(data).map_err(|e| TaskError::InvalidPersisted {
        field: "record",
        value: e.to_string(),
    })
}
