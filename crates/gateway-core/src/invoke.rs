//! The one call path every surface uses (WebSocket `tools.invoke`, HTTP
//! `POST /tools/invoke`, MCP `tools/call`): session table → journal →
//! `ToolTable::invoke` (policy, hooks, approvals, sandbox) → output cap →
//! journal → metrics.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Instant;

use serde_json::{Map, Value, json};
use talon_journal::{CallEnd, CallStart, Outcome};
use talon_runtime::{InvokeOutcome, ModelToolCall};
use talon_tool_catalog::{
    ContentBlock, ToolResult, is_read_only, normalize_tool_name, runs_commands,
};

use crate::gateway::Gateway;
use crate::metrics::CallOutcomeKind;
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
    /// The `tools.invoke` result object.
    pub fn to_json(&self) -> Value {
        let mut m = Map::new();
        m.insert("callId".into(), json!(self.call_id));
        m.insert("toolCallId".into(), json!(self.tool_call_id));
        m.insert("tool".into(), json!(self.tool));
        let wire = self.outcome.wire();
        m.insert("status".into(), json!(wire.status));
        match &self.outcome {
            InvokeOutcome::Completed {
                result,
                params_rewritten,
                approval,
            } => {
                m.insert("content".into(), json!(result.content));
                if !result.details.is_null() {
                    m.insert("details".into(), result.details.clone());
                }
                if *params_rewritten {
                    m.insert("paramsRewritten".into(), json!(true));
                }
                if let Some(a) = approval {
                    m.insert("approval".into(), json!(a));
                }
            }
            InvokeOutcome::Blocked(b) => {
                m.insert("deniedReason".into(), json!(b.denied_reason.as_str()));
                m.insert("reason".into(), json!(b.reason));
                if let Some(s) = &b.source {
                    m.insert("layer".into(), json!(s));
                }
                if let Some(k) = &b.config_key {
                    m.insert("configKey".into(), json!(k));
                }
                if let Some(f) = &b.failure {
                    m.insert("hookFailure".into(), json!(f));
                }
            }
            InvokeOutcome::Failed(e) => {
                m.insert("error".into(), json!(e.to_string()));
                m.insert("errorClass".into(), json!(e.kind()));
                m.insert("errorCode".into(), json!(e.code()));
                if let Some(p) = e.param() {
                    m.insert("param".into(), json!(p));
                }
            }
        }
        if self.truncated {
            m.insert("truncated".into(), json!(true));
        }
        Value::Object(m)
    }
}

impl Gateway {
    /// Run one call in `session_key`'s session through the full gate.
    pub async fn invoke(
        &self,
        session_key: &str,
        tool_call_id: Option<String>,
        tool: &str,
        params: Value,
    ) -> Result<CallReport, RpcError> {
        if self.is_shutting_down() {
            return Err(RpcError::new(
                UNAVAILABLE,
                "the gateway is shutting down; no new calls are accepted",
            ));
        }
        let session = self.session_or_main(session_key)?;
        self.invoke_in(&session, tool_call_id, tool, params).await
    }

    pub(crate) async fn invoke_in(
        &self,
        session: &Session,
        tool_call_id: Option<String>,
        tool: &str,
        params: Value,
    ) -> Result<CallReport, RpcError> {
        let generation = self.generation();
        let built = session.table(generation.id, &generation.runtime).await;
        drop(generation);
        let table = Arc::clone(&built.table);
        let name = normalize_tool_name(tool);
        let call_id = self.next_call_id();
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
        };
        // Write-ahead only for a side-effecting tool that is in the table
        // (a removed or unknown tool is answered without running anything).
        let write_ahead = needs_write_ahead(&name) && table.contains(&name);
        let journal_start = if write_ahead {
            self.inner.journal.started(start()).await.map_err(|e| {
                RpcError::internal(format!(
                    "the call journal refused the call, so it was not run: {e}"
                ))
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
            self.sandbox_exec_permits(&backend)
                .acquire_owned()
                .await
                .ok()
        } else {
            None
        };
        let outcome = table
            .invoke(ModelToolCall::new(tool_call_id.clone(), tool, params))
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
            None => self.inner.journal.finish(&call_id, end),
            Some(s) => self.inner.journal.record(s, end),
        };
        if let Err(e) = ack {
            tracing::error!(call = %call_id, error = %e, "the call journal could not record a terminal record");
        } else if write_ahead {
            // A call that ran a side effect is answered only once its
            // terminal record is committed (I1). Read-only and refused
            // calls are answered at once; their records follow in the
            // writer's next batch.
            if let Err(e) = self.inner.journal.flush().await {
                tracing::error!(call = %call_id, error = %e, "the call journal could not commit a terminal record");
            }
        }
        metrics.record_call(&name, kind, elapsed);
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

    /// The session named, or — for an agent's main session
    /// (`agent:<id>:main`, or `main` for the default agent) — that
    /// session, created on first use.
    pub(crate) fn session_or_main(&self, key: &str) -> Result<Arc<Session>, RpcError> {
        if let Some(s) = self.inner.sessions.get(key) {
            return Ok(s);
        }
        let generation = self.generation();
        let default_agent = generation.config.default_agent_id();
        let main = generation.config.main_session();
        let Some(agent) = crate::sessions::main_session_agent(key, &default_agent, &main) else {
            return Err(RpcError::not_found(format!(
                "unknown session `{key}`: create it with sessions.create (an agent's main session, agent:<id>:main or agent:<id>:<session.mainKey>, is created on first use)"
            )));
        };
        let canonical = format!("agent:{agent}:{}", main.main_key());
        if let Some(s) = self.inner.sessions.get(&canonical) {
            return Ok(s);
        }
        let params = crate::sessions::SessionParams {
            session_key: Some(canonical),
            agent_id: Some(agent),
            ..Default::default()
        };
        self.create_session(params)
    }
}

/// Counts a call in flight and wakes a draining shutdown when the last one
/// ends (also when the caller goes away mid-call).
struct InFlight<'a>(&'a Gateway);

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        let m = &self.0.inner.metrics;
        if m.in_flight.fetch_sub(1, Ordering::SeqCst) == 1 {
            self.0.inner.idle.notify_waiters();
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
