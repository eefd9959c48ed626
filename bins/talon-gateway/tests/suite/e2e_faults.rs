//! Fault scenarios from the security notes (§4), bounded in count and
//! time, each checking the "nothing lost" invariants it touches.

use super::support;

use std::collections::HashMap;
use std::time::{Duration, Instant};

use futures::SinkExt as _;
use serde_json::{Value, json};
use support::{Gw, GwExt as _, Ws, http};
use tokio_tungstenite::tungstenite::Message;

fn rss_kib(pid: i32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .unwrap()
}

async fn metric(gw: &Gw, name: &str) -> u64 {
    let (_, text) = http(gw.addr, "GET", "/metrics", Some(&gw.token), None).unwrap();
    text.lines()
        .find_map(|l| l.strip_prefix(name).and_then(|r| r.trim().parse().ok()))
        .unwrap_or(0)
}

const TWO_AGENTS: &str = r#"{
  "agents": {"list": [
    {"id": "main", "default": true},
    {"id": "locked", "tools": {"deny": ["exec"]}}
  ]}
}"#;

/// F1: 16 sessions × 8 parallel calls × 3 rounds, mixing real exec with a
/// per-call marker, denied exec and session_status. Policy decisions match
/// a serial replay, output reaches the right call (I6), and every call has
/// exactly one terminal journal record (I1).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn f1_concurrent_sessions_and_parallel_calls() {
    let gw = Gw::start(TWO_AGENTS);
    let started = Instant::now();
    let mut setup = gw.ws().await;
    let mut sessions = Vec::new();
    for i in 0..16 {
        let agent = if i % 2 == 0 { "main" } else { "locked" };
        let key = format!("agent:{agent}:f1-{i}");
        setup
            .ok(
                "sessions.create",
                json!({"sessionKey": key, "agentId": agent}),
            )
            .await;
        sessions.push((key, agent));
    }
    let mut tasks = Vec::new();
    for (key, agent) in sessions.clone() {
        let addr = gw.addr;
        let token = gw.token.clone();
        tasks.push(tokio::spawn(async move {
            let mut ws = Ws::connect(addr, Some(&token)).await.unwrap();
            let mut seen = Vec::new();
            for round in 0..3 {
                // 8 calls in flight at once on this connection.
                let mut ids = HashMap::new();
                for j in 0..8 {
                    let marker = format!("m-{key}-{round}-{j}");
                    let (tool, params) = match j % 3 {
                        0 => ("session_status", json!({})),
                        _ => ("exec", json!({"command": format!("echo {marker}")})),
                    };
                    let id = format!("{round}-{j}");
                    let frame = json!({"jsonrpc": "2.0", "id": id, "method": "tools.invoke",
                        "params": {"sessionKey": key, "toolName": tool, "toolCallId": marker, "params": params}});
                    ws.send_text(&frame.to_string()).await;
                    ids.insert(id, (tool, marker));
                }
                while !ids.is_empty() {
                    let v = ws.next_frame().await.unwrap();
                    let Some(id) = v["id"].as_str() else { continue };
                    let (tool, marker) = ids.remove(id).unwrap();
                    let r = &v["result"];
                    assert_eq!(r["toolCallId"], json!(marker));
                    let expected = match (tool, agent) {
                        ("exec", "locked") => "blocked",
                        _ => "ok",
                    };
                    assert_eq!(r["status"], json!(expected), "{tool} in {key}: {v}");
                    if tool == "exec" && agent == "main" {
                        let text = r["content"][0]["text"].as_str().unwrap();
                        assert_eq!(text.trim(), marker, "output reached the wrong call");
                    }
                    seen.push(marker);
                }
            }
            (key, seen.len())
        }));
    }
    let mut total = 0;
    for t in tasks {
        let (key, n) = tokio::time::timeout(Duration::from_secs(120), t)
            .await
            .unwrap()
            .unwrap();
        assert_eq!(n, 24, "{key}");
        total += n;
    }
    assert_eq!(total, 16 * 24);
    // I1: one terminal record per call, nothing left in flight.
    let mut ws = gw.ws().await;
    for (key, _) in &sessions {
        let h = ws
            .ok("tools.invoke", json!({"sessionKey": key, "toolName": "sessions_history", "params": {"limit": 100}}))
            .await;
        let calls = h["details"]["calls"].as_array().unwrap();
        let mine: Vec<&Value> = calls
            .iter()
            .filter(|c| c["tool"] != "sessions_history")
            .collect();
        assert_eq!(mine.len(), 24, "{key}");
        assert!(
            mine.iter().all(|c| c["end"]["outcome"].is_string()),
            "{key}: {mine:?}"
        );
        let mut ids: Vec<&str> = mine.iter().map(|c| c["callId"].as_str().unwrap()).collect();
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), 24);
    }
    assert_eq!(metric(&gw, "talon_gateway_calls_in_flight").await, 0);
    assert!(started.elapsed() < Duration::from_secs(120));
}

