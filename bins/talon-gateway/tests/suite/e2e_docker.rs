//! F2/F3 on the real Docker engine (started with the test image by
//! `cargo xtask docker-up`, which `cargo xtask test` runs): the sandbox
//! container killed mid-call, and a call cancelled inside the container.

use super::support;

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use support::{Gw, GwExt as _, Ws};
use talon_test_support::docker::{docker, require_engine};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn f2_f3_container_killed_or_call_cancelled_mid_exec() {
    require_engine();
    let agent = format!("gw-f2-{}", std::process::id());
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("ws")).unwrap();
    let config = format!(
        r#"{{ agents: {{ defaults: {{ workspace: "./ws", sandbox: {{ mode: "all", workspaceAccess: "rw",
            docker: {{ image: "talon-sandbox-test:busybox" }} }} }}, list: [{{ id: "{agent}", default: true }}] }},
            gateway: {{ limits: {{ maxSandboxExecs: 1 }} }} }}"#
    );
    let gw = Gw::start_in(dir, &config);
    let session = format!("agent:{agent}:main");
    let mut ws = gw.ws().await;
    let warm = ws
        .ok(
            "tools.invoke",
            json!({"sessionKey": session, "toolName": "exec", "params": {"command": "echo warm"}}),
        )
        .await;
    assert_eq!(warm["status"], json!("ok"), "{warm}");
    let listed = ws.ok("sandbox.list", json!({})).await;
    let name = listed["sandboxes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["scopeKey"].as_str().is_some_and(|k| k.contains(&agent)))
        .unwrap_or_else(|| panic!("no sandbox for {agent}: {listed}"))["name"]
        .as_str()
        .unwrap()
        .to_owned();

    // F2: the container dies under a running exec.
    let (addr, token, s2) = (gw.addr, gw.token.clone(), session.clone());
    let call = tokio::spawn(async move {
        let mut w = Ws::connect(addr, Some(&token)).await.unwrap();
        let t = Instant::now();
        let r = w
            .ok("tools.invoke", json!({"sessionKey": s2, "toolName": "exec", "params": {"command": "sleep 60", "yieldMs": 120000}}))
            .await;
        (r, t.elapsed())
    });
    tokio::time::sleep(Duration::from_millis(1000)).await;
    assert!(docker(&["kill", &name]).0, "docker kill {name}");
    let (r, took) = tokio::time::timeout(Duration::from_secs(30), call)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(r["status"], json!("error"), "{r}");
    assert!(took < Duration::from_secs(20), "the call hung for {took:?}");
    // The next call recreates the sandbox.
    let again = ws
        .ok(
            "tools.invoke",
            json!({"sessionKey": session, "toolName": "exec", "params": {"command": "echo again"}}),
        )
        .await;
    assert_eq!(again["status"], json!("ok"), "{again}");
    assert!(
        again["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("again")
    );

    // One sandboxed exec at a time on this engine (maxSandboxExecs 1): two
    // one-second commands take two seconds.
    let t = Instant::now();
    let mut both = Vec::new();
    for _ in 0..2 {
        let (addr, token, s) = (gw.addr, gw.token.clone(), session.clone());
        both.push(tokio::spawn(async move {
            let mut w = Ws::connect(addr, Some(&token)).await.unwrap();
            w.ok(
                "tools.invoke",
                json!({"sessionKey": s, "toolName": "exec", "params": {"command": "sleep 1"}}),
            )
            .await
        }));
    }
    for b in both {
        assert_eq!(b.await.unwrap()["status"], json!("ok"));
    }
    assert!(
        t.elapsed() >= Duration::from_millis(1900),
        "ran in parallel: {:?}",
        t.elapsed()
    );

    // F3: cancel a call inside the container; its late write never lands
    // and nothing survives in the container.
    let late = gw.dir.path().join("ws/LATE");
    let (addr, token, s3) = (gw.addr, gw.token.clone(), session.clone());
    let call = tokio::spawn(async move {
        let mut w = Ws::connect(addr, Some(&token)).await.unwrap();
        w.ok("tools.invoke", json!({"sessionKey": s3, "toolName": "exec", "params": {"command": "(sleep 3; touch LATE2) & sleep 3; touch LATE", "yieldMs": 120000}}))
            .await
    });
    tokio::time::sleep(Duration::from_millis(1000)).await;
    ws.ok("sessions.close", json!({"sessionKey": session}))
        .await;
    let r = tokio::time::timeout(Duration::from_secs(20), call)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(r["status"], json!("cancelled"), "{r}");
    tokio::time::sleep(Duration::from_millis(3500)).await;
    assert!(
        !late.exists(),
        "the cancelled command ran on in the container"
    );
    assert!(
        !gw.dir.path().join("ws/LATE2").exists(),
        "a grandchild survived"
    );
    let (_, top) = docker(&["top", &name]);
    // Only the container's own keep-alive (`sleep infinity` under init).
    let survivors: Vec<&str> = top
        .lines()
        .skip(1)
        .filter(|l| !l.contains("sleep infinity") && !l.contains("docker-init"))
        .collect();
    assert!(survivors.is_empty(), "survivors in the container: {top}");

    // The journal has one terminal record per call, with why the killed
    // one failed.
    let mut ws2 = gw.ws().await;
    ws2.ok(
        "sessions.create",
        json!({"sessionKey": session, "agentId": agent}),
    )
    .await;
    let h = ws2
        .ok(
            "tools.invoke",
            json!({"sessionKey": session, "toolName": "sessions_history", "params": {"limit": 20}}),
        )
        .await;
    let calls: Vec<Value> = h["details"]["calls"].as_array().unwrap().clone();
    let outcomes: Vec<&str> = calls
        .iter()
        .filter(|c| c["tool"] == "exec")
        .map(|c| c["end"]["outcome"].as_str().unwrap())
        .collect();
    assert_eq!(
        outcomes,
        ["cancelled", "ok", "ok", "ok", "error", "ok"],
        "{calls:?}"
    );
    let killed = calls
        .iter()
        .find(|c| c["end"]["outcome"] == "error")
        .unwrap();
    assert!(
        killed["end"]["summary"]
            .as_str()
            .unwrap()
            .contains("exitCode=137"),
        "{killed}"
    );
    let _ = docker(&["rm", "-f", &name]);
}
