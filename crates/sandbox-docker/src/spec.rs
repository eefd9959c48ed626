//! `ContainerSpec`: everything the backend needs to create one scope's
//! container, already resolved (mount plan, env, user, limits) and already
//! validated by `sandbox-core`. OpenClaw's defaults are what
//! [`ContainerSpec::new`] fills in.

use std::collections::BTreeMap;
use std::path::PathBuf;

/// The image OpenClaw users build with `scripts/sandbox-setup.sh`; Talon
/// keeps the name so existing setups work unchanged.
pub const DEFAULT_IMAGE: &str = talon_sandbox_core::DEFAULT_SANDBOX_IMAGE;
/// Where the sandbox workspace is mounted and where commands start.
pub const DEFAULT_WORKDIR: &str = talon_sandbox_core::DEFAULT_WORKDIR;
/// Version of the mount layout (`/workspace`, `/agent`, skill overlays);
/// written as a label and part of the config hash.
pub const MOUNT_FORMAT_VERSION: u32 = talon_sandbox_core::MOUNT_FORMAT_VERSION;
/// Epoch of the create arguments; bumping it recreates every container.
pub const CREATE_ARGS_EPOCH: &str = talon_sandbox_core::SANDBOX_CREATE_ARGS_EPOCH;

/// One host directory mounted into the container.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BindMount {
    /// The host directory (absolute).
    pub host: PathBuf,
    /// Where it appears in the container (absolute).
    pub container: String,
    /// Mounted read-only (enforced by the kernel inside the container, and
    /// by the file bridge on the host side).
    pub read_only: bool,
    /// Bind options as configured (`ro`, `rw,rprivate`, ...) for custom
    /// binds; `None`: from [`read_only`](Self::read_only). Only
    /// [`talon_sandbox_core::ACCEPTED_BIND_OPTIONS`] are accepted at
    /// create.
    pub options: Option<String>,
    /// The source as security validation pinned it (canonical path and
    /// identity, [`talon_sandbox_core::pin_mount_sources`]); `None`: the
    /// backend pins [`host`](Self::host) itself at create, unjudged (a
    /// spec given to [`crate::DockerBackend::ensure_container`] directly
    /// is trusted).
    pub pinned: Option<talon_sandbox_core::PinnedSource>,
}

impl BindMount {
    /// A read-write mount.
    pub fn rw(host: impl Into<PathBuf>, container: impl Into<String>) -> Self {
        BindMount {
            host: host.into(),
            container: container.into(),
            read_only: false,
            options: None,
            pinned: None,
        }
    }

    /// A read-only mount.
    pub fn ro(host: impl Into<PathBuf>, container: impl Into<String>) -> Self {
        BindMount {
            host: host.into(),
            container: container.into(),
            read_only: true,
            options: None,
            pinned: None,
        }
    }
}

/// One `--ulimit name=soft:hard`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ulimit {
    /// Limit name (`nofile`, `nproc`, ...).
    pub name: String,
    /// Soft limit.
    pub soft: i64,
    /// Hard limit.
    pub hard: i64,
}

/// Resource limits (all optional, as in OpenClaw's docker settings).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Limits {
    /// `--pids-limit` (applied when > 0).
    pub pids_limit: Option<i64>,
    /// `--memory` in bytes.
    pub memory_bytes: Option<i64>,
    /// `--memory-swap` in bytes (-1: unlimited).
    pub memory_swap_bytes: Option<i64>,
    /// `--cpus` (applied when > 0).
    pub cpus: Option<f64>,
    /// `--ulimit` entries.
    pub ulimits: Vec<Ulimit>,
}

fn owned(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| (*s).to_owned()).collect()
}

