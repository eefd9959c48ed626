//! Which resolved `docker.*` settings the local backend honours, and the
//! ones it refuses because it cannot enforce them (every refusal names the
//! config key and the fix).
//!
//! | setting | on the local backend |
//! |---|---|
//! | `workdir`, `binds`, `env`, `tmpfs` (paths), `readOnlyRoot`, `capDrop` | honoured (all capabilities are always dropped) |
//! | `memory`, `pidsLimit`, `cpus` | cgroup limits of each command's process tree |
//! | `network` | `none` (the default): loopback only; `bridge`: loopback, plus HTTP(S) through the host's SSRF-guarded egress proxy ([`EGRESS_NETWORK`]); any other network refused |
//! | `user`, `seccompProfile`, `apparmorProfile`, `ulimits`, `memorySwap`, `gpus`, `setupCommand`, tmpfs options, `tmpfsSize` | refused: not enforceable without a container |
//! | `image`, `containerPrefix`, `dns`, `extraHosts` | ignored: no image (the host's system dirs, read-only); names are resolved by the host's proxy |

use talon_sandbox_core::{DEFAULT_NETWORK, ResolvedSandboxConfig};

/// The `network` value that gives a local sandbox egress: Docker's default
/// network name, read as "the outside world" — here only through the
/// host's SSRF-guarded proxy (`HTTP_PROXY`/`HTTPS_PROXY`), never a raw
/// route.
pub const EGRESS_NETWORK: &str = "bridge";

/// Whether `config` asks for egress (`network: "bridge"`).
pub fn wants_egress(config: &ResolvedSandboxConfig) -> bool {
    config
        .docker
        .network
        .trim()
        .eq_ignore_ascii_case(EGRESS_NETWORK)
}

/// A setting the local backend refuses: the key to change and why.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SettingProblem {
    /// The config key (`agents.defaults.sandbox.docker.network`).
    pub key: String,
    /// What is wrong and how to fix it.
    pub message: String,
}

impl std::fmt::Display for SettingProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.key, self.message)
    }
}

/// Every resolved setting the local backend cannot honour.
pub fn unsupported_settings(config: &ResolvedSandboxConfig) -> Vec<SettingProblem> {
    let docker = &config.docker;
    let origins = &config.docker_origins;
    let mut out = Vec::new();
    let mut refuse = |field: &str, message: String| {
        out.push(SettingProblem {
            key: origins.key(field),
            message,
        });
    };
    if !docker.network.trim().eq_ignore_ascii_case(DEFAULT_NETWORK) && !wants_egress(config) {
        refuse(
            "network",
            format!(
                "network \"{}\" is not available on the local sandbox backend: it has no \
                 container networks. Use \"none\" (loopback only, the default) or \"bridge\" \
                 (HTTP and HTTPS through the host's SSRF-guarded proxy), or backend \"docker\" \
                 for that network",
                docker.network
            ),
        );
    }
    let not_enforced = |what: &str| {
        format!(
            "{what} cannot be enforced by the local sandbox backend (it runs no container); \
             remove it, or use backend \"docker\""
        )
    };
    if docker.user.is_some() {
        refuse("user", not_enforced("a sandbox user"));
    }
    if docker.seccomp_profile.is_some() {
        refuse(
            "seccompProfile",
            not_enforced("a Docker seccomp profile (the local backend applies its own filter)"),
        );
    }
    if docker.apparmor_profile.is_some() {
        refuse("apparmorProfile", not_enforced("an AppArmor profile"));
    }
    if !docker.ulimits.is_empty() {
        refuse("ulimits", not_enforced("ulimits"));
    }
    if docker.memory_swap.is_some() {
        refuse(
            "memorySwap",
            not_enforced("a swap limit (docker.memory is enforced)"),
        );
    }
    if docker.gpus.is_some() {
        refuse("gpus", not_enforced("GPU access"));
    }
    if docker.setup_command.is_some() {
        refuse(
            "setupCommand",
            "a setup command has nothing to set up on the local sandbox backend (the system \
             directories are the host's, read-only); install what you need on the host, or use \
             backend \"docker\""
                .to_owned(),
        );
    }
    if docker.tmpfs_size.is_some() {
        refuse("tmpfsSize", not_enforced("a tmpfs size limit"));
    }
    for entry in &docker.tmpfs {
        if entry.contains(':') || !entry.starts_with('/') {
            refuse(
                "tmpfs",
                format!(
                    "tmpfs entry \"{entry}\": the local sandbox backend takes absolute mount \
                     points without options (\"/tmp\")"
                ),
            );
        }
    }
    out
}

#[cfg(test)]
#[path = "settings_tests.rs"]
mod tests;
