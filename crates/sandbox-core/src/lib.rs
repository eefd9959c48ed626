//! Talon's sandbox core: when a session runs in a sandbox, what that sandbox
//! looks like, and the contract every backend (Docker, SSH, plugins)
//! implements.
//!
//! - [`ProcessLauncher`] / [`LaunchedProcess`] / [`ProcessControl`]: how the
//!   `exec` and `process` tools start and kill commands, on the host or in a
//!   sandbox, through one interface.
//! - [`SandboxHandle`]: one ready sandbox: its launcher, its file bridge,
//!   its script runner and capabilities.
//!
//! What it does NOT do: talk to Docker or SSH (the `sandbox-docker` and
//! `sandbox-ssh` crates do), or decide tool policy beyond the sandbox layer.
#![deny(missing_docs)]

pub use crate::backend::{SandboxHandle, ScriptOutput};
pub use crate::error::SandboxError;
pub use crate::process::{
    ExitStatus, LaunchRequest, LaunchedProcess, ProcessControl, ProcessInput, ProcessLauncher,
    ProcessOutput,
};

mod backend;
mod error;
mod process;
