//! `cron.*`: the cron service's API, called directly (never through the
//! model-facing `cron` tool). Jobs are created and changed as the default
//! agent's main session, so a job's tools are capped by that session's
//! effective tools; every change is journalled by [`crate::dispatch`].

use serde_json::{Value, json};
use talon_cron::{Creator, CronError, CronService, JobPatch, JobSpec, SystemEventRequest};
use talon_gateway_protocol::{
    CronAddParams, CronChangeResponse, CronJobRef, CronJobResponse, CronJobsResponse,
    CronListParams, CronRemoveResponse, CronRunMode, CronRunParams, CronRunResponse,
    CronRunsParams, CronRunsResponse, CronStatusResponse, CronUpdateParams, CronWakeParams,
    OkResponse,
};

use crate::rpc::RpcError;

/// Most runs `cron.runs` returns, and its default.
const MAX_RUNS: u64 = 200;
const DEFAULT_RUNS: u64 = 20;

/// The cron service (absent only when it failed to open).
pub(crate) struct CronHandler {
    pub(crate) service: Option<CronService>,
}

/// Who acts on cron through the gateway: the default agent's main
/// session, with its effective tools (the cap of every job it creates).
#[derive(Debug, Clone)]
pub(crate) struct CronCaller {
    pub(crate) agent_id: String,
    pub(crate) session_key: String,
    pub(crate) tools: Vec<String>,
}

impl CronCaller {
    fn creator(&self) -> Creator {
        Creator {
            agent_id: self.agent_id.clone(),
            session_key: Some(self.session_key.clone()),
            tools: Some(self.tools.clone()),
        }
    }
}

/// The wire error of a cron error: bad input is invalid params naming the
/// field, an unknown job is not found.
pub(crate) fn cron_error(e: CronError) -> RpcError {
    match e {
        CronError::Invalid { field, message } => {
            RpcError::params(format!("{field}: {message}")).with_data(json!({"param": field}))
        }
        CronError::NotFound(id) => RpcError::not_found(format!(
            "no cron job with id `{id}`; cron.list shows the jobs"
        ))
        .with_data(json!({"param": "jobId"})),
        CronError::Quota {
            limit,
            config_key,
            max,
            message,
        } => RpcError::new(
            crate::rpc::FORBIDDEN,
            format!("{message} (limit {max}, set by `{config_key}`)"),
        )
        .with_data(json!({"errorCode": limit.code(), "configKey": config_key, "limit": max})),
        CronError::Egress { field, blocked } => RpcError::params(format!("{field}: {blocked}"))
            .with_data(json!({"param": field, "errorCode": blocked.code()})),
        // The shared database is down, or this member just lost the timer
        // lease: nothing was changed; retry.
        other if other.is_unavailable() || other.is_fenced() => {
            RpcError::unavailable(other.to_string())
        }
        // Another member fired or finished the job since it was read.
        CronError::Changed(_) => RpcError::unavailable(e.to_string())
            .with_data(json!({"errorCode": "cron.changed", "retryable": true})),
        other => RpcError::internal(other.to_string()),
    }
}

fn job_json<T: serde::Serialize>(job: &T) -> Value {
    serde_json::to_value(job).unwrap_or(Value::Null)
}

impl CronHandler {
    fn service(&self) -> Result<CronService, RpcError> {
        self.service
            .clone()
            .ok_or_else(|| RpcError::internal("cron is not running"))
    }

    /// Run a store call off the async threads.
    async fn blocking<T, F>(&self, f: F) -> Result<T, RpcError>
    where
        T: Send + 'static,
        F: FnOnce(CronService) -> Result<T, CronError> + Send + 'static,
    {
        let svc = self.service()?;
        tokio::task::spawn_blocking(move || f(svc))
            .await
            .map_err(|e| RpcError::internal(format!("the cron store task failed: {e}")))?
            .map_err(cron_error)
    }

    /// `cron.status`.
    pub(crate) async fn status(&self) -> Result<CronStatusResponse, RpcError> {
        let status = self.blocking(|svc| svc.status()).await?;
        Ok(CronStatusResponse(job_json(&status)))
    }

    /// `cron.list`.
    pub(crate) async fn list(&self, p: CronListParams) -> Result<CronJobsResponse, RpcError> {
        let include = p.include_disabled.unwrap_or(false);
        let jobs = self.blocking(move |svc| svc.list(include)).await?;
        Ok(CronJobsResponse {
            jobs: jobs
                .iter()
                .filter(|j| {
                    p.agent_id
                        .as_deref()
                        .is_none_or(|a| j.agent_id.eq_ignore_ascii_case(a))
                })
                .map(job_json)
                .collect(),
        })
    }

    /// `cron.get`.
    pub(crate) async fn get(&self, p: CronJobRef) -> Result<CronJobResponse, RpcError> {
        let id = p.job_id.clone();
        match self.blocking(move |svc| svc.get(&id)).await? {
            Some(job) => Ok(CronJobResponse {
                job: job_json(&job),
            }),
            None => Err(cron_error(CronError::NotFound(p.job_id))),
        }
    }

