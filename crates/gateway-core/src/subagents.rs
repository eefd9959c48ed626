//! Sub-agents and agent-to-agent messages: `sessions_spawn`,
//! `sessions_send`, `subagents` and `sessions_yield`.
//!
//! A spawn opens a child session (`agent:<id>:subagent:<uuid>`) through
//! the sessions area, so the child's tools are capped by its parent's
//! effective tools (the `inherited` layer) and by the sub-agent layer
//! (orchestrator below `maxSpawnDepth`, leaf at it). Its turn is handed to
//! the gateway's [`TurnRunner`] (the subscribed WebSocket runners, or an
//! embedder's) through [`talon_runtime::run_turn`], so it always ends by
//! its deadline. Every spawn and send is a ledger task (runtime
//! `subagent`) that ends in a terminal state, and a spawned child's end is
//! announced back to its parent session (recorded there, and delivered to
//! a subscribed runner).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, Weak};
use std::time::Duration;

use serde_json::{Map, Value, json};
use talon_config::sections::subagents::MAX_RUN_TIMEOUT_SECONDS;
use talon_gateway_protocol::SessionParams;
use talon_runtime::{AgentTurn, TurnError, TurnErrorKind, TurnReply, TurnRunner, TurnTrigger};
use talon_sessions::{Role, Target, Viewer};
use talon_tasks::{DeliveryStatus, NewTask, TaskFilter, TaskOutcome, TaskRuntime, TaskStatus};
use talon_tool_catalog::{CancellationToken, ToolContext, ToolError, ToolErrorCode};

use crate::gateway::{Areas, Gateway};

/// An embedder's [`TurnRunner`] for [`crate::GatewayOptions::turn_runner`].
#[derive(Clone)]
pub struct SharedTurnRunner(pub Arc<dyn TurnRunner>);

impl std::fmt::Debug for SharedTurnRunner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SharedTurnRunner(..)")
    }
}

/// The ledger's `taskKind` of a spawn and of a send.
const SPAWN_KIND: &str = "sessions_spawn";
const SEND_KIND: &str = "sessions_send";

/// `sessions_send`'s default wait (OpenClaw: 30 s).
const DEFAULT_SEND_TIMEOUT_SECONDS: u64 = 30;

/// One run in flight.
#[derive(Debug)]
pub(crate) struct RunEntry {
    pub(crate) run_id: String,
    pub(crate) task_id: Option<String>,
    /// The session the run works in.
    pub(crate) session_key: String,
    /// The session that asked for it.
    pub(crate) requester_key: String,
    pub(crate) agent_id: String,
    pub(crate) label: Option<String>,
    /// `sessions_spawn`'s `taskName`, a stable alias for `subagents`.
    pub(crate) task_name: Option<String>,
    pub(crate) trigger: TurnTrigger,
    pub(crate) cancel: CancellationToken,
}

/// The sub-agent and send runs in flight, and who runs their turns.
pub(crate) struct SubagentRuns {
    runner: Arc<dyn TurnRunner>,
    runs: Mutex<HashMap<String, Arc<RunEntry>>>,
}

impl std::fmt::Debug for SubagentRuns {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SubagentRuns").finish_non_exhaustive()
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    match m.lock() {
        Ok(g) => g,
        Err(p) => p.into_inner(),
    }
}

/// Why a spawn was not admitted.
enum Refused {
    Children(u32),
    Concurrent(u32),
}

impl SubagentRuns {
    pub(crate) fn new(runner: Arc<dyn TurnRunner>) -> Self {
        SubagentRuns {
            runner,
            runs: Mutex::new(HashMap::new()),
        }
    }

    /// Admit a spawn under both limits, counted and inserted under one
    /// lock.
    fn admit(
        &self,
        entry: Arc<RunEntry>,
        max_children: u32,
        max_concurrent: u32,
    ) -> Result<(), Refused> {
        let mut runs = lock(&self.runs);
        let spawns = runs.values().filter(|r| r.trigger == TurnTrigger::Subagent);
        let (mut total, mut children) = (0u32, 0u32);
        for r in spawns {
            total = total.saturating_add(1);
            if r.requester_key == entry.requester_key {
                children = children.saturating_add(1);
            }
        }
        if children >= max_children {
            return Err(Refused::Children(max_children));
        }
        if total >= max_concurrent {
            return Err(Refused::Concurrent(max_concurrent));
        }
        runs.insert(entry.run_id.clone(), entry);
        Ok(())
    }

    fn insert(&self, entry: Arc<RunEntry>) {
        lock(&self.runs).insert(entry.run_id.clone(), entry);
    }

    fn remove(&self, run_id: &str) {
        lock(&self.runs).remove(run_id);
    }

    /// The spawned runs `requester` has in flight.
    fn children_of(&self, requester: &str) -> Vec<Arc<RunEntry>> {
        lock(&self.runs)
            .values()
            .filter(|r| r.trigger == TurnTrigger::Subagent && r.requester_key == requester)
            .cloned()
            .collect()
    }

    /// Cancel every run in flight (shutdown).
    pub(crate) fn cancel_all(&self) {
        for r in lock(&self.runs).values() {
            r.cancel.cancel();
        }
    }
}

