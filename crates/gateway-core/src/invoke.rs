//! The one call path every surface uses (WebSocket `tools.invoke`, HTTP
//! `POST /tools/invoke`, MCP `tools/call`): session table → journal →
//! `ToolTable::invoke` (policy, hooks, approvals, sandbox) → output cap →
//! journal → metrics.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use serde_json::Value;
use talon_gateway_protocol::CallResult;
use talon_journal::{CallEnd, CallJournal, CallStart, Outcome, RecoveryReport};
use talon_runtime::{InvokeOutcome, ModelToolCall};
use talon_tool_catalog::{
    ContentBlock, ToolResult, is_read_only, normalize_tool_name, runs_commands,
};
use tokio::sync::{Notify, Semaphore};

use crate::gateway::Gateway;
use crate::metrics::{CallOutcomeKind, Metrics};
use crate::rpc::{RpcError, UNAVAILABLE};
use crate::sessions::Session;

/// Whether `tool` needs a durable `started` record before it runs: every
/// tool but the ones the catalog marks read-only (those get only a
/// terminal journal record, which keeps cheap calls cheap).
pub fn needs_write_ahead(tool: &str) -> bool {
    !is_read_only(tool)
}

/// One finished call, as every surface reports it.
#[derive(Debug, Clone)]
pub struct CallReport {
    /// The gateway's call id (the journal key).
    pub call_id: String,
    /// The caller's tool call id.
    pub tool_call_id: String,
    /// The tool, normalised.
    pub tool: String,
    /// How it ended.
    pub kind: CallOutcomeKind,
    /// What the runtime returned (with the output capped).
    pub outcome: InvokeOutcome,
    /// Whether the result was cut to the output cap.
    pub truncated: bool,
}

impl CallReport {
    /// The `tools.invoke` result.
    pub fn to_result(&self) -> CallResult {
        let wire = self.outcome.wire();
        let mut r = CallResult {
            call_id: self.call_id.clone(),
            tool_call_id: self.tool_call_id.clone(),
            tool: self.tool.clone(),
            status: wire.status.as_str().to_owned(),
            content: None,
            details: None,
            params_rewritten: None,
            approval: None,
            denied_reason: None,
            reason: None,
            layer: None,
            config_key: None,
            hook_failure: None,
            error: None,
            error_class: None,
            error_code: None,
            param: None,
            truncated: self.truncated.then_some(true),
        };
        match &self.outcome {
            InvokeOutcome::Completed {
                result,
                params_rewritten,
                approval,
            } => {
                r.content = Some(
                    result
                        .content
                        .iter()
                        .map(|c| serde_json::to_value(c).unwrap_or(Value::Null))
                        .collect(),
                );
                r.details = (!result.details.is_null()).then(|| result.details.clone());
                r.params_rewritten = params_rewritten.then_some(true);
                r.approval = approval
                    .as_ref()
                    .map(|a| serde_json::to_value(a).unwrap_or(Value::Null));
            }
            InvokeOutcome::Blocked(b) => {
                r.denied_reason = Some(b.denied_reason.as_str().to_owned());
                r.reason = Some(b.reason.clone());
                r.layer.clone_from(&b.source);
                r.config_key.clone_from(&b.config_key);
                r.hook_failure = b
                    .failure
                    .as_ref()
                    .map(|f| serde_json::to_value(f).unwrap_or(Value::Null));
            }
            InvokeOutcome::Failed(e) => {
                r.error = Some(e.to_string());
                r.error_class = Some(e.kind().as_str().to_owned());
                r.error_code = Some(e.code().as_str().to_owned());
                r.param = e.param().map(str::to_owned);
            }
        }
        r
    }

    /// The `tools.invoke` result object.
    pub fn to_json(&self) -> Value {
        serde_json::to_value(self.to_result()).unwrap_or(Value::Null)
    }
}

/// The call path's own state: the journal, call ids, the per-engine
/// limit of sandboxed command runs, and the drain gate.
pub(crate) struct CallPath {
    pub(crate) journal: CallJournal,
    /// What the journal repaired at start.
    pub(crate) recovery: RecoveryReport,
    call_seq: AtomicU64,
    nonce: String,
    sandbox_execs: Mutex<HashMap<String, Arc<Semaphore>>>,
    shutting_down: AtomicBool,
    idle: Notify,
}

