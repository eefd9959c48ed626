//! `tasks.*`: the task ledger (shared with cron and other writers).

use serde_json::json;
use talon_gateway_protocol::{
    Notification, TaskRef, TaskResponse, TasksListParams, TasksListResponse,
};

use crate::gateway::Events;
use crate::rpc::RpcError;

/// The task ledger.
pub(crate) struct TasksHandler {
    pub(crate) ledger: Option<talon_tasks::TaskLedger>,
}

fn to_json<T: serde::Serialize>(v: &T) -> serde_json::Value {
    serde_json::to_value(v).unwrap_or(serde_json::Value::Null)
}

impl TasksHandler {
    fn ledger(&self) -> Result<&talon_tasks::TaskLedger, RpcError> {
        self.ledger
            .as_ref()
            .ok_or_else(|| RpcError::internal("the task ledger is not open"))
    }

    /// `tasks.list`.
    pub(crate) fn list(&self, p: TasksListParams) -> Result<TasksListResponse, RpcError> {
        let ledger = self.ledger()?;
        let status = match p.status {
            Some(s) => Some(serde_json::from_value(json!(s)).map_err(|_| {
                RpcError::params(format!("status `{s}` is not a task status (queued, running, succeeded, failed, timed_out, cancelled, lost)"))
            })?),
            None => None,
        };
        let filter = talon_tasks::TaskFilter {
            status,
            owner_key: p.owner_key,
            limit: p.limit.unwrap_or(100).min(1000),
            ..Default::default()
        };
        let tasks = ledger.list(&filter).map_err(ledger_error)?;
        Ok(TasksListResponse {
            tasks: tasks.iter().map(to_json).collect(),
        })
    }

    /// `tasks.get`.
    pub(crate) fn get(&self, p: &TaskRef) -> Result<TaskResponse, RpcError> {
        match self.ledger()?.get(&p.task_id).map_err(ledger_error)? {
            Some(t) => Ok(TaskResponse { task: to_json(&t) }),
            None => Err(RpcError::not_found(format!("no task `{}`", p.task_id))),
        }
    }

    /// `tasks.cancel` (announced as `task.updated`).
    pub(crate) fn cancel(&self, p: &TaskRef, events: &Events) -> Result<TaskResponse, RpcError> {
        self.get(p)?;
        let t = self
            .ledger()?
            .cancel(&p.task_id, p.reason.as_deref())
            .map_err(|e| {
                if e.is_unavailable() {
                    ledger_error(e)
                } else {
                    RpcError::params(e.to_string())
                }
            })?;
        let task = to_json(&t);
        events.push(Notification::TaskUpdated, json!({"task": task}));
        Ok(TaskResponse { task })
    }
}

/// A ledger failure: `unavailable` when its database cannot be reached
/// (retry later), internal otherwise.
fn ledger_error(e: talon_tasks::TaskError) -> RpcError {
    if e.is_unavailable() {
        RpcError::unavailable(format!("the task ledger: {e}"))
            .with_data(json!({"errorCode": e.code()}))
    } else {
        RpcError::internal(e.to_string())
    }
}
