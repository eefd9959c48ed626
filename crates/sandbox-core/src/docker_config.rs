//! Docker sandbox settings: the file form ([`DockerConfig`], every field
//! optional), the resolved form ([`DockerSettings`], OpenClaw's defaults
//! applied), and where each resolved value came from ([`DockerOrigins`]).
//!
//! Merge rules (an agent's block over `agents.defaults.sandbox.docker`):
//! - scalars and lists: the agent's value if set, else the defaults', else
//!   the built-in default (lists are taken whole, never concatenated) —
//!   except `binds` (the defaults' binds followed by the agent's),
//!   `ulimits` (the defaults' map with the agent's entries on top) and
//!   `env` (base: the defaults' env if set, else `{LANG: "C.UTF-8"}`;
//!   the agent's entries on top).
//! - with `scope: "shared"` an agent's block is ignored entirely (the
//!   caller passes `None` for it; [`crate::ResolvedSandboxConfig`] does).

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Number, Value};

/// The image used when none is configured (the one OpenClaw users build
/// with `scripts/sandbox-setup.sh`).
pub const DEFAULT_SANDBOX_IMAGE: &str = "openclaw-sandbox:bookworm-slim";
/// The container name prefix used when none is configured. Talon's own, so
/// a Talon sandbox never collides with an OpenClaw one on the same engine.
pub const DEFAULT_CONTAINER_PREFIX: &str = "talon-sbx-";
/// The working directory (and the workspace mount point) in the container.
pub const DEFAULT_WORKDIR: &str = "/workspace";
/// Where the agent's own workspace is mounted when it differs from the
/// sandbox workspace.
pub const AGENT_WORKSPACE_MOUNT: &str = "/agent";
/// The default tmpfs mounts.
pub const DEFAULT_TMPFS: &[&str] = &["/tmp", "/var/tmp", "/run"];
/// The size limit of each tmpfs mount when `tmpfsSize` is not set and a
/// `tmpfs` entry names no `size=` of its own: 64 MiB. (A tmpfs without a
/// limit may grow to half the host's RAM, and what it holds counts against
/// the container's `memory`: a filled `/tmp` would get every later command
/// OOM-killed instead of failing one write with `ENOSPC`.) When `memory`
/// is set, the default is also capped at a quarter of it.
pub const DEFAULT_TMPFS_SIZE_BYTES: i64 = 64 * 1024 * 1024;
/// The default network (no network at all).
pub const DEFAULT_NETWORK: &str = "none";
/// The default dropped capabilities.
pub const DEFAULT_CAP_DROP: &[&str] = &["ALL"];

/// A memory size: bytes, or Docker's text form (`512m`, `2g`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum SizeValue {
    /// A number of bytes.
    Bytes(i64),
    /// Docker's text form.
    Text(String),
}

impl std::fmt::Display for SizeValue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SizeValue::Bytes(n) => write!(f, "{n}"),
            SizeValue::Text(s) => f.write_str(s),
        }
    }
}

/// One `ulimits` entry: a single number (soft = hard), Docker's text form
/// (`1024:2048`), or `{soft, hard}` (either side may be left out).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum UlimitValue {
    /// Soft and hard limit alike.
    Number(i64),
    /// Docker's text form.
    Text(String),
    /// Separate limits.
    Range(UlimitRange),
}

/// `{soft, hard}` of a [`UlimitValue`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct UlimitRange {
    /// The soft limit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub soft: Option<i64>,
    /// The hard limit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hard: Option<i64>,
}

