//! Building the engine's create request from a [`ContainerSpec`]: the same
//! arguments, in the same order of meaning, as OpenClaw's `docker create`
//! (labels, read-only root, tmpfs, network, user, env, capabilities,
//! `no-new-privileges`, limits, workdir, mounts, image, `sleep infinity`).

use std::collections::HashMap;
use std::os::unix::fs::MetadataExt;
use std::time::{SystemTime, UNIX_EPOCH};

use bollard::models::{ContainerCreateBody, HostConfig, ResourcesUlimits};
use talon_sandbox_core::SandboxError;

use crate::labels;
use crate::spec::{CREATE_ARGS_EPOCH, ContainerSpec, MOUNT_FORMAT_VERSION};

/// The user the container runs as: the configured one, else the owner of
/// the workspace directory on the host (`uid:gid`).
pub(crate) fn resolve_user(spec: &ContainerSpec) -> Result<String, SandboxError> {
    if let Some(user) = spec
        .user
        .as_deref()
        .map(str::trim)
        .filter(|u| !u.is_empty())
    {
        return Ok(user.to_owned());
    }
    let meta = std::fs::metadata(&spec.workspace_dir).map_err(|e| {
        SandboxError::Config(format!(
            "sandbox workspace directory {} cannot be read ({e}); it must exist before the \
             container is created (Docker would otherwise create it owned by root)",
            spec.workspace_dir.display()
        ))
    })?;
    if !meta.is_dir() {
        return Err(SandboxError::Config(format!(
            "sandbox workspace {} is not a directory",
            spec.workspace_dir.display()
        )));
    }
    Ok(format!("{}:{}", meta.uid(), meta.gid()))
}

fn now_ms() -> u128 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis())
        .unwrap_or(0)
}

fn check_env_key(key: &str) -> Result<(), SandboxError> {
    if key.is_empty() || key.contains(['=', '\0']) {
        return Err(SandboxError::Config(format!(
            "sandbox env key {key:?} is invalid (empty, or contains `=` or NUL)"
        )));
    }
    if key == "PATH" {
        return Err(SandboxError::Config(
            "sandbox env must not set PATH at create (the image's PATH stays; an exec's PATH \
             is prepended at run time)"
                .to_owned(),
        ));
    }
    Ok(())
}

/// The labels Talon writes on a container it owns. OpenClaw writes the same
/// set under `openclaw.*`; Talon uses `talon.*` so the two never adopt each
/// other's containers.
pub(crate) fn container_labels(spec: &ContainerSpec) -> HashMap<String, String> {
    let mut map = HashMap::from([
        (labels::SANDBOX.to_owned(), "1".to_owned()),
        (labels::SESSION_KEY.to_owned(), spec.scope_key.clone()),
        (labels::CREATED_AT_MS.to_owned(), now_ms().to_string()),
        (
            labels::MOUNT_FORMAT_VERSION.to_owned(),
            MOUNT_FORMAT_VERSION.to_string(),
        ),
        (
            labels::CREATE_ARGS_EPOCH.to_owned(),
            CREATE_ARGS_EPOCH.to_owned(),
        ),
        (labels::CONFIG_HASH.to_owned(), spec.config_hash.clone()),
    ]);
    for (key, value) in &spec.extra_labels {
        // Talon's own labels cannot be overridden by configuration.
        map.entry(key.clone()).or_insert_with(|| value.clone());
    }
    map
}

fn tmpfs_map(entries: &[String]) -> HashMap<String, String> {
    entries
        .iter()
        .map(|entry| match entry.split_once(':') {
            Some((path, opts)) => (path.to_owned(), opts.to_owned()),
            None => (entry.clone(), String::new()),
        })
        .collect()
}

/// The create body for `spec`, running as `user`.
pub(crate) fn create_body(
    spec: &ContainerSpec,
    user: String,
) -> Result<ContainerCreateBody, SandboxError> {
    let mut env = Vec::with_capacity(spec.env.len() + 1);
    for (key, value) in &spec.env {
        check_env_key(key)?;
        env.push(format!("{key}={value}"));
    }
    env.push("TALON_CLI=1".to_owned());
    let mut binds = Vec::with_capacity(spec.binds.len());
    for bind in &spec.binds {
        if !bind.container.starts_with('/') || bind.container.contains(':') {
            return Err(SandboxError::Config(format!(
                "sandbox mount target {:?} must be an absolute container path without `:`",
                bind.container
            )));
        }
        if !bind.host.is_absolute() {
            return Err(SandboxError::Config(format!(
                "sandbox mount source {} must be an absolute host path",
                bind.host.display()
            )));
        }
        let text = bind.to_bind().ok_or_else(|| {
            SandboxError::Config(format!(
                "sandbox mount source {} is not valid UTF-8",
                bind.host.display()
            ))
        })?;
        if bind.host.to_string_lossy().contains(':') {
            return Err(SandboxError::Config(format!(
                "sandbox mount source {} contains `:`, which Docker's bind syntax cannot carry",
                bind.host.display()
            )));
        }
        binds.push(text);
    }
    let mut security_opt = vec!["no-new-privileges".to_owned()];
    security_opt.extend(spec.security_opts.iter().cloned());
    let limits = &spec.limits;
    let host_config = HostConfig {
        init: Some(true),
        readonly_rootfs: Some(spec.read_only_root),
        tmpfs: Some(tmpfs_map(&spec.tmpfs)),
        network_mode: Some(spec.network.clone()),
        cap_drop: Some(spec.cap_drop.clone()),
        cap_add: (!spec.cap_add.is_empty()).then(|| spec.cap_add.clone()),
        privileged: spec.privileged.then_some(true),
        security_opt: Some(security_opt),
        dns: (!spec.dns.is_empty()).then(|| spec.dns.clone()),
        extra_hosts: (!spec.extra_hosts.is_empty()).then(|| spec.extra_hosts.clone()),
        pids_limit: limits.pids_limit.filter(|n| *n > 0),
        memory: limits.memory_bytes,
        memory_swap: limits.memory_swap_bytes,
        nano_cpus: limits
            .cpus
            .filter(|c| *c > 0.0)
            .map(|c| (c * 1e9).round() as i64),
        ulimits: (!limits.ulimits.is_empty()).then(|| {
            limits
                .ulimits
                .iter()
                .map(|u| ResourcesUlimits {
                    name: Some(u.name.clone()),
                    soft: Some(u.soft),
                    hard: Some(u.hard),
                })
                .collect()
        }),
        binds: Some(binds),
        ..Default::default()
    };
    Ok(ContainerCreateBody {
        image: Some(spec.image.clone()),
        cmd: Some(vec!["sleep".to_owned(), "infinity".to_owned()]),
        user: Some(user),
        env: Some(env),
        working_dir: Some(spec.workdir.clone()),
        labels: Some(container_labels(spec)),
        host_config: Some(host_config),
        ..Default::default()
    })
}

#[cfg(test)]
#[path = "create_tests.rs"]
mod tests;
