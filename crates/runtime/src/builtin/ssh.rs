//! The SSH backend: a runtime made from a config always knows `ssh`. It
//! dials nothing until a sandboxed run of an agent with `sandbox.backend:
//! "ssh"` first touches a file or runs a command; each sandbox scope then
//! gets its own multiplexed connection and remote workspace copy.

use std::path::PathBuf;
use std::sync::Arc;

use talon_sandbox_core::SandboxBackend;
use talon_sandbox_ssh::SshBackend;

/// `ssh`, with `~/` in key and known-hosts paths expanded against `home`.
pub(crate) fn backend(home: Option<PathBuf>) -> Arc<dyn SandboxBackend> {
    Arc::new(SshBackend::new(home))
}
