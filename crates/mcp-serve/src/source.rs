//! The contract between the MCP server face and whoever owns the sessions
//! (the gateway): [`ToolSource`].

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

impl McpCaller {
    /// The caller of one HTTP request.
    pub fn from_parts(parts: &axum::http::request::Parts) -> Self {
        McpCaller {
            headers: parts.headers.clone(),
            query: parts.uri.query().map(str::to_owned),
        }
    }

    /// The bearer token of the `Authorization` header, if it carries one
    /// (scheme matched case-insensitively, surrounding blanks trimmed).
    pub fn bearer_token(&self) -> Option<&str> {
        let value = self
            .headers
            .get(axum::http::header::AUTHORIZATION)?
            .to_str()
            .ok()?
            .trim();
        let (scheme, token) = value.split_once(' ')?;
        let token = token.trim();
        (scheme.eq_ignore_ascii_case("bearer") && !token.is_empty()).then_some(token)
    }

    /// The session the caller names: header `X-Talon-Session`, else query
    /// parameter `session=` (percent-decoding is the source's business; the
    /// value is returned as written).
    pub fn session_hint(&self) -> Option<&str> {
        if let Some(v) = self.headers.get("x-talon-session") {
            return v.to_str().ok().map(str::trim).filter(|s| !s.is_empty());
        }
        self.query
            .as_deref()?
            .split('&')
            .find_map(|pair| pair.strip_prefix("session="))
            .filter(|s| !s.is_empty())
    }
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
    /// The session named does not exist (HTTP 404).
    #[error("unknown session: {0}")]
    UnknownSession(String),
    /// Anything else (HTTP 500).
    #[error("{0}")]
    Internal(String),
}

/// Where the MCP server gets its tools: one session's table.
///
/// Every method gets the [`McpCaller`] of the HTTP request being served;
/// the server never caches an answer across requests, so revoking a token
/// or closing a session takes effect on the next request.
///
/// **Cancellation.** When the MCP client cancels a call
/// (`notifications/cancelled`), closes its MCP session, or disconnects, the
/// future returned by [`ToolSource::call_tool`] is dropped. A source that
/// journals calls must record the terminal state (`cancelled`) from a drop
/// guard, not only after the future completes.
#[async_trait]
pub trait ToolSource: Send + Sync + 'static {
    /// Check the caller before any MCP processing: its credentials, its
    /// scope, and that the session it names exists. Called for every HTTP
    /// request to the endpoint (POST, GET and DELETE).
    ///
    /// The default lists the caller's tools and discards them; a source
    /// with a cheaper check should override it.
    async fn authorize(&self, caller: &McpCaller) -> Result<(), SourceError> {
        self.list_tools(caller).await.map(|_| ())
    }

    /// The caller's session's tools (already policy-filtered, in order).
    async fn list_tools(&self, caller: &McpCaller) -> Result<Vec<ToolDefinition>, SourceError>;

    /// Invoke one tool through the session's full gate.
    async fn call_tool(
        &self,
        caller: &McpCaller,
        call: ModelToolCall,
    ) -> Result<InvokeOutcome, SourceError>;
}

#[cfg(test)]
#[path = "source_tests.rs"]
mod tests;
