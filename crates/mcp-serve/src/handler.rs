//! `TalonMcpServer`: rmcp's `ServerHandler` over a [`ToolSource`].

use std::sync::Arc;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, Implementation, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler};
use serde_json::Value;
use talon_runtime::ModelToolCall;
use tokio_util::sync::CancellationToken;

use crate::config::ServeConfig;
use crate::convert::{call_result, mcp_tool};
use crate::sessions::CappedSessions;
use crate::source::{McpCaller, SourceError, ToolSource};

/// Fires when the HTTP response that carries a call's result is dropped
/// before it ended (the client went away). Put in the request's
/// extensions by the guard layer.
#[derive(Debug, Clone)]
pub(crate) struct Disconnected(pub(crate) CancellationToken);

const CURSOR_PREFIX: &str = "talon-page:";

/// One MCP server instance (rmcp makes one per session).
#[derive(Clone)]
pub(crate) struct TalonMcpServer {
    source: Arc<dyn ToolSource>,
    sessions: Arc<CappedSessions>,
    page_size: usize,
}

impl std::fmt::Debug for TalonMcpServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TalonMcpServer")
            .field("page_size", &self.page_size)
            .finish_non_exhaustive()
    }
}

impl TalonMcpServer {
    pub(crate) fn new(
        source: Arc<dyn ToolSource>,
        sessions: Arc<CappedSessions>,
        config: &ServeConfig,
    ) -> Self {
        TalonMcpServer {
            source,
            sessions,
            page_size: config.page_size.max(1),
        }
    }
}

/// The caller of the HTTP request that carried this MCP request.
fn caller_of(context: &RequestContext<RoleServer>) -> Result<McpCaller, McpError> {
    context
        .extensions
        .get::<axum::http::request::Parts>()
        .map(McpCaller::from_parts)
        .ok_or_else(|| McpError::internal_error("MCP request without its HTTP request", None))
}

fn disconnect_of(context: &RequestContext<RoleServer>) -> CancellationToken {
    context
        .extensions
        .get::<axum::http::request::Parts>()
        .and_then(|p| p.extensions.get::<Disconnected>())
        .map(|d| d.0.clone())
        .unwrap_or_default()
}

fn source_error(err: SourceError) -> McpError {
    match err {
        SourceError::Internal(m) => McpError::internal_error(m, None),
        other => McpError::invalid_request(other.to_string(), None),
    }
}

/// The offset a `tools/list` cursor names.
fn parse_cursor(cursor: Option<&str>) -> Result<usize, McpError> {
    let Some(cursor) = cursor else {
        return Ok(0);
    };
    cursor
        .strip_prefix(CURSOR_PREFIX)
        .and_then(|n| n.parse::<usize>().ok())
        .ok_or_else(|| {
            McpError::invalid_params(
                format!(
                    "invalid tools/list cursor `{}`: pass the nextCursor of the previous page, or no cursor for the first page",
                    cursor.chars().take(64).collect::<String>()
                ),
                None,
            )
        })
}

/// A fresh call id: random, so ids never repeat across restarts (the
/// gateway's journal is keyed by them).
fn fresh_call_id() -> Result<String, McpError> {
    let mut bytes = [0u8; 12];
    getrandom::fill(&mut bytes)
        .map_err(|e| McpError::internal_error(format!("cannot draw a call id: {e}"), None))?;
    let mut id = String::with_capacity(4 + 24);
    id.push_str("mcp-");
    for b in bytes {
        id.push_str(&format!("{b:02x}"));
    }
    Ok(id)
}

impl ServerHandler for TalonMcpServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("talon", env!("CARGO_PKG_VERSION")))
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        let caller = caller_of(&context)?;
        let offset = parse_cursor(request.as_ref().and_then(|r| r.cursor.as_deref()))?;
        let tools = self
            .source
            .list_tools(&caller)
            .await
            .map_err(source_error)?;
        let end = offset.saturating_add(self.page_size).min(tools.len());
        let page = tools.get(offset..end).unwrap_or_default();
        let mut result = ListToolsResult::with_all_items(page.iter().map(mcp_tool).collect());
        if end < tools.len() {
            result.next_cursor = Some(format!("{CURSOR_PREFIX}{end}"));
        }
        Ok(result)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let caller = caller_of(&context)?;
        let disconnected = disconnect_of(&context);
        // While the call runs its MCP session does not idle out.
        let _running = caller
            .headers
            .get("mcp-session-id")
            .and_then(|v| v.to_str().ok())
            .map(|id| self.sessions.call_running(id));
        let arguments = request.arguments.map_or(Value::Null, Value::Object);
        run_call(
            &*self.source,
            &caller,
            request.name.to_string(),
            arguments,
            &context.ct,
            &disconnected,
        )
        .await
        .map(Into::into)
    }
}

/// One `tools/call` through the source, the one place both paths run it
/// (rmcp's handler, and the guard's direct answer for a bound session).
/// Dropping the source's future is how a call is cancelled: the client's
/// `notifications/cancelled` or the MCP session closing (`cancelled`), or
/// the HTTP response going away (`disconnected`) all end it here.
pub(crate) async fn run_call(
    source: &dyn ToolSource,
    caller: &McpCaller,
    name: String,
    arguments: Value,
    cancelled: &CancellationToken,
    disconnected: &CancellationToken,
) -> Result<CallToolResult, McpError> {
    let id = fresh_call_id()?;
    let call = ModelToolCall::new(id.clone(), name.clone(), arguments);
    tracing::debug!(call_id = %id, tool = %name, "mcp tools/call");
    let outcome = tokio::select! {
        biased;
        () = cancelled.cancelled() => {
            tracing::debug!(call_id = %id, tool = %name, "mcp call cancelled by the client");
            return Err(McpError::invalid_request(format!("call {id} of `{name}` was cancelled"), None));
        }
        () = disconnected.cancelled() => {
            tracing::debug!(call_id = %id, tool = %name, "mcp call cancelled: client disconnected");
            return Err(McpError::invalid_request(format!("call {id} of `{name}` was cancelled: the client disconnected"), None));
        }
        outcome = source.call_tool(caller, call) => outcome.map_err(source_error)?,
    };
    Ok(call_result(&name, &outcome))
}

#[cfg(test)]
#[path = "handler_tests.rs"]
mod tests;
