//! `sessions_send`: a message into another session and a turn there,
//! waited for or in the background.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Map, Value, json};
use talon_runtime::{AgentTurn, TurnError, TurnErrorKind, TurnReply, TurnTrigger};
use talon_sessions::{Role, Target, Viewer};
use talon_tasks::{DeliveryStatus, NewTask, TaskRuntime};
use talon_tool_catalog::{CancellationToken, ToolContext, ToolError, ToolErrorCode};

use crate::gateway::Gateway;

use super::params::*;
use super::run::*;
use super::{RunEntry, SEND_KIND};

/// `sessions_send`'s default wait (OpenClaw: 30 s).
pub(super) const DEFAULT_SEND_TIMEOUT_SECONDS: u64 = 30;

/// Whether `viewer` may reach session `key` (owned by `agent`), as
/// `sessions_send` requires: visible by `tools.sessions.visibility`, and
/// another agent's session only through `tools.agentToAgent` (unless the
/// viewer spawned it). An unknown key answers like an invisible one.
pub(super) fn may_reach(
    gw: &Gateway,
    ctx: &ToolContext,
    key: &str,
    record: Option<&talon_sessions::SessionRecord>,
) -> Result<(), ToolError> {
    let g = gw.generation();
    let policy = g.config.session_visibility();
    let not_visible = || {
        let refusal = talon_sessions::Refusal::NotVisible {
            target: key.to_owned(),
            visibility: policy.effective(ctx.sandboxed).0,
            clamped: policy.effective(ctx.sandboxed).1,
        };
        ToolError::new(ToolErrorCode::SessionNotVisible, refusal.to_string())
            .with_param("sessionKey")
    };
    let Some(r) = record else {
        return Err(not_visible());
    };
    let in_tree = gw
        .inner
        .sessions
        .store()
        .map(|s| s.is_descendant(&ctx.session_key, &r.key).unwrap_or(false))
        .unwrap_or(false);
    if !in_tree && !r.agent_id.eq_ignore_ascii_case(&ctx.agent_id) {
        policy
            .agent_to_agent
            .check(&ctx.agent_id, &r.agent_id)
            .map_err(|refusal| {
                ToolError::new(
                    ToolErrorCode::SessionAgentToAgentDenied,
                    refusal.to_string(),
                )
                .with_param("sessionKey")
            })?;
    }
    let viewer = Viewer {
        session_key: &ctx.session_key,
        agent_id: &ctx.agent_id,
        sandboxed: ctx.sandboxed,
    };
    let target = Target {
        session_key: &r.key,
        agent_id: &r.agent_id,
        in_viewer_tree: in_tree,
    };
    policy.check(viewer, target).map_err(|refusal| {
        let code = match refusal {
            talon_sessions::Refusal::NotVisible { .. } => ToolErrorCode::SessionNotVisible,
            _ => ToolErrorCode::SessionAgentToAgentDenied,
        };
        ToolError::new(code, refusal.to_string()).with_param("sessionKey")
    })
}

