//! `talon sandbox ls|rm|recreate`: the Docker containers Talon owns, found
//! by their `talon.sandbox=1` label only (a container that merely has a
//! matching name is never touched).

use std::fmt::Write as _;

use anyhow::{Context, Result, anyhow, bail};
use serde_json::{Value, json};
use talon_sandbox_core::SandboxError;
use talon_sandbox_docker::{DockerBackend, SandboxContainer};

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

/// `talon sandbox ls`: every container labelled as Talon's.
pub(crate) fn sandbox_ls(json: bool, out: &mut String) -> Result<Status> {
    let containers = block_on(async {
        let docker = connect().await?;
        docker.list_containers().await.map_err(|e| anyhow!("{e}"))
    })?;
    if json {
        let list: Vec<Value> = containers.iter().map(container_json).collect();
        writeln!(out, "{}", serde_json::to_string_pretty(&list)?)?;
        return Ok(Status::Ok);
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
    names: &[String],
    all: bool,
    json: bool,
    out: &mut String,
) -> Result<Status> {
    if names.is_empty() && !all {
        bail!("name the containers to remove (see `talon sandbox ls`), or pass --all");
    }
    let (removed, missing) = block_on(async {
        let docker = connect().await?;
        if all {
            let removed = docker.remove_all().await.map_err(|e| anyhow!("{e}"))?;
            return Ok((removed, Vec::new()));
        }
        let mut removed = Vec::new();
        let mut missing = Vec::new();
        for name in names {
            match docker.remove_owned(name).await {
                Ok(true) => removed.push(name.clone()),
                // Absent, or present without Talon's label: left alone.
                Ok(false) | Err(SandboxError::Config(_)) => missing.push(name.clone()),
                Err(e) => return Err(anyhow!("{e}")),
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
                "{name}: no container Talon owns has this name (see `talon sandbox ls`)"
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
        return sandbox_rm(&[], true, json, out);
    }
    let loaded = load_config(ctx)?;
    let (request, session) = crate::sandbox_cmd::request_for(ctx, &loaded.config);
    let name = request.sandbox_name.clone();
    let removed = block_on(async {
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
