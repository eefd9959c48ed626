//! `talon sandbox ls|rm|recreate`: the Docker containers Talon owns, found
//! by their `talon.sandbox=1` label only (a container that merely has a
//! matching name is never touched), and the remote workspaces of the `ssh`
//! backend on every configured SSH host, found by their marker file only.

use std::fmt::Write as _;

use anyhow::{Context, Result, anyhow, bail};
use serde_json::{Value, json};
use talon_config::TalonConfig;
use talon_sandbox_core::{OwnedSandbox, SandboxErrorKind};
use talon_sandbox_docker::{DockerBackend, SandboxContainer};
use talon_sandbox_ssh::{SshBackend, SshTarget};

use crate::Status;
use crate::cli::ContextArgs;
use crate::commands::load_config;
use crate::table;

fn block_on<T>(f: impl std::future::Future<Output = Result<T>>) -> Result<T> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?
        .block_on(f)
}

async fn connect() -> Result<DockerBackend> {
    DockerBackend::connect().await.map_err(|e| anyhow!("{e}"))
}

/// The SSH targets of every agent (and the defaults) whose sandbox
/// backend is `ssh` and names a host, de-duplicated.
pub(crate) fn ssh_targets(config: &TalonConfig) -> Vec<SshTarget> {
    let home = talon_config::home_dir();
    let state = talon_config::state_dir();
    let mut ids = config.agent_ids();
    ids.push(config.default_agent_id());
    let mut out: Vec<SshTarget> = Vec::new();
    for id in ids {
        let resolved = config.resolved_sandbox_config(&id, &state, home.as_deref());
        if resolved.backend != "ssh" {
            continue;
        }
        if let Ok(target) = SshTarget::from_settings(&resolved.ssh, home.as_deref())
            && !out.iter().any(|t| {
                t.display() == target.display() && t.workspace_root == target.workspace_root
            })
        {
            out.push(target);
        }
    }
    out
}

/// Whether any agent (or the default one) resolves to the `docker`
/// backend: only then is a missing Docker engine an error for `ls`.
fn docker_configured(config: &TalonConfig) -> bool {
    let home = talon_config::home_dir();
    let state = talon_config::state_dir();
    let mut ids = config.agent_ids();
    ids.push(config.default_agent_id());
    ids.iter().any(|id| {
        config
            .resolved_sandbox_config(id, &state, home.as_deref())
            .backend
            == "docker"
    })
}

fn ssh_backend(ctx: &ContextArgs) -> Result<Option<(SshBackend, Vec<SshTarget>)>> {
    let loaded = load_config(ctx)?;
    let targets = ssh_targets(&loaded.config);
    if targets.is_empty() {
        return Ok(None);
    }
    let backend = SshBackend::new(talon_config::home_dir()).with_targets(targets.clone());
    Ok(Some((backend, targets)))
}

fn ssh_json(s: &OwnedSandbox) -> Value {
    json!({
        "backend": "ssh",
        "name": s.name,
        "scopeKey": s.scope_key,
        "location": s.image,
        "configHash": s.config_hash,
        "createdAtMs": s.created_at_ms,
        "lastUsedAtMs": s.last_used_at_ms,
    })
}

fn container_json(c: &SandboxContainer) -> Value {
    json!({
        "name": c.name,
        "scopeKey": c.scope_key,
        "running": c.running,
        "image": c.image,
        "configHash": c.config_hash,
        "createdAtMs": c.created_at_ms,
    })
}

