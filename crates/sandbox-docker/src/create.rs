//! Building the engine's create request from a [`ContainerSpec`]: the same
//! arguments, in the same order of meaning, as OpenClaw's `docker create`
//! (labels, read-only root, tmpfs, network, user, env, capabilities,
//! `no-new-privileges`, limits, workdir, mounts, image, `sleep infinity`).

use std::collections::HashMap;
use std::os::unix::fs::MetadataExt;
use std::time::{SystemTime, UNIX_EPOCH};

use bollard::models::{
    ContainerCreateBody, HostConfig, Mount, MountBindOptions, MountBindOptionsPropagationEnum,
    MountType, ResourcesUlimits,
};
use talon_sandbox_core::{ACCEPTED_BIND_OPTIONS, SandboxError};

use crate::labels;
use crate::spec::{BindMount, CREATE_ARGS_EPOCH, ContainerSpec, MOUNT_FORMAT_VERSION};

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
        SandboxError::config(format!(
            "sandbox workspace directory {} cannot be read ({e}); it must exist before the \
             container is created (Docker would otherwise create it owned by root)",
            spec.workspace_dir.display()
        ))
    })?;
    if !meta.is_dir() {
        return Err(SandboxError::config(format!(
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
        return Err(SandboxError::config(format!(
            "sandbox env key {key:?} is invalid (empty, or contains `=` or NUL)"
        )));
    }
    if key == "PATH" {
        return Err(SandboxError::config(
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

/// The engine's tmpfs map: each entry's own options, plus `size=` when
/// the entry names none and a default size is set.
pub(crate) fn tmpfs_map(entries: &[String], size: Option<i64>) -> HashMap<String, String> {
    entries
        .iter()
        .map(|entry| {
            let (path, opts) = match entry.split_once(':') {
                Some((path, opts)) => (path.to_owned(), opts.to_owned()),
                None => (entry.clone(), String::new()),
            };
            let sized = opts
                .split(',')
                .any(|o| o.trim().to_ascii_lowercase().starts_with("size="));
            let opts = match size {
                Some(bytes) if !sized => {
                    if opts.is_empty() {
                        format!("size={bytes}")
                    } else {
                        format!("{opts},size={bytes}")
                    }
                }
                _ => opts,
            };
            (path, opts)
        })
        .collect()
}

/// How a read-only bind stays read-only beneath it (a writable mount
/// inside the bound directory must not be writable from the container).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ReadOnlyDepth {
    /// Engine API >= 1.44 (Docker >= 25): `ReadOnlyForceRecursive`, every
    /// submount read-only too; the engine refuses the container when the
    /// kernel cannot (no `mount_setattr`, Linux < 5.12), never downgrades.
    ForceRecursive,
    /// Engine API 1.40 to 1.43: `NonRecursive`, submounts are not carried
    /// into the container at all (the directory beneath shows, read-only).
    /// Those engines ignore `ReadOnlyForceRecursive`, so asking for it
    /// would silently give a writable submount.
    NonRecursive,
}

/// The [`ReadOnlyDepth`] of an engine speaking API `major.minor`; older
/// than 1.40 (no `NonRecursive` either) is refused.
pub(crate) fn read_only_depth(major: usize, minor: usize) -> Result<ReadOnlyDepth, SandboxError> {
    match (major, minor) {
        (1, m) if m >= 44 => Ok(ReadOnlyDepth::ForceRecursive),
        (1, m) if m >= 40 => Ok(ReadOnlyDepth::NonRecursive),
        (m, _) if m > 1 => Ok(ReadOnlyDepth::ForceRecursive),
        _ => Err(SandboxError::config(format!(
            "the Docker engine speaks API {major}.{minor}, which cannot keep read-only binds \
             read-only beneath them (needs API 1.40, Docker 19.03, or newer; 1.44 / Docker 25 \
             for recursive read-only); upgrade the engine"
        ))),
    }
}

/// One bind as an Engine API mount: its (canonical) source, read-only as
/// `depth` says, propagation private.
fn engine_mount(bind: &BindMount, depth: ReadOnlyDepth) -> Result<Mount, SandboxError> {
    if !bind.container.starts_with('/') {
        return Err(SandboxError::config(format!(
            "sandbox mount target {:?} must be an absolute container path",
            bind.container
        )));
    }
    if !bind.host.is_absolute() {
        return Err(SandboxError::config(format!(
            "sandbox mount source {} must be an absolute host path",
            bind.host.display()
        )));
    }
    let source = bind.host.to_str().ok_or_else(|| {
        SandboxError::config(format!(
            "sandbox mount source {} is not valid UTF-8",
            bind.host.display()
        ))
    })?;
    let mut read_only = bind.read_only;
    let mut propagation = MountBindOptionsPropagationEnum::RPRIVATE;
    for option in bind
        .options
        .as_deref()
        .unwrap_or_default()
        .split(',')
        .map(str::trim)
        .filter(|o| !o.is_empty())
    {
        let lowered = option.to_ascii_lowercase();
        if option == "z" || option == "Z" || !ACCEPTED_BIND_OPTIONS.contains(&lowered.as_str()) {
            return Err(SandboxError::config(format!(
                "sandbox mount {}:{} has the option {option:?}, which Talon does not accept \
                 (only {})",
                bind.host.display(),
                bind.container,
                ACCEPTED_BIND_OPTIONS.join(", ")
            )));
        }
        match lowered.as_str() {
            "ro" => read_only = true,
            "private" => propagation = MountBindOptionsPropagationEnum::PRIVATE,
            _ => {}
        }
    }
    let bind_options = MountBindOptions {
        propagation: Some(propagation),
        non_recursive: (read_only && depth == ReadOnlyDepth::NonRecursive).then_some(true),
        read_only_force_recursive: (read_only && depth == ReadOnlyDepth::ForceRecursive)
            .then_some(true),
        ..Default::default()
    };
    Ok(Mount {
        target: Some(bind.container.clone()),
        source: Some(source.to_owned()),
        typ: Some(MountType::BIND),
        read_only: Some(read_only),
        bind_options: Some(bind_options),
        ..Default::default()
    })
}

/// The create body for `spec`, running as `user`, its read-only binds
/// kept read-only beneath them as `depth` says.
pub(crate) fn create_body(
    spec: &ContainerSpec,
    user: String,
    depth: ReadOnlyDepth,
) -> Result<ContainerCreateBody, SandboxError> {
    let mut env = Vec::with_capacity(spec.env.len() + 1);
    for (key, value) in &spec.env {
        check_env_key(key)?;
        env.push(format!("{key}={value}"));
    }
    env.push("TALON_CLI=1".to_owned());
    let mounts = spec
        .binds
        .iter()
        .map(|bind| engine_mount(bind, depth))
        .collect::<Result<Vec<_>, _>>()?;
    let mut security_opt = vec!["no-new-privileges".to_owned()];
    security_opt.extend(spec.security_opts.iter().cloned());
    let limits = &spec.limits;
    let host_config = HostConfig {
        init: Some(true),
        readonly_rootfs: Some(spec.read_only_root),
        tmpfs: Some(tmpfs_map(&spec.tmpfs, spec.tmpfs_size_bytes)),
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
        mounts: Some(mounts),
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
