//! The `exec` tool, its configuration and the host launcher.
//!
//! - [`ExecTool`] / [`exec_spec`]: the tool and its spec (the spec is
//!   available without constructing the tool, for lazy tool tables).
//! - [`ExecConfig`]: the `tools.exec` keys Talon honours ([`AgentExecConfig`]:
//!   an agent's `tools.exec`, the exec policy keys only).
//! - [`HostLauncher`]: runs commands on the gateway host, one process group
//!   per command, confined to a workspace directory.

pub(crate) mod config;
mod host_launcher;
pub(crate) mod output;
mod params;
pub(crate) mod tool;

pub use config::{
    AgentExecConfig, DEFAULT_BACKGROUND_MS, DEFAULT_CLEANUP_MS, DEFAULT_MAX_OUTPUT_BYTES,
    DEFAULT_MAX_TIMEOUT_SEC, DEFAULT_TIMEOUT_SEC, ExecConfig, ExecConfigError,
};
pub use host_launcher::HostLauncher;
pub use tool::{ExecTool, exec_spec};
