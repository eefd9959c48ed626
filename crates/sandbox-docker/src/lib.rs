//! Talon's Docker sandbox backend, over [`bollard`].
//!
//! - [`DockerBackend`] connects to the engine ([`DockerBackend::connect`]:
//!   `DOCKER_HOST` or `/var/run/docker.sock`, version negotiation, ping) and
//!   [`ensure_container`](DockerBackend::ensure_container)s one container per sandbox scope from
//!   a [`ContainerSpec`]: named, labelled, reused while its config hash
//!   matches, recreated when it does not, except that a running container
//!   used within [`HOT_WINDOW`] is kept with a warning that tells the
//!   operator how to recreate it ([`recreate_hint`]).
//! - [`DockerSandbox`] is the [`SandboxHandle`](talon_sandbox_core::SandboxHandle)
//!   it returns: its [`DockerLauncher`] runs the `exec` / `process` tools'
//!   commands in the container (`/bin/sh -lc`), with stdin, stdout,
//!   stderr, PTY, exit codes, and a kill that stops the command's whole
//!   process group inside the container.
//! - It is also `sandbox-core`'s [`SandboxBackend`](talon_sandbox_core::SandboxBackend)
//!   (id `docker`): `ensure(&SandboxRequest)` validates it, prepares the
//!   scope's workspace with
//!   [`prepare_sandbox_workspace`](talon_sandbox_core::prepare_sandbox_workspace)
//!   (for `none` / `ro`: the writable scratch `/workspace`, seeded once
//!   from the agent's bootstrap files) and builds the spec with
//!   [`ContainerSpec::from_request`]. Its mounts are the request's
//!   [`MountPlan`](talon_sandbox_core::MountPlan): `/agent` read-only for
//!   `ro`, the materialised skills read-only in every mode. Every source is
//!   validated (binds and the managed workspaces alike), then pinned to its
//!   canonical path ([`pin_mount_sources`](talon_sandbox_core::pin_mount_sources))
//!   and handed to the engine as an Engine API `Mount`: read-only binds
//!   recursively read-only (`ReadOnlyForceRecursive` from API 1.44,
//!   `NonRecursive` before, refused below 1.40), propagation private. The
//!   sources are re-checked right before create, and the created
//!   container's mounts are inspected and, after start, identified from
//!   inside (device and inode); a mismatch removes it.
//! - A container whose command is OOM-killed, or killed by something
//!   other than Talon three times in a row, is removed at once (its
//!   handle then answers `Gone`) and reported as a
//!   [`SandboxRecycled`](talon_sandbox_core::SandboxRecycled) event to the
//!   sink given to [`DockerBackend::with_event_sink`]; the next `ensure`
//!   creates a fresh one.
//! - [`list_containers`](DockerBackend::list_containers),
//!   [`remove_owned`](DockerBackend::remove_owned),
//!   [`recreate_container`](DockerBackend::recreate_container),
//!   [`remove_scope`](DockerBackend::remove_scope) and
//!   [`remove_all`](DockerBackend::remove_all) back `talon sandbox
//!   list|remove|recreate`; they only ever touch containers labelled
//!   `talon.sandbox=1`.
//!
//! Containers get OpenClaw's defaults: read-only root, tmpfs `/tmp`
//! `/var/tmp` `/run` (each size-limited: `tmpfsSize`, 64 MiB by default,
//! so a full `/tmp` is `ENOSPC`, not memory), network `none`, all capabilities dropped,
//! `no-new-privileges`, `--init`, `sleep infinity`, and the workspace
//! owner's `uid:gid` when no user is configured. Labels are OpenClaw's set
//! under `talon.*` names ([`labels`]): `talon.sandbox=1`,
//! `talon.sessionKey`, `talon.createdAtMs`, `talon.mountFormatVersion`,
//! `talon.createArgsEpoch`, `talon.configHash`.
//!
//! ```no_run
//! use std::time::Duration;
//! use talon_sandbox_core::SandboxHandle;
//! use talon_sandbox_docker::{ContainerSpec, DockerBackend};
//!
//! # async fn demo() -> Result<(), talon_sandbox_core::SandboxError> {
//! let backend = DockerBackend::connect().await?;
//! let spec = ContainerSpec::new("talon-sbx-main-1a2b3c4d", "main", "/srv/ws", "hash-of-config");
//! let sandbox = backend.ensure_container(&spec).await?;
//! let out = sandbox.run_script("echo hi", &[], None, Duration::from_secs(5)).await?;
//! assert_eq!(out.stdout, b"hi\n");
//! # Ok(()) }
//! ```
//!
//! What it does NOT do: resolve configuration, compute the config hash,
//! plan mounts or validate bind sources and network modes (`sandbox-core`
//! does, before a [`ContainerSpec`] reaches this crate); pull or build
//! images (a missing image is a clear [`SandboxError`] of kind [`ImageMissing`]
//! error); decide which containers to prune (`sandbox-core`'s
//! `prune_sandboxes` does, listing and removing them through this
//! backend's `list_owned` / `remove`); browser containers.
//!
//! [`SandboxError`]: talon_sandbox_core::SandboxError
//! [`ImageMissing`]: talon_sandbox_core::SandboxErrorKind::ImageMissing
#![deny(missing_docs)]

pub use crate::backend::{DockerBackend, HOT_WINDOW, recreate_hint};
pub use crate::exec::{DockerLauncher, PREPEND_PATH_VAR, SCRIPT_MAX_OUTPUT_BYTES};
pub use crate::handle::DockerSandbox;
pub use crate::manage::SandboxContainer;
pub use crate::request::check_settings;
pub use crate::spec::{
    BindMount, CREATE_ARGS_EPOCH, ContainerSpec, DEFAULT_IMAGE, DEFAULT_WORKDIR, Limits,
    MOUNT_FORMAT_VERSION, Ulimit,
};

pub mod labels;

mod backend;
mod create;
mod engine_error;
mod exec;
mod handle;
mod manage;
mod recycle;
mod request;
mod spec;
mod usage;