/// `agents.defaults.sandbox.docker` / `agents.list[].sandbox.docker` as
/// written (OpenClaw's keys; unknown keys are an error).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DockerConfig {
    /// The image (default `openclaw-sandbox:bookworm-slim`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image: Option<String>,
    /// The container name prefix (default `talon-sbx-`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub container_prefix: Option<String>,
    /// The working directory and workspace mount point (default `/workspace`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workdir: Option<String>,
    /// Mount the root filesystem read-only (default `true`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_only_root: Option<bool>,
    /// tmpfs mounts (default `/tmp`, `/var/tmp`, `/run`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tmpfs: Option<Vec<String>>,
    /// Talon only (OpenClaw has no such key): the size limit of each tmpfs
    /// mount whose `tmpfs` entry names no `size=` (default 64 MiB, capped
    /// at a quarter of `memory`; bytes or `32m`, `1g`, ...; must be more
    /// than 0, and all the mounts together less than `memory`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tmpfs_size: Option<SizeValue>,
    /// The network (default `none`; `host` is refused, `container:*` only
    /// with `dangerouslyAllowContainerNamespaceJoin`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub network: Option<String>,
    /// The container user (`uid:gid`; default: the workspace owner).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user: Option<String>,
    /// Dropped capabilities (default `ALL`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cap_drop: Option<Vec<String>>,
    /// Environment variables (default `{LANG: "C.UTF-8"}`; an agent's
    /// entries are laid over the defaults').
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub env: Option<BTreeMap<String, String>>,
    /// A command run once (`sh -lc`) after the container is created.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub setup_command: Option<String>,
    /// `--pids-limit` (only values > 0 are passed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pids_limit: Option<i64>,
    /// `--memory`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory: Option<SizeValue>,
    /// `--memory-swap`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_swap: Option<SizeValue>,
    /// `--cpus` (only values > 0 are passed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpus: Option<Number>,
    /// `--gpus`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpus: Option<String>,
    /// `--ulimit` entries by name (an agent's entries over the defaults').
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ulimits: Option<BTreeMap<String, UlimitValue>>,
    /// `--security-opt seccomp=…` (`unconfined` is refused).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seccomp_profile: Option<String>,
    /// `--security-opt apparmor=…` (`unconfined` is refused).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub apparmor_profile: Option<String>,
    /// `--dns` servers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dns: Option<Vec<String>>,
    /// `--add-host` entries (`name:ip`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extra_hosts: Option<Vec<String>>,
    /// Extra bind mounts (`/host/path:/container/path[:ro]`); the
    /// defaults' binds come first, then the agent's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub binds: Option<Vec<String>>,
    /// Talon only (OpenClaw has no such key): added capabilities. Always
    /// refused by security validation; accepted so the refusal can say why.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cap_add: Option<Vec<String>>,
    /// Talon only (OpenClaw has no such key): a privileged container.
    /// Always refused by security validation when `true`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub privileged: Option<bool>,
    /// Allow binds onto `/workspace` / `/agent` (break-glass).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dangerously_allow_reserved_container_targets: Option<bool>,
    /// Allow bind sources outside the sandbox and agent workspaces
    /// (break-glass).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dangerously_allow_external_bind_sources: Option<bool>,
    /// Allow `network: "container:<id>"` (break-glass).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dangerously_allow_container_namespace_join: Option<bool>,
}

/// The Docker settings of one agent's sandbox, defaults applied. Absent
/// optional values are left out of its JSON (and so of the config hash).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DockerSettings {
    /// The image.
    pub image: String,
    /// The container name prefix.
    pub container_prefix: String,
    /// The working directory and workspace mount point.
    pub workdir: String,
    /// Read-only root filesystem.
    pub read_only_root: bool,
    /// tmpfs mounts.
    pub tmpfs: Vec<String>,
    /// The size limit of each tmpfs mount, when configured (else
    /// [`DEFAULT_TMPFS_SIZE_BYTES`], capped at a quarter of `memory`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tmpfs_size: Option<SizeValue>,
    /// The network.
    pub network: String,
    /// The container user, when configured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user: Option<String>,
    /// Dropped capabilities.
    pub cap_drop: Vec<String>,
    /// Environment variables.
    pub env: BTreeMap<String, String>,
    /// The one-time setup command.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub setup_command: Option<String>,
    /// `--pids-limit`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pids_limit: Option<i64>,
    /// `--memory`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory: Option<SizeValue>,
    /// `--memory-swap`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_swap: Option<SizeValue>,
    /// `--cpus`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpus: Option<Number>,
    /// `--gpus`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpus: Option<String>,
    /// `--ulimit` entries.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub ulimits: BTreeMap<String, UlimitValue>,
    /// The seccomp profile.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seccomp_profile: Option<String>,
    /// The AppArmor profile.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub apparmor_profile: Option<String>,
    /// DNS servers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dns: Option<Vec<String>>,
    /// Extra hosts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extra_hosts: Option<Vec<String>>,
    /// Extra bind mounts: the defaults' then the agent's.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub binds: Vec<String>,
    /// Added capabilities (refused by validation).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cap_add: Vec<String>,
    /// Privileged container (refused by validation).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub privileged: bool,
    /// Break-glass: binds onto reserved targets allowed.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub dangerously_allow_reserved_container_targets: bool,
    /// Break-glass: bind sources outside the allowed roots allowed.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub dangerously_allow_external_bind_sources: bool,
    /// Break-glass: `container:*` networks allowed.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub dangerously_allow_container_namespace_join: bool,
}

