//! `sessions_spawn`: a child session and its run in the background, and
//! the announce-back when it ends.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Map, Value, json};
use talon_gateway_protocol::SessionParams;
use talon_runtime::{AgentTurn, TurnError, TurnReply, TurnTrigger};
use talon_sessions::Role;
use talon_tasks::{DeliveryStatus, NewTask, TaskOutcome, TaskRuntime, TaskStatus};
use talon_tool_catalog::{CancellationToken, ToolContext, ToolError, ToolErrorCode};

use crate::gateway::Gateway;

use super::params::*;
use super::run::*;
use super::{Refused, RunEntry, SPAWN_KIND};

/// `sessions_spawn`: open a child session and hand its task to a runner in
/// the background; answers at once with the child's key and run id.
pub(crate) async fn spawn(
    gw: &Gateway,
    ctx: &ToolContext,
    params: &Map<String, Value>,
) -> Result<Value, ToolError> {
    let task = string(params, "task")
        .ok_or_else(|| ToolError::input("task", "task must say what the sub-agent should do"))?;
    let label = string(params, "label");
    check_label(label)?;
    if let Some(runtime) = string(params, "runtime")
        && runtime != "subagent"
    {
        return Err(ToolError::input(
            "runtime",
            format!("runtime `{runtime}` is not available: Talon spawns only `subagent` runs"),
        ));
    }
    if let Some(mode) = string(params, "mode")
        && mode != "run"
    {
        return Err(ToolError::input(
            "mode",
            format!(
                "mode `{mode}` is not supported: a Talon sub-agent runs one task (mode \"run\"); use sessions_send to talk to it again"
            ),
        ));
    }
    // Features Talon cannot honour are refused, never dropped: the child
    // would run without what the model asked for.
    for (key, why) in [
        (
            "attachments",
            "attachments are not copied into a child's workspace here; write the files first and name them in the task",
        ),
        (
            "attachAs",
            "attachments are not copied into a child's workspace here",
        ),
        (
            "cwd",
            "a child runs in its agent's workspace; name the directory in the task",
        ),
        (
            "resumeSessionId",
            "only `subagent` runs exist here (resumeSessionId is for acp)",
        ),
        (
            "streamTo",
            "only `subagent` runs exist here (streamTo is for acp)",
        ),
    ] {
        if params.get(key).is_some_and(|v| !v.is_null()) {
            return Err(ToolError::input(
                key,
                format!("{key} is not supported: {why}"),
            ));
        }
    }
    if params.get("thread") == Some(&Value::Bool(true)) {
        return Err(ToolError::input(
            "thread",
            "thread: true is not supported: the gateway binds no chat threads",
        ));
    }
    if let Some(c) = string(params, "context")
        && c != "isolated"
    {
        return Err(ToolError::input(
            "context",
            format!("context `{c}` is not supported: a child starts isolated, with only its task"),
        ));
    }
    if let Some(sb) = string(params, "sandbox") {
        match sb {
            "inherit" => {}
            "require" if ctx.sandboxed => {}
            "require" => {
                return Err(ToolError::input(
                    "sandbox",
                    "sandbox: require needs a sandboxed parent (a child is never less confined than its parent, but an unsandboxed parent cannot promise one); configure agents.defaults.sandbox.mode",
                ));
            }
            other => {
                return Err(ToolError::input(
                    "sandbox",
                    format!("sandbox must be `inherit` or `require`, not `{other}`"),
                ));
            }
        }
    }
    let task_name = string(params, "taskName");
    if let Some(n) = task_name
        && !(n.len() <= 64
            && n.starts_with(|c: char| c.is_ascii_lowercase())
            && n.chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '-'))
    {
        return Err(ToolError::input(
            "taskName",
            "taskName must be a lowercase letter, then lowercase letters, digits, _ or - (at most 64)",
        ));
    }
    let cleanup_delete = match string(params, "cleanup") {
        None | Some("keep") => false,
        Some("delete") => true,
        Some(other) => {
            return Err(ToolError::input(
                "cleanup",
                format!("cleanup must be \"keep\" or \"delete\", not `{other}`"),
            ));
        }
    };
    let g = gw.generation();
    let limits = g.config.subagent_limits();
    let timeout_s = match seconds(params, &["runTimeoutSeconds", "timeoutSeconds"])? {
        None | Some(0) => limits.run_timeout_seconds,
        Some(n) => n,
    };
    let parent = caller_session(gw, ctx)?;
    let parent_key = parent.info.session_key.clone();
    let parent_agent = parent.info.agent_id.clone();
    let parent_depth = depth_of(gw, &parent_key);
    let child_depth = parent_depth.saturating_add(1);
    if child_depth > limits.max_spawn_depth {
        return Err(ToolError::new(
            ToolErrorCode::SubagentDepthExceeded,
            format!(
                "session `{parent_key}` is at spawn depth {parent_depth}; its child would be at depth {child_depth}, past agents.defaults.subagents.maxSpawnDepth ({}); do the work in this session or raise the limit",
                limits.max_spawn_depth
            ),
        ));
    }
    let target_agent = match string(params, "agentId") {
        Some(a) => a.to_lowercase(),
        None => parent_agent.clone(),
    };
    if target_agent != parent_agent {
        let mut known = g.config.agent_ids();
        if known.is_empty() {
            known.push(g.config.default_agent_id());
        }
        if !known.contains(&target_agent) {
            return Err(ToolError::input(
                "agentId",
                format!(
                    "no agent `{target_agent}` is configured (agents_list shows the agents this session may spawn)"
                ),
            ));
        }
        let allowed = g.config.subagent_allow_agents(&parent_agent);
        if !allowed.iter().any(|a| a == "*" || *a == target_agent) {
            return Err(ToolError::new(
                ToolErrorCode::SubagentAgentNotAllowed,
                format!(
                    "agent `{parent_agent}` may not spawn sub-agents of agent `{target_agent}`: it is not in agents.list[{parent_agent}].subagents.allowAgents (or agents.defaults.subagents.allowAgents)"
                ),
            )
            .with_param("agentId"));
        }
    }
    let leaf = child_depth >= limits.max_spawn_depth;
    let child_key = format!("agent:{target_agent}:subagent:{}", uuid()?);
    let run_id = format!("subagent-{}", random_hex(8)?);
    let cancel = CancellationToken::new();
    let mut entry = RunEntry {
        run_id: run_id.clone(),
        task_id: None,
        session_key: child_key.clone(),
        requester_key: parent_key.clone(),
        agent_id: target_agent.clone(),
        label: label.map(str::to_owned),
        task_name: task_name.map(str::to_owned),
        trigger: TurnTrigger::Subagent,
        cancel: cancel.clone(),
    };
    // The ledger task first, so the admitted entry carries its id.
    let ledger = gw.inner.tasks.ledger.as_ref();
    if let Some(ledger) = ledger {
        let t = ledger
            .create(NewTask {
                runtime: Some(TaskRuntime::Subagent),
                task_kind: Some(SPAWN_KIND.to_owned()),
                requester_session_key: parent_key.clone(),
                child_session_key: Some(child_key.clone()),
                agent_id: Some(target_agent.clone()),
                run_id: Some(run_id.clone()),
                label: label.map(str::to_owned),
                task: task.to_owned(),
                start_running: true,
                ..NewTask::default()
            })
            .map_err(|e| ToolError::execution(format!("the task ledger: {e}")))?;
        entry.task_id = Some(t.task_id);
    }
    let entry = Arc::new(entry);
    let refuse = |error: ToolError| {
        if let (Some(ledger), Some(id)) = (ledger, &entry.task_id) {
            let _ = ledger.finish(
                id,
                TaskStatus::Failed,
                TaskOutcome {
                    error: Some(error.message().to_owned()),
                    ..TaskOutcome::default()
                },
            );
        }
        error
    };
    if let Err(r) = gw.inner.subagents.admit(
        Arc::clone(&entry),
        limits.max_children_per_agent,
        limits.max_concurrent,
    ) {
        let message = match r {
            Refused::Children(n) => format!(
                "session `{parent_key}` already has {n} sub-agent runs in flight (agents.defaults.subagents.maxChildrenPerAgent); wait for one to end or cancel one with subagents"
            ),
            Refused::Concurrent(n) => format!(
                "the gateway already runs {n} sub-agent runs (agents.defaults.subagents.maxConcurrent); try again when one has ended"
            ),
        };
        return Err(refuse(ToolError::new(
            ToolErrorCode::SubagentLimit,
            message,
        )));
    }
    let session_params = SessionParams {
        session_key: Some(child_key.clone()),
        agent_id: Some(target_agent.clone()),
        parent_session_key: Some(parent_key.clone()),
        leaf: Some(leaf),
        label: label.map(str::to_owned),
        sender: parent.info.params.sender.clone(),
        sender_is_owner: parent.info.params.sender_is_owner,
        channel: parent.info.params.channel.clone(),
        ..SessionParams::default()
    };
    let child = match gw.inner.sessions.open(&g, session_params, None) {
        Ok(c) => c,
        Err(e) => {
            gw.inner.subagents.remove(&run_id);
            return Err(refuse(ToolError::unauthorized(format!(
                "the child session could not be opened: {}",
                e.message
            ))));
        }
    };
    let tools: Vec<String> = child
        .table(g.id, &g.runtime)
        .await
        .table
        .names()
        .into_iter()
        .map(str::to_owned)
        .collect();
    gw.inner.sessions.record_message(
        &child_key,
        Some(&target_agent),
        Role::User,
        Some(&format!("subagent:{parent_key}")),
        task,
    );
    let defaults = g.config.subagent_defaults();
    let turn = AgentTurn {
        run_id: run_id.clone(),
        agent_id: target_agent.clone(),
        session_key: child_key.clone(),
        requester_session_key: Some(parent_key.clone()),
        message: task.to_owned(),
        label: label.map(str::to_owned),
        model: string(params, "model").map(str::to_owned).or_else(|| {
            defaults
                .model
                .as_ref()
                .and_then(Value::as_str)
                .map(str::to_owned)
        }),
        thinking: string(params, "thinking")
            .map(str::to_owned)
            .or(defaults.thinking.clone()),
        tools: tools.clone(),
        trigger: TurnTrigger::Subagent,
        timeout: Duration::from_secs(timeout_s),
    };
    let ledger_token = ledger_token(gw, &entry);
    let weak = Arc::downgrade(&gw.inner);
    let runner = Arc::clone(&gw.inner.subagents.runner);
    let run_entry = Arc::clone(&entry);
    tokio::spawn(async move {
        let result = run_watched(runner.as_ref(), &turn, &run_entry.cancel, ledger_token).await;
        if let Some(gw) = gateway(&weak) {
            spawned_run_ended(&gw, &run_entry, &parent_agent, &result, cleanup_delete);
        }
    });
    Ok(json!({
        "status": "accepted",
        "childSessionKey": child_key,
        "runId": run_id,
        "taskId": entry.task_id,
        "mode": "run",
        "label": label,
        "taskName": task_name,
        "agentId": target_agent,
        "spawnDepth": child_depth,
        "role": if leaf { "leaf" } else { "orchestrator" },
        "runTimeoutSeconds": timeout_s,
        "cleanup": if cleanup_delete { "delete" } else { "keep" },
        "note": "the sub-agent runs in the background; its result is announced to this session when it ends",
    }))
}