/// `talon sandbox ls`: every container labelled as Talon's, and every
/// marked remote workspace on the configured SSH hosts.
pub(crate) fn sandbox_ls(ctx: &ContextArgs, json: bool, out: &mut String) -> Result<Status> {
    let ssh = ssh_backend(ctx)?;
    let docker_needed = docker_configured(&load_config(ctx)?.config);
    let (containers, remote, docker_note) = block_on(async {
        let docker = async {
            let docker = connect().await?;
            docker.list_containers().await.map_err(|e| anyhow!("{e}"))
        }
        .await;
        let (containers, note) = match (docker, &ssh) {
            (Ok(c), _) => (c, None),
            // With SSH hosts configured, or when no agent uses the
            // `docker` backend (e.g. only `local`), a missing engine is a
            // note.
            (Err(e), Some(_)) => (Vec::new(), Some(e.to_string())),
            (Err(e), None) if !docker_needed => (Vec::new(), Some(e.to_string())),
            (Err(e), None) => return Err(e),
        };
        let remote = match &ssh {
            Some((backend, targets)) => {
                let mut all = Vec::new();
                for target in targets {
                    all.extend(backend.list_on(target).await.map_err(|e| anyhow!("{e}"))?);
                }
                all
            }
            None => Vec::new(),
        };
        Ok((containers, remote, note))
    })?;
    if json {
        let mut list: Vec<Value> = containers.iter().map(container_json).collect();
        list.extend(remote.iter().map(ssh_json));
        writeln!(out, "{}", serde_json::to_string_pretty(&list)?)?;
        return Ok(Status::Ok);
    }
    if let Some(note) = docker_note {
        writeln!(out, "docker: {note}")?;
    }
    if !remote.is_empty() {
        let rows: Vec<Vec<String>> = remote
            .iter()
            .map(|s| {
                vec![
                    s.name.clone(),
                    s.scope_key.clone().unwrap_or_else(|| "-".into()),
                    s.image.clone().unwrap_or_else(|| "-".into()),
                    s.config_hash
                        .as_deref()
                        .map_or_else(|| "-".into(), |h| h.chars().take(12).collect()),
                ]
            })
            .collect();
        out.push_str("ssh sandboxes:\n");
        out.push_str(&table::render(
            &["NAME", "SCOPE", "LOCATION", "CONFIG HASH"],
            &rows,
        ));
        if containers.is_empty() {
            return Ok(Status::Ok);
        }
    }
    if containers.is_empty() {
        writeln!(out, "no sandbox containers")?;
        return Ok(Status::Ok);
    }
    let rows: Vec<Vec<String>> = containers
        .iter()
        .map(|c| {
            vec![
                c.name.clone(),
                c.scope_key.clone().unwrap_or_else(|| "-".into()),
                if c.running { "running" } else { "stopped" }.into(),
                c.image.clone().unwrap_or_else(|| "-".into()),
                c.config_hash
                    .as_deref()
                    .map_or_else(|| "-".into(), |h| h.chars().take(12).collect()),
            ]
        })
        .collect();
    out.push_str(&table::render(
        &["NAME", "SCOPE", "STATE", "IMAGE", "CONFIG HASH"],
        &rows,
    ));
    Ok(Status::Ok)
}