impl Default for DockerSettings {
    fn default() -> Self {
        DockerSettings::resolve(None, None)
    }
}

fn owned(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| (*s).to_owned()).collect()
}

impl DockerSettings {
    /// Apply `agent` over `defaults` over the built-in defaults (see the
    /// module docs for the rules). Pass `None` for `agent` when the scope
    /// is `shared`.
    pub fn resolve(defaults: Option<&DockerConfig>, agent: Option<&DockerConfig>) -> Self {
        fn pick<T: Clone>(
            agent: Option<&DockerConfig>,
            defaults: Option<&DockerConfig>,
            get: impl Fn(&DockerConfig) -> Option<&T>,
        ) -> Option<T> {
            agent
                .and_then(&get)
                .or_else(|| defaults.and_then(&get))
                .cloned()
        }
        let mut env = match defaults.and_then(|d| d.env.as_ref()) {
            Some(global) => global.clone(),
            None => BTreeMap::from([("LANG".to_owned(), "C.UTF-8".to_owned())]),
        };
        if let Some(agent_env) = agent.and_then(|a| a.env.as_ref()) {
            env.extend(agent_env.iter().map(|(k, v)| (k.clone(), v.clone())));
        }
        let mut ulimits = defaults.and_then(|d| d.ulimits.clone()).unwrap_or_default();
        if let Some(agent_limits) = agent.and_then(|a| a.ulimits.as_ref()) {
            ulimits.extend(agent_limits.iter().map(|(k, v)| (k.clone(), v.clone())));
        }
        let binds: Vec<String> = defaults
            .and_then(|d| d.binds.clone())
            .unwrap_or_default()
            .into_iter()
            .chain(agent.and_then(|a| a.binds.clone()).unwrap_or_default())
            .collect();
        let flag =
            |get: fn(&DockerConfig) -> Option<&bool>| pick(agent, defaults, get).unwrap_or(false);
        DockerSettings {
            image: pick(agent, defaults, |c| c.image.as_ref())
                .unwrap_or_else(|| DEFAULT_SANDBOX_IMAGE.to_owned()),
            container_prefix: pick(agent, defaults, |c| c.container_prefix.as_ref())
                .unwrap_or_else(|| DEFAULT_CONTAINER_PREFIX.to_owned()),
            workdir: pick(agent, defaults, |c| c.workdir.as_ref())
                .unwrap_or_else(|| DEFAULT_WORKDIR.to_owned()),
            read_only_root: pick(agent, defaults, |c| c.read_only_root.as_ref()).unwrap_or(true),
            tmpfs: pick(agent, defaults, |c| c.tmpfs.as_ref())
                .unwrap_or_else(|| owned(DEFAULT_TMPFS)),
            tmpfs_size: pick(agent, defaults, |c| c.tmpfs_size.as_ref()),
            network: pick(agent, defaults, |c| c.network.as_ref())
                .unwrap_or_else(|| DEFAULT_NETWORK.to_owned()),
            user: pick(agent, defaults, |c| c.user.as_ref()),
            cap_drop: pick(agent, defaults, |c| c.cap_drop.as_ref())
                .unwrap_or_else(|| owned(DEFAULT_CAP_DROP)),
            env,
            setup_command: pick(agent, defaults, |c| c.setup_command.as_ref()),
            pids_limit: pick(agent, defaults, |c| c.pids_limit.as_ref()),
            memory: pick(agent, defaults, |c| c.memory.as_ref()),
            memory_swap: pick(agent, defaults, |c| c.memory_swap.as_ref()),
            cpus: pick(agent, defaults, |c| c.cpus.as_ref()),
            gpus: pick(agent, defaults, |c| c.gpus.as_ref()),
            ulimits,
            seccomp_profile: pick(agent, defaults, |c| c.seccomp_profile.as_ref()),
            apparmor_profile: pick(agent, defaults, |c| c.apparmor_profile.as_ref()),
            dns: pick(agent, defaults, |c| c.dns.as_ref()),
            extra_hosts: pick(agent, defaults, |c| c.extra_hosts.as_ref()),
            binds,
            cap_add: pick(agent, defaults, |c| c.cap_add.as_ref()).unwrap_or_default(),
            privileged: flag(|c| c.privileged.as_ref()),
            dangerously_allow_reserved_container_targets: flag(|c| {
                c.dangerously_allow_reserved_container_targets.as_ref()
            }),
            dangerously_allow_external_bind_sources: flag(|c| {
                c.dangerously_allow_external_bind_sources.as_ref()
            }),
            dangerously_allow_container_namespace_join: flag(|c| {
                c.dangerously_allow_container_namespace_join.as_ref()
            }),
        }
    }
}

