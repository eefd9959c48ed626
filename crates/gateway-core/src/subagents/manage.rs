//! `subagents` (list, cancel) and `sessions_yield`: a session managing the
//! runs it spawned.

use std::sync::Arc;

use serde_json::{Map, Value, json};
use talon_tasks::{TaskFilter, TaskRuntime};
use talon_tool_catalog::{ToolContext, ToolError};

use crate::gateway::Gateway;

use super::params::*;
use super::{RunEntry, SPAWN_KIND};

/// `subagents`: `list` the runs this session spawned, or `cancel` one (or
/// `all`): its run is cancelled, its calls in flight are aborted and its
/// commands killed before the answer.
pub(crate) fn subagents(
    gw: &Gateway,
    ctx: &ToolContext,
    params: &Map<String, Value>,
) -> Result<Value, ToolError> {
    let requester = ctx.session_key.clone();
    match string(params, "action").unwrap_or("list") {
        "list" => {
            let active: Vec<Arc<RunEntry>> = gw.inner.subagents.children_of(&requester);
            let mut runs = Vec::new();
            if let Some(ledger) = gw.inner.tasks.ledger.as_ref() {
                let tasks = ledger
                    .list(&TaskFilter {
                        runtime: Some(TaskRuntime::Subagent),
                        owner_key: Some(requester.clone()),
                        limit: 100,
                        ..TaskFilter::default()
                    })
                    .map_err(|e| ToolError::execution(format!("the task ledger: {e}")))?;
                let recent = match params.get("recentMinutes") {
                    None | Some(Value::Null) => None,
                    Some(v) => Some(v.as_u64().filter(|n| *n >= 1).ok_or_else(|| {
                        ToolError::input(
                            "recentMinutes",
                            "recentMinutes must be a positive integer",
                        )
                    })?),
                };
                let since = recent.map(|m| {
                    i64::try_from(crate::clock::now_ms())
                        .unwrap_or(i64::MAX)
                        .saturating_sub(i64::try_from(m.saturating_mul(60_000)).unwrap_or(i64::MAX))
                });
                for t in tasks.into_iter().filter(|t| {
                    t.task_kind.as_deref() == Some(SPAWN_KIND)
                        && (!t.status.is_terminal()
                            || since.is_none_or(|s| t.ended_at.unwrap_or(t.created_at) >= s))
                }) {
                    runs.push(json!({
                        "runId": t.run_id,
                        "taskId": t.task_id,
                        "sessionKey": t.child_session_key,
                        "agentId": t.agent_id,
                        "label": t.label,
                        "task": t.task,
                        "status": t.status.as_str(),
                        "active": !t.status.is_terminal(),
                        "createdAt": t.created_at,
                        "endedAt": t.ended_at,
                        "error": t.error,
                        "result": t.terminal_summary,
                    }));
                }
            } else {
                for r in &active {
                    runs.push(json!({
                        "runId": r.run_id,
                        "sessionKey": r.session_key,
                        "agentId": r.agent_id,
                        "label": r.label,
                        "status": "running",
                        "active": true,
                    }));
                }
            }
            Ok(json!({
                "status": "ok",
                "action": "list",
                "requesterSessionKey": requester,
                "active": active.len(),
                "total": runs.len(),
                "runs": runs,
            }))
        }
        "cancel" | "kill" => {
            let target = ["taskId", "target", "runId", "sessionKey"]
                .iter()
                .find_map(|k| string(params, k))
                .ok_or_else(|| {
                    ToolError::input(
                        "taskId",
                        "taskId must name the task to cancel (subagents list shows them); a run id, child session key, label, taskName or `all` also work",
                    )
                })?;
            let all = target == "all" || target == "*";
            let matched: Vec<Arc<RunEntry>> = gw
                .inner
                .subagents
                .children_of(&requester)
                .into_iter()
                .filter(|r| {
                    all || r.run_id == target
                        || r.task_id.as_deref() == Some(target)
                        || r.session_key.eq_ignore_ascii_case(target)
                        || r.label.as_deref() == Some(target)
                        || r.task_name.as_deref() == Some(target)
                })
                .collect();
            if matched.is_empty() && !all {
                return Err(ToolError::input(
                    "taskId",
                    format!(
                        "this session has no sub-agent run `{target}` in flight (it ended, or it is not this session's child); subagents list shows them"
                    ),
                ));
            }
            let g = gw.generation();
            let processes = g.runtime.process_registry().map(AsRef::as_ref);
            let reason =
                format!("cancelled by its parent session `{requester}` (subagents cancel)");
            let mut cancelled = Vec::new();
            for r in matched {
                r.cancel.cancel();
                if let (Some(ledger), Some(id)) = (gw.inner.tasks.ledger.as_ref(), &r.task_id)
                    && let Err(e) = ledger.cancel(id, Some(&reason))
                {
                    tracing::debug!(task = %id, error = %e, "a sub-agent task was already finished");
                }
                gw.inner
                    .sessions
                    .stop_session(&r.session_key, &reason, processes);
                cancelled.push(json!({
                    "runId": r.run_id,
                    "sessionKey": r.session_key,
                    "label": r.label,
                }));
            }
            Ok(json!({
                "status": "ok",
                "action": "cancel",
                "cancelled": cancelled,
            }))
        }
        "steer" => Err(ToolError::input(
            "action",
            "`steer` is not a subagents action here (OpenClaw v2026.7.2 has list and cancel); cancel the run and spawn a new one, or use sessions_send",
        )),
        other => Err(ToolError::input(
            "action",
            format!("action must be `list` or `cancel`, not `{other}`"),
        )),
    }
}

/// `sessions_yield`: end this turn so the runner waits for the children's
/// announcements; says which of this session's runs are still in flight.
pub(crate) fn yield_turn(gw: &Gateway, ctx: &ToolContext, params: &Map<String, Value>) -> Value {
    let pending: Vec<Value> = gw
        .inner
        .subagents
        .children_of(&ctx.session_key)
        .iter()
        .map(|r| json!({"runId": r.run_id, "sessionKey": r.session_key, "label": r.label}))
        .collect();
    json!({
        "status": "yielded",
        "message": string(params, "message"),
        "pending": pending,
        "note": "end this turn; each sub-agent's result arrives in this session when it ends",
    })
}