impl CallPath {
    pub(crate) fn new(journal: CallJournal, recovery: RecoveryReport) -> Self {
        CallPath {
            journal,
            recovery,
            call_seq: AtomicU64::new(0),
            nonce: crate::auth::random_hex(4).unwrap_or_else(|_| "0".into()),
            sandbox_execs: Mutex::new(HashMap::new()),
            shutting_down: AtomicBool::new(false),
            idle: Notify::new(),
        }
    }

    /// A new gateway-unique call id.
    pub(crate) fn next_call_id(&self) -> String {
        let n = self.call_seq.fetch_add(1, Ordering::Relaxed);
        format!("gw-{}-{n}", self.nonce)
    }

    pub(crate) fn is_shutting_down(&self) -> bool {
        self.shutting_down.load(Ordering::SeqCst)
    }

    /// Refuse new calls from now on.
    pub(crate) fn begin_drain(&self) {
        self.shutting_down.store(true, Ordering::SeqCst);
    }

    /// Refuse a new call while draining.
    pub(crate) fn admit(&self) -> Result<(), RpcError> {
        if self.is_shutting_down() {
            return Err(RpcError::new(
                UNAVAILABLE,
                "the gateway is shutting down; no new calls are accepted",
            ));
        }
        Ok(())
    }

    /// Wait until no call is in flight, at most `deadline`; `false` when
    /// calls were still running.
    pub(crate) async fn drained(&self, metrics: &Metrics, deadline: std::time::Duration) -> bool {
        let wait = async {
            loop {
                let notified = self.idle.notified();
                if metrics.in_flight.load(Ordering::SeqCst) == 0 {
                    break;
                }
                notified.await;
            }
        };
        tokio::time::timeout(deadline, wait).await.is_ok()
    }

    /// The limiter of concurrent sandboxed `exec` calls on one engine
    /// (sized by the limits in force when the engine was first used).
    fn sandbox_exec_permits(&self, backend: &str, n: usize) -> Arc<Semaphore> {
        let mut map = match self.sandbox_execs.lock() {
            Ok(m) => m,
            Err(p) => p.into_inner(),
        };
        Arc::clone(
            map.entry(backend.to_owned())
                .or_insert_with(|| Arc::new(Semaphore::new(n))),
        )
    }
}

impl Gateway {
    /// Run one call by `caller` in `session_key`'s session through the
    /// full gate. An owner-only tool is refused (forbidden, `errorCode`
    /// `tool.owner_only`) to a caller that is not the owner (see
    /// `identity::may_use_owner_tools`), whoever opened the session.
    pub async fn invoke(
        &self,
        caller: &crate::auth::Identity,
        session_key: &str,
        tool_call_id: Option<String>,
        tool: &str,
        params: Value,
    ) -> Result<CallReport, RpcError> {
        self.inner.calls.admit()?;
        let session = self.session_or_main(session_key)?;
        self.invoke_in(caller, &session, tool_call_id, tool, params)
            .await
    }