/// F3 (host engine): a call cancelled mid-exec (its session closed) ends
/// `cancelled`, and neither the command nor a double-forked grandchild
/// survives to do its late write.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn f3_cancelled_exec_leaves_no_survivors() {
    let gw = Gw::start("{}");
    let late = gw.dir.path().join("LATE");
    let late2 = gw.dir.path().join("LATE2");
    let cmd = format!(
        "(sleep 2; touch {l2}) & sleep 2; touch {l}",
        l = late.display(),
        l2 = late2.display()
    );
    let mut ws = gw.ws().await;
    ws.ok(
        "sessions.create",
        json!({"sessionKey": "agent:main:f3", "agentId": "main"}),
    )
    .await;
    let addr = gw.addr;
    let token = gw.token.clone();
    let call = tokio::spawn(async move {
        let mut w = Ws::connect(addr, Some(&token)).await.unwrap();
        w.ok("tools.invoke", json!({"sessionKey": "agent:main:f3", "toolName": "exec", "params": {"command": cmd, "yieldMs": 60000}})).await
    });
    tokio::time::sleep(Duration::from_millis(500)).await;
    ws.ok("sessions.close", json!({"sessionKey": "agent:main:f3"}))
        .await;
    let r = tokio::time::timeout(Duration::from_secs(10), call)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(r["status"], json!("cancelled"), "{r}");
    tokio::time::sleep(Duration::from_millis(2500)).await;
    assert!(!late.exists(), "the cancelled command ran on");
    assert!(!late2.exists(), "a double-forked grandchild survived");
    // And an exec timeout reports a timeout, not ok.
    let r = ws
        .ok("tools.invoke", json!({"sessionKey": "main", "toolName": "exec", "params": {"command": "sleep 5", "timeout": 1}}))
        .await;
    assert_eq!(r["status"], json!("timeout"), "{r}");
    let (_, text) = http(gw.addr, "GET", "/metrics", Some(&gw.token), None).unwrap();
    assert!(
        text.contains("talon_gateway_calls_total{tool=\"exec\",outcome=\"timeout\"} 1"),
        "{text}"
    );
    assert!(
        text.contains("talon_gateway_calls_total{tool=\"exec\",outcome=\"cancelled\"} 1"),
        "{text}"
    );
}

