//! Per-agent MCP servers, materialised into each run's tool table.
//!
//! - [`McpConfig`]: the `mcp.servers.<name>` section (and the same under
//!   `agents.list[].mcp`): stdio servers (`command`, `args`, `env`, `cwd`)
//!   and streamable-HTTP servers (`url`, `headers`), with `enabled`,
//!   `timeoutMs`, `supportsParallelToolCalls` and `maxOutputBytes`;
//!   `${VAR}` references in `env` and `headers` resolve at start.
//! - [`McpManager`]: starts an agent's servers on first use (rmcp client:
//!   handshake, paginated `tools/list`), re-lists once per burst of
//!   `tools/list_changed`, calls with a per-call timeout and an output cap,
//!   restarts a dead server with backoff, and kills each stdio server's
//!   whole process tree (a `talon-proc-tree` leaf) on shutdown or drop.
//! - Bounds before memory: a stdio server's stdout passes a frame guard
//!   that cuts every JSON string longer than `maxOutputBytes` + 1 while it
//!   is read (with a marker; the output cap then reports the result as
//!   truncated, and a cut image is omitted) and closes a session whose
//!   message structure alone is too large, failing the call in flight with
//!   `mcp.call_failed`; HTTP bodies and SSE events are held to the same
//!   budget by rmcp. Listed tools keep at most
//!   [`MAX_TOOL_DESCRIPTION_BYTES`] of description, [`MAX_TOOL_TITLE_BYTES`]
//!   of title and [`MAX_TOOL_SCHEMA_BYTES`] of input schema, with a
//!   `[talon: …]` note in the description saying what was cut.
//! - [`McpManager::materialize`]: the agent's tools as [`ToolSpec`]s named
//!   `server__tool` by the [`names`] algorithm, sorted, with plugin id
//!   `bundle-mcp` and `executionMode` parallel only for servers that set
//!   `supportsParallelToolCalls`.
//!
//! ```no_run
//! use talon_mcp::{McpConfig, McpManager};
//!
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! let config = talon_mcp::parse_config(
//!     &serde_json::json!({"servers": {"time": {"command": "python3", "args": ["-m", "mcp_server_time"]}}}),
//!     "mcp",
//! )?;
//! let manager = McpManager::new(config, Vec::new());
//! manager.ensure_agent("main").await;
//! for tool in &manager.materialize("main").tools {
//!     println!("{} ({} on {})", tool.name, tool.original_name, tool.server);
//! }
//! manager.shutdown().await;
//! # Ok(()) }
//! ```
//!
//! This crate does not decide policy (MCP tools go through
//! `talon-tool-policy` like any tool, as the `bundle-mcp` plugin group),
//! does not shape schemas for providers (the runtime runs them through
//! `talon-schema-dialects`) and does not run the hook gate (the runtime
//! does). It speaks MCP only through `rmcp`. Resources, prompts, sampling
//! and OAuth are not supported.
#![deny(missing_docs)]

pub use crate::config::{
    DEFAULT_MAX_OUTPUT_BYTES, DEFAULT_TIMEOUT_MS, EnvRefError, MAX_MAX_OUTPUT_BYTES,
    MAX_TIMEOUT_MS, MIN_MAX_OUTPUT_BYTES, McpConfig, McpServerConfig, McpServers, Transport,
    parse_config,
};
pub use crate::error::{McpError, StartError, StartErrorKind};
pub use crate::manager::{McpManager, StartReport};
pub use crate::materialize::{Materialized, MaterializedTool};
pub use crate::status::{McpStatus, ServerState, ServerStatus};
pub use talon_tool_catalog::ToolSpec;

mod config;
mod convert;
mod error;
mod frame;
mod handler;
mod launch;
mod manager;
mod materialize;
pub mod names;
mod server;
mod status;
mod tool;
mod tool_caps;
pub mod wire;
pub use crate::tool_caps::{
    MAX_TOOL_DESCRIPTION_BYTES, MAX_TOOL_SCHEMA_BYTES, MAX_TOOL_TITLE_BYTES,
};
