//! `spawn_task` / `dismiss_task`: suggested tasks on the ledger.

use serde_json::{Map, Value, json};
use talon_tasks::{NewTask, TaskRuntime};
use talon_tool_catalog::{ToolContext, ToolError};

use crate::gateway::Gateway;

use super::params::*;

/// The ledger's `taskKind` of a suggested task.
pub(super) const SUGGESTED_KIND: &str = "spawn_task";

pub(super) fn ledger(gw: &Gateway) -> Result<&talon_tasks::TaskLedger, ToolError> {
    gw.inner
        .tasks
        .ledger
        .as_ref()
        .ok_or_else(|| ToolError::unavailable("this gateway keeps no task ledger"))
}

/// `spawn_task`: record a suggested task (queued, not started) on the
/// ledger for this session; the operator starts or dismisses it.
pub(crate) fn spawn_task(
    gw: &Gateway,
    ctx: &ToolContext,
    params: &Map<String, Value>,
) -> Result<Value, ToolError> {
    only_keys(params, &["title", "prompt", "tldr", "cwd"])?;
    let title = string(params, "title")
        .ok_or_else(|| ToolError::input("title", "title must name the task"))?;
    if title.chars().count() > 60 || title.chars().any(char::is_control) {
        return Err(ToolError::input(
            "title",
            "title must be at most 60 printable characters",
        ));
    }
    let prompt = string(params, "prompt")
        .ok_or_else(|| ToolError::input("prompt", "prompt must say what the task is"))?;
    let tldr = string(params, "tldr")
        .ok_or_else(|| ToolError::input("tldr", "tldr must say why the task is worth doing"))?;
    if tldr.chars().count() > 1024 {
        return Err(ToolError::input(
            "tldr",
            "tldr must be at most 1024 characters",
        ));
    }
    let cwd = string(params, "cwd");
    if let Some(c) = cwd
        && !c.starts_with('/')
    {
        return Err(ToolError::input("cwd", "cwd must be an absolute directory"));
    }
    let t = ledger(gw)?
        .create(NewTask {
            runtime: Some(TaskRuntime::Subagent),
            task_kind: Some(SUGGESTED_KIND.to_owned()),
            source_id: cwd.map(str::to_owned),
            requester_session_key: ctx.session_key.clone(),
            agent_id: Some(ctx.agent_id.clone()),
            label: Some(title.to_owned()),
            task: format!("{prompt}\n\nWhy: {tldr}"),
            ..NewTask::default()
        })
        .map_err(|e| ToolError::execution(format!("the task ledger: {e}")))?;
    gw.inner.events.push(
        talon_gateway_protocol::Notification::TaskUpdated,
        json!({"task": serde_json::to_value(&t).unwrap_or(Value::Null)}),
    );
    Ok(json!({
        "task_id": t.task_id,
        "status": t.status.as_str(),
        "title": title,
    }))
}

/// `dismiss_task`: cancel a task `spawn_task` suggested from this session.
pub(crate) fn dismiss_task(
    gw: &Gateway,
    ctx: &ToolContext,
    params: &Map<String, Value>,
) -> Result<Value, ToolError> {
    only_keys(params, &["task_id", "reason"])?;
    let id = string(params, "task_id").ok_or_else(|| {
        ToolError::input("task_id", "task_id must name a task spawn_task returned")
    })?;
    let reason = string(params, "reason");
    if reason.is_some_and(|r| r.chars().count() > 1024) {
        return Err(ToolError::input(
            "reason",
            "reason must be at most 1024 characters",
        ));
    }
    let ledger = ledger(gw)?;
    let not_found = || {
        ToolError::input(
            "task_id",
            format!("this session suggested no task `{id}` (spawn_task returns the ids)"),
        )
    };
    let t = ledger
        .get(id)
        .map_err(|e| ToolError::execution(format!("the task ledger: {e}")))?
        .ok_or_else(not_found)?;
    if t.task_kind.as_deref() != Some(SUGGESTED_KIND) || t.owner_key != ctx.session_key {
        return Err(not_found());
    }
    if t.status.is_terminal() {
        return Err(ToolError::input(
            "task_id",
            format!("task `{id}` already ended ({})", t.status.as_str()),
        ));
    }
    let t = ledger
        .cancel(id, Some(reason.unwrap_or("dismissed")))
        .map_err(|e| ToolError::execution(format!("the task ledger: {e}")))?;
    gw.inner.events.push(
        talon_gateway_protocol::Notification::TaskUpdated,
        json!({"task": serde_json::to_value(&t).unwrap_or(Value::Null)}),
    );
    Ok(json!({"task_id": id, "status": "dismissed"}))
}
