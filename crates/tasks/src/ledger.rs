//! The ledger: the rules above the storage seam.

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex, MutexGuard};

use tokio_util::sync::CancellationToken;

use crate::backend::{LedgerBackend, Lookup};
use crate::clock::{Clock, SystemClock};
use crate::error::{Result, TaskError};
use crate::id::new_id;
use crate::record::{
    DeliveryStatus, NewTask, NotifyPolicy, ScopeKind, TaskRecord, TaskRuntime, TaskStatus,
};
use crate::sqlite::SqliteLedger;
use crate::transition::check_transition;

/// Terminal tasks are pruned this long after they ended (7 days).
pub const TERMINAL_RETENTION_MS: i64 = 7 * 24 * 60 * 60 * 1000;
/// `lost` tasks are pruned this long after they ended (1 day).
pub const LOST_RETENTION_MS: i64 = 24 * 60 * 60 * 1000;
/// A running task with no event for this long is marked `lost` (30 min).
pub const STALE_RUNNING_MS: i64 = 30 * 60 * 1000;
/// How often the embedder should call [`TaskLedger::sweep`] (60 s).
pub const SWEEP_INTERVAL_MS: i64 = 60 * 1000;
/// How often a change is re-read and re-judged when another writer changed
/// the task between its read and its write, before [`TaskError::Contended`].
pub const MAX_WRITE_ATTEMPTS: usize = 32;

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
/// storage engine and one token table.
#[derive(Debug, Clone)]
pub struct TaskLedger {
    inner: Arc<Inner>,
    member: Option<Arc<str>>,
}

#[derive(Debug)]
struct Inner {
    backend: Box<dyn LedgerBackend>,
    path: Option<std::path::PathBuf>,
    tokens: Mutex<HashMap<String, CancellationToken>>,
    clock: Arc<dyn Clock>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    match m.lock() {
        Ok(g) => g,
        Err(poisoned) => poisoned.into_inner(),
    }
}

/// Whether work in this status must stop (its token is fired).
fn stops_work(status: TaskStatus) -> bool {
    matches!(
        status,
        TaskStatus::Cancelled | TaskStatus::Lost | TaskStatus::TimedOut
    )
}

impl TaskLedger {
    /// Open (or create) the ledger in the SQLite database at `path`, on the
    /// system clock.
    pub fn open(path: &Path) -> Result<Self> {
        Self::open_with_clock(path, Arc::new(SystemClock))
    }

    /// Open the SQLite ledger with an injected clock.
    pub fn open_with_clock(path: &Path, clock: Arc<dyn Clock>) -> Result<Self> {
        let backend = SqliteLedger::open(path)?;
        Ok(Self::build(
            Box::new(backend),
            Some(path.to_path_buf()),
            clock,
        ))
    }

    /// Open the ledger on the shared PostgreSQL database behind `pool`
    /// (migrating the `tasks` table, refusing a newer schema), on the system
    /// clock. Several gateways may open it on one database at once.
    #[cfg(feature = "postgres")]
    pub fn open_postgres(pool: &talon_state::PgPool) -> Result<Self> {
        Self::open_postgres_with_clock(pool, Arc::new(SystemClock))
    }

    /// [`open_postgres`](Self::open_postgres) with an injected clock.
    #[cfg(feature = "postgres")]
    pub fn open_postgres_with_clock(
        pool: &talon_state::PgPool,
        clock: Arc<dyn Clock>,
    ) -> Result<Self> {
        let backend = crate::postgres::PgLedger::open(pool)?;
        Ok(Self::build(Box::new(backend), None, clock))
    }

    /// A ledger over any storage engine.
    pub fn with_backend(backend: Box<dyn LedgerBackend>, clock: Arc<dyn Clock>) -> Self {
        Self::build(backend, None, clock)
    }

    fn build(
        backend: Box<dyn LedgerBackend>,
        path: Option<std::path::PathBuf>,
        clock: Arc<dyn Clock>,
    ) -> Self {
        TaskLedger {
            inner: Arc::new(Inner {
                backend,
                path,
                tokens: Mutex::new(HashMap::new()),
                clock,
            }),
            member: None,
        }
    }

