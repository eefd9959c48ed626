//! From `sandbox-core`'s [`SandboxRequest`] to a [`ContainerSpec`], and the
//! [`SandboxBackend`] implementation the registry holds.

use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use std::path::PathBuf;

use talon_sandbox_core::{
    DockerSettings, MountKind, OwnedSandbox, SandboxBackend, SandboxError, SandboxHandle,
    SandboxRequest, SecurityEnv, SizeValue, UlimitValue, ensure_request_security,
    pin_mount_sources, prepare_sandbox_workspace,
};

use crate::backend::DockerBackend;
use crate::spec::{BindMount, ContainerSpec, Limits, Ulimit};

/// Parse a Docker size (`1024`, `512m`, `1.5g`, `64MiB`) into bytes.
pub(crate) fn size_bytes(value: &SizeValue, key: &str) -> Result<i64, SandboxError> {
    let text = match value {
        SizeValue::Bytes(n) => return Ok(*n),
        SizeValue::Text(text) => text.trim().to_ascii_lowercase(),
    };
    let bad = || {
        SandboxError::config(format!(
            "{key}: `{text}` is not a size; use bytes or a number with k, m, g or t (`512m`)",
            text = match value {
                SizeValue::Text(t) => t.as_str(),
                SizeValue::Bytes(_) => "",
            }
        ))
    };
    if text == "-1" {
        return Ok(-1);
    }
    let digits_end = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(digits_end);
    let number: f64 = number.parse().map_err(|_| bad())?;
    let unit = unit.trim();
    let unit = unit
        .strip_suffix("ib")
        .or_else(|| unit.strip_suffix('b'))
        .unwrap_or(unit);
    let factor: f64 = match unit {
        "" => 1.0,
        "k" => 1024.0,
        "m" => 1024.0 * 1024.0,
        "g" => 1024.0 * 1024.0 * 1024.0,
        "t" => 1024.0 * 1024.0 * 1024.0 * 1024.0,
        _ => return Err(bad()),
    };
    let bytes = (number * factor).round();
    if !bytes.is_finite() || bytes < 0.0 || bytes > i64::MAX as f64 {
        return Err(bad());
    }
    Ok(bytes as i64)
}

/// The size limit of each tmpfs mount: `tmpfsSize` when set (more than 0,
/// and every mount together below `memory`, or a filled tmpfs would again
/// take all the container's memory), else
/// [`DEFAULT_TMPFS_SIZE_BYTES`](talon_sandbox_core::DEFAULT_TMPFS_SIZE_BYTES)
/// capped at a quarter of `memory`. `key` and `memory_key` name the config
/// keys in errors.
pub(crate) fn tmpfs_size(
    docker: &DockerSettings,
    memory_bytes: Option<i64>,
    key: &str,
    memory_key: &str,
) -> Result<i64, SandboxError> {
    let memory = memory_bytes.filter(|m| *m > 0);
    let Some(value) = &docker.tmpfs_size else {
        let default = talon_sandbox_core::DEFAULT_TMPFS_SIZE_BYTES;
        return Ok(memory.map_or(default, |m| default.min((m / 4).max(1))));
    };
    let bytes = size_bytes(value, key)?;
    if bytes <= 0 {
        return Err(SandboxError::config(format!(
            "{key}: `{value}` is not a usable tmpfs size limit (0 or less would mean no limit); \
             use a size such as `64m`, or remove the key for the 64 MiB default"
        )));
    }
    let mounts = i64::try_from(docker.tmpfs.len()).unwrap_or(i64::MAX).max(1);
    if let Some(memory) = memory
        && bytes.saturating_mul(mounts) >= memory
    {
        return Err(SandboxError::config(format!(
            "{key}: {mounts} tmpfs mount(s) of `{value}` each could hold all of {memory_key} \
             ({memory} bytes), so filling them would get every command OOM-killed; set {key} \
             below {} bytes (a quarter of {memory_key} is the default)",
            memory / mounts
        )));
    }
    Ok(bytes)
}

fn ulimit(name: &str, value: &UlimitValue) -> Result<Ulimit, SandboxError> {
    let bad = || {
        SandboxError::config(format!(
            "sandbox docker.ulimits.{name}: use a number, \"soft:hard\", or {{soft, hard}}"
        ))
    };
    let (soft, hard) = match value {
        UlimitValue::Number(n) => (*n, *n),
        UlimitValue::Text(text) => match text.split_once(':') {
            Some((s, h)) => (
                s.trim().parse().map_err(|_| bad())?,
                h.trim().parse().map_err(|_| bad())?,
            ),
            None => {
                let n = text.trim().parse().map_err(|_| bad())?;
                (n, n)
            }
        },
        UlimitValue::Range(range) => match (range.soft, range.hard) {
            (Some(s), Some(h)) => (s, h),
            (Some(n), None) | (None, Some(n)) => (n, n),
            (None, None) => return Err(bad()),
        },
    };
    Ok(Ulimit {
        name: name.to_owned(),
        soft,
        hard,
    })
}

