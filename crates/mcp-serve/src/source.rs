//! The contract between the MCP server face and whoever owns the sessions
//! (the gateway): [`ToolSource`].

use std::any::Any;
use std::sync::Arc;

use async_trait::async_trait;
use talon_runtime::{InvokeOutcome, ModelToolCall, ToolDefinition};

/// What a source's [`ToolSource::authorize`] learnt about a request (its
/// scope, its session), handed back to the source in the [`McpCaller`] of
/// every MCP request the same HTTP request carries — so a source
/// authenticates once per HTTP request instead of once per method.
#[derive(Clone)]
pub struct Grant(Arc<dyn Any + Send + Sync>);

impl Grant {
    /// A grant holding `value`.
    pub fn new<T: Any + Send + Sync>(value: T) -> Self {
        Grant(Arc::new(value))
    }

    /// The value, if it is a `T`.
    pub fn get<T: Any>(&self) -> Option<&T> {
        self.0.downcast_ref()
    }
}

impl std::fmt::Debug for Grant {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Grant").finish_non_exhaustive()
    }
}

/// Who is calling: the HTTP request's headers and query string, for the
/// source to authenticate and to pick the session.
#[derive(Debug, Clone, Default)]
pub struct McpCaller {
    /// The request headers (`Authorization`, `X-Talon-Session`, …).
    pub headers: axum::http::HeaderMap,
    /// The raw query string (`session=…`), if any.
    pub query: Option<String>,
    /// What the source's `authorize` returned for this HTTP request.
    pub grant: Option<Grant>,
    /// The peer address, when the server was started with connect info
    /// (`into_make_service_with_connect_info::<SocketAddr>`): what the
    /// source rate-limits failed authentication by.
    pub peer: Option<std::net::IpAddr>,
}

impl McpCaller {
    /// The caller of one HTTP request.
    pub fn from_parts(parts: &axum::http::request::Parts) -> Self {
        McpCaller {
            headers: parts.headers.clone(),
            query: parts.uri.query().map(str::to_owned),
            grant: parts.extensions.get::<Grant>().cloned(),
            peer: parts
                .extensions
                .get::<axum::extract::ConnectInfo<std::net::SocketAddr>>()
                .map(|c| c.0.ip()),
        }
    }

    /// The bearer token of the `Authorization` header, if it carries one
    /// (`talon_gateway_protocol::bearer_token`, the one parser).
    pub fn bearer_token(&self) -> Option<&str> {
        talon_gateway_protocol::bearer_token(
            self.headers
                .get(axum::http::header::AUTHORIZATION)
                .and_then(|v| v.to_str().ok()),
        )
    }

    /// The session the caller names: header `X-Talon-Session`, else query
    /// parameter `session=` (`talon_gateway_protocol::session_key`, the
    /// one parser).
    pub fn session_hint(&self) -> Option<String> {
        talon_gateway_protocol::session_key(
            self.headers
                .get(talon_gateway_protocol::SESSION_HEADER)
                .and_then(|v| v.to_str().ok()),
            self.query.as_deref(),
        )
    }
}

/// Why a source refused a request.
#[derive(Debug, thiserror::Error)]
pub enum SourceError {
    /// No or bad credentials (HTTP 401).
    #[error("unauthorized: {0}")]
    Unauthorized(String),
    /// Too many failed attempts from this address (HTTP 429 with
    /// `Retry-After`).
    #[error("rate limited: {message}")]
    RateLimited {
        /// What happened and when to retry.
        message: String,
        /// Seconds until the caller may retry.
        retry_after_secs: u64,
    },
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
    /// What it returns (a [`Grant`]) is in the caller of every method the
    /// request then reaches, so the source need not authenticate again.
    /// The default lists the caller's tools and discards them; a source
    /// with a cheaper check should override it.
    async fn authorize(&self, caller: &McpCaller) -> Result<Option<Grant>, SourceError> {
        self.list_tools(caller).await.map(|_| None)
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