/// Sub-agent and send tasks a previous gateway left running cannot have
/// survived it: they are recorded `lost` (terminal) at start.
pub(crate) fn mark_lost_at_start(ledger: &talon_tasks::TaskLedger) {
    let filter = TaskFilter {
        status: Some(TaskStatus::Running),
        runtime: Some(TaskRuntime::Subagent),
        ..TaskFilter::default()
    };
    let Ok(running) = ledger.list(&filter) else {
        return;
    };
    for t in running {
        let outcome = TaskOutcome {
            error: Some("the gateway stopped during the run; it was not re-run".to_owned()),
            ..TaskOutcome::default()
        };
        if let Err(e) = ledger.finish(&t.task_id, TaskStatus::Lost, outcome) {
            tracing::error!(task = %t.task_id, error = %e, "cannot record a lost sub-agent task");
        }
    }
}

fn string<'a>(params: &'a Map<String, Value>, key: &str) -> Option<&'a str> {
    params
        .get(key)
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|s| !s.is_empty())
}

/// A non-negative whole number of seconds, under either spelling.
fn seconds(params: &Map<String, Value>, keys: &[&str]) -> Result<Option<u64>, ToolError> {
    for key in keys {
        match params.get(*key) {
            None | Some(Value::Null) => {}
            Some(v) => {
                let n = v.as_u64().ok_or_else(|| {
                    ToolError::input(*key, format!("{key} must be a non-negative integer"))
                })?;
                if n > MAX_RUN_TIMEOUT_SECONDS {
                    return Err(ToolError::input(
                        *key,
                        format!(
                            "{key} may be at most {MAX_RUN_TIMEOUT_SECONDS} (one day), not {n}"
                        ),
                    ));
                }
                return Ok(Some(n));
            }
        }
    }
    Ok(None)
}

fn check_label(label: Option<&str>) -> Result<(), ToolError> {
    if let Some(l) = label
        && (l.chars().count() > talon_sessions::MAX_LABEL_CHARS || l.chars().any(char::is_control))
    {
        return Err(ToolError::input(
            "label",
            format!(
                "label must be 1–{} printable characters",
                talon_sessions::MAX_LABEL_CHARS
            ),
        ));
    }
    Ok(())
}

fn random_hex(n: usize) -> Result<String, ToolError> {
    crate::auth::random_hex(n).map_err(|e| ToolError::execution(e.to_string()))
}

/// A random UUID-shaped id (8-4-4-4-12 hex).
fn uuid() -> Result<String, ToolError> {
    let h = random_hex(16)?;
    let part = |a: usize, b: usize| h.get(a..b).unwrap_or_default().to_owned();
    Ok(format!(
        "{}-{}-{}-{}-{}",
        part(0, 8),
        part(8, 12),
        part(12, 16),
        part(16, 20),
        part(20, 32)
    ))
}

/// The tool error of a turn that did not end with a reply.
fn turn_error(e: &TurnError, run_id: &str, session_key: &str) -> ToolError {
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

fn task_status(result: &Result<TurnReply, TurnError>) -> TaskStatus {
    match result {
        Ok(_) => TaskStatus::Succeeded,
        Err(e) => match e.kind {
            TurnErrorKind::TimedOut => TaskStatus::TimedOut,
            TurnErrorKind::Cancelled => TaskStatus::Cancelled,
            _ => TaskStatus::Failed,
        },
    }
}

fn gateway(weak: &Weak<Areas>) -> Option<Gateway> {
    weak.upgrade().map(|inner| Gateway { inner })
}

/// Run `turn` until it ends, its own token fires, or its ledger task is
/// cancelled (`tasks.cancel` fires the ledger's token): then the run's token
/// is cancelled too, so the runner hears of it.
async fn run_watched(
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
fn ledger_token(gw: &Gateway, entry: &RunEntry) -> Option<CancellationToken> {
    match (gw.inner.tasks.ledger.as_ref(), &entry.task_id) {
        (Some(l), Some(id)) => Some(l.token(id)),
        _ => None,
    }
}

/// Record whether a run's result reached its requester.
fn record_delivery(gw: &Gateway, entry: &RunEntry, delivery: DeliveryStatus) {
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
fn finish_task(gw: &Gateway, entry: &RunEntry, result: &Result<TurnReply, TurnError>) {
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
fn caller_session(
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
fn depth_of(gw: &Gateway, key: &str) -> u32 {
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
fn spawned_run_ended(
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

/// Whether `viewer` may reach session `key` (owned by `agent`), as
/// `sessions_send` requires: visible by `tools.sessions.visibility`, and
/// another agent's session only through `tools.agentToAgent` (unless the
/// viewer spawned it). An unknown key answers like an invisible one.
fn may_reach(
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
fn send_ended(gw: &Gateway, entry: &RunEntry, result: &Result<TurnReply, TurnError>, waited: bool) {
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

/// The ledger's `taskKind` of a suggested task.
const SUGGESTED_KIND: &str = "spawn_task";

/// Refuse any key of `params` not in `known` (the schema's
/// `additionalProperties: false`), naming it.
fn only_keys(params: &Map<String, Value>, known: &[&str]) -> Result<(), ToolError> {
    match params.keys().find(|k| !known.contains(&k.as_str())) {
        Some(k) => Err(ToolError::new(
            ToolErrorCode::InputUnknownParam,
            format!(
                "unknown parameter `{k}` (this tool takes {})",
                known.join(", ")
            ),
        )
        .with_param(k.clone())),
        None => Ok(()),
    }
}

fn ledger(gw: &Gateway) -> Result<&talon_tasks::TaskLedger, ToolError> {
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

#[cfg(test)]
#[path = "subagents_tests.rs"]
mod tests;