    /// `cron.runs`.
    pub(crate) async fn runs(&self, p: CronRunsParams) -> Result<CronRunsResponse, RpcError> {
        let limit = p.limit.unwrap_or(DEFAULT_RUNS);
        if !(1..=MAX_RUNS).contains(&limit) {
            return Err(
                RpcError::params(format!("limit must be 1–{MAX_RUNS}, got {limit}"))
                    .with_data(json!({"param": "limit"})),
            );
        }
        let limit = usize::try_from(limit).unwrap_or(20);
        let runs = self.blocking(move |svc| svc.runs(&p.job_id, limit)).await?;
        Ok(CronRunsResponse {
            runs: runs.iter().map(job_json).collect(),
        })
    }

    /// `cron.add`: a job for the caller's agent, its tools capped by the
    /// caller's.
    pub(crate) async fn add(
        &self,
        caller: &CronCaller,
        p: CronAddParams,
    ) -> Result<CronChangeResponse, RpcError> {
        let spec = JobSpec::from_json(&p.job, "job").map_err(cron_error)?;
        if let Some(agent) = &spec.agent_id
            && !agent.eq_ignore_ascii_case(&caller.agent_id)
        {
            return Err(RpcError::params(format!(
                "job.agentId: jobs created through the gateway belong to the default agent `{}` (capped by its main session's tools), not `{agent}`",
                caller.agent_id
            ))
            .with_data(json!({"param": "job.agentId"})));
        }
        let creator = caller.creator();
        let change = self.blocking(move |svc| svc.add(spec, &creator)).await?;
        let dropped = !change.dropped_tools.is_empty();
        Ok(CronChangeResponse {
            ok: true,
            job: job_json(&change.job),
            note: dropped.then(|| {
                "these requested tools were not granted: a job never gets tools the run that creates it does not have".to_owned()
            }),
            dropped_tools: dropped.then_some(change.dropped_tools),
        })
    }

    /// `cron.update` (re-capped by the caller's tools).
    pub(crate) async fn update(
        &self,
        caller: &CronCaller,
        p: CronUpdateParams,
    ) -> Result<CronChangeResponse, RpcError> {
        let patch = JobPatch::from_json(&p.patch, "patch").map_err(cron_error)?;
        let creator = caller.creator();
        let change = self
            .blocking(move |svc| svc.update(&p.job_id, patch, &creator))
            .await?;
        let dropped = !change.dropped_tools.is_empty();
        Ok(CronChangeResponse {
            ok: true,
            job: job_json(&change.job),
            dropped_tools: dropped.then_some(change.dropped_tools),
            note: None,
        })
    }

    /// `cron.remove` (cancels the job's run in flight).
    pub(crate) async fn remove(&self, p: CronJobRef) -> Result<CronRemoveResponse, RpcError> {
        let id = p.job_id.clone();
        if !self.blocking(move |svc| svc.remove(&id)).await? {
            return Err(cron_error(CronError::NotFound(p.job_id)));
        }
        Ok(CronRemoveResponse {
            ok: true,
            removed: p.job_id,
        })
    }

    /// `cron.run`: returns once the run started (or why it did not).
    pub(crate) fn run(&self, p: &CronRunParams) -> Result<CronRunResponse, RpcError> {
        let force = match p.run_mode.unwrap_or_default() {
            CronRunMode::Due => false,
            CronRunMode::Force => true,
        };
        let r = self
            .service()?
            .run_now(&p.job_id, force)
            .map_err(cron_error)?;
        Ok(CronRunResponse {
            ran: r.ran,
            reason: r.reason,
            run_id: r.run_id,
        })
    }

    /// `cron.wake`: a system event for one of the caller's agent's
    /// sessions.
    pub(crate) async fn wake(
        &self,
        caller: &CronCaller,
        p: CronWakeParams,
    ) -> Result<OkResponse, RpcError> {
        if p.text.trim().is_empty() {
            return Err(RpcError::params("text required: the system event's text")
                .with_data(json!({"param": "text"})));
        }
        let mode = talon_cron::parse_wake_mode(p.mode.as_deref()).map_err(cron_error)?;
        if let Some(agent) = &p.agent_id
            && !agent.eq_ignore_ascii_case(&caller.agent_id)
        {
            return Err(RpcError::params(format!(
                "agentId: only the default agent `{}` can be woken through the gateway",
                caller.agent_id
            ))
            .with_data(json!({"param": "agentId"})));
        }
        let session_key = p.session_key.unwrap_or_else(|| caller.session_key.clone());
        let prefix = format!("agent:{}:", caller.agent_id);
        if !session_key.starts_with(&prefix) {
            return Err(RpcError::params(format!(
                "sessionKey: only sessions of agent `{}` (`{prefix}…`) can be woken",
                caller.agent_id
            ))
            .with_data(json!({"param": "sessionKey"})));
        }
        self.service()?
            .wake(SystemEventRequest {
                agent_id: caller.agent_id.clone(),
                session_key: Some(session_key),
                text: p.text,
                wake_mode: mode,
                job_id: None,
            })
            .await
            .map_err(cron_error)?;
        Ok(OkResponse { ok: true })
    }
}
