//! [`Gateway::call`], the one path from a method name to its handler: the
//! scope check from the method's declaration (`MethodName::scope`), the
//! params decode, then one exhaustive `match` from the decoded [`Request`]
//! to its area's handler; adding a method to the protocol's table does
//! not compile until it is handled here.

use std::time::Instant;

use serde_json::Value;
use talon_gateway_protocol::{Method, MethodName, Request, methods as m, unknown_method};
use talon_journal::{CallEnd, CallStart, Outcome};

use crate::gateway::Gateway;
use crate::handlers::cron::CronCaller;
use crate::handlers::{gateway, mcp, runner, sandbox, security, skills, tools};
use crate::outbound::Outbound;
use crate::rpc::{FORBIDDEN, RpcError};

/// The connection a request came on (for `runner.*`).
#[derive(Debug, Clone)]
pub(crate) struct Caller {
    pub(crate) out: Option<Outbound>,
    /// Who is calling (the token's identity and scope).
    pub(crate) identity: crate::auth::Identity,
}

/// Serialise method `M`'s response (the type parameter ties each arm to
/// its declared response type).
fn reply<M: Method>(response: Result<M::Response, RpcError>) -> Result<Value, RpcError> {
    let response = response?;
    serde_json::to_value(&response).map_err(|e| {
        RpcError::internal(format!(
            "{}: the response could not be encoded: {e}",
            M::NAME
        ))
    })
}

impl Gateway {
    /// Call `method` with `params` as `identity`, in process: the one path
    /// from a method name to its handler, used by the WebSocket front end
    /// and by embedders and tests that hold a [`Gateway`] (no socket, no
    /// token text). An unknown method is `method not found`; a method
    /// the identity's scope does not cover is refused (`forbidden`, the
    /// required and the held scope in `data`) before its params are read;
    /// bad params are `invalid params` naming the field.
    pub async fn call(
        &self,
        identity: &crate::auth::Identity,
        method: &str,
        params: Value,
    ) -> Result<Value, RpcError> {
        let caller = Caller {
            out: None,
            identity: identity.clone(),
        };
        self.call_as(&caller, method, params).await
    }

    /// [`Gateway::call`] for method `M`, typed both ways.
    pub async fn call_typed<M: Method>(
        &self,
        identity: &crate::auth::Identity,
        params: M::Params,
    ) -> Result<M::Response, RpcError> {
        let params = serde_json::to_value(params).map_err(|e| {
            RpcError::params(format!("{}: the params could not be encoded: {e}", M::NAME))
        })?;
        let value = self.call(identity, M::NAME, params).await?;
        serde_json::from_value(value).map_err(|e| {
            RpcError::internal(format!(
                "{}: the response does not match its declared type: {e}",
                M::NAME
            ))
        })
    }

    /// [`Gateway::call`] for a connection's caller (its outbound queue
    /// serves `runner.*`).
    pub(crate) async fn call_as(
        &self,
        caller: &Caller,
        method: &str,
        params: Value,
    ) -> Result<Value, RpcError> {
        let scope = caller.identity.scope;
        let Some(name) = MethodName::from_name(method) else {
            return Err(unknown_method(method));
        };
        let needed = name.scope();
        if !scope.covers(needed) {
            return Err(RpcError::new(
                FORBIDDEN,
                format!(
                    "`{method}` needs the {} scope; token `{}` has {}",
                    needed.as_str(),
                    caller.identity.id,
                    scope.as_str()
                ),
            )
            .with_data(serde_json::json!({"required": needed.as_str(), "scope": scope.as_str()})));
        }
        let request = name.parse_params(params)?;
        self.dispatch(request, caller).await
    }

