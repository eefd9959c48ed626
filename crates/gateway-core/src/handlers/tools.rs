//! `tools.*`: a session's table, and one call through the call path.

use talon_gateway_protocol::{
    CallResult, RecordedCall, RecordedStatus, ToolDescription, ToolsInvokeParams, ToolsListParams,
    ToolsListResponse, ToolsLookupParams, ToolsLookupResponse,
};
use talon_journal::{CallRecord, JournalError, Outcome};

use crate::gateway::Generation;
use crate::handlers::sessions::SessionsHandler;
use crate::rpc::RpcError;

/// `tools.list`.
pub(crate) async fn list(
    sessions: &SessionsHandler,
    g: &Generation,
    p: ToolsListParams,
) -> Result<ToolsListResponse, RpcError> {
    let s = sessions.session_or_main(g, &p.session_key)?;
    let built = s.table(g.id, &g.runtime).await;
    Ok(ToolsListResponse {
        session_key: s.info.session_key.clone(),
        generation: built.generation,
        tools: built
            .table
            .definitions()
            .into_iter()
            .map(|d| ToolDescription {
                name: d.name,
                description: d.description,
                parameters: d.parameters,
            })
            .collect(),
        audit: p.audit.then(|| to_json(&built.table.policy())),
        timings: p.audit.then(|| to_json(&built.table.timings())),
    })
}

/// `tools.invoke` (the WebSocket handler already runs in its own task,
/// which outlives the connection: no second task is needed to keep the
/// call's journal records together).
pub(crate) async fn invoke(
    gw: &crate::Gateway,
    caller: &crate::auth::Identity,
    p: ToolsInvokeParams,
) -> Result<CallResult, RpcError> {
    let params = if p.params.is_null() {
        serde_json::json!({})
    } else {
        p.params
    };
    let report = gw
        .invoke(caller, &p.session_key, p.tool_call_id, &p.tool_name, params)
        .await?;
    Ok(report.to_result())
}

/// `tools.lookup`: what the journal holds about the session's calls with
/// this `toolCallId` (records still queued are flushed first, so a call
/// that just ended is seen).
pub(crate) async fn lookup(
    gw: &crate::Gateway,
    sessions: &SessionsHandler,
    g: &Generation,
    p: ToolsLookupParams,
) -> Result<ToolsLookupResponse, RpcError> {
    let session_key = sessions.journal_key(g, &p.session_key);
    let journal = gw.journal();
    journal.flush().await.map_err(journal_error)?;
    let calls = journal
        .find_tool_call(&session_key, &p.tool_call_id)
        .map_err(journal_error)?
        .into_iter()
        .map(recorded)
        .collect();
    Ok(ToolsLookupResponse { session_key, calls })
}

fn recorded(r: CallRecord) -> RecordedCall {
    let status = match r.end.as_ref().map(|e| e.outcome) {
        None => RecordedStatus::InFlight,
        Some(Outcome::Ok) => RecordedStatus::Ok,
        Some(Outcome::Error) => RecordedStatus::Error,
        Some(Outcome::Blocked) => RecordedStatus::Blocked,
        Some(Outcome::Timeout) => RecordedStatus::Timeout,
        Some(Outcome::Cancelled) => RecordedStatus::Cancelled,
        Some(Outcome::Interrupted) => RecordedStatus::Interrupted,
    };
    RecordedCall {
        call_id: r.call_id,
        session_key: r.session_key,
        tool: r.tool,
        tool_call_id: r.tool_call_id,
        status,
        summary: r
            .end
            .as_ref()
            .map(|e| e.summary.clone())
            .filter(|s| !s.is_empty()),
        started_at_ms: r.started_at_ms,
        ended_at_ms: r.end.as_ref().map(|e| e.at_ms),
        params_digest: r.params_digest,
    }
}

/// A bad argument is the caller's (invalid params, naming the field);
/// anything else is the journal's.
fn journal_error(e: JournalError) -> RpcError {
    match e {
        JournalError::Invalid { .. } => RpcError::params(e.to_string()),
        other if other.is_unavailable() => {
            RpcError::unavailable(format!("the call journal: {other}"))
        }
        other => RpcError::internal(format!("the call journal: {other}")),
    }
}

/// A value as JSON (`null` if it cannot be serialised).
fn to_json<T: serde::Serialize>(v: &T) -> serde_json::Value {
    serde_json::to_value(v).unwrap_or(serde_json::Value::Null)
}

/// A `sessions.*` method that is one session tool's call: which tool, in
/// which session, with which arguments. The method runs it through
/// `tools.invoke`'s path, so the gate, the journal and the session's own
/// tool table decide exactly as for the model's call.
pub(crate) trait SessionToolCall {
    /// The tool.
    const TOOL: &'static str;
    /// The calling session.
    fn session_key(&self) -> &str;
    /// The caller's call id.
    fn tool_call_id(&self) -> Option<&str>;
    /// The tool's arguments, in its own spelling.
    fn arguments(&self) -> serde_json::Value;
}

/// The `tools.invoke` call a `sessions.*` method stands for.
pub(crate) fn session_tool_call<P: SessionToolCall>(p: &P) -> ToolsInvokeParams {
    ToolsInvokeParams {
        session_key: p.session_key().to_owned(),
        tool_name: P::TOOL.to_owned(),
        tool_call_id: p.tool_call_id().map(str::to_owned),
        params: p.arguments(),
    }
}

/// Drops absent members, so the tool sees only what the caller gave.
fn present(v: serde_json::Value) -> serde_json::Value {
    match v {
        serde_json::Value::Object(m) => {
            serde_json::Value::Object(m.into_iter().filter(|(_, v)| !v.is_null()).collect())
        }
        other => other,
    }
}

impl SessionToolCall for talon_gateway_protocol::SessionsSpawnParams {
    const TOOL: &'static str = "sessions_spawn";
    fn session_key(&self) -> &str {
        &self.session_key
    }
    fn tool_call_id(&self) -> Option<&str> {
        self.tool_call_id.as_deref()
    }
    fn arguments(&self) -> serde_json::Value {
        present(serde_json::json!({
            "task": self.task,
            "label": self.label,
            "taskName": self.task_name,
            "agentId": self.agent_id,
            "runTimeoutSeconds": self.run_timeout_seconds,
            "cleanup": self.cleanup,
            "model": self.model,
            "thinking": self.thinking,
        }))
    }
}

impl SessionToolCall for talon_gateway_protocol::SessionsSendParams {
    const TOOL: &'static str = "sessions_send";
    fn session_key(&self) -> &str {
        &self.session_key
    }
    fn tool_call_id(&self) -> Option<&str> {
        self.tool_call_id.as_deref()
    }
    fn arguments(&self) -> serde_json::Value {
        present(serde_json::json!({
            "sessionKey": self.target_session_key,
            "label": self.label,
            "agentId": self.agent_id,
            "message": self.message,
            "timeoutSeconds": self.timeout_seconds,
        }))
    }
}

impl SessionToolCall for talon_gateway_protocol::SessionsHistoryParams {
    const TOOL: &'static str = "sessions_history";
    fn session_key(&self) -> &str {
        &self.session_key
    }
    fn tool_call_id(&self) -> Option<&str> {
        self.tool_call_id.as_deref()
    }
    fn arguments(&self) -> serde_json::Value {
        present(serde_json::json!({
            "sessionKey": self.target_session_key,
            "limit": self.limit,
            "includeTools": self.include_tools,
        }))
    }
}
