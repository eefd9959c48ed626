//! The `cron` tool.

use std::sync::Arc;

use crate::{
    Creator, CronError, CronJob, CronService, JobPatch, JobSpec, Payload, SystemEventRequest,
    parse_wake_mode,
};
use serde_json::{Map, Value, json};
use talon_tool_catalog::params::{
    Bounds, StringOpts, read_bool, read_non_negative_integer, read_string,
};
use talon_tool_catalog::{
    CancelExt, CancellationToken, Section, Tool, ToolCall, ToolContext, ToolError, ToolFamily,
    ToolResult, ToolSpec, json_result,
};

use super::context::{ChatHistory, MAX_CONTEXT_MESSAGES, build_reminder_context};
use super::scope::CronToolScope;

const ACTIONS: &[&str] = &[
    "status", "list", "get", "add", "update", "remove", "run", "runs", "wake",
];
/// Actions a cron-triggered run may use, and only on its own job (status
/// and list are filtered to it).
const SELF_SCOPE_ACTIONS: &[&str] = &["status", "list", "get", "remove", "runs"];
const DEFAULT_RUNS_LIMIT: u64 = 20;

/// The `cron` tool of one run.
#[derive(Debug, Clone)]
pub struct CronTool {
    spec: ToolSpec,
    service: CronService,
    scope: CronToolScope,
    history: Option<Arc<dyn ChatHistory>>,
}

fn cron_err(e: CronError) -> ToolError {
    match e {
        CronError::Invalid { field, message } => {
            ToolError::input(field.clone(), format!("{field}: {message}"))
        }
        CronError::NotFound(id) => ToolError::input(
            "jobId",
            format!("no cron job with id `{id}`; use action list to see the jobs"),
        ),
        CronError::Egress { field, blocked } => {
            let code = match blocked.kind {
                talon_egress::BlockKind::Metadata => {
                    talon_tool_catalog::ToolErrorCode::WebMetadataBlocked
                }
                _ => talon_tool_catalog::ToolErrorCode::WebSsrfBlocked,
            };
            ToolError::new(code, format!("{field}: {blocked}")).with_param(field)
        }
        e @ CronError::Quota { .. } => {
            ToolError::new(talon_tool_catalog::ToolErrorCode::CronQuota, e.to_string())
        }
        other => ToolError::execution(other.to_string()),
    }
}

fn job_json(job: &CronJob) -> Value {
    serde_json::to_value(job).unwrap_or(Value::Null)
}

impl CronTool {
    /// The tool for the run described by `scope`, over `service`.
    pub fn new(service: CronService, scope: CronToolScope) -> Self {
        let spec = ToolSpec::core("cron").unwrap_or_else(|| {
            ToolSpec::new(
                "cron",
                ToolFamily::Core {
                    section: Section::Automation,
                },
            )
        });
        CronTool {
            spec,
            service,
            scope,
            history: None,
        }
    }

    /// Builder: where `contextMessages` reads recent chat from.
    pub fn with_history(mut self, history: Arc<dyn ChatHistory>) -> Self {
        self.history = Some(history);
        self
    }

    fn creator(&self) -> Creator {
        Creator {
            agent_id: self.scope.agent_id.clone(),
            session_key: Some(self.scope.session_key.clone()),
            tools: Some(self.scope.effective_tools.clone()),
        }
    }

    /// The job id of the call (`jobId`, alias `id`).
    fn job_id(params: &Map<String, Value>, required: bool) -> Result<Option<String>, ToolError> {
        let a = read_string(params, "jobId", StringOpts::default())?;
        let b = read_string(params, "id", StringOpts::default())?;
        match (a, b) {
            (Some(a), Some(b)) if a != b => Err(ToolError::input(
                "jobId",
                format!("jobId `{a}` and id `{b}` disagree; pass only jobId"),
            )),
            (Some(a), _) | (None, Some(a)) => Ok(Some(a)),
            (None, None) if required => Err(ToolError::input("jobId", "jobId required")),
            (None, None) => Ok(None),
        }
    }

    /// The self-scope of cron-triggered runs (`assertCronSelfRemoveScope`).
    fn check_self_scope(&self, action: &str, params: &Map<String, Value>) -> Result<(), ToolError> {
        if !self.scope.cron_triggered {
            return Ok(());
        }
        let Some(own) = self.scope.cron_job_id.as_deref() else {
            return Err(ToolError::unauthorized(
                "this cron-triggered run carries no job id, so the cron tool is unavailable",
            ));
        };
        if !SELF_SCOPE_ACTIONS.contains(&action) {
            return Err(ToolError::unauthorized(format!(
                "a cron-triggered run may only read or remove its own job `{own}`, not `{action}`"
            )));
        }
        if matches!(action, "get" | "remove" | "runs") {
            let id = Self::job_id(params, true)?;
            if id.as_deref() != Some(own) {
                return Err(ToolError::unauthorized(format!(
                    "a cron-triggered run may only act on its own job `{own}`, not `{}`",
                    id.unwrap_or_default()
                )));
            }
        }
        Ok(())
    }