    /// Run one decoded request (the caller's scope already covers it).
    pub(crate) async fn dispatch(
        &self,
        request: Request,
        caller: &Caller,
    ) -> Result<Value, RpcError> {
        let areas = &self.inner;
        match request {
            Request::Health(_) => reply::<m::Health>(Ok(gateway::health(areas).await)),
            Request::ConfigGet(_) => reply::<m::ConfigGet>(Ok(areas.config.get())),
            Request::ConfigSchemaLookup(p) => {
                reply::<m::ConfigSchemaLookup>(areas.config.schema_lookup(p).await)
            }
            Request::SessionsList(p) => reply::<m::SessionsList>(Ok(areas.sessions.list(&p))),
            Request::SessionsCreate(p) => {
                let g = self.generation();
                reply::<m::SessionsCreate>(areas.sessions.create(&g, p, &caller.identity).await)
            }
            Request::SessionsClose(p) => reply::<m::SessionsClose>(areas.sessions.close(p)),
            Request::SessionsSpawn(p) => {
                let call = tools::session_tool_call(&p);
                reply::<m::SessionsSpawn>(tools::invoke(self, &caller.identity, call).await)
            }
            Request::SessionsSend(p) => {
                let call = tools::session_tool_call(&p);
                reply::<m::SessionsSend>(tools::invoke(self, &caller.identity, call).await)
            }
            Request::SessionsHistory(p) => {
                let call = tools::session_tool_call(&p);
                reply::<m::SessionsHistory>(tools::invoke(self, &caller.identity, call).await)
            }
            Request::ToolsList(p) => {
                let g = self.generation();
                reply::<m::ToolsList>(tools::list(&areas.sessions, &g, p).await)
            }
            Request::ToolsInvoke(p) => {
                reply::<m::ToolsInvoke>(tools::invoke(self, &caller.identity, p).await)
            }
            Request::ToolsLookup(p) => {
                let g = self.generation();
                reply::<m::ToolsLookup>(tools::lookup(self, &areas.sessions, &g, p).await)
            }
            Request::ApprovalsList(_) => reply::<m::ApprovalsList>(areas.approvals.list()),
            Request::ApprovalsResolve(p) => {
                reply::<m::ApprovalsResolve>(areas.approvals.resolve(p))
            }
            Request::CronStatus(_) => reply::<m::CronStatus>(areas.cron.status().await),
            Request::CronList(p) => reply::<m::CronList>(areas.cron.list(p).await),
            Request::CronGet(p) => reply::<m::CronGet>(areas.cron.get(p).await),
            Request::CronRuns(p) => reply::<m::CronRuns>(areas.cron.runs(p).await),
            Request::CronAdd(p) => {
                let who = self.cron_caller().await?;
                let params = journal_params(&p);
                let r = self
                    .journalled::<m::CronAdd, _>(&who, &params, areas.cron.add(&who, p))
                    .await;
                reply::<m::CronAdd>(r)
            }
            Request::CronUpdate(p) => {
                let who = self.cron_caller().await?;
                let params = journal_params(&p);
                let r = self
                    .journalled::<m::CronUpdate, _>(&who, &params, areas.cron.update(&who, p))
                    .await;
                reply::<m::CronUpdate>(r)
            }
            Request::CronRemove(p) => {
                let who = self.cron_caller().await?;
                let params = journal_params(&p);
                let r = self
                    .journalled::<m::CronRemove, _>(&who, &params, areas.cron.remove(p))
                    .await;
                reply::<m::CronRemove>(r)
            }
            Request::CronRun(p) => {
                let who = self.cron_caller().await?;
                let params = journal_params(&p);
                let r = self
                    .journalled::<m::CronRun, _>(&who, &params, async { areas.cron.run(&p) })
                    .await;
                reply::<m::CronRun>(r)
            }
            Request::CronWake(p) => {
                let who = self.cron_caller().await?;
                let params = journal_params(&p);
                let r = self
                    .journalled::<m::CronWake, _>(&who, &params, areas.cron.wake(&who, p))
                    .await;
                reply::<m::CronWake>(r)
            }
            Request::TasksList(p) => reply::<m::TasksList>(areas.tasks.list(p)),
            Request::TasksGet(p) => reply::<m::TasksGet>(areas.tasks.get(&p)),
            Request::TasksCancel(p) => {
                reply::<m::TasksCancel>(areas.tasks.cancel(&p, &areas.events))
            }
            Request::SkillsList(p) => {
                let g = self.generation();
                reply::<m::SkillsList>(Ok(skills::list(&g, &areas.config.config_dir(), &p)))
            }
            Request::SkillsPrompt(p) => {
                let g = self.generation();
                reply::<m::SkillsPrompt>(Ok(skills::prompt(&g, &areas.config.config_dir(), &p)))
            }
            Request::SandboxExplain(p) => {
                let g = self.generation();
                reply::<m::SandboxExplain>(sandbox::explain(&areas.sessions, &g, &p).await)
            }
            Request::SandboxList(_) => {
                let g = self.generation();
                reply::<m::SandboxList>(Ok(sandbox::list(&g).await))
            }
            Request::SandboxRecreate(p) => {
                let g = self.generation();
                reply::<m::SandboxRecreate>(sandbox::recreate(&g, p).await)
            }
            Request::SecurityAudit(p) => {
                let g = self.generation();
                reply::<m::SecurityAudit>(security::audit(&g, &areas.config, p).await)
            }
            Request::McpStatus(_) => {
                reply::<m::McpStatus>(Ok(mcp::status(&self.generation().runtime)))
            }
            Request::RunnerSubscribe(_) => {
                reply::<m::RunnerSubscribe>(runner::subscribe(&areas.runners, caller))
            }
            Request::RunnerComplete(p) => {
                reply::<m::RunnerComplete>(runner::complete(&areas.runners, caller, p))
            }
            Request::GatewayReload(_) => reply::<m::GatewayReload>(Ok(self.reload())),
        }
    }

