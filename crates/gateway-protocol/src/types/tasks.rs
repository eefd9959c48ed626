//! `tasks.*`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// `tasks.list`'s params.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TasksListParams {
    /// Only tasks in this status (`queued`, `running`, `succeeded`,
    /// `failed`, `timed_out`, `cancelled`, `lost`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<String>,
    /// Only tasks of this owner.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owner_key: Option<String>,
    /// Most tasks to return (default 100, at most 1000).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<usize>,
}

/// Names one task (`tasks.get`, `tasks.cancel`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TaskRef {
    /// The task id.
    pub task_id: String,
    /// `tasks.cancel`: why (recorded on the task).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// `tasks.list`'s answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TasksListResponse {
    /// The tasks, newest first (talon-tasks' `TaskRecord`).
    pub tasks: Vec<Value>,
}

/// `tasks.get`'s and `tasks.cancel`'s answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TaskResponse {
    /// The task (talon-tasks' `TaskRecord`).
    pub task: Value,
}
