//! Serves Talon tools to any MCP client over streamable HTTP.
//!
//! (Skeleton: the contract below is fixed; the server is filled in by the
//! gateway issue.) The gateway implements [`ToolSource`] (token → session
//! → that session's tool table, journalled and gated like every other
//! surface); this crate turns it into an MCP server (rmcp's server side)
//! that `talon-gateway` mounts at `/mcp`.

use async_trait::async_trait;
use talon_runtime::{InvokeOutcome, ModelToolCall, ToolDefinition};

/// Who is calling: the HTTP request's headers and query string, for the
/// source to authenticate and to pick the session.
#[derive(Debug, Clone, Default)]
pub struct McpCaller {
    /// The request headers (`Authorization`, `X-Talon-Session`, …).
    pub headers: axum::http::HeaderMap,
    /// The raw query string (`session=…`), if any.
    pub query: Option<String>,
}

/// Why a source refused a request.
#[derive(Debug, thiserror::Error)]
pub enum SourceError {
    /// No or bad credentials (HTTP 401).
    #[error("unauthorized: {0}")]
    Unauthorized(String),
    /// Credentials lack the scope (HTTP 403).
    #[error("forbidden: {0}")]
    Forbidden(String),
    /// The session named does not exist.
    #[error("unknown session: {0}")]
    UnknownSession(String),
    /// Anything else.
    #[error("{0}")]
    Internal(String),
}

/// Where the MCP server gets its tools: one session's table.
#[async_trait]
pub trait ToolSource: Send + Sync + 'static {
    /// The caller's session's tools (already policy-filtered, in order).
    async fn list_tools(&self, caller: &McpCaller) -> Result<Vec<ToolDefinition>, SourceError>;

    /// Invoke one tool through the session's full gate.
    async fn call_tool(
        &self,
        caller: &McpCaller,
        call: ModelToolCall,
    ) -> Result<InvokeOutcome, SourceError>;
}

/// The MCP endpoint as an axum router, to be mounted by the gateway with
/// `Router::nest_service("/mcp", talon_mcp_serve::router(source))`.
///
/// (Skeleton: routes nothing until the server face is built.)
pub fn router(source: std::sync::Arc<dyn ToolSource>) -> axum::Router {
    let _ = source;
    axum::Router::new()
}
