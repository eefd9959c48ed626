//! The gateway's sandbox pruning timer: a first pass shortly after start,
//! then one every [`PRUNE_EVERY`], each over every backend of the current
//! configuration (`prune.idleHours` / `prune.maxAgeDays` per sandbox, from
//! its scope key's agent), logging what it removed. A sandbox with a call
//! in flight is never removed (see `talon_sandbox_core::prune_sandboxes`).

use std::sync::Arc;
use std::time::Duration;

use talon_sandbox_core::{
    OwnedSandbox, PruneOptions, PruneReport, PruneScope, PruneSkip, SandboxActivity, SandboxError,
    SandboxErrorKind, UsageStore, now_ms, prune_sandboxes,
};

use crate::gateway::Gateway;

/// The first pass runs this long after the gateway starts.
pub const FIRST_PRUNE_AFTER: Duration = Duration::from_secs(60);
/// Then one pass this often (OpenClaw prunes at most every 5 minutes).
pub const PRUNE_EVERY: Duration = Duration::from_secs(5 * 60);

impl Gateway {
    /// Start the pruning timer (stops with the gateway).
    pub(crate) fn prune_sandboxes_periodically(&self) {
        let weak = Arc::downgrade(&self.inner);
        tokio::spawn(async move {
            tokio::time::sleep(FIRST_PRUNE_AFTER).await;
            let mut tick = tokio::time::interval(PRUNE_EVERY);
            tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                tick.tick().await;
                let Some(inner) = weak.upgrade() else { break };
                let gw = Gateway { inner };
                if gw.is_shutting_down() {
                    break;
                }
                match gw.prune_sandboxes(false).await {
                    Ok(report) => log_report(&report),
                    Err(e) => tracing::warn!("sandbox prune skipped: {e}"),
                }
            }
        });
    }

    /// One prune pass over the current configuration's backends
    /// (`dry_run`: decide and report only). Sandbox state is read from the
    /// runtime's state dir, where its runs record their use.
    pub async fn prune_sandboxes(&self, dry_run: bool) -> Result<PruneReport, SandboxError> {
        let generation = self.generation();
        let runtime = Arc::clone(&generation.runtime);
        let (Some(backends), Some(state_dir)) =
            (runtime.sandbox_backends(), runtime.sandbox_state_dir())
        else {
            return Ok(PruneReport::default());
        };
        let store = UsageStore::new(state_dir);
        let config = Arc::clone(&generation.config);
        let settings_for =
            move |s: &OwnedSandbox| config.sandbox_prune_settings(s.scope_key.as_deref());
        let select = |_: &OwnedSandbox| true;
        let scope = PruneScope {
            settings_for: &settings_for,
            select: &select,
        };
        let options = PruneOptions {
            now_ms: now_ms(),
            dry_run,
        };
        prune_sandboxes(
            backends,
            &store,
            &SandboxActivity::process(),
            &scope,
            options,
        )
        .await
    }
}

/// Log what a pass did: removals at `info`, failures at `warn`, an engine
/// that is simply not there (no Docker on this machine) at `debug`.
pub(crate) fn log_report(report: &PruneReport) {
    for o in &report.outcomes {
        let age = o
            .age_days
            .map_or_else(|| "unknown".to_owned(), |d| format!("{d} d"));
        if o.removed {
            tracing::info!(
                backend = %o.backend,
                sandbox = %o.name,
                reason = o.reason.as_str(),
                idle_hours = o.idle_hours,
                age = %age,
                "pruned sandbox {} ({}; idle {} h, age {age})",
                o.name,
                o.reason.as_str(),
                o.idle_hours
            );
        } else if o.skipped == Some(PruneSkip::Failed) {
            tracing::warn!(
                backend = %o.backend,
                sandbox = %o.name,
                "could not prune sandbox {}: {}",
                o.name,
                o.error.as_deref().unwrap_or("unknown error")
            );
        } else {
            tracing::debug!(backend = %o.backend, sandbox = %o.name, skipped = ?o.skipped, "sandbox past its prune limit kept");
        }
    }
    if !report.untracked.is_empty() {
        tracing::debug!(
            count = report.untracked.len(),
            "sandboxes with no recorded use in this state dir were left alone"
        );
    }
    for f in &report.failures {
        match f.error.kind() {
            SandboxErrorKind::EngineUnavailable => {
                tracing::debug!(backend = %f.backend, "sandbox prune: {}", f.error);
            }
            _ => {
                tracing::warn!(backend = %f.backend, "sandbox prune: cannot list sandboxes: {}", f.error)
            }
        }
    }
}