/// A spawned run ended, however: record it in the ledger and the child's
/// history, stop the child's work unless it ended well, and announce the
/// result to the parent session.
pub(super) fn spawned_run_ended(
    gw: &Gateway,
    entry: &RunEntry,
    parent_agent: &str,
    result: &Result<TurnReply, TurnError>,
    cleanup_delete: bool,
) {
    gw.inner.subagents.remove(&entry.run_id);
    finish_task(gw, entry, result);
    let source = format!("subagent:{}", entry.session_key);
    let sessions = &gw.inner.sessions;
    let g = gw.generation();
    let processes = g.runtime.process_registry().map(AsRef::as_ref);
    let status = task_status(result).as_str();
    let body = match result {
        Ok(r) => {
            let reply = r
                .reply
                .clone()
                .unwrap_or_else(|| "(the run ended with no reply)".to_owned());
            sessions.record_message(&entry.session_key, None, Role::Assistant, None, &reply);
            if cleanup_delete {
                sessions.close_quietly(&entry.session_key);
            }
            reply
        }
        Err(e) => {
            let text = format!("the run ended: {e}");
            sessions.record_message(&entry.session_key, None, Role::System, None, &text);
            sessions.stop_session(&entry.session_key, &text, processes);
            e.message.clone()
        }
    };
    let name = entry.label.as_deref().unwrap_or(&entry.session_key);
    let announce = format!(
        "[sub-agent `{name}` ({}) {status}, run {}]\n{body}",
        entry.session_key, entry.run_id
    );
    let recorded = sessions.record_message(
        &entry.requester_key,
        None,
        Role::System,
        Some(&source),
        &announce,
    );
    let delivered = gw.inner.runners.deliver_to_session(
        parent_agent,
        &entry.requester_key,
        &announce,
        "subagent",
    );
    record_delivery(
        gw,
        entry,
        match (delivered, recorded) {
            (true, _) => DeliveryStatus::Delivered,
            (false, true) => DeliveryStatus::SessionQueued,
            (false, false) => DeliveryStatus::Failed,
        },
    );
    tracing::info!(run = %entry.run_id, child = %entry.session_key, status, delivered, recorded, "sub-agent run ended");
}
