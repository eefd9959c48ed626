//! Talon's sandbox core: when a session runs in a sandbox, what that sandbox
//! looks like, and the contract every backend (Docker, SSH, plugins)
//! implements.
//!
//! - Configuration: [`SandboxConfig`] / [`DockerConfig`] are the file forms
//!   (`agents.defaults.sandbox`, `agents.list[].sandbox`);
//!   [`ResolvedSandboxConfig::resolve`] applies an agent's block over the
//!   defaults over OpenClaw's built-in defaults, with the resolved
//!   [`DockerSettings`], the resolved [`SshSettings`] and the sandbox
//!   tool policy.
//! - [`ResolvedSandboxConfig::should_sandbox`]: `off` / `non-main` / `all`
//!   against the agent's main session, which [`MainSession`] alone decides
//!   (`session.mainKey`, `session.scope`, the aliases of main). The
//!   runtime's `resolve_run_sandbox` is the one place a run's decision is
//!   taken; it asks this.
//! - Scopes: [`scope_key`], [`slugify_scope_key`], [`container_name`],
//!   [`scope_workspace_dir`].
//! - [`MountPlan`]: what is mounted where per `workspaceAccess`, as Docker
//!   binds or as file-bridge mounts.
//! - [`prepare_sandbox_workspace`]: what every backend calls before a
//!   sandbox is used: the `none` / `ro` scratch workspace, seeded once
//!   from the agent's bootstrap files ([`seed_sandbox_workspace`]);
//!   [`mirror_skills`] copies the agent's eligible skills into the
//!   [`materialized_skills_root`]. Both treat source and destination as
//!   hostile (regular files only, no symlink followed or written through,
//!   size caps, every skip reported).
//! - [`config_hash`]: the SHA-256 that decides when a sandbox is recreated.
//! - [`validate_sandbox_security`]: every create parameter that would break
//!   isolation, each with a stable code and the config key to change.
//! - [`SandboxBackend`] / [`SandboxBackendRegistry`]: backends by id;
//!   [`SandboxRequest`] is what a backend is asked to provide.
//! - [`SandboxHandle`], [`ProcessLauncher`]: a ready sandbox and how
//!   commands run in it. [`SandboxEvent`]s ([`SandboxRecycled`]: a
//!   sandbox a backend removed after an OOM kill or repeated engine kills)
//!   go to the [`SandboxEventSink`] an embedder installs. [`spawn_local`] is how a launcher on this machine
//!   (the host, the local bubblewrap sandbox) starts its command: pipes or
//!   a PTY, a reaper task, and the tree ended as [`LocalKill`] says.
//! - Pruning: [`PruneSettings`] (`prune.idleHours` / `prune.maxAgeDays`),
//!   the pure decision [`prune_candidates`], one pass over every backend
//!   [`prune_sandboxes`]; last use on disk ([`UsageStore`]) and calls in
//!   flight per sandbox ([`SandboxActivity`]), so a sandbox is never pruned
//!   under a running call.
//! - [`explain_runtime_status`], [`format_blocked_tool_message`]: why a
//!   session is (not) sandboxed and why a tool is blocked.
//!
//! ```
//! use std::path::Path;
//! use talon_sandbox_core::{ResolvedSandboxConfig, SandboxConfig, SandboxInputs, SandboxRequest};
//! use talon_tool_policy::{SandboxMode, config::ToolsConfig};
//!
//! let defaults = SandboxConfig { mode: Some(SandboxMode::NonMain), ..Default::default() };
//! let tools = ToolsConfig::default();
//! let resolved = ResolvedSandboxConfig::resolve(&SandboxInputs {
//!     agent_id: "main",
//!     defaults: Some(&defaults),
//!     agent: None,
//!     agent_key: None,
//!     state_dir: Path::new("/var/lib/talon"),
//!     home: None,
//!     tools: &tools,
//!     agent_tools: None,
//! });
//! assert!(!resolved.should_sandbox("main"));
//! assert!(resolved.should_sandbox("agent:main:telegram:group:42"));
//! let request = SandboxRequest::new(resolved, "agent:main:telegram:group:42", Path::new("/srv/ws"), None);
//! assert_eq!(request.scope_key, "agent:main");
//! assert!(request.sandbox_name.starts_with("talon-sbx-agent-main-"));
//! ```
//!
//! What it does NOT do: talk to Docker or SSH (the `sandbox-docker` and
//! `sandbox-ssh` crates do), sync workspaces with a remote host, decide
//! which skills are eligible (the caller passes their directories), or
//! decide tool policy beyond the sandbox layer (the policy crate owns the
//! lists; this crate reuses them). It never reads the process environment: state dir and home
//! directories are passed in.
#![deny(missing_docs)]

