//! The pass's bookkeeping over a scripted backend (the real backends are
//! exercised against a real engine and sshd in their crates' tests).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Mutex;

use pretty_assertions::assert_eq;

use super::*;
use crate::backend::{SandboxHandle, SandboxRequest};
use crate::error::SandboxErrorKind;
use crate::usage_store::BUSY_FRESH;

const HOUR_MS: u64 = 3_600_000;
const NOW: u64 = 1_000 * HOUR_MS;

/// Owns `names` (created 100 h before [`NOW`]); removing `broken` fails;
/// listing marks `touched` as used at NOW in `store` (another process using
/// it while the pass runs).
#[derive(Debug)]
struct Scripted {
    names: Vec<&'static str>,
    store: Arc<UsageStore>,
    touched: Option<&'static str>,
    removed: Mutex<Vec<String>>,
}

#[async_trait::async_trait]
impl crate::backend::SandboxBackend for Scripted {
    fn id(&self) -> &str {
        "fake"
    }
    async fn ensure(&self, _: &SandboxRequest) -> Result<Arc<dyn SandboxHandle>, SandboxError> {
        Err(SandboxError::config("not used"))
    }
    async fn list_owned(&self) -> Result<Vec<OwnedSandbox>, SandboxError> {
        if let Some(name) = self.touched {
            self.store
                .set(
                    &SandboxKey::new("fake", name),
                    UsageRecord {
                        last_used_at_ms: NOW,
                        busy_at_ms: None,
                    },
                )
                .unwrap();
        }
        Ok(self
            .names
            .iter()
            .map(|n| {
                let mut s = OwnedSandbox::new("fake", n);
                s.created_at_ms = Some(NOW - 100 * HOUR_MS);
                s.scope_key = Some(format!("agent:{n}"));
                s
            })
            .collect())
    }
    async fn remove(&self, name: &str) -> Result<(), SandboxError> {
        if name == "broken" {
            return Err(SandboxError::engine_unavailable("engine went away"));
        }
        self.removed.lock().unwrap().push(name.to_owned());
        Ok(())
    }
}

#[derive(Debug)]
struct Down;

#[async_trait::async_trait]
impl crate::backend::SandboxBackend for Down {
    fn id(&self) -> &str {
        "down"
    }
    async fn ensure(&self, _: &SandboxRequest) -> Result<Arc<dyn SandboxHandle>, SandboxError> {
        Err(SandboxError::engine_unavailable("down"))
    }
    async fn list_owned(&self) -> Result<Vec<OwnedSandbox>, SandboxError> {
        Err(SandboxError::engine_unavailable("no engine"))
    }
    async fn remove(&self, _: &str) -> Result<(), SandboxError> {
        Err(SandboxError::engine_unavailable("down"))
    }
}

fn record(store: &UsageStore, name: &str, used_hours_ago: u64, busy_ms_ago: Option<u64>) {
    store
        .set(
            &SandboxKey::new("fake", name),
            UsageRecord {
                last_used_at_ms: NOW - used_hours_ago * HOUR_MS,
                busy_at_ms: busy_ms_ago.map(|ago| NOW - ago),
            },
        )
        .unwrap();
}

#[tokio::test]
async fn one_pass_removes_skips_and_reports_each_case() {
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(UsageStore::new(dir.path()));
    // idle: 30 h unused → removed. fresh: kept (not reported).
    // busy-elsewhere: idle, but another process's heartbeat is fresh.
    // stale-heartbeat: idle, heartbeat older than BUSY_FRESH → removed.
    // leased: idle, a lease held here. touched: used during the pass.
    // broken: the backend fails to remove it. untracked: no record.
    record(&store, "idle", 30, None);
    record(&store, "fresh", 1, None);
    record(&store, "busy-elsewhere", 30, Some(60_000));
    let stale = u64::try_from(BUSY_FRESH.as_millis()).unwrap();
    record(&store, "stale-heartbeat", 30, Some(stale));
    record(&store, "leased", 30, None);
    record(&store, "touched", 30, None);
    record(&store, "broken", 30, None);
    let backend = Arc::new(Scripted {
        names: vec![
            "idle",
            "fresh",
            "busy-elsewhere",
            "stale-heartbeat",
            "leased",
            "touched",
            "broken",
            "untracked",
        ],
        store: Arc::clone(&store),
        touched: Some("touched"),
        removed: Mutex::new(Vec::new()),
    });
    let registry = SandboxBackendRegistry::new();
    registry.register("fake", backend.clone());
    registry.register("down", Arc::new(Down));
    let activity = SandboxActivity::new();
    let _lease = activity.lease(&SandboxKey::new("fake", "leased")).await;
    let settings_for = |_: &OwnedSandbox| PruneSettings {
        idle_hours: 24,
        max_age_days: 0,
    };
    let select = |_: &OwnedSandbox| true;
    let scope = PruneScope {
        settings_for: &settings_for,
        select: &select,
    };
    let report = prune_sandboxes(
        &registry,
        &store,
        &activity,
        &scope,
        PruneOptions {
            now_ms: NOW,
            dry_run: false,
        },
    )
    .await
    .unwrap();
    let got: Vec<(&str, bool, Option<PruneSkip>)> = report
        .outcomes
        .iter()
        .map(|o| (o.name.as_str(), o.removed, o.skipped.clone()))
        .collect();
    assert_eq!(
        got,
        vec![
            ("broken", false, Some(PruneSkip::Failed)),
            ("busy-elsewhere", false, Some(PruneSkip::Busy)),
            ("idle", true, None),
            ("leased", false, Some(PruneSkip::Busy)),
            ("stale-heartbeat", true, None),
            ("touched", false, Some(PruneSkip::UsedMeanwhile)),
        ]
    );
    assert!(
        report.outcomes[0]
            .error
            .as_deref()
            .is_some_and(|e| e.contains("engine went away")),
        "{report:?}"
    );
    assert_eq!(
        *backend.removed.lock().unwrap(),
        vec!["idle".to_owned(), "stale-heartbeat".to_owned()]
    );
    assert_eq!(report.untracked, vec![SandboxKey::new("fake", "untracked")]);
    assert_eq!(report.failures.len(), 1);
    assert_eq!(report.failures[0].backend, "down");
    let left = store.read().unwrap();
    assert!(!left.contains_key(&SandboxKey::new("fake", "idle")));
    assert!(left.contains_key(&SandboxKey::new("fake", "broken")));
    // The removal moved the sandbox's generation on: a cached handle to it
    // is stale.
    assert_eq!(activity.generation(&SandboxKey::new("fake", "idle")), 1);
}

#[tokio::test]
async fn an_unreadable_usage_file_stops_the_pass_before_anything_is_listed() {
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(UsageStore::new(dir.path()));
    std::fs::create_dir_all(store.path().parent().unwrap()).unwrap();
    std::fs::write(store.path(), b"[").unwrap();
    let registry = SandboxBackendRegistry::new();
    registry.register("down", Arc::new(Down));
    let settings_for = |_: &OwnedSandbox| PruneSettings::default();
    let select = |_: &OwnedSandbox| true;
    let scope = PruneScope {
        settings_for: &settings_for,
        select: &select,
    };
    let err = prune_sandboxes(
        &registry,
        &store,
        &SandboxActivity::new(),
        &scope,
        PruneOptions {
            now_ms: NOW,
            dry_run: false,
        },
    )
    .await
    .unwrap_err();
    assert!(err.kind() == SandboxErrorKind::Io, "{err}");
}