    /// This ledger as fleet member `member` (the gateway's id in
    /// `talon_members`): tasks it creates running or starts record it as
    /// their `memberId`, the member holding their token. Clones made after
    /// this share it.
    #[must_use]
    pub fn with_member(mut self, member: impl Into<String>) -> Self {
        self.member = Some(Arc::from(member.into()));
        self
    }

    /// The fleet member this ledger records, if any.
    pub fn member(&self) -> Option<&str> {
        self.member.as_deref()
    }

    /// The database file (`None` when the ledger is not in a file, e.g. on
    /// PostgreSQL).
    pub fn path(&self) -> Option<&Path> {
        self.inner.path.as_deref()
    }

    /// Where the ledger lives, for messages (a file path, `postgres`).
    pub fn location(&self) -> String {
        self.inner.backend.location()
    }

    fn now(&self) -> i64 {
        self.inner.clock.now_ms()
    }

    fn backend(&self) -> &dyn LedgerBackend {
        self.inner.backend.as_ref()
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
            member_id: if new.start_running {
                self.member.as_deref().map(str::to_owned)
            } else {
                None
            },
        };
        self.backend().insert(&record)?;
        tracing::debug!(task = %record.task_id, runtime = %record.runtime, "task created");
        Ok(record)
    }

    /// The task with this id.
    pub fn get(&self, task_id: &str) -> Result<Option<TaskRecord>> {
        Ok(self
            .backend()
            .load(Lookup::TaskId(task_id))?
            .map(|s| s.record))
    }

    /// The newest task with this run id.
    pub fn get_by_run_id(&self, run_id: &str) -> Result<Option<TaskRecord>> {
        Ok(self
            .backend()
            .load(Lookup::RunId(run_id))?
            .map(|s| s.record))
    }

    /// Tasks matching `filter`, newest first.
    pub fn list(&self, filter: &TaskFilter) -> Result<Vec<TaskRecord>> {
        self.backend().list(filter)
    }

    /// Read a task, apply `change` and write it back if nobody changed it in
    /// between (compare-and-set in the engine); otherwise re-read and judge
    /// the change again against what the other writer left.
    fn update<F>(&self, lookup: Lookup<'_>, change: F) -> Result<TaskRecord>
    where
        F: Fn(&mut TaskRecord) -> Result<()>,
    {
        let backend = self.backend();
        for _ in 0..MAX_WRITE_ATTEMPTS {
            let read = backend.load(lookup)?.ok_or_else(|| match lookup {
                Lookup::RunId(id) => TaskError::NotFound {
                    what: "run id",
                    id: id.to_owned(),
                },
                Lookup::TaskId(id) => TaskError::NotFound {
                    what: "id",
                    id: id.to_owned(),
                },
            })?;
            let mut record = read.record.clone();
            if let Err(e) = change(&mut record) {
                self.fire_if_stopped(&read.record);
                return Err(e);
            }
            if backend.replace(&read, &record)? {
                return Ok(record);
            }
        }
        Err(TaskError::Contended {
            id: match lookup {
                Lookup::RunId(id) | Lookup::TaskId(id) => id.to_owned(),
            },
        })
    }

    /// Move `queued` → `running` and hand out the task's cancellation token
    /// (the running work must watch it).
    pub fn start(&self, task_id: &str) -> Result<(TaskRecord, CancellationToken)> {
        let now = self.now();
        let member = self.member.as_deref();
        let record = self.update(Lookup::TaskId(task_id), |r| {
            let was = r.status;
            apply_status(r, TaskStatus::Running, now, None)?;
            r.started_at.get_or_insert(now);
            if was != TaskStatus::Running {
                r.member_id = member.map(str::to_owned);
            }
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

    /// Record progress: a summary line and/or the tool just used. A task
    /// that was cancelled (or marked lost / timed out) elsewhere refuses
    /// progress, and its token here is fired, so the running work stops.
    pub fn progress(
        &self,
        task_id: &str,
        summary: Option<&str>,
        tool_name: Option<&str>,
    ) -> Result<TaskRecord> {
        let now = self.now();
        self.update(Lookup::TaskId(task_id), |r| {
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
        let record = self.update(Lookup::TaskId(task_id), |r| {
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
        let record = self.update(Lookup::RunId(run_id), |r| {
            apply_status(r, to, now, Some(&outcome))
        })?;
        self.drop_token_if_terminal(&record);
        Ok(record)
    }

    /// Record whether the task's result reached its requester (after it
    /// ended, too: the announce-back comes after the terminal state).
    pub fn set_delivery(&self, task_id: &str, delivery: DeliveryStatus) -> Result<TaskRecord> {
        let now = self.now();
        self.update(Lookup::TaskId(task_id), |r| {
            r.delivery_status = delivery;
            r.last_event_at = Some(now);
            Ok(())
        })
    }

    /// Cancel a task: mark it `cancelled` and fire its token so the running
    /// work stops. Cancelling a finished task is refused.
    ///
    /// Tokens live in the process that started the work. When another
    /// process (the CLI, another gateway on the same PostgreSQL) cancels,
    /// the store says `cancelled` and the owning process fires its token at
    /// its next [`poll_cancelled`](Self::poll_cancelled), `progress` or
    /// [`sweep`](Self::sweep).
    pub fn cancel(&self, task_id: &str, reason: Option<&str>) -> Result<TaskRecord> {
        let now = self.now();
        let record = self.update(Lookup::TaskId(task_id), |r| {
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
            if stops_work(record.status)
                && let Some(t) = token
            {
                t.cancel();
            }
        }
    }

    /// A write was refused because the task already ended (perhaps
    /// elsewhere): fire its token here if that end stops the work.
    fn fire_if_stopped(&self, record: &TaskRecord) {
        if stops_work(record.status)
            && let Some(t) = lock(&self.inner.tokens).remove(&record.task_id)
        {
            t.cancel();
        }
    }

    /// Fire the tokens this process holds for tasks that were cancelled,
    /// marked lost or timed out elsewhere (the CLI, another gateway on the
    /// same database); forget tokens of tasks that ended. One query over
    /// the tasks this process runs (none when it runs none): cheap enough
    /// to call every second. Returns how many tokens were fired.
    pub fn poll_cancelled(&self) -> Result<usize> {
        let live: Vec<String> = lock(&self.inner.tokens).keys().cloned().collect();
        if live.is_empty() {
            return Ok(0);
        }
        let mut fired = 0;
        for (id, status) in self.backend().statuses(&live)? {
            if !status.is_terminal() {
                continue;
            }
            if let Some(t) = lock(&self.inner.tokens).remove(&id)
                && stops_work(status)
            {
                t.cancel();
                fired += 1;
            }
        }
        Ok(fired)
    }

    /// Prune finished tasks past retention: 7 days after they ended
    /// (`endedAt ?? lastEventAt ?? createdAt`), 1 day for `lost`; cron tasks
    /// only when `lost`; an explicit `cleanupAfter` wins (for `lost`, the
    /// earlier of the two). Returns how many were removed.
    pub fn prune(&self) -> Result<usize> {
        let now = self.now();
        let doomed: Vec<String> = self
            .backend()
            .finished()?
            .into_iter()
            .filter(|r| prune_at(r).is_some_and(|at| now >= at))
            .map(|r| r.task_id)
            .collect();
        if doomed.is_empty() {
            return Ok(0);
        }
        self.backend().delete_finished(&doomed)
    }

    /// The maintenance sweep (call every [`SWEEP_INTERVAL_MS`]; with
    /// several gateways on one database, on one of them): mark running
    /// tasks with no event for [`STALE_RUNNING_MS`] as `lost` (and fire
    /// their tokens), fire tokens of tasks cancelled by another process
    /// ([`poll_cancelled`](Self::poll_cancelled)), then
    /// [`prune`](Self::prune).
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
        report.cancelled_tokens = self.poll_cancelled()?;
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