    /// The default agent's main session as the cron caller, with its
    /// effective tools under the active configuration.
    async fn cron_caller(&self) -> Result<CronCaller, RpcError> {
        let g = self.generation();
        let main = self.inner.sessions.session_or_main(&g, "main")?;
        let tools = main
            .table(g.id, &g.runtime)
            .await
            .table
            .effective_allowlist()
            .to_vec();
        Ok(CronCaller {
            agent_id: main.info.agent_id.clone(),
            session_key: main.info.session_key.clone(),
            tools,
        })
    }

    /// Run a state-changing method like a side-effecting tool call: refused
    /// while draining, a durable `started` record (tool `M::NAME`, the
    /// params' digest only) before it runs, exactly one terminal record
    /// after.
    async fn journalled<M: Method, F>(
        &self,
        who: &CronCaller,
        params: &Value,
        run: F,
    ) -> Result<M::Response, RpcError>
    where
        F: std::future::Future<Output = Result<M::Response, RpcError>>,
    {
        let calls = &self.inner.calls;
        calls.admit()?;
        let call_id = calls.next_call_id();
        let start = CallStart {
            call_id: call_id.clone(),
            session_key: who.session_key.clone(),
            agent_id: who.agent_id.clone(),
            tool: M::NAME.to_owned(),
            params_digest: talon_journal::params_digest(params),
            at_ms: crate::clock::now_ms(),
            tool_call_id: None,
        };
        calls.journal.started(start).await.map_err(|e| {
            RpcError::internal(format!(
                "the call journal refused {}, so it was not run: {e}",
                M::NAME
            ))
        })?;
        let clock = Instant::now();
        let result = run.await;
        let (outcome, summary) = match &result {
            Ok(_) => (Outcome::Ok, format!("{} ok", M::NAME)),
            // The message can quote the job's text: only the code is kept.
            Err(e) => (Outcome::Error, format!("{} error ({})", M::NAME, e.code)),
        };
        let end = CallEnd {
            outcome,
            summary,
            at_ms: crate::clock::now_ms(),
            duration_us: u64::try_from(clock.elapsed().as_micros()).unwrap_or(u64::MAX),
        };
        match calls.journal.finish(&call_id, end) {
            Ok(_) => {
                if let Err(e) = calls.journal.flush().await {
                    tracing::error!(call = %call_id, error = %e, "the call journal could not commit a terminal record");
                }
            }
            Err(e) => {
                tracing::error!(call = %call_id, error = %e, "the call journal could not record a terminal record");
            }
        }
        result
    }
}

/// A request's params as the journal digests them.
fn journal_params<T: serde::Serialize>(params: &T) -> Value {
    serde_json::to_value(params).unwrap_or(Value::Null)
}

#[cfg(test)]
#[path = "dispatch_tests.rs"]
mod tests;
