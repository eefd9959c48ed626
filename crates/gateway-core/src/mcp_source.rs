//! The gateway as the MCP server's [`ToolSource`]: bearer token → scope,
//! `X-Talon-Session` header or `session=` query → session, and every call
//! through the same path as `tools.invoke`.

use async_trait::async_trait;
use talon_mcp_serve::{McpCaller, SourceError, ToolSource};
use talon_runtime::{InvokeOutcome, ModelToolCall, ToolDefinition};

use crate::gateway::Gateway;
use crate::http::AuthFailure;
use crate::scope::Scope;

/// The header naming the session.
pub const SESSION_HEADER: &str = "x-talon-session";

pub(crate) struct GatewayToolSource {
    gw: Gateway,
}

impl GatewayToolSource {
    pub(crate) fn new(gw: Gateway) -> Self {
        GatewayToolSource { gw }
    }

    fn check(&self, caller: &McpCaller, needed: Scope) -> Result<String, SourceError> {
        let (scope, _) = self
            .gw
            .authenticate(&caller.headers, None)
            .map_err(|f| match f {
                AuthFailure::Limited => SourceError::Unauthorized(f.message().to_owned()),
                _ => SourceError::Unauthorized(f.message().to_owned()),
            })?;
        if !scope.covers(needed) {
            return Err(SourceError::Forbidden(format!(
                "this needs the {} scope; the token has {}",
                needed.as_str(),
                scope.as_str()
            )));
        }
        Ok(session_of(caller))
    }
}

/// The session a request names (default: the default agent's main).
fn session_of(caller: &McpCaller) -> String {
    if let Some(v) = caller
        .headers
        .get(SESSION_HEADER)
        .and_then(|v| v.to_str().ok())
        .map(str::trim)
        .filter(|v| !v.is_empty())
    {
        return v.to_owned();
    }
    caller
        .query
        .as_deref()
        .and_then(|q| {
            q.split('&').find_map(|pair| {
                let (k, v) = pair.split_once('=')?;
                (k == "session").then(|| percent_decode(v))
            })
        })
        .filter(|v| !v.is_empty())
        .unwrap_or_else(|| "main".to_owned())
}

fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'%' if i + 2 < bytes.len() => {
                let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).ok();
                match hex.and_then(|h| u8::from_str_radix(h, 16).ok()) {
                    Some(b) => {
                        out.push(b);
                        i += 3;
                    }
                    None => {
                        out.push(b'%');
                        i += 1;
                    }
                }
            }
            b'+' => {
                out.push(b' ');
                i += 1;
            }
            b => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn to_source(e: crate::rpc::RpcError) -> SourceError {
    if e.code == crate::rpc::NOT_FOUND {
        SourceError::UnknownSession(e.message)
    } else {
        SourceError::Internal(e.message)
    }
}

#[async_trait]
impl ToolSource for GatewayToolSource {
    async fn list_tools(&self, caller: &McpCaller) -> Result<Vec<ToolDefinition>, SourceError> {
        let key = self.check(caller, Scope::ReadOnly)?;
        let session = self.gw.session_or_main(&key).map_err(to_source)?;
        let g = self.gw.generation();
        Ok(session.table(g.id, &g.runtime).await.table.definitions())
    }

    async fn call_tool(
        &self,
        caller: &McpCaller,
        call: ModelToolCall,
    ) -> Result<InvokeOutcome, SourceError> {
        let key = self.check(caller, Scope::Agent)?;
        let id = (!call.id.is_empty()).then_some(call.id);
        let report = self
            .gw
            .invoke_spawned(key, id, call.name, call.arguments)
            .await
            .map_err(to_source)?;
        Ok(report.outcome)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn session_from_header_then_query_then_main() {
        let mut c = McpCaller::default();
        assert_eq!(session_of(&c), "main");
        c.query = Some("a=1&session=agent%3Amain%3Amain".into());
        assert_eq!(session_of(&c), "agent:main:main");
        c.headers.insert(
            SESSION_HEADER,
            "s1".parse()
                .unwrap_or_else(|_| axum::http::HeaderValue::from_static("x")),
        );
        assert_eq!(session_of(&c), "s1");
    }
}
