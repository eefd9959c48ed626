//! Talon's SSH sandbox backend: sandboxes on another machine, over the
//! system OpenSSH client (the [`openssh`] crate drives a ControlMaster
//! through its mux socket; [`openssh_sftp_client`] moves files). No SSH
//! protocol is implemented here.
//!
//! - [`SshBackend`] (id `ssh`, `sandbox-core`'s
//!   [`SandboxBackend`](talon_sandbox_core::SandboxBackend)) gives each
//!   sandbox scope a remote directory `<ssh.workspaceRoot>/<name>` marked
//!   as Talon's by a `.talon-sandbox.json` [`marker`], and one
//!   multiplexed [`SshConnection`], checked before each use and
//!   re-established after it dropped (commands left running on the dead
//!   connection are killed on reconnect).
//! - [`WorkspaceSync`] uploads the workspace before first use and keeps it
//!   in sync by size + mtime, honouring `workspaceAccess`: with `rw` the
//!   workspace is the agent's and what the sandbox changed is synced back
//!   (a host file changed meanwhile is kept, with the remote version saved
//!   beside it as `<file>.talon-remote`, see [`sync`]); with `none` / `ro`
//!   it is the scope's scratch copy (prepared and seeded by
//!   [`prepare_sandbox_workspace`](talon_sandbox_core::prepare_sandbox_workspace)
//!   before anything remote happens), writable, and synced back only into
//!   that copy, never into the agent workspace. `ro`'s agent copy and the
//!   skills are read-only: never synced back, the host version put back.
//! - [`SshLauncher`] runs the `exec` / `process` tools' commands with
//!   stdin/stdout/stderr and exit codes; a kill (timeout, abort) kills the
//!   command's whole remote process group. Every argument and environment
//!   value is single-quoted ([`shell_quote`]).
//! - [`RemoteBridge`] is the [`FsBridge`](talon_fs_bridge::FsBridge) over
//!   SFTP with the local bridge's error codes: resolution beneath the
//!   remote roots (SFTP `realpath`, re-checked before each mutation),
//!   symlink escapes refused, read-only mounts refused, atomic writes.
//! - Host keys are checked strictly unless `strictHostKeyChecking:
//!   "accept-new"` is configured; turning checking off is not possible.
//!
//! ```no_run
//! use std::path::Path;
//! use talon_sandbox_core::{SandboxBackend, SandboxRequest, ResolvedSandboxConfig};
//! use talon_sandbox_ssh::SshBackend;
//!
//! # async fn demo(config: ResolvedSandboxConfig) -> Result<(), talon_sandbox_core::SandboxError> {
//! // config.backend == "ssh", config.ssh.host == Some("build.example")
//! let request = SandboxRequest::new(config, "agent:main:telegram:1", Path::new("/srv/ws"), None);
//! let sandbox = SshBackend::new(None).ensure(&request).await?;
//! let out = sandbox.run_script("uname -n", &[], None, std::time::Duration::from_secs(10)).await?;
//! assert!(out.status.success());
//! # Ok(()) }
//! ```
//!
//! What it does NOT do: password or keyboard-interactive authentication
//! (keys or an agent only), PTYs (a PTY request merges stderr into stdout
//! instead), Docker's isolation (the remote user's rights are the
//! sandbox's rights: use a dedicated, unprivileged account), custom
//! `docker.binds`, or an all-or-nothing sync (each file is replaced
//! atomically; a sync cut short leaves some files new and some old, and
//! the next sync completes it). The remote host needs a POSIX `/bin/sh`
//! as the login shell's `exec` target, GNU `find`, and an sftp subsystem.
#![deny(missing_docs)]

pub use crate::backend::SshBackend;
pub use crate::bridge::{RemoteBridge, RemoteMount};
pub use crate::connection::SshConnection;
pub use crate::exec::{ExecHooks, PREPEND_PATH_VAR, SCRIPT_MAX_OUTPUT_BYTES, SshLauncher};
pub use crate::handle::SshSandbox;
pub use crate::quote::shell_quote;
pub use crate::sync::{CONFLICT_SUFFIX, SyncConflict, SyncReport, SyncRoot, WorkspaceSync};
pub use crate::target::SshTarget;

pub mod marker;
mod master;
pub mod sync;

mod backend;
mod bridge;
mod connection;
mod exec;
mod handle;
mod quote;
mod target;