pub use crate::activity::{RemovalGuard, SandboxActivity, SandboxKey, SandboxLease};
pub use crate::backend::{
    OwnedSandbox, SandboxBackend, SandboxHandle, SandboxRequest, ScriptOutput,
};
pub use crate::bind_spec::{BindSpec, normalize_absolute, realpath_through_existing};
pub use crate::config_hash::{
    ConfigHashInputs, SANDBOX_CREATE_ARGS_EPOCH, config_hash, config_hash_document, hash_value,
    locale_compare,
};
pub use crate::docker_config::{
    AGENT_WORKSPACE_MOUNT, DEFAULT_CAP_DROP, DEFAULT_CONTAINER_PREFIX, DEFAULT_NETWORK,
    DEFAULT_SANDBOX_IMAGE, DEFAULT_TMPFS, DEFAULT_TMPFS_SIZE_BYTES, DEFAULT_WORKDIR, DockerConfig,
    DockerOrigins, DockerSettings, SizeValue, UlimitRange, UlimitValue,
};
pub use crate::error::{SandboxError, SandboxErrorKind, SandboxErrorSource};
pub use crate::events::{
    RecycleReason, SandboxEvent, SandboxEventSink, SandboxRecycled, SharedEventSink,
};
pub use crate::local_spawn::{LocalKill, spawn_local};
pub use crate::main_session::{
    DEFAULT_MAIN_KEY, GLOBAL_SESSION_KEY, MainSession, normalize_main_key,
};
pub use crate::mounts::{
    MATERIALIZED_SKILLS_MOUNT, MOUNT_FORMAT_VERSION, MountEntry, MountKind, MountPlan,
    MountPlanInputs, mounted_workspace_dir,
};
pub use crate::process::{
    ExitStatus, LaunchRequest, LaunchedProcess, ProcessControl, ProcessInput, ProcessLauncher,
    ProcessOutput,
};
pub use crate::prune::{
    DEFAULT_PRUNE_IDLE_HOURS, DEFAULT_PRUNE_MAX_AGE_DAYS, PruneCandidate, PruneConfig, PruneReason,
    PruneSettings, PruneVerdict, ScopeOwner, prune_candidates, prune_verdict, scope_owner,
};
pub use crate::prune_run::{
    BackendFailure, PruneOptions, PruneOutcome, PruneReport, PruneScope, PruneSkip, prune_sandboxes,
};
pub use crate::registry::{BUILT_IN_BACKENDS, SandboxBackendRegistry, missing_backend_message};
pub use crate::resolved::{
    DEFAULT_SANDBOX_BACKEND, DEFAULTS_SANDBOX_KEY, ResolvedSandboxConfig, SANDBOXES_DIR_NAME,
    SandboxInputs,
};
pub use crate::safe_fs::SkipReason;
pub use crate::sandbox_config::{SandboxConfig, SandboxScope, WorkspaceAccess, mode_str};
pub use crate::scope::{
    MAX_CONTAINER_NAME_LEN, MAX_SLUG_BASE_LEN, SHARED_SCOPE_KEY, container_name, scope_key,
    scope_slug, scope_workspace_dir, slugify_scope_key,
};
pub use crate::script_output::{SCRIPT_MAX_OUTPUT_BYTES, collect_script, script_argv};
pub use crate::security::{
    ACCEPTED_BIND_OPTIONS, BLOCKED_HOME_SUBPATHS, BLOCKED_HOST_PATHS, CREDENTIAL_MARKERS,
    FindingCode, PinnedSource, REFUSED_PROPAGATION_OPTIONS, RESERVED_CONTAINER_TARGETS,
    SYSTEM_CONTAINER_TARGETS, SecurityEnv, SecurityFinding, blocked_host_paths,
    ensure_request_security, ensure_sandbox_security, ensure_workspace_security, pin_mount_sources,
    validate_request_security, validate_sandbox_security, validate_workspace_mounts,
};
pub use crate::skills_mirror::{
    MirrorLimits, MirrorReport, SKILLS_MIRROR_MANIFEST, SkillDir, materialized_skills_root,
    mirror_skills,
};
pub use crate::ssh_config::{
    DEFAULT_SSH_COMMAND_TIMEOUT_SECS, DEFAULT_SSH_CONNECT_TIMEOUT_SECS, DEFAULT_SSH_KEEPALIVE_SECS,
    DEFAULT_SSH_PORT, DEFAULT_SSH_WORKSPACE_ROOT, HostKeyCheckingOff, HostKeyCheckingValue,
    HostKeyPolicy, SshConfig, SshSettings, remote_root_problem,
};
pub use crate::status::{
    RuntimeStatus, explain_runtime_status, format_blocked_tool_message, redact_session_key,
    shell_single_quote,
};
pub use crate::usage_store::{
    BUSY_FRESH, BUSY_HEARTBEAT, SANDBOX_STATE_DIR, USAGE_FILE, USAGE_WRITE_INTERVAL, UsageRecord,
    UsageStore, now_ms,
};
pub use crate::workspace_seed::{
    BOOTSTRAP_FILE_NAMES, MAX_BOOTSTRAP_FILE_BYTES, PrepareReport, SEED_MARKER_SUFFIX, SeedReport,
    SkippedFile, WorkspaceError, prepare_sandbox_workspace, seed_marker_path,
    seed_sandbox_workspace,
};
/// The sandbox mode, shared with the policy crate (one definition).
pub use crate::wrapped::{
    PID_LINE_MAX, PID_WAIT, PREPEND_PATH_VAR, PidLine, PidLineStep, WRAPPED_PIPE_CAPACITY,
    WrappedState, is_portable_name, wrapped_env,
};
pub use talon_tool_policy::SandboxMode;

mod activity;
mod backend;
mod bind_spec;
mod config_hash;
mod docker_config;
mod error;
mod events;
mod local_spawn;
mod main_session;
mod mounts;
mod process;
mod prune;
mod prune_run;
mod registry;
mod resolved;
mod safe_fs;
mod sandbox_config;
mod scope;
mod script_output;
mod security;
mod skills_mirror;
mod ssh_config;
mod status;
mod usage_store;
mod workspace_seed;
mod wrapped;