/// F6: reload under load. Every call sent after the reload was
/// acknowledged uses the new policy; a bad config in the middle never
/// loosens it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn f6_reload_under_load() {
    let gw = Gw::start("{}");
    let mut op = gw.ws().await;
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let done_calls = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let mut load = Vec::new();
    for w in 0..4 {
        let addr = gw.addr;
        let token = gw.token.clone();
        let stop = stop.clone();
        let done_calls = done_calls.clone();
        load.push(tokio::spawn(async move {
            let mut ws = Ws::connect(addr, Some(&token)).await.unwrap();
            let mut log = Vec::new();
            let mut i = 0;
            while !stop.load(std::sync::atomic::Ordering::SeqCst) {
                let sent = Instant::now();
                let r = ws
                    .ok("tools.invoke", json!({"sessionKey": "main", "toolName": "exec", "toolCallId": format!("w{w}-{i}"), "params": {"command": "true"}}))
                    .await;
                log.push((sent, r["status"].as_str().unwrap().to_owned()));
                done_calls.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                i += 1;
            }
            log
        }));
    }
    // Reload only once every worker's load is flowing (no fixed sleep: a
    // loaded machine may take longer to connect).
    let deadline = Instant::now() + Duration::from_secs(20);
    while done_calls.load(std::sync::atomic::Ordering::SeqCst) < 8 {
        assert!(Instant::now() < deadline, "the load never started");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    std::fs::write(&gw.config, r#"{"tools": {"deny": ["exec"]}}"#).unwrap();
    gw.signal(1);
    let ev = op.notification("config.reloaded").await;
    assert_eq!(ev["params"]["ok"], json!(true));
    let acked = Instant::now();
    tokio::time::sleep(Duration::from_millis(300)).await;
    std::fs::write(&gw.config, "{ tools: ").unwrap();
    gw.signal(1);
    let ev = op.notification("config.reloaded").await;
    assert_eq!(ev["params"]["ok"], json!(false));
    tokio::time::sleep(Duration::from_millis(300)).await;
    stop.store(true, std::sync::atomic::Ordering::SeqCst);
    let mut before_ok = 0;
    let mut after = 0;
    for t in load {
        for (sent, status) in t.await.unwrap() {
            if sent > acked {
                assert_eq!(
                    status, "blocked",
                    "a call sent after the reload ran under the old policy"
                );
                after += 1;
            } else if status == "ok" {
                before_ok += 1;
            }
        }
    }
    assert!(
        before_ok > 0 && after > 0,
        "load on both sides: {before_ok} / {after}"
    );
}

const APPROVE_ALL_EXEC: &str = r#"{
  "tools": {"hooks": {"beforeToolCall": [{
    "id": "ask",
    "matcher": ["exec"],
    "command": ["/bin/sh", "-c", "cat >/dev/null; printf '%s' '{\"requireApproval\":{\"title\":\"ok?\",\"description\":\"exec\",\"timeoutMs\":4000}}'"]
  }]}}
}"#;

/// F9: a backlog of approvals answered late, twice and with stale
/// bindings. Each resolves exactly once; timeouts deny.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn f9_approval_backlog_with_late_duplicate_and_stale_answers() {
    const N: usize = 24;
    let gw = Gw::start(APPROVE_ALL_EXEC);
    let mut approver = gw.ws().await;
    let mut calls = Vec::new();
    for i in 0..N {
        let addr = gw.addr;
        let token = gw.token.clone();
        calls.push(tokio::spawn(async move {
            let mut ws = Ws::connect(addr, Some(&token)).await.unwrap();
            let r = ws
                .ok("tools.invoke", json!({"sessionKey": "main", "toolName": "exec", "toolCallId": format!("f9-{i}"), "params": {"command": format!("echo f9-{i}")}}))
                .await;
            (i, r)
        }));
    }
    let mut requests = HashMap::new();
    while requests.len() < N {
        let n = approver.notification("approval.requested").await;
        let call_id = n["params"]["callId"].as_str().unwrap().to_owned();
        requests.insert(call_id, n["params"].clone());
    }
    let pending = approver.ok("approvals.list", json!({})).await;
    assert_eq!(pending["approvals"].as_array().unwrap().len(), N);
    let mut expected = HashMap::new();
    for i in 0..N {
        let req = &requests[&format!("f9-{i}")];
        let id = req["id"].as_str().unwrap();
        match i % 4 {
            // allow, then a duplicate deny that must be ignored
            0 => {
                let r = approver
                    .ok(
                        "approvals.resolve",
                        json!({"id": id, "decision": "allow-once"}),
                    )
                    .await;
                assert_eq!(r["outcome"], json!("applied"));
                let r = approver
                    .ok("approvals.resolve", json!({"id": id, "decision": "deny"}))
                    .await;
                assert_ne!(r["outcome"], json!("applied"));
                expected.insert(i, "ok");
            }
            // a stale binding is refused; the real answer then applies
            1 => {
                let r = approver
                    .ok("approvals.resolve", json!({"id": id, "decision": "allow-once", "callId": req["callId"], "paramsHash": "0".repeat(64)}))
                    .await;
                assert_eq!(r["outcome"], json!("stale"));
                let r = approver
                    .ok("approvals.resolve", json!({"id": id, "decision": "deny", "callId": req["callId"], "paramsHash": req["paramsHash"]}))
                    .await;
                assert_eq!(r["outcome"], json!("applied"));
                expected.insert(i, "blocked");
            }
            // deny
            2 => {
                approver
                    .ok("approvals.resolve", json!({"id": id, "decision": "deny"}))
                    .await;
                expected.insert(i, "blocked");
            }
            // never answered: times out and denies
            _ => {
                expected.insert(i, "blocked");
            }
        }
    }
    for c in calls {
        let (i, r) = tokio::time::timeout(Duration::from_secs(20), c)
            .await
            .unwrap()
            .unwrap();
        assert_eq!(r["status"], json!(expected[&i]), "call {i}: {r}");
        if i % 4 == 3 {
            assert_eq!(r["deniedReason"], json!("approval-timeout"), "{r}");
        }
    }
    // Late answers to the timed-out ones are ignored.
    for i in (3..N).step_by(4) {
        let id = requests[&format!("f9-{i}")]["id"]
            .as_str()
            .unwrap()
            .to_owned();
        let r = approver
            .ok(
                "approvals.resolve",
                json!({"id": id, "decision": "allow-once"}),
            )
            .await;
        assert_eq!(r["outcome"], json!("unknown"), "{r}");
    }
    let pending = approver.ok("approvals.list", json!({})).await;
    assert!(pending["approvals"].as_array().unwrap().is_empty());
    // Each call ran at most once: only the allowed ones echoed.
    let (_, text) = http(gw.addr, "GET", "/metrics", Some(&gw.token), None).unwrap();
    assert!(
        text.contains(&format!(
            "talon_gateway_calls_total{{tool=\"exec\",outcome=\"ok\"}} {}",
            N / 4
        )),
        "{text}"
    );
}