/// Which config key each resolved Docker value came from, so a finding can
/// name the key to change (`agents.list[2].sandbox.docker.binds[0]`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DockerOrigins {
    /// The defaults' docker key (`agents.defaults.sandbox.docker`).
    pub defaults_key: String,
    /// The agent's docker key (`agents.list[2].sandbox.docker`), when the
    /// agent's block was applied.
    pub agent_key: Option<String>,
    /// The camelCase field names the applied agent block sets.
    pub agent_fields: Vec<String>,
    /// How many of the resolved binds came from the defaults.
    pub defaults_binds: usize,
}

impl DockerOrigins {
    /// Record the origins of a resolution. `agent_key` / `agent` are
    /// `None` when the agent block was not applied (no agent, no block, or
    /// `scope: "shared"`).
    pub fn new(
        defaults_key: &str,
        defaults: Option<&DockerConfig>,
        agent_key: Option<&str>,
        agent: Option<&DockerConfig>,
    ) -> Self {
        let agent_fields = match agent.map(serde_json::to_value) {
            Some(Ok(Value::Object(map))) => map.keys().cloned().collect(),
            _ => Vec::new(),
        };
        DockerOrigins {
            defaults_key: defaults_key.to_owned(),
            agent_key: agent.and(agent_key).map(str::to_owned),
            agent_fields,
            defaults_binds: defaults.and_then(|d| d.binds.as_ref()).map_or(0, Vec::len),
        }
    }

    /// The key of a field (camelCase): the agent's if its block sets it,
    /// else the defaults'.
    pub fn key(&self, field: &str) -> String {
        match &self.agent_key {
            Some(agent) if self.agent_fields.iter().any(|f| f == field) => {
                format!("{agent}.{field}")
            }
            _ => format!("{}.{field}", self.defaults_key),
        }
    }

    /// The key of the `index`-th resolved bind.
    pub fn bind_key(&self, index: usize) -> String {
        match &self.agent_key {
            Some(agent) if index >= self.defaults_binds => {
                format!("{agent}.binds[{}]", index - self.defaults_binds)
            }
            _ => format!("{}.binds[{index}]", self.defaults_key),
        }
    }

    /// The key of the `index`-th added capability (the list is taken whole
    /// from one level).
    pub fn cap_add_key(&self, index: usize) -> String {
        format!("{}[{index}]", self.key("capAdd"))
    }
}

#[cfg(test)]
#[path = "docker_config_tests.rs"]
mod tests;