/// `sessions_send`: a labelled message into another session, a turn there,
/// and (unless `timeoutSeconds` is 0) its reply.
pub(crate) async fn send(
    gw: &Gateway,
    ctx: &ToolContext,
    params: &Map<String, Value>,
    abort: &CancellationToken,
) -> Result<Value, ToolError> {
    let message = ["message", "content", "text"]
        .iter()
        .find_map(|k| string(params, k))
        .ok_or_else(|| ToolError::input("message", "message must say what to send"))?;
    let wait = seconds(params, &["timeoutSeconds"])?.unwrap_or(DEFAULT_SEND_TIMEOUT_SECONDS);
    let g = gw.generation();
    let store = gw.inner.sessions.store();
    let key = match (
        string(params, "sessionKey"),
        string(params, "label"),
        string(params, "agentId"),
    ) {
        (Some(k), _, _) => gw.inner.sessions.journal_key(&g, k),
        (None, Some(label), agent) => {
            let store = store.ok_or_else(|| {
                ToolError::unavailable("this gateway keeps no session store to find labels in")
            })?;
            let found = store
                .list(&talon_sessions::ListQuery::default())
                .map_err(|e| ToolError::execution(format!("the session store: {e}")))?
                .into_iter()
                .find(|r| {
                    r.label.as_deref() == Some(label)
                        && agent.is_none_or(|a| r.agent_id.eq_ignore_ascii_case(a))
                })
                .ok_or_else(|| {
                    ToolError::input("label", format!("no open session is labelled `{label}`"))
                })?;
            found.key
        }
        (None, None, Some(agent)) => {
            format!(
                "agent:{}:{}",
                agent.to_lowercase(),
                g.config.main_session().main_key()
            )
        }
        (None, None, None) => {
            return Err(ToolError::input(
                "sessionKey",
                "name the target: sessionKey, label, or agentId (that agent's main session)",
            ));
        }
    };
    if key.eq_ignore_ascii_case(&ctx.session_key) {
        return Err(ToolError::input(
            "sessionKey",
            "a session cannot send to itself (it would wait for its own run)",
        ));
    }
    let record = match store {
        Some(s) => s
            .get(&key)
            .map_err(|e| ToolError::execution(format!("the session store: {e}")))?,
        None => None,
    };
    // A main session not opened yet has no record: judged as its agent's.
    let synthetic;
    let record = match record {
        Some(r) => Some(r),
        None => {
            let default_agent = g.config.default_agent_id();
            match crate::sessions::main_session_agent(
                &key,
                &default_agent,
                &g.config.main_session(),
            ) {
                Some(agent) => {
                    synthetic = talon_sessions::SessionRecord {
                        key: key.clone(),
                        agent_id: agent,
                        parent_key: None,
                        spawn_depth: 0,
                        label: None,
                        status: talon_sessions::SessionStatus::Open,
                        created_at_ms: 0,
                        updated_at_ms: 0,
                        params: Value::Null,
                    };
                    Some(synthetic)
                }
                None => None,
            }
        }
    };
    may_reach(gw, ctx, &key, record.as_ref())?;
    let target = gw.inner.sessions.session_or_main(&g, &key).map_err(|_| {
        ToolError::new(
            ToolErrorCode::SessionNotVisible,
            format!(
                "session `{key}` is not open (it ended or was closed); sessions_history still reads it"
            ),
        )
        .with_param("sessionKey")
    })?;
    let target_key = target.info.session_key.clone();
    let target_agent = target.info.agent_id.clone();
    let tools: Vec<String> = target
        .table(g.id, &g.runtime)
        .await
        .table
        .names()
        .into_iter()
        .map(str::to_owned)
        .collect();
    let run_id = format!("send-{}", random_hex(8)?);
    let mut entry = RunEntry {
        run_id: run_id.clone(),
        task_id: None,
        session_key: target_key.clone(),
        requester_key: ctx.session_key.clone(),
        agent_id: target_agent.clone(),
        label: None,
        task_name: None,
        trigger: TurnTrigger::Send,
        cancel: if wait == 0 {
            CancellationToken::new()
        } else {
            abort.child_token()
        },
    };
    if let Some(ledger) = gw.inner.tasks.ledger.as_ref() {
        let t = ledger
            .create(NewTask {
                runtime: Some(TaskRuntime::Subagent),
                task_kind: Some(SEND_KIND.to_owned()),
                requester_session_key: ctx.session_key.clone(),
                child_session_key: Some(target_key.clone()),
                agent_id: Some(target_agent.clone()),
                run_id: Some(run_id.clone()),
                task: message.to_owned(),
                start_running: true,
                ..NewTask::default()
            })
            .map_err(|e| ToolError::execution(format!("the task ledger: {e}")))?;
        entry.task_id = Some(t.task_id);
    }
    let entry = Arc::new(entry);
    gw.inner.subagents.insert(Arc::clone(&entry));
    gw.inner.sessions.record_message(
        &target_key,
        None,
        Role::User,
        Some(&format!("session:{}", ctx.session_key)),
        message,
    );
    let budget = if wait == 0 {
        g.config.subagent_limits().run_timeout_seconds
    } else {
        wait
    };
    let turn = AgentTurn {
        run_id: run_id.clone(),
        agent_id: target_agent,
        session_key: target_key.clone(),
        requester_session_key: Some(ctx.session_key.clone()),
        message: message.to_owned(),
        label: None,
        model: None,
        thinking: None,
        tools,
        trigger: TurnTrigger::Send,
        timeout: Duration::from_secs(budget),
    };
    let runner = Arc::clone(&gw.inner.subagents.runner);
    if wait == 0 {
        let weak = Arc::downgrade(&gw.inner);
        let run_entry = Arc::clone(&entry);
        let ledger_token = ledger_token(gw, &entry);
        tokio::spawn(async move {
            let result = run_watched(runner.as_ref(), &turn, &run_entry.cancel, ledger_token).await;
            if let Some(gw) = gateway(&weak) {
                send_ended(&gw, &run_entry, &result, false);
            }
        });
        return Ok(json!({
            "runId": run_id,
            "status": "accepted",
            "sessionKey": target_key,
            "taskId": entry.task_id,
            "delivery": {"status": "pending", "mode": "history"},
        }));
    }
    let result = run_watched(
        runner.as_ref(),
        &turn,
        &entry.cancel,
        ledger_token(gw, &entry),
    )
    .await;
    send_ended(gw, &entry, &result, true);
    match result {
        Ok(r) => Ok(json!({
            "runId": run_id,
            "status": "ok",
            "reply": r.reply,
            "sessionKey": target_key,
            "taskId": entry.task_id,
            "delivery": {"status": "skipped", "mode": "announce"},
        })),
        Err(e) => Err(turn_error(&e, &run_id, &target_key)),
    }
}

/// A send's run ended: record it in the ledger and the target's history.
/// A cancelled run's calls in the target session are cancelled and its
/// commands killed (the session stays open: the send does not own it).
/// Delivery: a waited send's result goes back in the call's own result
/// (`delivered`); a background send's is only recorded in the target's
/// history (`session_queued`), where `sessions_history` reads it.
pub(super) fn send_ended(
    gw: &Gateway,
    entry: &RunEntry,
    result: &Result<TurnReply, TurnError>,
    waited: bool,
) {
    gw.inner.subagents.remove(&entry.run_id);
    finish_task(gw, entry, result);
    if let Err(e) = result
        && e.kind == TurnErrorKind::Cancelled
    {
        let g = gw.generation();
        let processes = g.runtime.process_registry().map(AsRef::as_ref);
        gw.inner
            .sessions
            .interrupt_session(&entry.session_key, &e.message, processes);
    }
    record_delivery(
        gw,
        entry,
        if waited {
            DeliveryStatus::Delivered
        } else {
            DeliveryStatus::SessionQueued
        },
    );
    let (role, text) = match result {
        Ok(r) => (
            Role::Assistant,
            r.reply
                .clone()
                .unwrap_or_else(|| "(the run ended with no reply)".to_owned()),
        ),
        Err(e) => (Role::System, format!("the run ended: {e}")),
    };
    gw.inner
        .sessions
        .record_message(&entry.session_key, None, role, None, &text);
}
