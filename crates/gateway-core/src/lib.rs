//! The behaviour behind `talon-gateway`: one long-running, loopback-first
//! service that hosts Talon's tool runtime for agents in any language and
//! for any MCP client.
//!
//! - [`Gateway::open`] loads the configuration, opens the state (the
//!   generated token, the call journal with crash recovery, persisted
//!   approvals, cron and the task ledger) and compiles one *generation*
//!   (the runtime and the accepted tokens). [`Gateway::reload`] swaps in a
//!   new generation, or keeps the last good one and says why.
//! - [`serve`] serves [`router`]: `/ws` (JSON-RPC 2.0 over WebSocket,
//!   bearer-token auth on connect, each method's scope declared with it in
//!   `talon-gateway-protocol`), `GET /healthz`,
//!   `GET /metrics`, `POST /tools/invoke` (OpenClaw's request/response) and
//!   the MCP server at `/mcp`.
//! - A WebSocket request is decoded into the protocol's typed `Request`,
//!   its scope checked from the method's one declaration, and dispatched
//!   by one exhaustive `match` to the handler of its area (sessions,
//!   tools, approvals, cron, tasks, skills, sandbox, mcp, runner, config,
//!   gateway), each holding only its own state.
//! - Every tool call, whatever the surface, takes one path
//!   ([`Gateway::invoke`]): the session's cached tool table (rebuilt after
//!   a reload) → a durable `started` journal record for side-effecting
//!   tools → `ToolTable::invoke` (policy, hooks, approvals, sandbox) →
//!   output cap → exactly one terminal journal record → metrics.
//!
//! ```no_run
//! # async fn run() -> Result<(), talon_gateway_core::GatewayError> {
//! use talon_gateway_core::{Gateway, GatewayOptions};
//! let gw = Gateway::open(GatewayOptions {
//!     state_dir: "/tmp/talon-state".into(),
//!     ..GatewayOptions::default()
//! })?;
//! let listener = talon_gateway_core::bind(&gw).await?;
//! talon_gateway_core::serve(gw, listener, async { let _ = tokio::signal::ctrl_c().await; }).await?;
//! # Ok(()) }
//! ```
//!
//! This crate does not run agents or talk to model providers (a runner
//! client subscribes for the runs cron needs), does not parse command
//! lines or handle signals (the `talon-gateway` binary does), and does not
//! implement tools (the runtime's families do).
#![deny(missing_docs)]

pub use crate::auth::{
    Identity, TOKEN_FILE_NAME, TokenHash, TokenSet, bearer, default_token_id, load_or_create_token,
    token_hash,
};
pub use crate::error::GatewayError;
pub use crate::gateway::{Gateway, GatewayOptions, JOURNAL_FILE_NAME};
pub use crate::http::router;
pub use crate::invoke::{CallReport, cap_output, needs_write_ahead};
pub use crate::mcp_source::SESSION_HEADER;
pub use crate::metrics::{CallOutcomeKind, Metrics};
pub use crate::rpc::RpcError;
pub use crate::sandbox_events::SANDBOX_RECYCLE_TOOL;
pub use crate::sandbox_prune::{FIRST_PRUNE_AFTER, PRUNE_EVERY};
pub use crate::scope::{Scope, required_scope};
pub use crate::serve::{bind, serve};
pub use crate::settings::{
    BindParseError, DEFAULT_HTTP_TOOL_DENY, DEFAULT_PORT, GatewaySection, Limits, parse_bind,
};
pub use crate::subagents::SharedTurnRunner;
pub use talon_gateway_protocol::{ReloadReport, SessionInfo, SessionParams};

/// JSON-RPC 2.0 framing and error codes.
pub mod rpc;

mod auth;
mod clock;
mod dispatch;
mod error;
mod fleet;
mod gateway;
mod handlers;
mod http;
mod identity;
mod invoke;
mod mcp_source;
mod metrics;
mod outbound;
mod runner;
mod sandbox_events;
mod sandbox_prune;
mod scope;
mod serve;
mod sessions;
mod settings;
mod subagents;
#[cfg(test)]
mod test_harness;
mod tools_family;
mod ws;