/// F11: a command writing 20 MB gets a capped result with the truncation
/// noted; the daemon's memory stays bounded.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn f11_output_flood_is_capped() {
    let gw = Gw::start(r#"{"gateway": {"limits": {"maxOutputBytes": 65536}}}"#);
    let mut ws = gw.ws().await;
    let r = ws
        .ok("tools.invoke", json!({"sessionKey": "main", "toolName": "exec", "params": {"command": "head -c 20000000 /dev/zero | tr '\\0' x; printf '\\033[31m\\000'", "yieldMs": 60000}}))
        .await;
    assert_eq!(
        r["status"],
        json!("ok"),
        "{}",
        r.to_string().chars().take(500).collect::<String>()
    );
    let text: usize = r["content"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["text"].as_str().map_or(0, str::len))
        .sum();
    assert!(text <= 65536 + 512, "{text} bytes came back");
    let noted =
        r["truncated"] == json!(true) || r["details"]["omittedBytes"].as_u64().unwrap_or(0) > 0;
    assert!(noted, "the truncation must be noted");
    assert!(
        rss_kib(gw.pid()) < 300 * 1024,
        "RSS {} KiB",
        rss_kib(gw.pid())
    );
    assert_eq!(ws.ok("health", json!({})).await["ok"], json!(true));
}

/// F12: a client that stops reading is disconnected; the daemon and the
/// other clients carry on, and the results stay in the journal.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn f12_slow_consumer_is_dropped_not_the_daemon() {
    let gw = Gw::start(r#"{"gateway": {"limits": {"outboundFrames": 8}}}"#);
    let before = rss_kib(gw.pid());
    let mut slow = gw.ws().await;
    // tools.list answers are large; never read them.
    let frame = json!({"jsonrpc": "2.0", "id": 1, "method": "tools.list", "params": {"sessionKey": "main"}}).to_string();
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut sent = 0;
    while metric(&gw, "talon_gateway_slow_consumer_disconnects_total").await == 0 {
        assert!(
            Instant::now() < deadline,
            "the slow consumer was never dropped ({sent} frames sent)"
        );
        for _ in 0..200 {
            if slow
                .stream
                .send(Message::Text(frame.clone().into()))
                .await
                .is_err()
            {
                break;
            }
            sent += 1;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let mut other = gw.ws().await;
    let r = other
        .ok(
            "tools.invoke",
            json!({"sessionKey": "main", "toolName": "session_status"}),
        )
        .await;
    assert_eq!(r["status"], json!("ok"));
    let after = rss_kib(gw.pid());
    assert!(
        after < before + 200 * 1024,
        "RSS grew from {before} to {after} KiB"
    );
}
