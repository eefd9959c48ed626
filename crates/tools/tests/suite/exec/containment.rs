//! Whole-tree containment of host commands: a timeout, an abort and
//! `process kill` end `setsid`, double-forked and daemonised descendants,
//! which a process-group kill cannot reach. Checked by pid in `/proc`.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use talon_proc_tree::{Containment, Supervisor, SupervisorOptions};
use talon_tool_catalog::CancellationToken;
use talon_tools::ExecConfig;

use super::common::{Harness, KEY, bounded, small_options, wait_gone};

/// The tree from the issue (`setsid sleep 300 & (sleep 301 &); sleep 302`),
/// with each pid appended to `pidfile` as it starts.
fn escaping_tree(pidfile: &Path) -> String {
    let f = pidfile.display();
    format!(
        "sh -c 'setsid sleep 300 & echo $! >> {f}; (sleep 301 & echo $! >> {f}); echo $$ >> {f}; exec sleep 302'"
    )
}

/// Waits (bounded) until the tree has written its three pids.
async fn tree_pids(pidfile: &Path) -> Vec<u32> {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    loop {
        let pids: Vec<u32> = std::fs::read_to_string(pidfile)
            .unwrap_or_default()
            .lines()
            .filter_map(|l| l.trim().parse().ok())
            .collect();
        if pids.len() == 3 {
            return pids;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the tree did not start: {pids:?}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

async fn assert_tree_gone(pids: &[u32]) {
    for pid in pids {
        assert!(
            wait_gone(*pid, Duration::from_secs(5)).await,
            "{pid} survived (all: {pids:?})"
        );
    }
}

async fn timeout_ends_the_tree(h: Harness) {
    let pidfile = h.dir.path().join("pids");
    let r = h
        .exec(json!({"command": escaping_tree(&pidfile), "timeout": 2}))
        .await
        .unwrap();
    assert_eq!(r.details["timedOut"], true, "{}", r.text());
    let pids = tree_pids(&pidfile).await;
    assert_tree_gone(&pids).await;
}

#[tokio::test]
async fn a_timeout_ends_setsid_and_double_forked_descendants() {
    bounded(timeout_ends_the_tree(Harness::new())).await;
}

#[tokio::test]
async fn an_abort_ends_setsid_and_double_forked_descendants() {
    bounded(async {
        let h = Harness::new();
        let pidfile = h.dir.path().join("pids");
        let abort = CancellationToken::new();
        let trigger = abort.clone();
        let aborter = async {
            let pids = tree_pids(&pidfile).await;
            trigger.cancel();
            pids
        };
        let (result, pids) = tokio::join!(
            h.exec_as(KEY, json!({"command": escaping_tree(&pidfile)}), &abort),
            aborter
        );
        assert!(matches!(&result, Err(e) if e.is_aborted()), "{result:?}");
        assert_tree_gone(&pids).await;
    })
    .await;
}

#[tokio::test]
async fn process_kill_ends_setsid_and_double_forked_descendants() {
    bounded(async {
        let h = Harness::new();
        let pidfile = h.dir.path().join("pids");
        let r = h
            .exec(json!({"command": escaping_tree(&pidfile), "background": true}))
            .await
            .unwrap();
        let id = r.details["sessionId"].as_str().unwrap().to_owned();
        let pids = tree_pids(&pidfile).await;
        let k = h
            .process(json!({"action": "kill", "sessionId": id}))
            .await
            .unwrap();
        assert_eq!(k.details["killedBy"], "user");
        assert_tree_gone(&pids).await;
    })
    .await;
}

#[tokio::test]
async fn a_daemon_left_by_a_finished_command_is_ended_with_it() {
    bounded(async {
        let h = Harness::new();
        let r = h
            .exec(
                json!({"command": "setsid sleep 300 >/dev/null 2>&1 < /dev/null & echo child=$!"}),
            )
            .await
            .unwrap();
        assert_eq!(r.details["exitCode"], 0);
        let daemon = super::common::number_after(&r.text(), "child=");
        assert_tree_gone(&[daemon]).await;
    })
    .await;
}

#[tokio::test]
async fn the_process_group_fallback_ends_the_tree_too() {
    let supervisor = Supervisor::start(SupervisorOptions {
        force_process_groups: true,
    })
    .unwrap();
    assert!(matches!(
        supervisor.containment(),
        Containment::ProcessGroup { .. }
    ));
    let h = Harness::with(small_options(), ExecConfig::default(), |l| {
        l.with_supervisor(Arc::clone(&supervisor))
    });
    bounded(timeout_ends_the_tree(h)).await;
}
