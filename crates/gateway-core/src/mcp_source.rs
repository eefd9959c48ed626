//! The gateway as the MCP server's [`ToolSource`]: each HTTP request is
//! authenticated once, in [`ToolSource::authorize`] (bearer token → scope,
//! `X-Talon-Session` header or `session=` query → session, both read by
//! the protocol's one parser), and the resulting [`Grant`] is what
//! `tools/list` and `tools/call` act on; every call takes the same path
//! as `tools.invoke`.

use async_trait::async_trait;
use talon_mcp_serve::{Grant, McpCaller, SourceError, ToolSource};
use talon_runtime::{InvokeOutcome, ModelToolCall, ToolDefinition};

use crate::gateway::Gateway;
use crate::scope::Scope;

/// The header naming the session.
pub use talon_gateway_protocol::SESSION_HEADER;

pub(crate) struct GatewayToolSource {
    gw: Gateway,
}

/// Who one authorised `/mcp` request is.
#[derive(Debug, Clone)]
struct McpGrant {
    identity: crate::auth::Identity,
    session_key: String,
}

impl GatewayToolSource {
    pub(crate) fn new(gw: Gateway) -> Self {
        GatewayToolSource { gw }
    }

    /// The request's grant, checked against `needed`. A request the guard
    /// did not authorise is refused (never authenticated a second time).
    fn grant<'c>(&self, caller: &'c McpCaller, needed: Scope) -> Result<&'c McpGrant, SourceError> {
        let grant = caller
            .grant
            .as_ref()
            .and_then(Grant::get::<McpGrant>)
            .ok_or_else(|| {
                SourceError::Unauthorized("the request was not authorised".to_owned())
            })?;
        if !grant.identity.scope.covers(needed) {
            return Err(SourceError::Forbidden(format!(
                "this needs the {} scope; token `{}` has {}",
                needed.as_str(),
                grant.identity.id,
                grant.identity.scope.as_str()
            )));
        }
        Ok(grant)
    }
}

fn to_source(e: crate::rpc::RpcError) -> SourceError {
    if e.code == crate::rpc::NOT_FOUND {
        SourceError::UnknownSession(e.message)
    } else if e.code == crate::rpc::FORBIDDEN {
        SourceError::Forbidden(e.message)
    } else {
        SourceError::Internal(e.message)
    }
}

#[async_trait]
impl ToolSource for GatewayToolSource {
    /// The one authentication of an HTTP request: token (rate limited per
    /// address like every surface), read-only scope at least, and the
    /// session it names (an agent's main session is created on first use).
    async fn authorize(&self, caller: &McpCaller) -> Result<Option<Grant>, SourceError> {
        let (identity, _) =
            self.gw
                .authenticate(&caller.headers, caller.peer)
                .map_err(|f| match f {
                    crate::http::AuthFailure::Limited(secs) => SourceError::RateLimited {
                        message: f.message().to_owned(),
                        retry_after_secs: secs,
                    },
                    other => SourceError::Unauthorized(other.message().to_owned()),
                })?;
        if !identity.scope.covers(Scope::ReadOnly) {
            return Err(SourceError::Forbidden(format!(
                "this needs the read-only scope; token `{}` has {}",
                identity.id,
                identity.scope.as_str()
            )));
        }
        let key = caller.session_hint().unwrap_or_else(|| "main".to_owned());
        let session = self.gw.session_or_main(&key).map_err(to_source)?;
        Ok(Some(Grant::new(McpGrant {
            identity,
            session_key: session.info.session_key.clone(),
        })))
    }

    async fn list_tools(&self, caller: &McpCaller) -> Result<Vec<ToolDefinition>, SourceError> {
        let grant = self.grant(caller, Scope::ReadOnly)?;
        let session = self
            .gw
            .session_or_main(&grant.session_key)
            .map_err(to_source)?;
        let g = self.gw.generation();
        Ok(session.table(g.id, &g.runtime).await.table.definitions())
    }

    async fn call_tool(
        &self,
        caller: &McpCaller,
        call: ModelToolCall,
    ) -> Result<InvokeOutcome, SourceError> {
        let grant = self.grant(caller, Scope::Runner)?;
        let key = grant.session_key.clone();
        let identity = grant.identity.clone();
        let id = (!call.id.is_empty()).then_some(call.id);
        let report = self
            .gw
            .invoke_spawned(identity, key, id, call.name, call.arguments)
            .await
            .map_err(to_source)?;
        Ok(report.outcome)
    }
}

#[cfg(test)]
#[path = "mcp_source_tests.rs"]
mod tests;
