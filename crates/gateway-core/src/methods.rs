//! The WebSocket methods: parameter checking and dispatch. Every method's
//! least scope is in [`crate::scope::METHODS`]; this module assumes the
//! caller's scope was already checked.

use std::sync::Arc;

use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use talon_hooks::approval::{ApprovalBroker as _, ApprovalDecision};
use talon_tool_catalog::{CancellationToken, Tool as _, ToolCall, ToolContext};

use crate::gateway::Gateway;
use crate::outbound::Outbound;
use crate::rpc::{INVALID_PARAMS, METHOD_NOT_FOUND, RpcError};
use crate::sessions::{SessionParams, build_session};

/// The connection a request came on (for `runner.*`).
#[derive(Debug, Clone)]
pub(crate) struct Caller {
    pub(crate) out: Option<Outbound>,
}

fn parse<T: DeserializeOwned>(method: &str, params: Value) -> Result<T, RpcError> {
    let params = if params.is_null() { json!({}) } else { params };
    serde_json::from_value(params)
        .map_err(|e| RpcError::new(INVALID_PARAMS, format!("{method}: invalid params: {e}")))
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct SessionRef {
    session_key: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct ToolsListParams {
    session_key: String,
    #[serde(default)]
    audit: bool,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct ToolsInvokeParams {
    session_key: String,
    tool_name: String,
    #[serde(default)]
    tool_call_id: Option<String>,
    #[serde(default)]
    params: Value,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct ResolveParams {
    id: String,
    decision: String,
    #[serde(default)]
    call_id: Option<String>,
    #[serde(default)]
    params_hash: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct SchemaLookupParams {
    #[serde(default)]
    path: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct RunnerCompleteParams {
    run_id: String,
    status: String,
    #[serde(default)]
    summary: Option<String>,
    #[serde(default)]
    error: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct TasksListParams {
    #[serde(default)]
    status: Option<String>,
    #[serde(default)]
    owner_key: Option<String>,
    #[serde(default)]
    limit: Option<usize>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct TaskRef {
    task_id: String,
    #[serde(default)]
    reason: Option<String>,
}

impl Gateway {
    /// Run one method (the caller's scope already covers it).
    pub(crate) async fn call_method(
        &self,
        method: &str,
        params: Value,
        caller: &Caller,
    ) -> Result<Value, RpcError> {
        match method {
            "health" => Ok(self.health()),
            "config.get" => Ok(self.config_json()),
            "config.schema.lookup" => {
                let p: SchemaLookupParams = parse(method, params)?;
                self.schema_lookup(p.path).await
            }
            "sessions.create" => {
                let p: SessionParams = parse(method, params)?;
                let s = self.create_session(p)?;
                let g = self.generation();
                let built = s.table(g.id, &g.runtime).await;
                Ok(json!({
                    "session": s.info,
                    "tools": built.table.names(),
                }))
            }
            "sessions.list" => {
                let list: Vec<Value> = self
                    .inner
                    .sessions
                    .list()
                    .iter()
                    .map(|s| json!(s.info))
                    .collect();
                Ok(json!({"sessions": list}))
            }
            "sessions.close" => {
                let p: SessionRef = parse(method, params)?;
                match self.inner.sessions.remove(&p.session_key) {
                    Some(s) => {
                        if let Some(t) = s.current_table() {
                            t.table.canceller().cancel("the session was closed");
                        }
                        Ok(json!({"closed": true, "sessionKey": p.session_key}))
                    }
                    None => Err(RpcError::not_found(format!(
                        "no session `{}` is open (sessions.list shows the open ones)",
                        p.session_key
                    ))),
                }
            }
            "tools.list" => {
                let p: ToolsListParams = parse(method, params)?;
                let s = self.session_or_main(&p.session_key)?;
                let g = self.generation();
                let built = s.table(g.id, &g.runtime).await;
                let mut out = json!({
                    "sessionKey": s.info.session_key,
                    "generation": built.generation,
                    "tools": built.table.definitions().iter().map(|d| json!({
                        "name": d.name,
                        "description": d.description,
                        "parameters": d.parameters,
                    })).collect::<Vec<_>>(),
                });
                if p.audit {
                    out["audit"] = json!(built.table.policy());
                    out["timings"] = json!(built.table.timings());
                }
                Ok(out)
            }
            "tools.invoke" => {
                let p: ToolsInvokeParams = parse(method, params)?;
                let params = if p.params.is_null() {
                    json!({})
                } else {
                    p.params
                };
                // The WebSocket handler already runs in its own task, which
                // outlives the connection: no second task is needed to keep
                // the call's journal records together.
                let report = self
                    .invoke(&p.session_key, p.tool_call_id, &p.tool_name, params)
                    .await?;
                Ok(report.to_json())
            }
            "approvals.list" => {
                let pending = self.inner.broker.pending();
                Ok(json!({"approvals": pending}))
            }
            "approvals.resolve" => {
                let p: ResolveParams = parse(method, params)?;
                let decision = ApprovalDecision::parse(p.decision.trim())
                    .filter(|d| d.is_user_decision())
                    .ok_or_else(|| {
                        RpcError::params(format!(
                            "decision `{}` is not allow-once, allow-always or deny",
                            p.decision
                        ))
                    })?;
                let binding = match (p.call_id, p.params_hash) {
                    (Some(call_id), Some(params_hash)) => {
                        Some(talon_hooks::approval::ApprovalBinding {
                            call_id,
                            params_hash,
                        })
                    }
                    (None, None) => None,
                    _ => {
                        return Err(RpcError::params(
                            "give both callId and paramsHash to bind the decision, or neither",
                        ));
                    }
                };
                let outcome = self.inner.broker.resolve(&p.id, decision, binding.as_ref());
                Ok(
                    json!({"id": p.id, "outcome": outcome.as_str(), "applied": outcome == talon_hooks::approval::ResolveOutcome::Applied}),
                )
            }
            m if m.starts_with("cron.") => self.cron_method(m, params).await,
            "tasks.list" => {
                let p: TasksListParams = parse(method, params)?;
                let ledger = self.ledger()?;
                let status = match p.status {
                    Some(s) => Some(serde_json::from_value(json!(s)).map_err(|_| {
                        RpcError::params(format!("status `{s}` is not a task status (queued, running, succeeded, failed, timed_out, cancelled, lost)"))
                    })?),
                    None => None,
                };
                let filter = talon_tasks::TaskFilter {
                    status,
                    owner_key: p.owner_key,
                    limit: p.limit.unwrap_or(100).min(1000),
                    ..Default::default()
                };
                let tasks = ledger
                    .list(&filter)
                    .map_err(|e| RpcError::internal(e.to_string()))?;
                Ok(json!({"tasks": tasks}))
            }
            "tasks.get" => {
                let p: TaskRef = parse(method, params)?;
                match self
                    .ledger()?
                    .get(&p.task_id)
                    .map_err(|e| RpcError::internal(e.to_string()))?
                {
                    Some(t) => Ok(json!({"task": t})),
                    None => Err(RpcError::not_found(format!("no task `{}`", p.task_id))),
                }
            }
            "tasks.cancel" => {
                let p: TaskRef = parse(method, params)?;
                let ledger = self.ledger()?;
                if ledger
                    .get(&p.task_id)
                    .map_err(|e| RpcError::internal(e.to_string()))?
                    .is_none()
                {
                    return Err(RpcError::not_found(format!("no task `{}`", p.task_id)));
                }
                let t = ledger
                    .cancel(&p.task_id, p.reason.as_deref())
                    .map_err(|e| RpcError::params(e.to_string()))?;
                self.push(
                    "task.updated",
                    json!({"task": t}),
                    crate::scope::Scope::ReadOnly,
                );
                Ok(json!({"task": t}))
            }
            "mcp.status" => Ok(mcp_status(&self.generation().runtime)),
            "runner.subscribe" => {
                let out = caller.out.clone().ok_or_else(|| {
                    RpcError::params("runner.subscribe needs a WebSocket connection")
                })?;
                self.inner.runners.subscribe(out);
                Ok(json!({"subscribed": true, "runners": self.inner.runners.count()}))
            }
            "runner.complete" => {
                let p: RunnerCompleteParams = parse(method, params)?;
                let conn = caller.out.as_ref().map_or(0, |o| o.id);
                let result = match p.status.as_str() {
                    "ok" => Ok(talon_cron::RunReport {
                        status: talon_cron::RunReportStatus::Ok,
                        summary: p.summary,
                    }),
                    "skipped" => Ok(talon_cron::RunReport {
                        status: talon_cron::RunReportStatus::Skipped,
                        summary: p.summary,
                    }),
                    "error" => Err(talon_cron::RunFailure::new(
                        p.error
                            .unwrap_or_else(|| "the runner reported an error".into()),
                    )),
                    other => {
                        return Err(RpcError::params(format!(
                            "status `{other}` is not ok, skipped or error"
                        )));
                    }
                };
                self.inner
                    .runners
                    .complete(conn, &p.run_id, result)
                    .map_err(RpcError::not_found)?;
                Ok(json!({"accepted": true}))
            }
            "gateway.reload" => Ok(json!(self.reload())),
            m if m.starts_with("skills.") || m.starts_with("sandbox.") => {
                self.extra_method(m, params).await
            }
            other => Err(RpcError::new(
                METHOD_NOT_FOUND,
                format!("no method `{other}`"),
            )),
        }
    }

    /// `tools.invoke` in its own task, so a caller that goes away cannot
    /// cut a call between its journal records.
    pub(crate) async fn invoke_spawned(
        &self,
        session_key: String,
        tool_call_id: Option<String>,
        tool: String,
        params: Value,
    ) -> Result<crate::invoke::CallReport, RpcError> {
        let gw = self.clone();
        tokio::spawn(async move { gw.invoke(&session_key, tool_call_id, &tool, params).await })
            .await
            .map_err(|e| RpcError::internal(format!("the call task failed: {e}")))?
    }

    /// Open a session.
    pub(crate) fn create_session(
        &self,
        params: SessionParams,
    ) -> Result<Arc<crate::sessions::Session>, RpcError> {
        let g = self.generation();
        let parent = match params.parent_session_key.as_deref() {
            Some(pk) => {
                let p = self.inner.sessions.get(pk).ok_or_else(|| {
                    RpcError::not_found(format!("parent session `{pk}` is not open"))
                })?;
                let tools: Vec<String> = p
                    .table_now(g.id, &g.runtime)
                    .table
                    .effective_allowlist()
                    .to_vec();
                Some((p, tools))
            }
            None => None,
        };
        let suffix = crate::auth::random_hex(6).map_err(|e| RpcError::internal(e.to_string()))?;
        let session = build_session(
            params,
            &g.config.default_agent_id(),
            &g.runtime,
            parent.as_ref().map(|(p, t)| (p.as_ref(), t.as_slice())),
            &suffix,
        )?;
        self.inner
            .sessions
            .insert(session, g.section.limits.max_sessions)
    }

    fn ledger(&self) -> Result<&talon_tasks::TaskLedger, RpcError> {
        self.inner
            .tasks
            .as_ref()
            .ok_or_else(|| RpcError::internal("the task ledger is not open"))
    }

    /// The running config, secrets redacted.
    pub(crate) fn config_json(&self) -> Value {
        let g = self.generation();
        let raw = serde_json::to_value(&*g.config).unwrap_or(Value::Null);
        json!({
            "origin": g.origin,
            "generation": g.id,
            "loadedAtMs": g.loaded_at_ms,
            "config": talon_tools::redact_secrets(&raw),
            "lastReload": self.inner.last_reload.read().ok().and_then(|r| r.clone()),
        })
    }

    async fn schema_lookup(&self, path: Option<String>) -> Result<Value, RpcError> {
        let g = self.generation();
        let config = Arc::clone(&g.config);
        let tool = talon_tools::GatewayTool::new(
            move || serde_json::to_value(&*config).unwrap_or(Value::Null),
            talon_config::config_schema(),
        );
        let mut params = serde_json::Map::new();
        params.insert("action".into(), json!("config.schema.lookup"));
        if let Some(p) = path {
            params.insert("path".into(), json!(p));
        }
        let call = ToolCall {
            id: "config.schema.lookup".into(),
            name: "gateway".into(),
            params,
        };
        let ctx = ToolContext::new("gateway", "gateway");
        match tool.execute(&call, &ctx, &CancellationToken::new()).await {
            Ok(r) => Ok(if r.details.is_null() {
                json!({"text": r.text()})
            } else {
                r.details
            }),
            Err(e) => Err(RpcError::params(e.to_string())),
        }
    }

    /// `cron.<action>`: the cron tool's actions, run as the default agent's
    /// main session (jobs created here are capped by that session's tools).
    async fn cron_method(&self, method: &str, params: Value) -> Result<Value, RpcError> {
        let action = method.trim_start_matches("cron.");
        let Some(service) = self.inner.cron.clone() else {
            return Err(RpcError::internal("cron is not running"));
        };
        let mut map = match params {
            Value::Object(m) => m,
            Value::Null => serde_json::Map::new(),
            _ => {
                return Err(RpcError::params(format!(
                    "{method}: params must be an object"
                )));
            }
        };
        map.insert("action".into(), json!(action));
        let main = self.session_or_main("main")?;
        let g = self.generation();
        let tools = main
            .table(g.id, &g.runtime)
            .await
            .table
            .effective_allowlist()
            .to_vec();
        let scope = talon_tools::CronToolScope::new(
            main.info.agent_id.clone(),
            main.info.session_key.clone(),
            tools,
        );
        let tool = talon_tools::CronTool::new(service, scope);
        let call = ToolCall {
            id: format!("cron-{}", self.next_call_id()),
            name: "cron".into(),
            params: map,
        };
        let ctx = ToolContext::new(&main.info.agent_id, &main.info.session_key);
        match tool.execute(&call, &ctx, &CancellationToken::new()).await {
            Ok(r) => Ok(if r.details.is_null() {
                json!({"text": r.text()})
            } else {
                r.details
            }),
            Err(e) if e.is_input() => {
                Err(RpcError::params(e.message()).with_data(json!({"param": e.param()})))
            }
            Err(e) => Err(RpcError::internal(e.to_string())),
        }
    }
}

/// `mcp.status`: no MCP manager is attached to this gateway yet.
/// Every MCP server the runtime has instantiated: agent, name, safe name,
/// transport, state, tool count, last error, restarts.
fn mcp_status(runtime: &talon_runtime::Runtime) -> Value {
    serde_json::to_value(runtime.mcp_manager().status())
        .unwrap_or_else(|e| json!({"servers": [], "error": e.to_string()}))
}
