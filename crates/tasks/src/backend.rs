//! The storage seam: what the ledger asks of a database engine.
//!
//! [`TaskLedger`](crate::TaskLedger) keeps everything that is not
//! persistence (the clock, the transition rules, the cancellation tokens,
//! retention) and asks a [`LedgerBackend`] only to store and find rows.
//! Two engines implement it: SQLite ([`SqliteLedger`](crate::SqliteLedger),
//! the embedded default) and PostgreSQL (`postgres` feature), where several
//! gateways share one database.
//!
//! Every change is a compare-and-set: the ledger reads a row, applies the
//! rules, and [`LedgerBackend::replace`] writes it only if the row still
//! holds the status and version that were read (`UPDATE … WHERE status = …
//! AND data = …`, rows affected checked). Whoever writes second re-reads
//! and is judged against the new state, so with any number of writers the
//! first terminal status wins and an illegal transition is refused, in SQL,
//! not by a single writer lock.

use std::fmt::Debug;

use crate::error::Result;
use crate::ledger::TaskFilter;
use crate::record::{TaskRecord, TaskStatus};

/// How a row is looked up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lookup<'a> {
    /// By task id.
    TaskId(&'a str),
    /// The newest task carrying this run id.
    RunId(&'a str),
}

/// A row as read: the record and the stored version it was decoded from
/// (the persisted text, compared on write).
#[derive(Debug, Clone, PartialEq)]
pub struct StoredTask {
    /// The decoded record.
    pub record: TaskRecord,
    /// The row's version as stored (opaque to the ledger).
    pub version: String,
}

/// One storage engine of the task ledger. Calls block (no async runtime);
/// implementations are shared between threads.
pub trait LedgerBackend: Send + Sync + Debug {
    /// Where the ledger lives, for messages (a file path, `postgres`).
    fn location(&self) -> String;

    /// Insert a new task; an existing id is [`TaskError::Invalid`]
    /// (`taskId` already exists).
    ///
    /// [`TaskError::Invalid`]: crate::TaskError::Invalid
    fn insert(&self, record: &TaskRecord) -> Result<()>;

    /// The row `lookup` names, if any.
    fn load(&self, lookup: Lookup<'_>) -> Result<Option<StoredTask>>;

    /// Tasks matching `filter`, newest first (creation time, then insertion
    /// order).
    fn list(&self, filter: &TaskFilter) -> Result<Vec<TaskRecord>>;

    /// Write `record` over the row `read` was read from, only if the row
    /// still holds `read`'s status and version. `Ok(false)`: it changed
    /// since (or is gone); nothing was written.
    fn replace(&self, read: &StoredTask, record: &TaskRecord) -> Result<bool>;

    /// Every task in a terminal status (retention decides which go).
    fn finished(&self) -> Result<Vec<TaskRecord>>;

    /// Delete these tasks if they are still terminal; how many went.
    fn delete_finished(&self, task_ids: &[String]) -> Result<usize>;

    /// The stored status of each of these tasks that exists.
    fn statuses(&self, task_ids: &[String]) -> Result<Vec<(String, TaskStatus)>>;
}