/// The container of one sandbox scope, fully resolved.
#[derive(Debug, Clone, PartialEq)]
pub struct ContainerSpec {
    /// Container name (`talon-sbx-<slug>`, from `sandbox-core`'s scope rules).
    pub name: String,
    /// The scope key (`agent:<id>`, a session key, or `shared`), written to
    /// the `talon.sessionKey` label and used in operator hints.
    pub scope_key: String,
    /// The sandbox config hash (`talon.configHash` label); a container
    /// whose label differs is stale.
    pub config_hash: String,
    /// Image to create the container from.
    pub image: String,
    /// Working directory of the container and of every exec.
    pub workdir: String,
    /// Host directory mounted at the workdir; when [`user`](Self::user) is
    /// unset its owner's `uid:gid` becomes the container user, so files
    /// written inside are owned normally on the host.
    pub workspace_dir: PathBuf,
    /// The mount plan (workspace, agent workspace, skill overlays, custom
    /// binds), in order.
    pub binds: Vec<BindMount>,
    /// Environment set at create (never `PATH`).
    pub env: BTreeMap<String, String>,
    /// `--user`; `None`: the workspace owner's `uid:gid`.
    pub user: Option<String>,
    /// `--read-only` root filesystem.
    pub read_only_root: bool,
    /// `--tmpfs` entries (`/tmp` or `/tmp:size=64m`). The engine gives each
    /// tmpfs the owner and mode of the image's directory beneath it, so an
    /// image whose `/tmp` is not `1777` gives the mapped user no `/tmp`.
    pub tmpfs: Vec<String>,
    /// The size limit (bytes) given to each [`tmpfs`](Self::tmpfs) entry
    /// that names no `size=` of its own; `None`: no limit (not what
    /// [`ContainerSpec::new`] gives: a tmpfs without a limit can take half
    /// the host's RAM, charged to the container's memory).
    pub tmpfs_size_bytes: Option<i64>,
    /// `--network` (`none` by default).
    pub network: String,
    /// `--cap-drop` entries.
    pub cap_drop: Vec<String>,
    /// `--cap-add` entries (only what validation let through).
    pub cap_add: Vec<String>,
    /// `--privileged` (only when validation let it through).
    pub privileged: bool,
    /// Extra `--security-opt` entries (`seccomp=...`, `apparmor=...`);
    /// `no-new-privileges` is always set.
    pub security_opts: Vec<String>,
    /// `--dns` entries.
    pub dns: Vec<String>,
    /// `--add-host` entries (`host:ip`).
    pub extra_hosts: Vec<String>,
    /// Resource limits.
    pub limits: Limits,
    /// Script run once with `/bin/sh -lc` after the container is created
    /// and started.
    pub setup_command: Option<String>,
    /// Labels added after Talon's own.
    pub extra_labels: BTreeMap<String, String>,
    /// Refuse (instead of keeping with a warning) a running, recently used
    /// container whose config hash is stale (restricted runs).
    pub require_current_config: bool,
}

impl ContainerSpec {
    /// A spec with OpenClaw's defaults: image `openclaw-sandbox:bookworm-slim`,
    /// read-only root, tmpfs `/tmp` `/var/tmp` `/run` (64 MiB each), network `none`, all
    /// capabilities dropped, `LANG=C.UTF-8`, the workspace mounted read-write
    /// at `/workspace`.
    pub fn new(
        name: impl Into<String>,
        scope_key: impl Into<String>,
        workspace_dir: impl Into<PathBuf>,
        config_hash: impl Into<String>,
    ) -> Self {
        let workspace_dir = workspace_dir.into();
        ContainerSpec {
            name: name.into(),
            scope_key: scope_key.into(),
            config_hash: config_hash.into(),
            image: DEFAULT_IMAGE.to_owned(),
            workdir: DEFAULT_WORKDIR.to_owned(),
            binds: vec![BindMount::rw(workspace_dir.clone(), DEFAULT_WORKDIR)],
            workspace_dir,
            env: BTreeMap::from([("LANG".to_owned(), "C.UTF-8".to_owned())]),
            user: None,
            read_only_root: true,
            tmpfs: owned(talon_sandbox_core::DEFAULT_TMPFS),
            tmpfs_size_bytes: Some(talon_sandbox_core::DEFAULT_TMPFS_SIZE_BYTES),
            network: talon_sandbox_core::DEFAULT_NETWORK.to_owned(),
            cap_drop: owned(talon_sandbox_core::DEFAULT_CAP_DROP),
            cap_add: Vec::new(),
            privileged: false,
            security_opts: Vec::new(),
            dns: Vec::new(),
            extra_hosts: Vec::new(),
            limits: Limits::default(),
            setup_command: None,
            extra_labels: BTreeMap::new(),
            require_current_config: false,
        }
    }
}

/// Refuse a container name the engine would reject, or that would change
/// the meaning of an engine URL (`/`, `..`, `?`): Docker's rule,
/// `[a-zA-Z0-9][a-zA-Z0-9_.-]+`, at most 253 characters.
pub(crate) fn check_container_name(name: &str) -> Result<(), talon_sandbox_core::SandboxError> {
    let mut chars = name.chars();
    let ok = (2..=253).contains(&name.len())
        && chars.next().is_some_and(|c| c.is_ascii_alphanumeric())
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'));
    if ok {
        Ok(())
    } else {
        Err(talon_sandbox_core::SandboxError::config(format!(
            "sandbox container name {name:?} is invalid: use letters, digits, `_`, `.` and `-`, \
             starting with a letter or digit"
        )))
    }
}

/// Refuse an image reference that is empty or could change the meaning of
/// an engine URL (`..`, whitespace, `?`, `#`, `%`, control characters).
pub(crate) fn check_image_ref(image: &str) -> Result<(), talon_sandbox_core::SandboxError> {
    let ok = !image.is_empty()
        && image.len() <= 512
        && !image.starts_with(['/', '-', '.'])
        && !image.split('/').any(|part| part.is_empty() || part == "..")
        && image
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-' | '/' | ':' | '@'));
    if ok {
        Ok(())
    } else {
        Err(talon_sandbox_core::SandboxError::config(format!(
            "sandbox image {image:?} is not a valid image reference \
             (`name[:tag]`, `registry/name@sha256:...`); fix agents.defaults.sandbox.docker.image"
        )))
    }
}
