//! list_changed storms, dynamic tools, and no orphan processes.

use std::time::{Duration, Instant};

use serde_json::json;

use crate::suite::calls::call;
use crate::support::{fixture_server, gone, manager, wait_gone};

#[tokio::test]
async fn a_list_changed_storm_causes_one_relist() {
    let m = manager(json!({"fix": fixture_server(&[], json!({}))}));
    m.ensure_agent("main").await;
    assert_eq!(
        call(&m, "fix__list_count", json!({})).await.unwrap().text(),
        "1"
    );
    assert_eq!(
        call(&m, "fix__storm", json!({"count": 500}))
            .await
            .unwrap()
            .text(),
        "sent 500"
    );
    // Wait (bounded) for the debounced re-list, then a little longer to
    // see that no second one follows.
    let deadline = Instant::now() + Duration::from_secs(3);
    while m.status().servers[0].list_requests < 2 && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    tokio::time::sleep(Duration::from_millis(400)).await;
    assert_eq!(m.status().servers[0].list_requests, 2);
    assert_eq!(
        call(&m, "fix__list_count", json!({})).await.unwrap().text(),
        "2"
    );
    m.shutdown().await;
}

#[tokio::test]
async fn a_tool_added_at_run_time_is_materialised() {
    let m = manager(json!({"fix": fixture_server(&[], json!({}))}));
    m.ensure_agent("main").await;
    assert!(m.materialize("main").get("fix__dyn_0").is_none());
    call(&m, "fix__add_tool", json!({})).await.unwrap();
    let deadline = Instant::now() + Duration::from_secs(3);
    while m.materialize("main").get("fix__dyn_0").is_none() && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(m.materialize("main").get("fix__dyn_0").is_some());
    assert_eq!(
        call(&m, "fix__dyn_0", json!({})).await.unwrap().text(),
        "called dyn_0"
    );
    m.shutdown().await;
}

async fn server_and_grandchild(m: &talon_mcp::McpManager) -> (u32, u32) {
    m.ensure_agent("main").await;
    let server: u32 = call(m, "fix__pid", json!({}))
        .await
        .unwrap()
        .text()
        .parse()
        .unwrap();
    let grandchild: u32 = call(m, "fix__spawn_grandchild", json!({}))
        .await
        .unwrap()
        .text()
        .parse()
        .unwrap();
    assert!(!gone(server) && !gone(grandchild));
    (server, grandchild)
}

#[tokio::test]
async fn shutdown_leaves_no_process_behind() {
    let m = manager(json!({"fix": fixture_server(&[], json!({}))}));
    let (server, grandchild) = server_and_grandchild(&m).await;
    m.shutdown().await;
    assert!(
        wait_gone(server, Duration::from_secs(3)).await,
        "server {server} survived"
    );
    assert!(
        wait_gone(grandchild, Duration::from_secs(3)).await,
        "grandchild {grandchild} survived"
    );
    assert_eq!(m.status().servers[0].state, talon_mcp::ServerState::Stopped);
}

#[tokio::test]
async fn dropping_the_manager_leaves_no_process_behind() {
    let m = manager(json!({"fix": fixture_server(&[], json!({}))}));
    let (server, grandchild) = server_and_grandchild(&m).await;
    drop(m);
    assert!(
        wait_gone(server, Duration::from_secs(3)).await,
        "server {server} survived"
    );
    assert!(
        wait_gone(grandchild, Duration::from_secs(3)).await,
        "grandchild {grandchild} survived"
    );
}

#[tokio::test]
async fn a_crash_restart_kills_the_old_group() {
    let m = manager(json!({"fix": fixture_server(&[], json!({}))}));
    let (server, grandchild) = server_and_grandchild(&m).await;
    let _ = call(&m, "fix__crash", json!({})).await;
    // The next call notices the dead server, kills its group and restarts.
    call(&m, "fix__echo", json!({"text": "x"})).await.unwrap();
    assert!(wait_gone(server, Duration::from_secs(3)).await);
    assert!(
        wait_gone(grandchild, Duration::from_secs(3)).await,
        "grandchild {grandchild} survived the restart"
    );
    m.shutdown().await;
}

#[tokio::test]
async fn shutdown_ends_a_daemon_the_server_started_with_setsid() {
    let dir = tempfile::tempdir().unwrap();
    let pidfile = dir.path().join("daemon.pid");
    let script = format!(
        "setsid sleep 300 >/dev/null 2>&1 </dev/null & echo $! > {}; exec {}",
        pidfile.display(),
        crate::support::fixture_bin().display()
    );
    let m = manager(json!({"fix": {"command": "/bin/sh", "args": ["-c", script]}}));
    let reports = m.ensure_agent("main").await;
    assert!(reports.iter().all(|r| r.error.is_none()), "{reports:?}");
    let daemon: u32 = std::fs::read_to_string(&pidfile)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!(!gone(daemon), "the daemon should run while the server does");
    m.shutdown().await;
    assert!(
        wait_gone(daemon, Duration::from_secs(5)).await,
        "setsid daemon {daemon} survived the server's shutdown"
    );
}
