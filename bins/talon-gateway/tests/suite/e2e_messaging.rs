//! The `message` tool in the daemon: a send over the webhook channel is
//! written ahead (the journal's `started`, the send ledger's record), so a
//! gateway SIGKILLed between the write-ahead and the send finds it
//! `interrupted` on restart and never sends it, even when the same call
//! is made again.

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use talon_channels::{LEDGER_FILE, SendLedger, TEST_PAUSE_ENV};
use talon_test_support::http_receiver::HttpReceiver;

use super::support::{BIN, Gw, GwExt, Ws};

fn config(receiver: &HttpReceiver) -> String {
    json!({
        "channels": {
            "webhook": {
                "url": receiver.url("/hook"),
                "ssrfAllowlist": { "cidrs": ["127.0.0.1/32"] }
            }
        }
    })
    .to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_send_cut_by_sigkill_is_interrupted_and_never_sent() {
    let receiver = HttpReceiver::start().unwrap();
    let dir = tempfile::tempdir().unwrap();
    // Test-only: the tool holds each send for 30 s between its ledger
    // record and the POST, so the kill lands in that window.
    let mut gw = Gw::launch_in_with_env(
        BIN,
        dir,
        &config(&receiver),
        vec![(TEST_PAUSE_ENV.to_owned(), "30000".to_owned())],
    )
    .unwrap_or_else(|e| panic!("{e:#}"));
    let addr = gw.addr;
    let token = gw.token.clone();
    let _inflight = tokio::spawn(async move {
        let mut w = Ws::connect(addr, Some(&token)).await.unwrap();
        w.call(
            "tools.invoke",
            json!({"sessionKey": "main", "toolName": "message", "toolCallId": "doomed-send",
                   "params": {"action": "send", "target": "ops", "message": "deploy done"}}),
        )
        .await
    });
    // Wait for the write-ahead: the ledger holds the send as started.
    let ledger_path = gw.state().join(LEDGER_FILE);
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let started = SendLedger::open(&ledger_path)
            .ok()
            .and_then(|l| l.keys_in("started").ok())
            .unwrap_or_default();
        if !started.is_empty() {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the send was never written ahead: {}",
            gw.log_text()
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // Give the journal writer its group-commit moment, then crash.
    tokio::time::sleep(Duration::from_millis(100)).await;
    gw.signal(9);
    assert_eq!(gw.wait_exit(Duration::from_secs(5)), None);
    assert_eq!(receiver.count(), 0, "nothing was sent before the kill");

    // Restart without the pause.
    gw.env.clear();
    gw.spawn();
    let mut ws = gw.ws().await;
    let h = ws.ok("health", json!({})).await;
    assert!(h["interruptedAtStart"].as_u64().unwrap() >= 1, "{h}");
    let hist = ws
        .ok(
            "tools.invoke",
            json!({"sessionKey": "main", "toolName": "sessions_history", "params": {"limit": 50}}),
        )
        .await;
    let calls = hist["details"]["calls"].as_array().unwrap().clone();
    let sends: Vec<&Value> = calls.iter().filter(|c| c["tool"] == "message").collect();
    assert_eq!(sends.len(), 1, "{calls:?}");
    assert_eq!(sends[0]["end"]["outcome"], json!("interrupted"));
    assert_eq!(sends[0]["writeAhead"], json!(true));

    // The same call again (a client retrying after the crash): refused,
    // not sent.
    let again = ws
        .ok(
            "tools.invoke",
            json!({"sessionKey": "main", "toolName": "message", "toolCallId": "doomed-send",
                   "params": {"action": "send", "target": "ops", "message": "deploy done"}}),
        )
        .await;
    assert_eq!(again["status"], json!("error"), "{again}");
    assert_eq!(again["errorCode"], json!("message.interrupted"), "{again}");
    // A new call sends; the receiver got exactly that one.
    let fresh = ws
        .ok(
            "tools.invoke",
            json!({"sessionKey": "main", "toolName": "message", "toolCallId": "fresh-send",
                   "params": {"action": "send", "target": "ops", "message": "second try"}}),
        )
        .await;
    assert_eq!(fresh["status"], json!("ok"), "{fresh}");
    tokio::time::sleep(Duration::from_millis(200)).await;
    let got = receiver.requests();
    assert_eq!(got.len(), 1);
    assert!(String::from_utf8_lossy(&got[0].body).contains("second try"));
}