    /// Run a blocking store call off the async threads.
    async fn blocking<T, F>(&self, f: F) -> Result<T, ToolError>
    where
        T: Send + 'static,
        F: FnOnce(CronService) -> Result<T, CronError> + Send + 'static,
    {
        let svc = self.service.clone();
        tokio::task::spawn_blocking(move || f(svc))
            .await
            .map_err(|e| ToolError::execution(format!("cron store task failed: {e}")))?
            .map_err(cron_err)
    }

    async fn add(&self, params: &Map<String, Value>) -> Result<Value, ToolError> {
        let job = match params.get("job") {
            Some(Value::Object(m)) => m,
            Some(_) => return Err(ToolError::input("job", "job must be an object")),
            None => {
                return Err(ToolError::input(
                    "job",
                    "job required (name, schedule, payload)",
                ));
            }
        };
        let mut spec = JobSpec::from_json(job, "job").map_err(cron_err)?;
        if let Some(agent) = &spec.agent_id
            && !agent.eq_ignore_ascii_case(&self.scope.agent_id)
        {
            return Err(ToolError::unauthorized(format!(
                "job.agentId: this run may only create jobs for its own agent `{}`, not `{agent}`",
                self.scope.agent_id
            )));
        }
        let count = read_non_negative_integer(
            params,
            "contextMessages",
            Bounds::inclusive(0.0, MAX_CONTEXT_MESSAGES as f64),
        )?
        .unwrap_or(0);
        if count > 0 {
            self.append_context(&mut spec, usize::try_from(count).unwrap_or(0))
                .await?;
        }
        let creator = self.creator();
        let change = self.blocking(move |svc| svc.add(spec, &creator)).await?;
        let mut out = json!({ "ok": true, "job": job_json(&change.job) });
        if !change.dropped_tools.is_empty() {
            out["droppedTools"] = json!(change.dropped_tools);
            out["note"] = json!(
                "these requested tools were not granted: a job never gets tools the run that creates it does not have"
            );
        }
        Ok(out)
    }

    async fn append_context(&self, spec: &mut JobSpec, count: usize) -> Result<(), ToolError> {
        let Some(history) = &self.history else {
            return Err(ToolError::input(
                "contextMessages",
                "chat history is not available in this host; omit contextMessages",
            ));
        };
        let messages = history
            .recent(&self.scope.session_key, count)
            .await
            .map_err(|e| e.context("cannot read recent chat history"))?;
        let block = build_reminder_context(&messages, count);
        if block.is_empty() {
            return Ok(());
        }
        match &mut spec.payload {
            Some(Payload::SystemEvent { text }) => text.push_str(&block),
            Some(Payload::AgentTurn { message, .. }) => message.push_str(&block),
            None => {}
        }
        Ok(())
    }

