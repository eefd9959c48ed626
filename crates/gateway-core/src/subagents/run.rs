//! What every spawned or sent run shares: its wait (watching the ledger's
//! token too), its ledger record and delivery, and the caller's session.

use std::sync::{Arc, Weak};

use serde_json::{Value, json};
use talon_runtime::{AgentTurn, TurnError, TurnErrorKind, TurnReply, TurnRunner};
use talon_tasks::{DeliveryStatus, TaskFilter, TaskOutcome, TaskRuntime, TaskStatus};
use talon_tool_catalog::{CancellationToken, ToolContext, ToolError, ToolErrorCode};

use crate::gateway::{Areas, Gateway};

use super::RunEntry;

/// Sub-agent and send tasks a gateway left running cannot have survived
/// it: they are recorded `lost` (terminal). Alone (`live` is `None`, at
/// start) every such task; in a fleet (at start and on the maintenance
/// holder's tick) only tasks run by a member not in `live`: a live
/// member's task is running there.
pub(crate) fn mark_lost_left_running(
    ledger: &talon_tasks::TaskLedger,
    live: Option<&std::collections::HashSet<String>>,
) {
    let filter = TaskFilter {
        status: Some(TaskStatus::Running),
        runtime: Some(TaskRuntime::Subagent),
        ..TaskFilter::default()
    };
    let Ok(running) = ledger.list(&filter) else {
        return;
    };
    for t in running {
        if let Some(live) = live
            && t.member_id.as_ref().is_none_or(|m| live.contains(m))
        {
            continue;
        }
        let outcome = TaskOutcome {
            error: Some("the gateway stopped during the run; it was not re-run".to_owned()),
            ..TaskOutcome::default()
        };
        if let Err(e) = ledger.finish(&t.task_id, TaskStatus::Lost, outcome) {
            tracing::error!(task = %t.task_id, error = %e, "cannot record a lost sub-agent task");
        }
    }
}

/// The tool error of a turn that did not end with a reply.
pub(super) fn turn_error(e: &TurnError, run_id: &str, session_key: &str) -> ToolError {
    let base = match e.kind {
        TurnErrorKind::NoRunner => {
            ToolError::new(ToolErrorCode::RunnerUnavailable, e.message.clone())
        }
        TurnErrorKind::TimedOut => ToolError::new(ToolErrorCode::RunnerTimedOut, e.message.clone()),
        TurnErrorKind::Cancelled => ToolError::aborted(e.message.clone()),
        _ => ToolError::new(ToolErrorCode::RunnerFailed, e.message.clone()),
    };
    base.with_detail("runId", run_id)
        .with_detail("sessionKey", session_key)
        .with_detail("runnerError", e.code())
}

pub(super) fn task_status(result: &Result<TurnReply, TurnError>) -> TaskStatus {
    match result {
        Ok(_) => TaskStatus::Succeeded,
        Err(e) => match e.kind {
            TurnErrorKind::TimedOut => TaskStatus::TimedOut,
            TurnErrorKind::Cancelled => TaskStatus::Cancelled,
            _ => TaskStatus::Failed,
        },
    }
}

pub(super) fn gateway(weak: &Weak<Areas>) -> Option<Gateway> {
    weak.upgrade().map(|inner| Gateway { inner })
}

/// Run `turn` until it ends, its own token fires, or its ledger task is
/// cancelled (`tasks.cancel` fires the ledger's token): then the run's token
/// is cancelled too, so the runner hears of it.
pub(super) async fn run_watched(
    runner: &dyn TurnRunner,
    turn: &AgentTurn,
    cancel: &CancellationToken,
    ledger_token: Option<CancellationToken>,
) -> Result<TurnReply, TurnError> {
    let watch = async {
        match &ledger_token {
            Some(t) => t.cancelled().await,
            None => std::future::pending().await,
        }
    };
    tokio::select! {
        r = talon_runtime::run_turn(runner, turn, cancel) => r,
        () = watch => {
            cancel.cancel();
            Err(TurnError::new(
                TurnErrorKind::Cancelled,
                format!("run `{}` was cancelled through its task", turn.run_id),
            ))
        }
    }
}

/// The ledger token of `entry`'s task, if it has one.
pub(super) fn ledger_token(gw: &Gateway, entry: &RunEntry) -> Option<CancellationToken> {
    match (gw.inner.tasks.ledger.as_ref(), &entry.task_id) {
        (Some(l), Some(id)) => Some(l.token(id)),
        _ => None,
    }
}

/// Record whether a run's result reached its requester.
pub(super) fn record_delivery(gw: &Gateway, entry: &RunEntry, delivery: DeliveryStatus) {
    let (Some(ledger), Some(task_id)) = (gw.inner.tasks.ledger.as_ref(), &entry.task_id) else {
        return;
    };
    match ledger.set_delivery(task_id, delivery) {
        Ok(t) => gw.inner.events.push(
            talon_gateway_protocol::Notification::TaskUpdated,
            json!({"task": serde_json::to_value(&t).unwrap_or(Value::Null)}),
        ),
        Err(e) => {
            tracing::warn!(task = %task_id, error = %e, "cannot record a sub-agent run's delivery")
        }
    }
}

/// Record a run's terminal state in the ledger (a failure is logged, never
/// fatal: the run is over either way).
pub(super) fn finish_task(gw: &Gateway, entry: &RunEntry, result: &Result<TurnReply, TurnError>) {
    let (Some(ledger), Some(task_id)) = (gw.inner.tasks.ledger.as_ref(), &entry.task_id) else {
        return;
    };
    let outcome = match result {
        Ok(r) => TaskOutcome {
            summary: Some(r.reply.clone().unwrap_or_default()),
            ..TaskOutcome::default()
        },
        Err(e) => TaskOutcome {
            error: Some(e.message.clone()),
            ..TaskOutcome::default()
        },
    };
    match ledger.finish(task_id, task_status(result), outcome) {
        Ok(t) => gw.inner.events.push(
            talon_gateway_protocol::Notification::TaskUpdated,
            json!({"task": serde_json::to_value(&t).unwrap_or(Value::Null)}),
        ),
        Err(e) => {
            tracing::warn!(task = %task_id, error = %e, "cannot record a sub-agent run's end")
        }
    }
}

/// The session `ctx` runs in, open in the registry.
pub(super) fn caller_session(
    gw: &Gateway,
    ctx: &ToolContext,
) -> Result<Arc<crate::sessions::Session>, ToolError> {
    gw.inner
        .sessions
        .registry
        .get(&ctx.session_key)
        .ok_or_else(|| {
            ToolError::unavailable(format!(
                "session `{}` is not open in the gateway, so it cannot start runs",
                ctx.session_key
            ))
        })
}

/// The spawn depth of session `key` (0 for a top-level session).
pub(super) fn depth_of(gw: &Gateway, key: &str) -> u32 {
    if let Some(store) = gw.inner.sessions.store()
        && let Ok(Some(r)) = store.get(key)
    {
        return r.spawn_depth;
    }
    // Without a store: walk the open parents.
    let mut depth = 0u32;
    let mut at = gw.inner.sessions.registry.get(key);
    while let Some(s) = at {
        match &s.info.params.parent_session_key {
            Some(p) if depth < 64 => {
                depth += 1;
                at = gw.inner.sessions.registry.get(p);
            }
            _ => break,
        }
    }
    depth
}
