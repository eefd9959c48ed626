//! Talon's built-in tools.
//!
//! This version ships one: [`SessionStatusTool`] (`session_status`), which
//! reports the run it belongs to (agent, session, provider, model, trigger,
//! sandboxing and the tools the run has). The file, shell, process and web
//! tools are specified by their own issue and are not in this build; the
//! runtime says so when a model calls one.
//!
//! ```
//! use talon_tool_catalog::{AbortSignal, Tool, ToolCall, ToolContext};
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
//!     .block_on(tool.execute(&call, &ToolContext::new("main", "agent:main:main"), &AbortSignal::new()))
//!     .unwrap();
//! assert_eq!(result.details["sessionKey"], "agent:main:main");
//! ```
//!
//! Every tool here implements [`talon_tool_catalog::Tool`]; none decides
//! whether it may run (that is the runtime's gate).
#![deny(missing_docs)]

pub use crate::cron_tool::{
    CONTEXT_MARKER, ChatHistory, CronTool, CronToolScope, HistoryMessage, MAX_CONTEXT_LINE_CHARS,
    MAX_CONTEXT_MESSAGES, MAX_CONTEXT_TOTAL_CHARS, build_reminder_context,
};
pub use crate::fs_config::FsToolsConfig;
pub use crate::session_status::{SessionSnapshot, SessionStatusTool};

mod cron_tool;
mod fs_config;
mod session_status;