    async fn act(&self, action: &str, params: &Map<String, Value>) -> Result<Value, ToolError> {
        let own = self
            .scope
            .cron_job_id
            .clone()
            .filter(|_| self.scope.cron_triggered);
        match action {
            "status" => {
                let mut status = self.blocking(|svc| svc.status()).await?;
                if let Some(own) = &own {
                    status.running.retain(|j| j == own);
                }
                let mut v = serde_json::to_value(status).unwrap_or(Value::Null);
                if let Some(own) = own {
                    v["scope"] = json!({ "jobId": own });
                }
                Ok(v)
            }
            "list" => {
                let include =
                    read_bool(params, "includeDisabled")?.unwrap_or(false) || own.is_some();
                let agent = read_string(params, "agentId", StringOpts::default())?;
                let jobs = self.blocking(move |svc| svc.list(include)).await?;
                let jobs: Vec<Value> = jobs
                    .iter()
                    .filter(|j| own.as_deref().is_none_or(|o| j.id == o))
                    .filter(|j| {
                        agent
                            .as_deref()
                            .is_none_or(|a| j.agent_id.eq_ignore_ascii_case(a))
                    })
                    .map(job_json)
                    .collect();
                Ok(json!({ "jobs": jobs }))
            }
            "get" => {
                let id = Self::job_id(params, true)?.unwrap_or_default();
                let lookup = id.clone();
                match self.blocking(move |svc| svc.get(&lookup)).await? {
                    Some(job) => Ok(json!({ "job": job_json(&job) })),
                    None => Err(cron_err(CronError::NotFound(id))),
                }
            }
            "add" => self.add(params).await,
            "update" => {
                let id = Self::job_id(params, true)?.unwrap_or_default();
                let patch = match params.get("patch") {
                    Some(Value::Object(m)) => JobPatch::from_json(m, "patch").map_err(cron_err)?,
                    Some(_) => return Err(ToolError::input("patch", "patch must be an object")),
                    None => {
                        return Err(ToolError::input(
                            "patch",
                            "patch required (the fields to change)",
                        ));
                    }
                };
                let creator = self.creator();
                let change = self
                    .blocking(move |svc| svc.update(&id, patch, &creator))
                    .await?;
                let mut out = json!({ "ok": true, "job": job_json(&change.job) });
                if !change.dropped_tools.is_empty() {
                    out["droppedTools"] = json!(change.dropped_tools);
                }
                Ok(out)
            }
            "remove" => {
                let id = Self::job_id(params, true)?.unwrap_or_default();
                let lookup = id.clone();
                let removed = self.blocking(move |svc| svc.remove(&lookup)).await?;
                if !removed {
                    return Err(cron_err(CronError::NotFound(id)));
                }
                Ok(json!({ "ok": true, "removed": id }))
            }
            "run" => {
                let id = Self::job_id(params, true)?.unwrap_or_default();
                let force = match read_string(params, "runMode", StringOpts::default())?.as_deref()
                {
                    None | Some("due") => false,
                    Some("force") => true,
                    Some(other) => {
                        return Err(ToolError::input(
                            "runMode",
                            format!("runMode must be due or force, got `{other}`"),
                        ));
                    }
                };
                let r = self.service.run_now(&id, force).map_err(cron_err)?;
                Ok(serde_json::to_value(r).unwrap_or(Value::Null))
            }
            "runs" => {
                let id = Self::job_id(params, true)?.unwrap_or_default();
                let limit =
                    read_non_negative_integer(params, "limit", Bounds::inclusive(1.0, 200.0))?
                        .unwrap_or(DEFAULT_RUNS_LIMIT);
                let limit = usize::try_from(limit).unwrap_or(20);
                let runs = self.blocking(move |svc| svc.runs(&id, limit)).await?;
                Ok(json!({ "runs": runs }))
            }
            "wake" => {
                let text = read_string(params, "text", StringOpts::required())?.unwrap_or_default();
                let mode =
                    parse_wake_mode(read_string(params, "mode", StringOpts::default())?.as_deref())
                        .map_err(cron_err)?;
                if let Some(agent) = read_string(params, "agentId", StringOpts::default())?
                    && !agent.eq_ignore_ascii_case(&self.scope.agent_id)
                {
                    return Err(ToolError::unauthorized(format!(
                        "agentId: this run may only wake its own agent `{}`",
                        self.scope.agent_id
                    )));
                }
                let session_key = read_string(params, "sessionKey", StringOpts::default())?
                    .unwrap_or_else(|| self.scope.session_key.clone());
                let prefix = format!("agent:{}:", self.scope.agent_id);
                if !session_key.starts_with(&prefix) {
                    return Err(ToolError::unauthorized(format!(
                        "sessionKey: only sessions of this agent (`{prefix}…`) can be woken"
                    )));
                }
                self.service
                    .wake(SystemEventRequest {
                        agent_id: self.scope.agent_id.clone(),
                        session_key: Some(session_key),
                        text,
                        wake_mode: mode,
                        job_id: None,
                    })
                    .await
                    .map_err(cron_err)?;
                Ok(json!({ "ok": true }))
            }
            other => Err(ToolError::input(
                "action",
                format!(
                    "unknown action `{other}`; use one of {}",
                    ACTIONS.join(", ")
                ),
            )),
        }
    }
}

#[async_trait::async_trait]
impl Tool for CronTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    async fn execute(
        &self,
        call: &ToolCall,
        _ctx: &ToolContext,
        abort: &CancellationToken,
    ) -> Result<ToolResult, ToolError> {
        abort.check()?;
        let action =
            read_string(&call.params, "action", StringOpts::required())?.unwrap_or_default();
        if !ACTIONS.contains(&action.as_str()) {
            return Err(ToolError::input(
                "action",
                format!(
                    "unknown action `{action}`; use one of {}",
                    ACTIONS.join(", ")
                ),
            ));
        }
        self.check_self_scope(&action, &call.params)?;
        let payload = self.act(&action, &call.params).await?;
        Ok(json_result(payload))
    }
}
