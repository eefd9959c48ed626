//! Talon's built-in tools.
//!
//! - Files: [`ReadTool`], [`WriteTool`], [`EditTool`], [`ApplyPatchTool`],
//!   each over an `Arc<dyn FsBridge>` (`talon-fs-bridge`), so the same tool
//!   runs on the host (a bridge over the workspace; `tools.fs`) and in a
//!   sandbox (a bridge over the container's mount table).
//! - Shell: [`ExecTool`] and [`ProcessTool`] over a
//!   `ProcessLauncher` (`talon-sandbox-core`): [`HostLauncher`] on the host,
//!   a backend's launcher in a sandbox; background sessions live in a
//!   shared [`ProcessRegistry`] (`tools.exec`, [`ExecConfig`]).
//! - Web (cargo feature `web`, on by default; it brings the HTTP client):
//!   `WebFetchTool` behind the SSRF guard ([`SsrfPolicy`]: every resolved
//!   address vetted, connections pinned to it, each redirect hop
//!   re-checked) and `WebSearchTool` over five providers (`tools.web`,
//!   [`WebToolsConfig`]). The SSRF policy and the config types are there
//!   without the feature.
//! - [`GatewayTool`]: the running config (secrets redacted) and its schema,
//!   read-only.
//! - [`SessionStatusTool`]: the run it belongs to.
//!
//! The `cron` tool is `talon_cron::CronTool`, next to the job store it
//! drives, so this crate does not depend on `talon-cron`.
//!
//! The runtime (`talon-runtime`) builds them per run from the config and
//! decides where they act; embedders can also construct them directly.
//!
//! ```
//! use talon_tool_catalog::{CancellationToken, Tool, ToolCall, ToolContext};
//! use talon_tools::{SessionSnapshot, SessionStatusTool};
//!
//! let snapshot = SessionSnapshot {
//!     agent_id: "main".into(),
//!     session_key: "agent:main:main".into(),
//!     tools: vec!["session_status".into()],
//!     ..SessionSnapshot::default()
//! };
//! let tool = SessionStatusTool::new(snapshot);
//! let call = ToolCall { id: "c1".into(), name: "session_status".into(), params: Default::default() };
//! let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
//! let result = rt
//!     .block_on(tool.execute(&call, &ToolContext::new("main", "agent:main:main"), &CancellationToken::new()))
//!     .unwrap();
//! assert_eq!(result.details["sessionKey"], "agent:main:main");
//! ```
//!
//! Every tool here implements [`talon_tool_catalog::Tool`]; none decides
//! whether it may run (that is the runtime's gate).
#![deny(missing_docs)]

pub use crate::errors::{fs_code, fs_error, sandbox_code, sandbox_error};
pub use crate::exec::{
    AgentExecConfig, DEFAULT_BACKGROUND_MS, DEFAULT_CLEANUP_MS, DEFAULT_MAX_OUTPUT_BYTES,
    DEFAULT_MAX_TIMEOUT_SEC, DEFAULT_TIMEOUT_SEC, ExecConfig, ExecConfigError, ExecTool,
    HostLauncher, exec_spec,
};
pub use crate::files::{
    ApplyPatchTool, EditTool, ReadLimits, ReadTool, WriteTool, apply_patch_spec, edit_spec,
    read_spec, write_spec,
};
pub use crate::fs_config::FsToolsConfig;
pub use crate::gateway_tool::{
    ConfigSnapshotFn, GatewayTool, REDACTED, is_secret_key, redact_secrets,
};
pub use crate::process::{
    DEFAULT_MAX_RUNNING_PER_KEY, ProcessRegistry, ProcessTool, RegistryOptions, process_spec,
};
pub use crate::session_status::{SessionSnapshot, SessionStatusTool, StatusSource};
pub use crate::web::{
    BlockKind, Freshness, HostLiteral, HostResolver, IpBlock, METADATA_BLOCKED_CODE,
    SSRF_BLOCKED_CODE, SearchProviderConfig, SsrfAllowlistConfig, SsrfBlocked, SsrfPolicy,
    StaticResolver, SystemResolver, WebError, WebFetchConfig, WebSearchConfig, WebToolsConfig,
    classify_ip, is_blocked_hostname, normalize_hostname, parse_host_literal,
};
#[cfg(feature = "web")]
pub use crate::web::{
    BraveProvider, ChatSearchProvider, EnvLookup, GeminiProvider, GrokProvider, SEARCH_PROVIDERS,
    SearchProvider, SearchRequest, WebFetchTool, WebSearchTool, normalize_cache_key,
};

mod errors;
mod exec;
mod files;
mod fs_config;
mod gateway_tool;
mod process;
mod session_status;
pub mod web;