    pub(crate) async fn invoke_in(
        &self,
        caller: &crate::auth::Identity,
        session: &Session,
        tool_call_id: Option<String>,
        tool: &str,
        params: Value,
    ) -> Result<CallReport, RpcError> {
        // The caller's id is journalled in its own column: one the journal
        // could not store is refused here, before anything runs.
        if let Some(id) = &tool_call_id {
            talon_journal::check_tool_call_id(id).map_err(|e| {
                RpcError::params(e.to_string())
                    .with_data(serde_json::json!({"param": "toolCallId"}))
            })?;
        }
        let generation = self.generation();
        let built = session.table(generation.id, &generation.runtime).await;
        let table = Arc::clone(&built.table);
        let name = normalize_tool_name(tool);
        // A session is shared by whoever names its key: the owner-only
        // tools its table holds are for owner callers only. A cron run's
        // session is capped by its job instead.
        if table.contains(&name)
            && table.is_owner_only(&name)
            && !session.is_cron_run()
            && !crate::identity::may_use_owner_tools(
                caller,
                &session.info.params,
                &generation.owners,
            )
        {
            return Err(RpcError::new(
                crate::rpc::FORBIDDEN,
                format!(
                    "`{name}` is an owner-only tool and token `{}` ({} scope) is not the owner here: use an owner or operator token, or a session whose sender is in gateway.auth.ownerAllowFrom",
                    caller.id, caller.scope
                ),
            )
            .with_data(serde_json::json!({
                "errorCode": "tool.owner_only",
                "tool": name,
                "tokenId": caller.id,
                "scope": caller.scope.as_str(),
            })));
        }
        // Hooks, approvals and observers see who made this call, not who
        // opened the session (a session is shared by whoever names it).
        let mut requester = crate::identity::requester(caller, &session.info.params);
        requester.sender_is_owner = Some(crate::identity::may_use_owner_tools(
            caller,
            &session.info.params,
            &generation.owners,
        ));
        drop(generation);
        let call_id = self.inner.calls.next_call_id();
        let tool_call_id = tool_call_id.unwrap_or_else(|| call_id.clone());
        let metrics = &self.inner.metrics;
        let started_at_ms = crate::clock::now_ms();
        let start = || CallStart {
            call_id: call_id.clone(),
            session_key: session.info.session_key.clone(),
            agent_id: session.info.agent_id.clone(),
            tool: name.clone(),
            params_digest: talon_journal::params_digest(&params),
            at_ms: started_at_ms,
            tool_call_id: Some(tool_call_id.clone()),
        };
        // Write-ahead only for a side-effecting tool that is in the table
        // (a removed or unknown tool is answered without running anything).
        let write_ahead = needs_write_ahead(&name) && table.contains(&name);
        let journal_start = if write_ahead {
            self.inner
                .calls
                .journal
                .started(start())
                .await
                .map_err(|e| {
                    let message =
                        format!("the call journal refused the call, so it was not run: {e}");
                    // The state database is down: retry later, nothing ran.
                    if e.is_unavailable() {
                        RpcError::unavailable(message)
                    } else {
                        RpcError::internal(message)
                    }
                })?;
            None
        } else {
            Some(start())
        };
        metrics.in_flight.fetch_add(1, Ordering::SeqCst);
        let clock = Instant::now();
        let guard = InFlight(self);
        // Bounded concurrency per sandbox engine for sandboxed command runs
        // (a catalog fact of the tool; the table's own decision and
        // backend: the ones the call will use).
        let _permit = if table.sandbox().sandboxed && runs_commands(&name) && table.contains(&name)
        {
            let backend = table.sandbox().config.backend.clone();
            let n = self.limits().max_sandbox_execs;
            self.inner
                .calls
                .sandbox_exec_permits(&backend, n)
                .acquire_owned()
                .await
                .ok()
        } else {
            None
        };
        let outcome = table
            .invoke_as(
                ModelToolCall::new(tool_call_id.clone(), tool, params),
                requester,
            )
            .await;
        let elapsed = clock.elapsed();
        drop(guard);
        let max = self.generation().section.limits.max_output_bytes;
        let (outcome, truncated) = cap_output(outcome, max);
        if truncated {
            metrics.truncated_outputs.fetch_add(1, Ordering::Relaxed);
        }
        let kind = outcome.status();
        let (journal_outcome, summary) = journal_summary(&outcome, kind, &tool_call_id, truncated);
        let end = CallEnd {
            outcome: journal_outcome,
            summary,
            at_ms: crate::clock::now_ms(),
            duration_us: u64::try_from(elapsed.as_micros()).unwrap_or(u64::MAX),
        };
        let ack = match journal_start {
            None => self.inner.calls.journal.finish(&call_id, end),
            Some(s) => self.inner.calls.journal.record(s, end),
        };
        if let Err(e) = ack {
            tracing::error!(call = %call_id, error = %e, "the call journal could not record a terminal record");
        } else if write_ahead {
            // A call that ran a side effect is answered only once its
            // terminal record is committed (I1). Read-only and refused
            // calls are answered at once; their records follow in the
            // writer's next batch.
            if let Err(e) = self.inner.calls.journal.flush().await {
                tracing::error!(call = %call_id, error = %e, "the call journal could not commit a terminal record");
            }
        }
        // Labels come only from known tools (this session's table or the
        // catalog): a caller's made-up names would be unbounded series.
        let label = if table.contains(&name) || talon_tool_catalog::is_core_tool(&name) {
            name.as_str()
        } else {
            crate::metrics::OTHER_TOOL_LABEL
        };
        metrics.record_call(label, kind, elapsed);
        if let InvokeOutcome::Blocked(b) = &outcome {
            metrics.record_blocked(b.denied_reason.as_str());
        }
        Ok(CallReport {
            call_id,
            tool_call_id,
            tool: name,
            kind,
            outcome,
            truncated,
        })
    }

    /// The session named, or an agent's main session created on first
    /// use (see `SessionsHandler::session_or_main`).
    pub(crate) fn session_or_main(&self, key: &str) -> Result<Arc<Session>, RpcError> {
        self.inner.sessions.session_or_main(&self.generation(), key)
    }

