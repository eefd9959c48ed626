//! Pruning SSH sandboxes over a real sshd: two marked remote workspaces, a
//! clock injected two days ahead, one of them used (per the usage file) an
//! hour before. A dry run removes nothing; the real pass removes exactly
//! the idle one, by its marker.

use super::common;

use std::path::Path;
use std::sync::Arc;

use common::{Sshd, host_dir};
use talon_sandbox_core::{
    OwnedSandbox, PruneOptions, PruneReason, PruneScope, PruneSettings, PruneSkip, SandboxActivity,
    SandboxBackend, SandboxBackendRegistry, SandboxKey, UsageRecord, UsageStore, WorkspaceAccess,
    now_ms, prune_sandboxes,
};
use talon_sandbox_ssh::SshBackend;

const HOUR_MS: u64 = 3_600_000;

#[tokio::test]
async fn dry_run_keeps_everything_and_the_real_pass_removes_the_idle_workspace() {
    let sshd = Sshd::start();
    let host = tempfile::tempdir().unwrap();
    let ws = host_dir(host.path(), "ws");
    std::fs::write(ws.join("a.txt"), b"host a").unwrap();
    let state = host.path().join("state");
    let idle = sshd.request(WorkspaceAccess::None, &ws, &state);
    let mut used = idle.clone();
    used.sandbox_name = format!("{}-used", idle.sandbox_name);
    used.scope_key = "agent:main:test:2".to_owned();
    let backend = Arc::new(SshBackend::new(None));
    backend.ensure(&idle).await.unwrap();
    backend.ensure(&used).await.unwrap();
    let root = Path::new(&sshd.remote_root()).to_path_buf();
    assert!(root.join(&idle.sandbox_name).is_dir());
    assert!(root.join(&used.sandbox_name).is_dir());

    // The markers carry creation and last ensure.
    let listed = backend.list_owned().await.unwrap();
    assert_eq!(listed.len(), 2, "{listed:?}");
    let start = now_ms();
    for s in &listed {
        let created = s.created_at_ms.unwrap();
        assert!(created <= start && start - created < 120_000, "{s:?}");
        assert!(s.last_used_at_ms.unwrap() >= created, "{s:?}");
    }

    let registry = SandboxBackendRegistry::new();
    registry.register("ssh", backend.clone());
    let store = UsageStore::new(&state);
    let later = start + 48 * HOUR_MS;
    store
        .set(
            &SandboxKey::new("ssh", &idle.sandbox_name),
            UsageRecord {
                last_used_at_ms: start,
                busy_at_ms: None,
            },
        )
        .unwrap();
    store
        .set(
            &SandboxKey::new("ssh", &used.sandbox_name),
            UsageRecord {
                last_used_at_ms: later - HOUR_MS,
                busy_at_ms: None,
            },
        )
        .unwrap();
    let settings_for = |_: &OwnedSandbox| PruneSettings::default();
    let select = |_: &OwnedSandbox| true;
    let scope = PruneScope {
        settings_for: &settings_for,
        select: &select,
    };
    let activity = SandboxActivity::new();
    let options = |dry_run| PruneOptions {
        now_ms: later,
        dry_run,
    };

    let report = prune_sandboxes(&registry, &store, &activity, &scope, options(true))
        .await
        .unwrap();
    assert!(report.failures.is_empty(), "{report:?}");
    assert_eq!(report.outcomes.len(), 1, "{report:?}");
    let o = &report.outcomes[0];
    assert_eq!(o.backend, "ssh");
    assert_eq!(o.name, idle.sandbox_name);
    assert_eq!(o.reason, PruneReason::Idle);
    assert_eq!(o.idle_hours, 48);
    assert_eq!(o.skipped, Some(PruneSkip::DryRun));
    assert!(
        root.join(&idle.sandbox_name).is_dir(),
        "the dry run removed it"
    );

    let report = prune_sandboxes(&registry, &store, &activity, &scope, options(false))
        .await
        .unwrap();
    assert_eq!(report.outcomes.len(), 1, "{report:?}");
    assert!(report.outcomes[0].removed, "{report:?}");
    assert!(!root.join(&idle.sandbox_name).exists());
    assert!(root.join(&used.sandbox_name).is_dir());
    let names: Vec<String> = backend
        .list_owned()
        .await
        .unwrap()
        .into_iter()
        .map(|s| s.name)
        .collect();
    assert_eq!(names, vec![used.sandbox_name.clone()]);
}
