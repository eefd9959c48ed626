//! A sandbox that can no longer run commands recovers by itself: tmpfs
//! mounts are size-limited (a filled `/tmp` is `ENOSPC`, not memory the
//! container is charged for), and a container whose command is OOM-killed
//! or killed by the engine again and again is removed, reported to the
//! backend's event sink, and created afresh by the next `ensure`.

use super::common;

use std::sync::{Arc, Mutex};

use common::{Cleanup, QUICK, backend, spec, workspace};
use talon_sandbox_core::{
    ExitStatus, RecycleReason, SandboxErrorKind, SandboxEvent, SandboxEventSink, SandboxHandle,
    SandboxRecycled,
};

/// Collects the backend's events.
#[derive(Debug, Default)]
struct Events(Mutex<Vec<SandboxRecycled>>);

impl SandboxEventSink for Events {
    fn event(&self, event: &SandboxEvent) {
        if let SandboxEvent::Recycled(r) = event {
            self.0.lock().unwrap().push(r.clone());
        }
    }
}

impl Events {
    fn taken(&self) -> Vec<SandboxRecycled> {
        std::mem::take(&mut *self.0.lock().unwrap())
    }
}

async fn sh(handle: &dyn SandboxHandle, script: &str) -> (String, String, ExitStatus) {
    let out = handle.run_script(script, &[], None, QUICK).await.unwrap();
    (
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
        out.status,
    )
}

#[tokio::test]
async fn a_filled_tmp_is_enospc_inside_and_the_sandbox_keeps_working() {
    let backend = backend().await;
    let ws = workspace();
    let s = spec("tmpfs-full", ws.path(), "h");
    let _cleanup = Cleanup(vec![s.name.clone()]);
    let sandbox = backend.ensure_container(&s).await.unwrap();
    // 100 MiB into a 64 MiB /tmp.
    let (out, err, status) = sh(
        &*sandbox,
        "dd if=/dev/zero of=/tmp/fill bs=1048576 count=100; echo rc=$?; wc -c < /tmp/fill",
    )
    .await;
    assert_eq!(status, ExitStatus::Code(0), "{out} {err}");
    assert!(err.contains("No space left on device"), "{err}");
    assert!(!out.contains("rc=0"), "{out}");
    let written: u64 = out.lines().last().unwrap().trim().parse().unwrap();
    assert_eq!(written, 64 * 1024 * 1024, "{out}");
    // /var/tmp is limited the same way (the image's /run is not writable
    // for the mapped user; its size is checked below).
    let (_, err, _) = sh(
        &*sandbox,
        "dd if=/dev/zero of=/var/tmp/fill bs=1048576 count=100",
    )
    .await;
    assert!(err.contains("No space left on device"), "{err}");
    for dir in ["/tmp", "/var/tmp", "/run"] {
        let (out, err, _) = sh(&*sandbox, &format!("stat -f -c '%b %S' {dir}")).await;
        let sizes: Vec<u64> = out.split_whitespace().map(|n| n.parse().unwrap()).collect();
        assert_eq!(sizes.len(), 2, "{dir}: {out} {err}");
        assert_eq!(sizes[0] * sizes[1], 64 * 1024 * 1024, "{dir}: {out}");
    }
    // The full tmpfs costs the next command nothing.
    assert_eq!(sh(&*sandbox, "echo alive").await.0, "alive\n");
}

#[tokio::test]
async fn an_oom_killed_command_recycles_the_container_and_the_next_ensure_is_fresh() {
    let events = Arc::new(Events::default());
    let backend = backend()
        .await
        .with_event_sink(Arc::clone(&events) as Arc<dyn SandboxEventSink>);
    let ws = workspace();
    let mut s = spec("oom", ws.path(), "h");
    s.limits.memory_bytes = Some(32 * 1024 * 1024);
    s.limits.memory_swap_bytes = Some(32 * 1024 * 1024);
    // The pre-fix container: /tmp without a size limit, charged to the
    // container's 32 MiB.
    s.tmpfs_size_bytes = None;
    let _cleanup = Cleanup(vec![s.name.clone()]);
    let sandbox = backend.ensure_container(&s).await.unwrap();
    let first_id = sandbox.container_id().to_owned();
    // /tmp takes most of the memory, then a command needs more than is left.
    let (_, _, status) = sh(
        &*sandbox,
        "dd if=/dev/zero of=/tmp/fill bs=1048576 count=24 2>/dev/null; \
         dd if=/dev/zero of=/dev/null bs=33554432 count=1",
    )
    .await;
    assert_eq!(status, ExitStatus::Code(137), "the hog must be OOM-killed");

    let seen = events.taken();
    assert_eq!(seen.len(), 1, "{seen:?}");
    assert_eq!(seen[0].reason, RecycleReason::OomKilled);
    assert_eq!(seen[0].name, s.name);
    assert_eq!(seen[0].container_id, first_id);
    assert_eq!(seen[0].scope_key, s.scope_key);
    assert!(seen[0].removed);
    // The container is gone, and its handle says so without asking the
    // engine.
    assert!(
        backend
            .docker()
            .inspect_container(&first_id, None)
            .await
            .is_err()
    );
    let err = sandbox
        .run_script("true", &[], None, QUICK)
        .await
        .unwrap_err();
    assert_eq!(err.kind(), SandboxErrorKind::Gone, "{err:?}");
    // The next ensure creates a fresh container with an empty /tmp.
    let fresh = backend.ensure_container(&s).await.unwrap();
    assert!(fresh.created());
    assert_ne!(fresh.container_id(), first_id);
    let (out, _, status) = sh(&*fresh, "ls /tmp | wc -l; echo alive").await;
    assert_eq!(status, ExitStatus::Code(0));
    assert_eq!(out, "0\nalive\n");
}

#[tokio::test]
async fn commands_killed_by_something_else_three_times_in_a_row_recycle_the_container() {
    let events = Arc::new(Events::default());
    let backend = backend()
        .await
        .with_event_sink(Arc::clone(&events) as Arc<dyn SandboxEventSink>);
    let ws = workspace();
    let s = spec("killed", ws.path(), "h");
    let _cleanup = Cleanup(vec![s.name.clone()]);
    let sandbox = backend.ensure_container(&s).await.unwrap();
    // A kill between two others' resets nothing, a clean exit resets.
    assert_eq!(sh(&*sandbox, "kill -9 $$").await.2, ExitStatus::Code(137));
    assert_eq!(sh(&*sandbox, "kill -9 $$").await.2, ExitStatus::Code(137));
    assert_eq!(sh(&*sandbox, "exit 3").await.2, ExitStatus::Code(3));
    assert_eq!(sh(&*sandbox, "kill -9 $$").await.2, ExitStatus::Code(137));
    assert_eq!(sh(&*sandbox, "kill -9 $$").await.2, ExitStatus::Code(137));
    assert!(events.taken().is_empty(), "two in a row are not enough");
    assert_eq!(sh(&*sandbox, "kill -9 $$").await.2, ExitStatus::Code(137));
    let seen = events.taken();
    assert_eq!(seen.len(), 1, "{seen:?}");
    assert_eq!(seen[0].reason, RecycleReason::RepeatedKills { count: 3 });
    assert_eq!(seen[0].exit_code, 137);
    let fresh = backend.ensure_container(&s).await.unwrap();
    assert!(fresh.created());
    assert_eq!(sh(&*fresh, "echo alive").await.0, "alive\n");
}