impl ContainerSpec {
    /// The container for a `sandbox-core` request: its name, scope key,
    /// config hash and mount plan, and its resolved Docker settings.
    pub fn from_request(request: &SandboxRequest) -> Result<Self, SandboxError> {
        let docker: &DockerSettings = &request.config.docker;
        let workspace_dir = request
            .mount_plan
            .entries
            .iter()
            .find(|e| e.kind == MountKind::Workspace)
            .map(|e| e.host_path.clone())
            .unwrap_or_else(|| request.workspace_dir.clone());
        let mut spec = ContainerSpec::new(
            request.sandbox_name.clone(),
            request.scope_key.clone(),
            workspace_dir,
            request.config_hash.clone(),
        );
        spec.image = docker.image.clone();
        spec.workdir = docker.workdir.clone();
        spec.binds = request
            .mount_plan
            .entries
            .iter()
            .map(|e| BindMount {
                host: e.host_path.clone(),
                container: e.container_path.clone(),
                read_only: e.read_only,
                options: match e.kind {
                    MountKind::Bind => e.bind_options.clone(),
                    MountKind::Workspace | MountKind::Agent | MountKind::Skills => None,
                },
                pinned: None,
            })
            .collect();
        spec.env = docker.env.clone();
        spec.user = docker.user.clone();
        spec.read_only_root = docker.read_only_root;
        spec.tmpfs = docker.tmpfs.clone();
        spec.network = docker.network.clone();
        spec.cap_drop = docker.cap_drop.clone();
        spec.cap_add = docker.cap_add.clone();
        spec.privileged = docker.privileged;
        spec.security_opts = docker
            .seccomp_profile
            .iter()
            .map(|p| format!("seccomp={p}"))
            .chain(
                docker
                    .apparmor_profile
                    .iter()
                    .map(|p| format!("apparmor={p}")),
            )
            .collect();
        spec.dns = docker.dns.clone().unwrap_or_default();
        spec.extra_hosts = docker.extra_hosts.clone().unwrap_or_default();
        check_gpus(docker)?;
        spec.limits = Limits {
            pids_limit: docker.pids_limit,
            memory_bytes: docker
                .memory
                .as_ref()
                .map(|m| size_bytes(m, &request.config.docker_origins.key("memory")))
                .transpose()?,
            memory_swap_bytes: docker
                .memory_swap
                .as_ref()
                .map(|m| size_bytes(m, &request.config.docker_origins.key("memorySwap")))
                .transpose()?,
            cpus: docker.cpus.as_ref().and_then(serde_json::Number::as_f64),
            ulimits: docker
                .ulimits
                .iter()
                .map(|(name, value)| ulimit(name, value))
                .collect::<Result<_, _>>()?,
        };
        spec.tmpfs_size_bytes = Some(tmpfs_size(
            docker,
            spec.limits.memory_bytes,
            &request.config.docker_origins.key("tmpfsSize"),
            &request.config.docker_origins.key("memory"),
        )?);
        spec.setup_command = docker.setup_command.clone();
        spec.require_current_config = request.require_current_config;
        Ok(spec)
    }
}

/// Everything the Docker backend would refuse in `request`'s settings
/// before it touches the engine (empty when nothing): the sizes (`memory`, `memorySwap`, `tmpfsSize`, and
/// tmpfs mounts that together could hold all of `memory`), `ulimits`,
/// `gpus`, the image reference and the container name. The validators
/// (`talon sandbox validate`, `talon config validate`) call it, so a
/// config that cannot start a container is refused before the first
/// sandboxed call, with the same message that call would get.
pub fn check_settings(request: &SandboxRequest) -> Vec<SandboxError> {
    let docker = &request.config.docker;
    let origins = &request.config.docker_origins;
    let memory = docker
        .memory
        .as_ref()
        .map(|m| size_bytes(m, &origins.key("memory")));
    let mut checks: Vec<Result<(), SandboxError>> = vec![
        check_gpus(docker),
        crate::spec::check_image_ref(&docker.image),
        crate::spec::check_container_name(&request.sandbox_name),
        docker.memory_swap.as_ref().map_or(Ok(()), |m| {
            size_bytes(m, &origins.key("memorySwap")).map(drop)
        }),
    ];
    // The tmpfs limit is judged against `memory` only when that parses.
    let memory_bytes = match memory {
        Some(Ok(bytes)) => Some(bytes),
        Some(Err(e)) => {
            checks.push(Err(e));
            None
        }
        None => None,
    };
    checks.push(
        tmpfs_size(
            docker,
            memory_bytes,
            &origins.key("tmpfsSize"),
            &origins.key("memory"),
        )
        .map(drop),
    );
    checks.extend(
        docker
            .ulimits
            .iter()
            .map(|(name, value)| ulimit(name, value).map(drop)),
    );
    let mut errors: Vec<SandboxError> = checks.into_iter().filter_map(Result::err).collect();
    // Whatever the list above misses, building the spec still refuses.
    if errors.is_empty()
        && let Err(e) = ContainerSpec::from_request(request)
    {
        errors.push(e);
    }
    errors
}