/// `talon sandbox rm NAME...|--all`: remove owned containers; exit 1 when
/// a named one is not Talon's (or does not exist).
pub(crate) fn sandbox_rm(
    ctx: &ContextArgs,
    names: &[String],
    all: bool,
    json: bool,
    out: &mut String,
) -> Result<Status> {
    if names.is_empty() && !all {
        bail!("name the containers to remove (see `talon sandbox ls`), or pass --all");
    }
    let ssh = ssh_backend(ctx)?;
    let (removed, missing) = block_on(async {
        let docker = match (connect().await, &ssh) {
            (Ok(d), _) => Some(d),
            (Err(_), Some(_)) => None,
            (Err(e), None) => return Err(e),
        };
        let mut removed = Vec::new();
        if all {
            if let Some(docker) = &docker {
                removed = docker.remove_all().await.map_err(|e| anyhow!("{e}"))?;
            }
            if let Some((backend, targets)) = &ssh {
                for target in targets {
                    for owned in backend.list_on(target).await.map_err(|e| anyhow!("{e}"))? {
                        if backend
                            .remove_on(target, &owned.name)
                            .await
                            .map_err(|e| anyhow!("{e}"))?
                        {
                            removed.push(owned.name);
                        }
                    }
                }
            }
            return Ok((removed, Vec::new()));
        }
        let mut missing = Vec::new();
        for name in names {
            let in_docker = match &docker {
                Some(docker) => match docker.remove_owned(name).await {
                    Ok(found) => found,
                    // Present without Talon's label: left alone.
                    Err(e) if e.kind() == SandboxErrorKind::Config => false,
                    Err(e) => return Err(anyhow!("{e}")),
                },
                None => false,
            };
            if in_docker {
                removed.push(name.clone());
                continue;
            }
            let mut in_ssh = false;
            if let Some((backend, targets)) = &ssh {
                for target in targets {
                    match backend.remove_on(target, name).await {
                        Ok(true) => in_ssh = true,
                        // Absent, or a directory without Talon's marker.
                        Ok(false) => {}
                        Err(e) if e.kind() == SandboxErrorKind::Config => {}
                        Err(e) => return Err(anyhow!("{e}")),
                    }
                }
            }
            if in_ssh {
                removed.push(name.clone());
            } else {
                missing.push(name.clone());
            }
        }
        Ok((removed, missing))
    })?;
    if json {
        writeln!(
            out,
            "{}",
            serde_json::to_string_pretty(&json!({ "removed": removed, "notOwned": missing }))?
        )?;
    } else {
        for name in &removed {
            writeln!(out, "removed {name}")?;
        }
        for name in &missing {
            writeln!(
                out,
                "{name}: no sandbox Talon owns has this name (see `talon sandbox ls`)"
            )?;
        }
    }
    Ok(if missing.is_empty() {
        Status::Ok
    } else {
        Status::No
    })
}

/// `talon sandbox recreate [--all]`: remove the container of the session's
/// scope (`--session`, `--agent`), or every owned one; the next sandboxed
/// call creates it again with the current configuration.
pub(crate) fn sandbox_recreate(
    ctx: &ContextArgs,
    all: bool,
    json: bool,
    out: &mut String,
) -> Result<Status> {
    if all {
        return sandbox_rm(ctx, &[], true, json, out);
    }
    let loaded = load_config(ctx)?;
    let (request, _) = crate::sandbox_cmd::request_for(ctx, &loaded.config)?;
    let session = request.session_key.clone();
    let name = request.sandbox_name.clone();
    if request.config.backend == "local" {
        // Nothing to remove: every command is a fresh bubblewrap run.
        if json {
            let doc = json!({ "session": session, "scopeKey": request.scope_key, "name": name,
                "removed": false, "backend": "local" });
            writeln!(out, "{}", serde_json::to_string_pretty(&doc)?)?;
        } else {
            writeln!(
                out,
                "{name} (scope {}) uses the local backend, which keeps nothing between \
                 commands: every command already runs with the current config",
                request.scope_key
            )?;
        }
        return Ok(Status::Ok);
    }
    let removed = block_on(async {
        if request.config.backend == "ssh" {
            let backend = SshBackend::new(talon_config::home_dir());
            let target = backend.target_for(&request).map_err(|e| anyhow!("{e}"))?;
            return backend
                .remove_on(&target, &name)
                .await
                .map_err(|e| anyhow!("{e}"));
        }
        let docker = connect().await?;
        docker.remove_owned(&name).await.map_err(|e| anyhow!("{e}"))
    })?;
    if json {
        writeln!(
            out,
            "{}",
            serde_json::to_string_pretty(&json!({
                "session": session,
                "scopeKey": request.scope_key,
                "name": name,
                "removed": removed,
            }))?
        )?;
    } else if removed {
        writeln!(
            out,
            "removed {name} (scope {}); the next sandboxed call recreates it with the current config",
            request.scope_key
        )?;
    } else {
        writeln!(
            out,
            "{name} (scope {}) does not exist; the next sandboxed call creates it",
            request.scope_key
        )?;
    }
    Ok(Status::Ok)
}
