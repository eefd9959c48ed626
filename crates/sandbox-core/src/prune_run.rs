//! One prune pass over every registered backend: [`prune_sandboxes`].
//!
//! List each backend's owned sandboxes, keep those this state dir's
//! [`UsageStore`] has a record of (as OpenClaw prunes only the entries of
//! its own registry: a container another Talon instance on the same engine
//! uses is not judged by times this one never saw), take the later of the
//! backend's last use and the store's, decide with [`prune_candidates`],
//! and remove each candidate through its backend, after checking again
//! under a [`RemovalGuard`](crate::RemovalGuard) that no call started in
//! it meanwhile (in this process, or in another one per the usage file's
//! busy heartbeat) and that it is still past its limit.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde::Serialize;

use crate::activity::{SandboxActivity, SandboxKey};
use crate::backend::OwnedSandbox;
use crate::error::SandboxError;
use crate::prune::{PruneReason, PruneSettings, PruneVerdict, prune_candidates, prune_verdict};
use crate::registry::SandboxBackendRegistry;
use crate::usage_store::{UsageRecord, UsageStore};

/// How a pass runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PruneOptions {
    /// "Now", ms since the epoch (injected so tests can age sandboxes).
    pub now_ms: u64,
    /// Decide and report, remove nothing.
    pub dry_run: bool,
}

/// Why a candidate was not removed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum PruneSkip {
    /// A call is in flight in it.
    Busy,
    /// `--dry-run`.
    DryRun,
    /// Checked again right before removal: it was used meanwhile.
    UsedMeanwhile,
    /// The backend could not remove it.
    Failed,
}

/// One candidate and what happened to it. The JSON shape is stable:
/// `{backend, name, scopeKey, reason, idleHours, ageDays, removed}` plus
/// `skipped` / `error` when it was not removed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PruneOutcome {
    /// The backend id.
    pub backend: String,
    /// The sandbox name.
    pub name: String,
    /// Its scope key, when known.
    pub scope_key: Option<String>,
    /// `idle` or `max-age`.
    pub reason: PruneReason,
    /// Whole hours since its last use.
    pub idle_hours: u64,
    /// Whole days since its creation, when known.
    pub age_days: Option<u64>,
    /// The settings that applied.
    pub settings: PruneSettings,
    /// Whether it was removed.
    pub removed: bool,
    /// Why not, when it was not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub skipped: Option<PruneSkip>,
    /// The backend's error, when removal failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// A backend whose sandboxes could not be listed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BackendFailure {
    /// The backend id.
    pub backend: String,
    /// What went wrong.
    pub error: SandboxError,
}

impl Serialize for SandboxError {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// What a pass did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PruneReport {
    /// Every candidate, sorted by backend and name.
    pub outcomes: Vec<PruneOutcome>,
    /// Backends that could not be listed (their sandboxes were left alone).
    pub failures: Vec<BackendFailure>,
    /// Owned sandboxes the usage file has no record of (made by another
    /// Talon instance or before use was recorded): never pruned
    /// automatically; `talon sandbox rm` removes them.
    pub untracked: Vec<SandboxKey>,
}

/// Which sandboxes a pass looks at, and the settings of each.
pub struct PruneScope<'a> {
    /// The settings of a sandbox (from its scope key's owner).
    pub settings_for: &'a (dyn Fn(&OwnedSandbox) -> PruneSettings + Send + Sync),
    /// Whether a sandbox is considered at all (`--agent`, tests).
    pub select: &'a (dyn Fn(&OwnedSandbox) -> bool + Send + Sync),
}

impl std::fmt::Debug for PruneScope<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PruneScope").finish_non_exhaustive()
    }
}

