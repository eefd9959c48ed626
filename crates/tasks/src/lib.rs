//! The detached-task ledger: work that runs after the turn that started it
//! (sub-agents, ACP runs, cron runs) is recorded, tracked through its
//! states, cancelled through a token and pruned when old.
//!
//! - [`TaskLedger`] stores [`TaskRecord`]s through one storage seam,
//!   [`LedgerBackend`], with two engines: SQLite ([`SqliteLedger`], the
//!   embedded default: the shared state database, [`DB_FILE_NAME`] under the
//!   state dir, WAL) and PostgreSQL (`postgres` feature:
//!   `TaskLedger::open_postgres` on a `talon_state::PgPool`, for several
//!   gateways on one database; tables migrated as store `tasks`, a newer
//!   schema refused). The rules (clock, transitions, tokens, retention) sit
//!   above the seam once; every change is a compare-and-set in SQL
//!   (`UPDATE … WHERE status = $read AND data = $read`, rows affected
//!   checked, re-judged on a miss), so with any number of writers the first
//!   terminal status wins.
//! - States follow OpenClaw (facts §13): `queued` → `running` → `succeeded`
//!   / `failed` / `timed_out` / `cancelled` / `lost`; [`check_transition`]
//!   refuses the rest (a finished task never becomes active again; only
//!   `succeeded` and provisional `cancelled` may change terminal status).
//! - [`TaskLedger::start`] hands out a [`CancellationToken`];
//!   [`TaskLedger::cancel`] fires it, so the running work sees the
//!   cancellation.
//! - [`TaskLedger::sweep`] marks running work with no event for 30 min
//!   `lost` and prunes by retention (7 days; 1 day for `lost`; cron tasks
//!   only when lost).
//!
//! ```
//! use talon_tasks::{NewTask, TaskLedger, TaskOutcome, TaskRuntime, TaskStatus};
//!
//! let dir = tempfile::tempdir()?;
//! let ledger = TaskLedger::open(&dir.path().join("talon.db"))?;
//! let task = ledger.create(NewTask {
//!     runtime: Some(TaskRuntime::Subagent),
//!     requester_session_key: "agent:main:main".into(),
//!     run_id: Some("run-1".into()),
//!     task: "summarise the logs".into(),
//!     ..NewTask::default()
//! })?;
//! let (_, token) = ledger.start(&task.task_id)?;
//! assert!(!token.is_cancelled());
//! let done = ledger.finalize_by_run_id("run-1", TaskStatus::Succeeded, TaskOutcome::default())?;
//! assert_eq!(done.status, TaskStatus::Succeeded);
//! // A finished task never runs again.
//! assert!(ledger.finish(&task.task_id, TaskStatus::Running, TaskOutcome::default()).is_err());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! This crate does not run anything: it records what others run. It does
//! not schedule (that is `talon-cron`) and does not deliver results to the
//! requester (the embedder reads `deliveryStatus` / `notifyPolicy`).
//!
//! Cancellation tokens live in the process that started the work. A cancel
//! from another process (the CLI, or another gateway on the same
//! PostgreSQL: `tasks.cancel` may land on any of them) marks the task
//! `cancelled` in the store; the owning process notices at its next
//! [`TaskLedger::poll_cancelled`] (one query over the tasks it runs, none
//! when it runs none: call it every second or so on every gateway), at
//! the running work's next [`TaskLedger::progress`] (refused, and the token
//! fired) or at its next [`TaskLedger::sweep`], and fires the token, so the
//! work stops there. [`TaskLedger::with_member`] records which fleet member
//! (gateway process) runs each task (`memberId`), so recovery after a
//! restart can mark `lost` only the running tasks of members that are
//! gone. The maintenance [`TaskLedger::sweep`] (stale tasks to
//! `lost`, retention) belongs on one gateway of a fleet (the lease owner).
//!
//! A database that cannot be reached is `TaskError::State` with
//! [`TaskError::is_unavailable`] (code `task.unavailable`); nothing was
//! written and the call may be retried.
#![deny(missing_docs)]

pub use crate::backend::{LedgerBackend, Lookup, StoredTask};
pub use crate::clock::{Clock, ManualClock, SystemClock};
pub use crate::db::{DB_FILE_NAME, open_database, schema_version, set_schema_version};
pub use crate::error::{Result, TaskError};
pub use crate::id::new_id;
pub use crate::ledger::{
    LOST_RETENTION_MS, MAX_WRITE_ATTEMPTS, STALE_RUNNING_MS, SWEEP_INTERVAL_MS, SweepReport,
    TERMINAL_RETENTION_MS, TaskFilter, TaskLedger, TaskOutcome,
};
pub use crate::record::{
    DeliveryStatus, NewTask, NotifyPolicy, ScopeKind, TaskRecord, TaskRuntime, TaskStatus,
};
pub use crate::sqlite::SqliteLedger;
pub use crate::transition::check_transition;
pub use tokio_util::sync::CancellationToken;

mod backend;
mod clock;
mod db;
mod error;
mod id;
mod ledger;
mod record;
mod sqlite;
mod transition;

#[cfg(feature = "postgres")]
pub mod postgres;
#[cfg(feature = "postgres")]
pub use crate::postgres::PgLedger;