    /// `tools.invoke` in its own task, so a caller that goes away cannot
    /// cut a call between its journal records.
    pub(crate) async fn invoke_spawned(
        &self,
        caller: crate::auth::Identity,
        session_key: String,
        tool_call_id: Option<String>,
        tool: String,
        params: Value,
    ) -> Result<CallReport, RpcError> {
        let gw = self.clone();
        tokio::spawn(async move {
            gw.invoke(&caller, &session_key, tool_call_id, &tool, params)
                .await
        })
        .await
        .map_err(|e| RpcError::internal(format!("the call task failed: {e}")))?
    }
}

/// Counts a call in flight and wakes a draining shutdown when the last one
/// ends (also when the caller goes away mid-call).
struct InFlight<'a>(&'a Gateway);

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        let m = &self.0.inner.metrics;
        if m.in_flight.fetch_sub(1, Ordering::SeqCst) == 1 {
            self.0.inner.calls.idle.notify_waiters();
        }
    }
}

fn journal_summary(
    outcome: &InvokeOutcome,
    kind: CallOutcomeKind,
    tool_call_id: &str,
    truncated: bool,
) -> (Outcome, String) {
    let journal_outcome = match kind {
        CallOutcomeKind::Ok => Outcome::Ok,
        CallOutcomeKind::Error => Outcome::Error,
        CallOutcomeKind::Blocked => Outcome::Blocked,
        CallOutcomeKind::Timeout => Outcome::Timeout,
        CallOutcomeKind::Cancelled => Outcome::Cancelled,
    };
    let detail = match outcome {
        InvokeOutcome::Completed { result, .. } if kind != CallOutcomeKind::Ok => {
            let d = &result.details;
            format!(
                " exitCode={} signal={} killedBy={}",
                d.get("exitCode").unwrap_or(&Value::Null),
                d.get("signal").unwrap_or(&Value::Null),
                d.get("killedBy").unwrap_or(&Value::Null)
            )
        }
        InvokeOutcome::Completed { .. } => String::new(),
        InvokeOutcome::Blocked(b) => format!(
            " {}{}: {}",
            b.denied_reason.as_str(),
            b.source
                .as_deref()
                .map(|s| format!(" ({s})"))
                .unwrap_or_default(),
            b.reason
        ),
        // Error text can quote the command (and credentials in it), so the
        // journal keeps only its class.
        InvokeOutcome::Failed(e) => format!(" {} error ({})", e.kind(), e.code()),
    };
    let note = if truncated { " [output truncated]" } else { "" };
    (
        journal_outcome,
        format!("toolCallId={tool_call_id}{detail}{note}"),
    )
}

/// Cut a completed result's content to `max` bytes (text at a character
/// boundary, with a note saying how much was left out; an image over the
/// cap is replaced by a note).
pub fn cap_output(outcome: InvokeOutcome, max: usize) -> (InvokeOutcome, bool) {
    let InvokeOutcome::Completed {
        result,
        params_rewritten,
        approval,
    } = outcome
    else {
        return (outcome, false);
    };
    let total: usize = result
        .content
        .iter()
        .map(|b| match b {
            ContentBlock::Text { text } => text.len(),
            ContentBlock::Image { data, .. } => data.len(),
        })
        .sum();
    if total <= max {
        return (
            InvokeOutcome::Completed {
                result,
                params_rewritten,
                approval,
            },
            false,
        );
    }
    let mut budget = max;
    let mut content = Vec::with_capacity(result.content.len() + 1);
    for block in result.content {
        match block {
            ContentBlock::Text { mut text } => {
                if text.len() <= budget {
                    budget -= text.len();
                    content.push(ContentBlock::Text { text });
                } else {
                    let mut cut = budget;
                    while cut > 0 && !text.is_char_boundary(cut) {
                        cut -= 1;
                    }
                    text.truncate(cut);
                    budget -= cut;
                    if !text.is_empty() {
                        content.push(ContentBlock::Text { text });
                    }
                }
            }
            ContentBlock::Image { data, mime_type } => {
                if data.len() <= budget {
                    budget -= data.len();
                    content.push(ContentBlock::Image { data, mime_type });
                }
            }
        }
    }
    content.push(ContentBlock::Text {
        text: format!(
            "\n[output truncated by the gateway: {total} bytes, cap {max} bytes (gateway.limits.maxOutputBytes)]"
        ),
    });
    (
        InvokeOutcome::Completed {
            result: ToolResult {
                content,
                details: result.details,
                status: result.status,
            },
            params_rewritten,
            approval,
        },
        true,
    )
}

#[cfg(test)]
#[path = "invoke_tests.rs"]
mod tests;
