//! `talon sandbox prune [--dry-run] [--json] [--agent ID | --all]`: one
//! prune pass, the same decision the gateway's timer takes
//! (`talon_sandbox_core::prune_sandboxes`), over the Docker containers and
//! the SSH workspaces Talon owns. Last use comes from the usage file under
//! the state dir, which the gateway and `talon tools call` keep; a
//! sandbox with a call running in the gateway is kept (its busy heartbeat
//! in that file).

use std::fmt::Write as _;
use std::io::Write as _;
use std::sync::Arc;

use anyhow::{Context, Result, bail};
use serde_json::{Value, json};
use talon_sandbox_core::{
    OwnedSandbox, PruneOptions, PruneOutcome, PruneScope, SandboxActivity, SandboxBackendRegistry,
    ScopeOwner, UsageStore, now_ms, prune_sandboxes, scope_owner,
};
use talon_sandbox_docker::DockerBackend;
use talon_sandbox_ssh::SshBackend;

use crate::Status;
use crate::cli::ContextArgs;
use crate::commands::load_config;
use crate::sandbox_manage::ssh_targets;
use crate::table;

/// The stable JSON form of one outcome.
fn outcome_json(o: &PruneOutcome) -> Value {
    let mut v = json!({
        "backend": o.backend,
        "name": o.name,
        "scopeKey": o.scope_key,
        "reason": o.reason.as_str(),
        "idleHours": o.idle_hours,
        "ageDays": o.age_days,
        "removed": o.removed,
    });
    if let (Some(map), Some(skipped)) = (v.as_object_mut(), &o.skipped) {
        map.insert("skipped".into(), json!(skipped));
        if let Some(error) = &o.error {
            map.insert("error".into(), json!(error));
        }
    }
    v
}

/// `talon sandbox prune`: exit 0 when the pass ran, 1 when a backend could
/// not be listed or a sandbox could not be removed.
pub(crate) fn sandbox_prune(
    ctx: &ContextArgs,
    all: bool,
    dry_run: bool,
    json: bool,
    out: &mut String,
) -> Result<Status> {
    if all && ctx.agent.is_some() {
        bail!("--agent and --all exclude each other: name one agent, or prune every sandbox");
    }
    let loaded = load_config(ctx)?;
    let config = Arc::new(loaded.config);
    let agent = ctx.agent.as_deref().map(|a| a.trim().to_lowercase());
    let default_agent = config.default_agent_id();
    let state_dir = talon_config::state_dir();
    let store_path = UsageStore::new(&state_dir).path().to_path_buf();
    let targets = ssh_targets(&config);
    let report = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?
        .block_on(async {
            let backends = SandboxBackendRegistry::new();
            let mut failures = Vec::new();
            match DockerBackend::connect().await {
                Ok(docker) => {
                    backends.register("docker", Arc::new(docker));
                }
                // Only an error worth reporting when Docker is in use.
                Err(e) if targets.is_empty() => failures.push(("docker".to_owned(), e)),
                Err(_) => {}
            }
            if !targets.is_empty() {
                let ssh = SshBackend::new(talon_config::home_dir()).with_targets(targets.clone());
                backends.register("ssh", Arc::new(ssh));
            }
            let store = UsageStore::new(&state_dir);
            let settings = Arc::clone(&config);
            let settings_for =
                move |s: &OwnedSandbox| settings.sandbox_prune_settings(s.scope_key.as_deref());
            let select = |s: &OwnedSandbox| match &agent {
                None => true,
                Some(wanted) => match s.scope_key.as_deref().map(scope_owner) {
                    Some(ScopeOwner::Agent(id)) => &id == wanted,
                    Some(ScopeOwner::DefaultAgent) => wanted == &default_agent,
                    Some(ScopeOwner::Shared) | None => false,
                },
            };
            let scope = PruneScope {
                settings_for: &settings_for,
                select: &select,
            };
            let options = PruneOptions {
                now_ms: now_ms(),
                dry_run,
            };
            let mut report = prune_sandboxes(
                &backends,
                &store,
                &SandboxActivity::process(),
                &scope,
                options,
            )
            .await
            .map_err(|e| anyhow::anyhow!("{e}"))?;
            for (backend, error) in failures {
                report
                    .failures
                    .push(talon_sandbox_core::BackendFailure { backend, error });
            }
            anyhow::Ok(report)
        })?;
    let failed = !report.failures.is_empty() || report.outcomes.iter().any(|o| o.error.is_some());
    if json {
        let list: Vec<Value> = report.outcomes.iter().map(outcome_json).collect();
        writeln!(out, "{}", serde_json::to_string_pretty(&list)?)?;
    } else {
        for f in &report.failures {
            writeln!(out, "{}: {}", f.backend, f.error)?;
        }
        if !report.untracked.is_empty() {
            let names: Vec<&str> = report.untracked.iter().map(|k| k.name.as_str()).collect();
            writeln!(
                out,
                "left alone (no use recorded in {}; remove by hand with `talon sandbox rm`): {}",
                store_path.display(),
                names.join(", ")
            )?;
        }
        if report.outcomes.is_empty() {
            writeln!(out, "nothing to prune")?;
        } else {
            let rows: Vec<Vec<String>> = report
                .outcomes
                .iter()
                .map(|o| {
                    vec![
                        o.backend.clone(),
                        o.name.clone(),
                        o.scope_key.clone().unwrap_or_else(|| "-".into()),
                        o.reason.as_str().into(),
                        format!("{} h", o.idle_hours),
                        o.age_days.map_or_else(|| "-".into(), |d| format!("{d} d")),
                        match (&o.skipped, o.removed) {
                            (_, true) => "removed".into(),
                            (Some(s), false) => serde_json::to_value(s)
                                .ok()
                                .and_then(|v| v.as_str().map(str::to_owned))
                                .unwrap_or_else(|| "kept".into()),
                            (None, false) => "kept".into(),
                        },
                    ]
                })
                .collect();
            out.push_str(&table::render(
                &[
                    "BACKEND", "NAME", "SCOPE", "REASON", "IDLE", "AGE", "RESULT",
                ],
                &rows,
            ));
        }
    }
    if failed {
        // In JSON mode the list stays parseable; the failures go to stderr.
        if json {
            let mut err = std::io::stderr().lock();
            for f in &report.failures {
                let _ = writeln!(err, "talon: {}: {}", f.backend, f.error);
            }
        }
        return Ok(Status::No);
    }
    Ok(Status::Ok)
}