/// Run one pass (see the module docs). An unreadable usage file stops the
/// pass before anything is listed; a backend that cannot list is reported
/// in [`PruneReport::failures`] and the others still run.
pub async fn prune_sandboxes(
    backends: &SandboxBackendRegistry,
    store: &UsageStore,
    activity: &Arc<SandboxActivity>,
    scope: &PruneScope<'_>,
    options: PruneOptions,
) -> Result<PruneReport, SandboxError> {
    let usage = store.read()?;
    let mut report = PruneReport::default();
    let mut owned: Vec<OwnedSandbox> = Vec::new();
    for id in backends.ids() {
        let Some(backend) = backends.get(&id) else {
            continue;
        };
        match backend.list_owned().await {
            Ok(list) => owned.extend(list.into_iter().filter(|s| (scope.select)(s))),
            Err(error) => report.failures.push(BackendFailure { backend: id, error }),
        }
    }
    owned.retain(|s| {
        let key = key_of(s);
        let tracked = usage.contains_key(&key);
        if !tracked {
            report.untracked.push(key);
        }
        tracked
    });
    report.untracked.sort();
    for s in &mut owned {
        s.last_used_at_ms = merged_last_use(s, usage.get(&key_of(s)));
    }
    let busy = |s: &OwnedSandbox| {
        let key = key_of(s);
        activity.in_flight(&key) > 0 || usage.get(&key).is_some_and(|r| r.busy_at(options.now_ms))
    };
    let candidates = prune_candidates(&owned, scope.settings_for, busy, options.now_ms);
    for c in candidates {
        let mut outcome = PruneOutcome {
            backend: c.sandbox.backend_id.clone(),
            name: c.sandbox.name.clone(),
            scope_key: c.sandbox.scope_key.clone(),
            reason: c.reason,
            idle_hours: c.idle_hours,
            age_days: c.age_days,
            settings: c.settings,
            removed: false,
            skipped: None,
            error: None,
        };
        if c.busy {
            outcome.skipped = Some(PruneSkip::Busy);
        } else if options.dry_run {
            outcome.skipped = Some(PruneSkip::DryRun);
        } else {
            remove_one(
                backends,
                store,
                activity,
                &c.sandbox,
                c.settings,
                options,
                &mut outcome,
            )
            .await;
        }
        report.outcomes.push(outcome);
    }
    Ok(report)
}

fn key_of(s: &OwnedSandbox) -> SandboxKey {
    SandboxKey::new(&s.backend_id, &s.name)
}

fn merged_last_use(s: &OwnedSandbox, record: Option<&UsageRecord>) -> Option<u64> {
    match (s.last_used_at_ms, record.map(|r| r.last_used_at_ms)) {
        (Some(a), Some(b)) => Some(a.max(b)),
        (a, b) => a.or(b),
    }
}

async fn remove_one(
    backends: &SandboxBackendRegistry,
    store: &UsageStore,
    activity: &Arc<SandboxActivity>,
    sandbox: &OwnedSandbox,
    settings: PruneSettings,
    options: PruneOptions,
    outcome: &mut PruneOutcome,
) {
    let key = key_of(sandbox);
    // New calls wait while the guard is held; one in flight refuses it.
    let Some(_guard) = activity.begin_removal(&key) else {
        outcome.skipped = Some(PruneSkip::Busy);
        return;
    };
    // Check again with the usage file as it is now: another process may
    // have used the sandbox since the pass started.
    let fresh: BTreeMap<SandboxKey, UsageRecord> = match store.read() {
        Ok(map) => map,
        Err(e) => {
            outcome.skipped = Some(PruneSkip::Failed);
            outcome.error = Some(e.to_string());
            return;
        }
    };
    let record = fresh.get(&key);
    let verdict = prune_verdict(
        settings,
        sandbox.created_at_ms,
        merged_last_use(sandbox, record),
        record.is_some_and(|r| r.busy_at(options.now_ms)),
        options.now_ms,
    );
    match verdict {
        PruneVerdict::Prune(_) => {}
        PruneVerdict::Busy(_) => {
            outcome.skipped = Some(PruneSkip::Busy);
            return;
        }
        PruneVerdict::Keep => {
            outcome.skipped = Some(PruneSkip::UsedMeanwhile);
            return;
        }
    }
    let Some(backend) = backends.get(&sandbox.backend_id) else {
        outcome.skipped = Some(PruneSkip::Failed);
        outcome.error = Some(format!(
            "the `{}` backend is no longer registered",
            sandbox.backend_id
        ));
        return;
    };
    match backend.remove(&sandbox.name).await {
        Ok(()) => {
            outcome.removed = true;
            if let Err(e) = store.forget(&key) {
                tracing::warn!(sandbox = %sandbox.name, "pruned, but its usage record stays: {e}");
            }
        }
        Err(e) => {
            outcome.skipped = Some(PruneSkip::Failed);
            outcome.error = Some(e.to_string());
        }
    }
}

#[cfg(test)]
#[path = "prune_run_tests.rs"]
mod tests;
