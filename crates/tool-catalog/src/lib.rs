//! The vocabulary every other Talon crate speaks.
//!
//! - [`ToolSpec`]: a tool's name, label, description, JSON-Schema
//!   parameters, owner-only flag, execution mode and [`ToolFamily`].
//! - [`Tool`]: the async trait a tool implements; it receives a
//!   [`ToolCall`], a [`ToolContext`] and a [`CancellationToken`] (re-exported
//!   from `tokio-util`, so embedders need no extra dependency), and returns a
//!   [`ToolResult`] (content for the model, `details` for the host) or a
//!   [`ToolError`] (an input error naming the parameter, or a failure).
//! - Cancellation ([`CancelExt`] for `abort.check()?` in tools,
//!   [`Canceller`] for the side that cancels a run and records why).
//! - Lenient parameter readers in [`params`], and result builders
//!   [`json_result`], [`text_result`], [`image_result`].
//! - The core catalog ([`CORE_TOOLS`]): every core tool id with its
//!   [`Section`] and the [`Profile`]s it belongs to. Profile allow lists and
//!   `group:*` members are derived from that one table.
//!
//! ```
//! use talon_tool_catalog::{Profile, core_group_members, normalize_tool_name};
//!
//! assert_eq!(normalize_tool_name(" BASH "), "exec");
//! assert_eq!(Profile::Minimal.allow_list(), vec!["session_status"]);
//! assert_eq!(
//!     core_group_members("group:fs").unwrap(),
//!     vec!["read", "write", "edit", "apply_patch"],
//! );
//! ```
//!
//! This crate does not decide which tools a run gets (that is
//! `talon-tool-policy`), does not rewrite schemas for providers
//! (`talon-schema-dialects`) and implements no tool (`talon-tools`).
#![deny(missing_docs)]

pub use crate::cancel::{ABORTED_REASON, CancelExt, Canceller};
pub use crate::catalog::{
    BUNDLE_MCP_PLUGIN_ID, CORE_TOOLS, CoreTool, OPENCLAW_GROUP_ID, PLUGINS_GROUP_ID, Profile,
    Section, UnknownProfile, core_group_ids, core_group_members, core_tool, is_core_tool,
    is_read_only, normalize_tool_name, runs_commands,
};
pub use crate::error::{ToolError, ToolErrorCode, ToolErrorKind};
pub use crate::result::{
    ContentBlock, ResultStatus, ToolResult, image_result, json_result, text_result,
};
pub use crate::spec::{ExecutionMode, ToolFamily, ToolSpec, core_tool_specs};
pub use crate::tool::{ApprovalPin, RunBinding, Tool, ToolCall, ToolContext};
pub use tokio_util::sync::CancellationToken;

mod cancel;
mod catalog;
mod core_schemas;
mod error;
pub mod params;
mod result;
mod spec;
mod tool;
