//! Serves one Talon session's tools to any MCP client over streamable HTTP.
//!
//! `talon-gateway` mounts this crate's [`router`] at `/mcp`. An MCP client
//! (Claude Desktop, the reference Python SDK, rmcp…) then sees exactly the
//! tool table of the Talon session it names, and every `tools/call` goes
//! through the same gate as every other surface — tool policy, hooks,
//! approvals, sandbox — because the gateway's [`ToolSource`] routes it
//! there. The MCP protocol itself (handshake, sessions, SSE framing,
//! protocol versions up to 2026-07-28) is rmcp's server side.
//!
//! What this crate adds on top of rmcp:
//!
//! - **Authorisation first.** Every HTTP request (POST, GET, DELETE) is put
//!   to [`ToolSource::authorize`] before any MCP processing: a refusal is
//!   HTTP 401 (with `WWW-Authenticate: Bearer`), 403 or 404 with a JSON
//!   body `{"error": {"code", "message"}}` — never a 500. Nothing is cached
//!   between requests.
//! - **Sessions bound to their caller.** An MCP session may only be used
//!   with the credentials and Talon session that opened it (else 403).
//! - **Mapping.** `tools/list` serves the table's definitions in order,
//!   paginated ([`ServeConfig::page_size`]); `tools/call` gets a fresh
//!   random call id, and its outcome becomes MCP content: the result's
//!   text and image blocks; or `isError: true` with the structured
//!   `blocked` JSON (layer, hook, config key), or with the error text.
//! - **Cancellation.** `notifications/cancelled`, closing the MCP session,
//!   or the client disconnecting drops the source's call future.
//! - **No browsers by default.** A request with an `Origin` header not in
//!   [`ServeConfig::allowed_origins`] is refused (403), and the `Host` must
//!   be one of [`ServeConfig::allowed_hosts`] (DNS rebinding).
//! - **Bounds.** Request body size, a cap on live MCP sessions (503 beyond
//!   it) with idle expiry, and a shutdown token ([`ServeConfig`]).
//!
//! ```no_run
//! use std::sync::Arc;
//! use talon_mcp_serve::{Grant, McpCaller, ServeConfig, SourceError, ToolSource};
//! use talon_runtime::{InvokeOutcome, ModelToolCall, ToolDefinition, ToolTable};
//!
//! /// A single table behind one token (the gateway resolves sessions).
//! struct OneTable { table: ToolTable, token: String }
//!
//! #[async_trait::async_trait]
//! impl ToolSource for OneTable {
//!     async fn authorize(&self, caller: &McpCaller) -> Result<Option<Grant>, SourceError> {
//!         // A real source compares in constant time.
//!         match caller.bearer_token() {
//!             Some(t) if t == self.token => Ok(None),
//!             _ => Err(SourceError::Unauthorized("bad or missing bearer token".into())),
//!         }
//!     }
//!     async fn list_tools(&self, caller: &McpCaller) -> Result<Vec<ToolDefinition>, SourceError> {
//!         self.authorize(caller).await?;
//!         Ok(self.table.definitions())
//!     }
//!     async fn call_tool(&self, caller: &McpCaller, call: ModelToolCall) -> Result<InvokeOutcome, SourceError> {
//!         self.authorize(caller).await?;
//!         Ok(self.table.invoke(call).await)
//!     }
//! }
//!
//! # async fn serve(source: OneTable) -> std::io::Result<()> {
//! let mcp = talon_mcp_serve::router_with(Arc::new(source), ServeConfig::default());
//! let app = axum::Router::new().nest_service("/mcp", mcp);
//! let listener = tokio::net::TcpListener::bind("127.0.0.1:18789").await?;
//! axum::serve(listener, app).await
//! # }
//! ```
//!
//! What it does **not** do: authenticate tokens, pick or create sessions,
//! apply policy, journal calls or rate-limit failed logins — all of that is
//! the [`ToolSource`]'s job (the gateway's). It offers tools only (no MCP
//! resources, prompts or sampling), and it does not push
//! `notifications/tools/list_changed`: clients see a changed table on
//! their next `tools/list`.
#![deny(missing_docs)]

mod config;
mod convert;
mod direct;
mod guard;
mod handler;
mod sessions;
mod source;

use std::sync::Arc;

use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};

pub use crate::config::ServeConfig;

/// The direct path's request checks, for the fuzz target (not a stable
/// API): what a POST body asks, and whether its headers let the guard
/// answer it without rmcp.
#[doc(hidden)]
pub mod fuzzing {
    pub use crate::direct::{
        Posted, accepts_json, classify, headers_fit, sends_json, transport_checks_pass,
    };
}
pub use crate::source::{Grant, McpCaller, SourceError, ToolSource};

use crate::guard::{GuardState, guard};
use crate::handler::TalonMcpServer;
use crate::sessions::CappedSessions;

/// The MCP endpoint as an axum router with [`ServeConfig::default`], to be
/// mounted by the gateway with
/// `Router::nest_service("/mcp", talon_mcp_serve::router(source))`.
pub fn router(source: Arc<dyn ToolSource>) -> axum::Router {
    router_with(source, ServeConfig::default())
}

/// The MCP endpoint as an axum router, with explicit limits.
pub fn router_with(source: Arc<dyn ToolSource>, config: ServeConfig) -> axum::Router {
    let sessions = Arc::new(CappedSessions::new(&config));
    let server = TalonMcpServer::new(Arc::clone(&source), Arc::clone(&sessions), &config);
    let mut http = StreamableHttpServerConfig::default()
        .with_sse_keep_alive(Some(config.sse_keep_alive))
        .with_sse_retry(None)
        .with_cancellation_token(config.shutdown.child_token())
        .with_max_request_body_bytes(config.max_body_bytes)
        .with_allowed_origins(config.allowed_origins.clone())
        .enforce_origin_validation();
    http = if config.allowed_hosts.is_empty() {
        http.disable_allowed_hosts()
    } else {
        http.with_allowed_hosts(config.allowed_hosts.clone())
    };
    let service =
        StreamableHttpService::new(move || Ok(server.clone()), Arc::clone(&sessions), http);
    let state = GuardState {
        source,
        sessions,
        max_body_bytes: config.max_body_bytes,
        inflight: Arc::default(),
        allowed_hosts: config.allowed_hosts.clone().into(),
        keep_alive: config.sse_keep_alive,
    };
    axum::Router::new()
        .fallback_service(service)
        .layer(axum::middleware::from_fn_with_state(state, guard))
}
