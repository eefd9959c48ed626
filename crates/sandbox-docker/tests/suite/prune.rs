//! Pruning Docker sandboxes on the machine's real engine (the engine and
//! test image come from `cargo xtask docker-up`): four containers, a clock
//! injected eight days ahead, per-sandbox settings and one recorded use.
//! A dry run removes nothing; the real pass removes exactly the expired
//! ones (one by age, one by idleness) and keeps the others.

use super::common;

use std::sync::Arc;

use common::{Cleanup, backend, spec, unique, workspace};
use talon_sandbox_core::{
    OwnedSandbox, PruneOptions, PruneReason, PruneScope, PruneSettings, PruneSkip, SandboxActivity,
    SandboxBackendRegistry, SandboxKey, UsageRecord, UsageStore, now_ms, prune_sandboxes,
};

const HOUR_MS: u64 = 3_600_000;
const DAY_MS: u64 = 24 * HOUR_MS;

#[tokio::test]
async fn dry_run_removes_nothing_and_the_real_pass_removes_exactly_the_expired() {
    let docker = backend().await;
    let ws = workspace();
    let names = [
        "prune-old",
        "prune-idle",
        "prune-used",
        "prune-long",
        "prune-untracked",
    ];
    let _cleanup = Cleanup(names.iter().map(|n| unique(n)).collect());
    for n in names {
        docker
            .ensure_container(&spec(n, ws.path(), "h1"))
            .await
            .unwrap();
    }
    let registry = SandboxBackendRegistry::new();
    registry.register("docker", Arc::new(docker.clone()));
    let state = tempfile::tempdir().unwrap();
    let store = UsageStore::new(state.path());

    // Eight days from now every container is eight days old and has not
    // been used since it was created, except `prune-used`, whose use an
    // hour before "now" is in the usage file. `prune-untracked` has no
    // record in this state dir (another Talon instance's, say): never
    // pruned automatically.
    let start = now_ms();
    let later = start + 8 * DAY_MS;
    for n in ["prune-old", "prune-idle", "prune-long"] {
        store
            .set(
                &SandboxKey::new("docker", &unique(n)),
                UsageRecord {
                    last_used_at_ms: start,
                    busy_at_ms: None,
                },
            )
            .unwrap();
    }
    store
        .set(
            &SandboxKey::new("docker", &unique("prune-used")),
            UsageRecord {
                last_used_at_ms: later - HOUR_MS,
                busy_at_ms: None,
            },
        )
        .unwrap();
    let settings_for = |s: &OwnedSandbox| {
        let (idle_hours, max_age_days) = if s.name == unique("prune-old") {
            (0, 7)
        } else if s.name == unique("prune-long") {
            (9 * 24, 0)
        } else {
            (24, 0)
        };
        PruneSettings {
            idle_hours,
            max_age_days,
        }
    };
    let prefix = unique("prune-");
    let select = move |s: &OwnedSandbox| s.name.starts_with(&prefix);
    let scope = PruneScope {
        settings_for: &settings_for,
        select: &select,
    };
    let activity = SandboxActivity::new();
    let pass = |dry_run| {
        prune_sandboxes(
            &registry,
            &store,
            &activity,
            &scope,
            PruneOptions {
                now_ms: later,
                dry_run,
            },
        )
    };
    let summary = |report: &talon_sandbox_core::PruneReport| -> Vec<(String, PruneReason, bool)> {
        report
            .outcomes
            .iter()
            .map(|o| (o.name.clone(), o.reason, o.removed))
            .collect()
    };
    let mine = || async {
        let mut names: Vec<String> = docker
            .list_containers()
            .await
            .unwrap()
            .into_iter()
            .map(|c| c.name)
            .filter(|n| n.starts_with(&unique("prune-")))
            .collect();
        names.sort();
        names
    };

    let report = pass(true).await.unwrap();
    assert!(report.failures.is_empty(), "{report:?}");
    assert_eq!(
        summary(&report),
        vec![
            (unique("prune-idle"), PruneReason::Idle, false),
            (unique("prune-old"), PruneReason::MaxAge, false),
        ]
    );
    assert!(
        report
            .outcomes
            .iter()
            .all(|o| o.skipped == Some(PruneSkip::DryRun))
    );
    assert_eq!(report.outcomes[0].idle_hours, 8 * 24);
    assert_eq!(report.outcomes[1].age_days, Some(8));
    assert_eq!(
        report.untracked,
        vec![SandboxKey::new("docker", &unique("prune-untracked"))]
    );
    assert_eq!(mine().await.len(), 5, "the dry run removed something");

    let report = pass(false).await.unwrap();
    assert_eq!(
        summary(&report),
        vec![
            (unique("prune-idle"), PruneReason::Idle, true),
            (unique("prune-old"), PruneReason::MaxAge, true),
        ]
    );
    let mut kept = vec![
        unique("prune-long"),
        unique("prune-untracked"),
        unique("prune-used"),
    ];
    kept.sort();
    assert_eq!(mine().await, kept);

    // A sandbox with a lease held is kept even when it is past its limit.
    let key = SandboxKey::new("docker", &unique("prune-long"));
    let lease = activity.lease(&key).await;
    let far = PruneOptions {
        now_ms: later + 30 * DAY_MS,
        dry_run: false,
    };
    let report = prune_sandboxes(&registry, &store, &activity, &scope, far)
        .await
        .unwrap();
    let long = report
        .outcomes
        .iter()
        .find(|o| o.name == unique("prune-long"))
        .unwrap();
    assert!(!long.removed);
    assert_eq!(long.skipped, Some(PruneSkip::Busy));
    assert!(mine().await.contains(&unique("prune-long")));
    drop(lease);
}
