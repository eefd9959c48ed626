//! Talon's local sandbox backend (`backend: "local"`): no daemon, no
//! image. Each command runs in fresh [bubblewrap] namespaces, started in a
//! few milliseconds.
//!
//! - [`LocalBackend`] (id `local`) is `sandbox-core`'s
//!   [`SandboxBackend`](talon_sandbox_core::SandboxBackend): `ensure`
//!   refuses the `docker.*` settings it cannot enforce
//!   ([`unsupported_settings`], each naming its key), runs the same
//!   security validation as Docker (binds and managed workspaces), pins
//!   every mount source to its canonical path, device and inode, checks
//!   user namespaces, and runs `true` once in the exact layout, so a broken
//!   host fails there with bubblewrap's words. Nothing ever runs on the
//!   host instead. Each launch opens the pinned sources again without
//!   following symlinks and hands them to bubblewrap as `--bind-fd` /
//!   `--ro-bind-fd` (read-only for every submount too), and each command
//!   first checks inside that every mount target is its pinned file,
//!   exiting [`MOUNT_CHECK_EXIT`] otherwise.
//! - [`LocalSandbox`] is the [`SandboxHandle`](talon_sandbox_core::SandboxHandle):
//!   its [`LocalLauncher`] runs each command as one `bwrap` run; its file
//!   bridge is the host-side [`MountBridge`](talon_fs_bridge::MountBridge)
//!   over the run's mount plan, exactly as with Docker.
//! - [`Protections`] says what a sandbox gets on this host and what the
//!   host lacks (`talon sandbox explain`).
//!
//! What every command gets:
//!
//! - a mount namespace holding only the host's [`SYSTEM_DIRS`] read-only
//!   (secrets under `/etc` masked, [`ETC_MASKED`]), a fresh `/dev` and
//!   `/proc`, tmpfs at `docker.tmpfs` (`/tmp`, `/var/tmp`, `/run`), and the
//!   mount plan at the same container paths as Docker (`/workspace` per
//!   `workspaceAccess`, `/agent`, skills read-only, custom binds), then
//!   the root remounted read-only: no home directory, no state dir;
//! - new PID, IPC, UTS, network (loopback only; see Network below) and
//!   cgroup namespaces,
//!   `--new-session`, `--die-with-parent`, every capability dropped;
//! - the seccomp filters of [`DENIED_SYSCALLS`] (and `clone3` → `ENOSYS`);
//! - exactly the environment `PATH`, `HOME=/tmp`, `docker.env` and the
//!   call's variables;
//! - `docker.memory` / `pidsLimit` / `cpus` as cgroup limits of the
//!   command's tree (a cgroup of its own, from `talon-proc-tree`).
//!
//! - Landlock file rules (defence in depth under the mount namespace),
//!   applied inside the sandbox by the `talon-sandbox-exec` helper this
//!   crate builds ([`FileRules`]): bound read-only at
//!   [`SANDBOX_EXEC_PATH`], it restricts itself after bubblewrap's mounts
//!   and then `exec`s the command. Read and execute beneath the system
//!   dirs, `/proc`, `/dev` and the read-only mounts; everything beneath the
//!   writable mounts, the tmpfs dirs and [`DEVICES_RW`]; only listing at
//!   `/`; nothing else (so `/dev/shm`, or a root left writable, cannot be
//!   written). The helper is found by [`LocalBackend::with_sandbox_exec`],
//!   else `$TALON_SANDBOX_EXEC`, else next to the running executable
//!   ([`find_sandbox_exec`]); without it, or on a kernel without Landlock,
//!   commands still run, and `explain` and a one-time warning say why
//!   ([`LandlockSetup`]). An older kernel gets what its Landlock ABI
//!   knows (best effort).
//!
//! The sandbox runs as the user Talon runs as (as Docker runs as the
//! workspace owner), so the mount namespace and Landlock, not file
//! permissions, keep it away from the host's files.
//!
//! ```no_run
//! use std::time::Duration;
//! use talon_sandbox_core::SandboxHandle;
//! use talon_sandbox_local::LocalBackend;
//!
//! # async fn demo(request: talon_sandbox_core::SandboxRequest) -> Result<(), talon_sandbox_core::SandboxError> {
//! let backend = LocalBackend::new()?;
//! let sandbox = backend.ensure_local(&request).await?;
//! let out = sandbox.run_script("echo hi", &[], None, Duration::from_secs(5)).await?;
//! assert_eq!(out.stdout, b"hi\n");
//! # Ok(()) }
//! ```
//!
//! Network: `none` (the default) is loopback only. `bridge` adds one way
//! out: the host runs a `talon_egress::EgressProxy` for the sandbox (the
//! SSRF rules of `web_fetch`, set with [`LocalBackend::with_egress_policy`]),
//! its socket bound at [`EGRESS_SOCKET_PATH`]; the helper starts a
//! forwarder on [`EGRESS_LISTEN`] inside the sandbox's network namespace
//! ([`start_forwarder`]) and every command gets [`PROXY_VARS`]. A program
//! that ignores them reaches nothing. Any other network is refused.
//!
//! What it does NOT do: container networks, images, keeping
//! processes between commands (a command's background children end with
//! it), or running anything when bubblewrap or the kernel cannot build the
//! sandbox.
//!
//! [bubblewrap]: https://github.com/containers/bubblewrap
#![deny(missing_docs)]

pub use crate::backend::{DEFAULT_BWRAP, LocalBackend, find_bwrap, nothing_to_remove};
pub use crate::egress::{
    EGRESS_LISTEN, EGRESS_PROXY_URL, EGRESS_SOCKET_PATH, NO_PROXY, PROXY_VARS, forward,
    start_forwarder,
};
pub use crate::file_rules::{
    DEVICES_RW, Enforcement, FileRules, FileRulesError, LandlockReport, SANDBOX_EXEC_ENV,
    SANDBOX_EXEC_NAME, SANDBOX_EXEC_PATH,
};
pub use crate::handle::LocalSandbox;
pub use crate::helper::{MULTICALL_ARG, dispatch_multicall, helper_main};
pub use crate::launcher::{DEFAULT_PATH, LocalLauncher, SANDBOX_HOME};
pub use crate::layout::{ISOLATION_FLAGS, MOUNT_CHECK_EXIT};
pub use crate::limits::{RequestedLimits, requested as requested_limits};
pub use crate::protections::{Protection, Protections};
pub use crate::rootfs::{ETC_MASKED, HostRoot, RootEntry, SYSTEM_DIRS};
pub use crate::sandbox_exec::{LandlockSetup, find_sandbox_exec};
pub use crate::seccomp::DENIED_SYSCALLS;
pub use crate::settings::{EGRESS_NETWORK, SettingProblem, unsupported_settings, wants_egress};

mod backend;
mod egress;
mod file_rules;
mod handle;
mod helper;
mod launcher;
mod layout;
mod limits;
mod protections;
mod rootfs;
mod sandbox_exec;
mod seccomp;
mod settings;