fn check_gpus(docker: &DockerSettings) -> Result<(), SandboxError> {
    if docker.gpus.is_some() {
        return Err(SandboxError::config(
            "sandbox docker.gpus is not supported by Talon's Docker backend yet; remove it"
                .to_owned(),
        ));
    }
    Ok(())
}

/// The home directories whose credentials no bind may reach: `$HOME`,
/// `$TALON_HOME`, `$USERPROFILE` and the OS's idea of home (duplicates and
/// `/` are dropped by the validator).
pub(crate) fn process_home_dirs() -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = ["HOME", "TALON_HOME", "USERPROFILE"]
        .iter()
        .filter_map(std::env::var_os)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .collect();
    dirs.extend(std::env::home_dir());
    dirs.dedup();
    dirs
}

fn epoch_ms_ago(elapsed: Duration) -> Option<u64> {
    let now = SystemTime::now().duration_since(UNIX_EPOCH).ok()?;
    u64::try_from(now.checked_sub(elapsed)?.as_millis()).ok()
}

#[async_trait::async_trait]
impl SandboxBackend for DockerBackend {
    fn id(&self) -> &str {
        "docker"
    }

    /// Validates the request first ([`ensure_request_security`]: blocked
    /// bind sources through symlinks, homes, credentials and Talon's own
    /// state, sources outside the scope and agent workspaces, reserved and
    /// system targets, propagation, `host` / `container:` networks,
    /// `unconfined` profiles, privileged, added capabilities, `capDrop`
    /// without `ALL`, and the managed workspaces by the same rules);
    /// nothing is created when it refuses. Then
    /// [`prepare_sandbox_workspace`] (the `none` / `ro` scratch workspace,
    /// seeded once from the agent's bootstrap files), then every source is
    /// pinned to its canonical path and judged again there
    /// ([`pin_mount_sources`]), then [`DockerBackend::ensure_container`]
    /// with [`ContainerSpec::from_request`] carrying the pinned sources.
    async fn ensure(
        &self,
        request: &SandboxRequest,
    ) -> Result<Arc<dyn SandboxHandle>, SandboxError> {
        let env = SecurityEnv::for_request(request, self.home_dirs());
        ensure_request_security(request, &env)?;
        let mut spec = ContainerSpec::from_request(request)?;
        // The scope's own workspace (ro / none) must exist, seeded, before
        // Docker sees it as a bind source (or the engine creates it owned
        // by root); a fault there refuses the sandbox.
        prepare_sandbox_workspace(request)?;
        // Every source judged again at its canonical path, which is what
        // the engine is handed (checked again right before and after
        // create).
        let pinned = pin_mount_sources(request, &env)?;
        for (bind, pin) in spec.binds.iter_mut().zip(pinned) {
            bind.host = pin.canonical.clone();
            bind.pinned = Some(pin);
        }
        let handle = self.ensure_container(&spec).await?;
        Ok(handle as Arc<dyn SandboxHandle>)
    }

    async fn list_owned(&self) -> Result<Vec<OwnedSandbox>, SandboxError> {
        let containers = self.list_containers().await?;
        Ok(containers
            .into_iter()
            .map(|c| {
                let mut owned = OwnedSandbox::new("docker", &c.name);
                owned.scope_key = c.scope_key;
                owned.config_hash = c.config_hash;
                owned.image = c.image;
                owned.running = c.running;
                owned.created_at_ms = c.created_at_ms;
                owned.last_used_at_ms = self
                    .usage
                    .last(&c.name)
                    .and_then(|t| epoch_ms_ago(t.elapsed()));
                owned
            })
            .collect())
    }

    async fn remove(&self, name: &str) -> Result<(), SandboxError> {
        if self.remove_owned(name).await? {
            Ok(())
        } else {
            Err(SandboxError::config(format!(
                "no sandbox container named {name} (see `talon sandbox list`)"
            )))
        }
    }
}

#[cfg(test)]
#[path = "request_tests.rs"]
mod tests;
