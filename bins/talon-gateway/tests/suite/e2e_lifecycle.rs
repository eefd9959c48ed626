//! End-to-end: approvals over the API, graceful stop, reload, the journal
//! across a SIGKILL, the MCP server with the reference Python SDK, cron
//! runs delivered to a subscribed runner.

use super::support;

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use support::{Gw, GwExt as _, Ws, http};

/// A command hook that asks for approval before every `exec`.
const APPROVAL_HOOK: &str = r#"{
  "tools": {"hooks": {"beforeToolCall": [{
    "id": "ask-exec",
    "matcher": ["exec"],
    "command": ["/bin/sh", "-c", "cat >/dev/null; printf '%s' '{\"requireApproval\":{\"title\":\"Run a command?\",\"description\":\"exec wants to run\",\"timeoutMs\":15000}}'"]
  }]}}
}"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_approval_requested_by_a_command_hook_is_resolved_over_the_api() {
    let gw = Gw::start(APPROVAL_HOOK);
    let mut approver = gw.ws().await;
    let mut agent = gw.ws().await;
    let marker = gw.dir.path().join("approved-marker");
    let cmd = format!("echo ran > {}", marker.display());
    // The call waits for a human…
    let gw_addr = gw.addr;
    let token = gw.token.clone();
    let waiting = tokio::spawn(async move {
        let mut a = Ws::connect(gw_addr, Some(&token)).await.unwrap();
        a.ok("tools.invoke", json!({"sessionKey": "main", "toolName": "exec", "toolCallId": "needs-ok", "params": {"command": cmd}})).await
    });
    let req = approver.notification("approval.requested").await;
    let id = req["params"]["id"].as_str().unwrap().to_owned();
    assert_eq!(req["params"]["toolName"], json!("exec"));
    assert_eq!(req["params"]["callId"], json!("needs-ok"));
    assert!(!marker.exists(), "nothing runs before the approval");
    let pending = approver.ok("approvals.list", json!({})).await;
    assert_eq!(pending["approvals"].as_array().unwrap().len(), 1);
    // …and resumes on resolution.
    let r = approver
        .ok(
            "approvals.resolve",
            json!({"id": id, "decision": "allow-once"}),
        )
        .await;
    assert_eq!(r["outcome"], json!("applied"));
    let done = waiting.await.unwrap();
    assert_eq!(done["status"], json!("ok"), "{done}");
    assert_eq!(std::fs::read_to_string(&marker).unwrap().trim(), "ran");
    let resolved = approver.notification("approval.resolved").await;
    assert_eq!(resolved["params"]["id"], json!(id));
    // A duplicate answer is ignored.
    let dup = approver
        .ok("approvals.resolve", json!({"id": id, "decision": "deny"}))
        .await;
    assert_ne!(dup["outcome"], json!("applied"));
    // A denial blocks the next call.
    let gw_addr = gw.addr;
    let token = gw.token.clone();
    let waiting = tokio::spawn(async move {
        let mut a = Ws::connect(gw_addr, Some(&token)).await.unwrap();
        a.ok(
            "tools.invoke",
            json!({"sessionKey": "main", "toolName": "exec", "params": {"command": "echo no"}}),
        )
        .await
    });
    let req = approver.notification("approval.requested").await;
    let id = req["params"]["id"].as_str().unwrap().to_owned();
    approver
        .ok("approvals.resolve", json!({"id": id, "decision": "deny"}))
        .await;
    let done = waiting.await.unwrap();
    assert_eq!(done["status"], json!("blocked"));
    assert_eq!(done["deniedReason"], json!("approval-denied"));
    drop(agent.ok("health", json!({})).await);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_drains_in_flight_calls_kills_children_and_exits_zero() {
    let mut gw = Gw::start("{}");
    let mut ws = gw.ws().await;
    let bg = ws
        .ok("tools.invoke", json!({"sessionKey": "main", "toolName": "exec", "params": {"command": "sleep 300", "background": true}}))
        .await;
    let child = bg["details"]["pid"].as_u64().unwrap();
    assert!(std::path::Path::new(&format!("/proc/{child}")).exists());
    let addr = gw.addr;
    let token = gw.token.clone();
    let slow = tokio::spawn(async move {
        let mut w = Ws::connect(addr, Some(&token)).await.unwrap();
        w.ok("tools.invoke", json!({"sessionKey": "main", "toolName": "exec", "params": {"command": "sleep 0.7; echo drained"}})).await
    });
    // Signal only once the slow call is in flight (a fixed sleep races
    // with a loaded machine).
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let h = ws.ok("health", json!({})).await;
        if h["inFlight"].as_u64().unwrap_or(0) >= 1 {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the slow call never started: {h}"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    gw.signal(15);
    let done = slow.await.unwrap();
    assert_eq!(done["status"], json!("ok"), "{done}");
    assert!(
        done["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("drained")
    );
    assert_eq!(
        gw.wait_exit(Duration::from_secs(15)),
        Some(0),
        "{}",
        gw.log_text()
    );
    let alive = std::fs::read_to_string(format!("/proc/{child}/stat"))
        .map(|s| s.split_whitespace().nth(2).is_none_or(|st| st != "Z"))
        .unwrap_or(false);
    assert!(!alive, "the background child survived the gateway");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reload_applies_to_new_calls_and_a_bad_config_keeps_the_last_good_one() {
    let gw = Gw::start(
        r#"{"gateway": {"auth": {"tokens": [{"token": "agent-token-aaaaaaaaaa", "scope": "agent"}]}}}"#,
    );
    let mut op = gw.ws().await;
    let mut old_agent = Ws::connect(gw.addr, Some("agent-token-aaaaaaaaaa"))
        .await
        .unwrap();
    let r = op
        .ok(
            "tools.invoke",
            json!({"sessionKey": "main", "toolName": "exec", "params": {"command": "echo before"}}),
        )
        .await;
    assert_eq!(r["status"], json!("ok"));
    // Tighten: deny exec, rotate the agent token. The file watcher reloads.
    std::fs::write(&gw.config, r#"{"tools": {"deny": ["exec"]}, "gateway": {"auth": {"tokens": [{"token": "agent-token-bbbbbbbbbb", "scope": "agent"}]}}}"#).unwrap();
    let ev = op.notification("config.reloaded").await;
    assert_eq!(ev["params"]["ok"], json!(true), "{ev}");
    let r = op
        .ok(
            "tools.invoke",
            json!({"sessionKey": "main", "toolName": "exec", "params": {"command": "echo after"}}),
        )
        .await;
    assert_eq!(r["status"], json!("blocked"), "{r}");
    // The old token is refused, on new and on existing connections.
    assert!(
        Ws::connect(gw.addr, Some("agent-token-aaaaaaaaaa"))
            .await
            .is_err()
    );
    let v = old_agent.call("health", json!({})).await;
    assert_eq!(v["error"]["code"], json!(-32004), "{v}");
    assert!(
        Ws::connect(gw.addr, Some("agent-token-bbbbbbbbbb"))
            .await
            .is_ok()
    );
    // An invalid config is rejected; the last good one (exec denied) stays.
    std::fs::write(&gw.config, r#"{"tools": {"deny": "#).unwrap();
    gw.signal(1);
    let ev = op.notification("config.reloaded").await;
    assert_eq!(ev["params"]["ok"], json!(false), "{ev}");
    assert!(
        ev["params"]["error"]
            .as_str()
            .unwrap()
            .contains("talon.json"),
        "{ev}"
    );
    let r = op
        .ok(
            "tools.invoke",
            json!({"sessionKey": "main", "toolName": "exec", "params": {"command": "echo loose"}}),
        )
        .await;
    assert_eq!(
        r["status"],
        json!("blocked"),
        "a failed reload must not loosen policy: {r}"
    );
    let c = op.ok("config.get", json!({})).await;
    assert_eq!(c["lastReload"]["ok"], json!(false));
    let (_, metrics) = http(gw.addr, "GET", "/metrics", Some(&gw.token), None).unwrap();
    assert!(
        metrics.contains("talon_gateway_reload_failures_total 1"),
        "{metrics}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn f7_sigkill_mid_call_then_restart_marks_it_interrupted_and_never_reruns_it() {
    let mut gw = Gw::start(r#"{"gateway": {"limits": {"runnerWaitMs": 60000}}}"#);
    // A cron run in flight too: it waits for a runner that never comes.
    let mut op = gw.ws().await;
    let added = op
        .ok("cron.add", json!({"job": {"name": "crashy", "schedule": {"kind": "every", "everyMs": 3600000}, "payload": {"kind": "agentTurn", "message": "hi"}}}))
        .await;
    let job_id = added["job"]["id"].as_str().unwrap().to_owned();
    op.ok("cron.run", json!({"jobId": job_id, "runMode": "force"}))
        .await;
    op.notification("cron.fired").await;
    let counter = gw.dir.path().join("runs");
    let cmd = format!("echo run >> {}; sleep 30", counter.display());
    let addr = gw.addr;
    let token = gw.token.clone();
    let _inflight = tokio::spawn(async move {
        let mut w = Ws::connect(addr, Some(&token)).await.unwrap();
        w.call("tools.invoke", json!({"sessionKey": "main", "toolName": "exec", "toolCallId": "doomed", "params": {"command": cmd}})).await
    });
    let deadline = Instant::now() + Duration::from_secs(10);
    while !counter.exists() {
        assert!(Instant::now() < deadline, "the call never started");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // A completed read-only call before the crash, to check it survives.
    let mut ws = gw.ws().await;
    ws.ok(
        "tools.invoke",
        json!({"sessionKey": "main", "toolName": "session_status", "toolCallId": "fine"}),
    )
    .await;
    // Give the journal writer its group-commit moment, then crash.
    tokio::time::sleep(Duration::from_millis(100)).await;
    gw.signal(9);
    assert_eq!(
        gw.wait_exit(Duration::from_secs(5)),
        None,
        "killed by a signal: no exit code"
    );
    assert!(
        gw.child.as_mut().unwrap().try_wait().unwrap().is_some(),
        "the gateway is gone"
    );
    // The orphaned `sleep` of the killed gateway (nothing can reap it when
    // the daemon is SIGKILLed); end it by pid.
    support::kill_processes_mentioning(&counter.display().to_string());
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
    let doomed: Vec<&Value> = calls.iter().filter(|c| c["tool"] == "exec").collect();
    assert_eq!(doomed.len(), 1, "{calls:?}");
    assert_eq!(doomed[0]["end"]["outcome"], json!("interrupted"));
    assert_eq!(doomed[0]["writeAhead"], json!(true));
    assert!(
        calls
            .iter()
            .any(|c| c["tool"] == "session_status" && c["end"]["outcome"] == "ok")
    );
    // I2: the side effect ran exactly once; nothing re-ran it.
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(
        std::fs::read_to_string(&counter).unwrap().lines().count(),
        1
    );
    // The cron run left `running` is recovered as interrupted, not left
    // running and not re-run at once.
    let runs = ws.ok("cron.runs", json!({"jobId": job_id})).await;
    let text = runs.to_string();
    assert!(text.contains("interrupted"), "{text}");
    assert!(!text.contains("\"running\""), "{text}");
    // I5: no approval is left pending after the crash.
    let p = ws.ok("approvals.list", json!({})).await;
    assert!(p["approvals"].as_array().unwrap().is_empty());
}

#[test]
fn the_reference_python_mcp_sdk_lists_and_calls_a_sessions_tools() {
    let gw = Gw::start(r#"{"tools": {"deny": ["exec"]}}"#);
    let script = support::write_script(
        gw.dir.path(),
        "mcp_client.py",
        r#"
import json, sys
import anyio
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.types import TextContent

async def main(url, token):
    out = {}
    headers = {"Authorization": "Bearer " + token, "X-Talon-Session": "agent:main:main"}
    async with create_mcp_http_client(headers=headers) as http:
        async with streamable_http_client(url, http_client=http) as (read, write):
            async with ClientSession(read, write) as s:
                await s.initialize()
                names = []
                cursor = None
                while True:
                    page = await s.list_tools(cursor=cursor) if cursor else await s.list_tools()
                    names += [t.name for t in page.tools]
                    cursor = page.next_cursor
                    if not cursor:
                        break
                out["tools"] = names
                st = await s.call_tool("session_status", {})
                out["status"] = {"is_error": st.is_error, "text": [c.text for c in st.content if isinstance(c, TextContent)]}
                ex = await s.call_tool("exec", {"command": "id"})
                out["exec"] = {"is_error": ex.is_error, "text": [c.text for c in ex.content if isinstance(c, TextContent)]}
    print(json.dumps(out))

anyio.run(main, sys.argv[1], sys.argv[2])
"#,
    );
    let out = std::process::Command::new(support::python())
        .arg(&script)
        .arg(format!("http://{}/mcp", gw.addr))
        .arg(&gw.token)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let tools: Vec<String> = serde_json::from_value(v["tools"].clone()).unwrap();
    assert!(tools.contains(&"session_status".to_owned()), "{v}");
    assert!(!tools.contains(&"exec".to_owned()), "{v}");
    assert_eq!(v["status"]["is_error"], json!(false));
    assert!(
        v["status"]["text"][0]
            .as_str()
            .unwrap()
            .contains("agent:main:main")
    );
    assert_eq!(v["exec"]["is_error"], json!(true));
    assert!(
        v["exec"]["text"][0].as_str().unwrap().contains("blocked"),
        "{v}"
    );
    // The MCP calls went through the same path: counted and journalled.
    let (_, metrics) = http(gw.addr, "GET", "/metrics", Some(&gw.token), None).unwrap();
    assert!(
        metrics.contains("talon_gateway_calls_total{tool=\"exec\",outcome=\"blocked\"} 1"),
        "{metrics}"
    );
    assert!(
        metrics.contains("talon_gateway_calls_total{tool=\"session_status\",outcome=\"ok\"} 1"),
        "{metrics}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cron_job_fires_into_a_subscribed_runner() {
    let gw = Gw::start("{}");
    let mut runner = gw.ws().await;
    runner.ok("runner.subscribe", json!({})).await;
    let mut op = gw.ws().await;
    let added = op
        .ok("cron.add", json!({"job": {"name": "ping", "schedule": {"kind": "every", "everyMs": 60000}, "payload": {"kind": "agentTurn", "message": "say hi"}}}))
        .await;
    let job_id = added["job"]["id"]
        .as_str()
        .or_else(|| added["id"].as_str())
        .unwrap_or_else(|| panic!("{added}"))
        .to_owned();
    op.ok("cron.run", json!({"jobId": job_id, "runMode": "force"}))
        .await;
    let run = runner.notification("runner.run").await;
    assert_eq!(run["params"]["jobId"], json!(job_id));
    assert_eq!(run["params"]["message"], json!("say hi"));
    assert_eq!(run["params"]["trigger"], json!("cron"));
    let run_id = run["params"]["runId"].as_str().unwrap().to_owned();
    let fired = op.notification("cron.fired").await;
    assert_eq!(fired["params"]["runId"], json!(run_id));
    runner
        .ok(
            "runner.complete",
            json!({"runId": run_id, "status": "ok", "summary": "said hi"}),
        )
        .await;
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let runs = op.ok("cron.runs", json!({"jobId": job_id})).await;
        let text = runs.to_string();
        if text.contains("said hi") {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the run was not recorded: {text}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_no_runner_a_cron_run_waits_then_fails_with_the_reason() {
    let gw = Gw::start(r#"{"gateway": {"limits": {"runnerWaitMs": 300}}}"#);
    let mut op = gw.ws().await;
    let added = op
        .ok("cron.add", json!({"job": {"name": "lonely", "schedule": {"kind": "every", "everyMs": 60000}, "payload": {"kind": "agentTurn", "message": "anyone?"}}}))
        .await;
    let job_id = added["job"]["id"]
        .as_str()
        .or_else(|| added["id"].as_str())
        .unwrap_or_else(|| panic!("{added}"))
        .to_owned();
    op.ok("cron.run", json!({"jobId": job_id, "runMode": "force"}))
        .await;
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let runs = op.ok("cron.runs", json!({"jobId": job_id})).await;
        let text = runs.to_string();
        if text.contains("no runner client is subscribed") {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the failure was not recorded: {text}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn f7_an_approval_pending_at_a_sigkill_is_denied_at_restart_and_the_call_never_runs() {
    let mut gw = Gw::start(APPROVAL_HOOK);
    let mut approver = gw.ws().await;
    let marker = gw.dir.path().join("never-approved");
    let cmd = format!("echo ran > {}", marker.display());
    let addr = gw.addr;
    let token = gw.token.clone();
    let _waiting = tokio::spawn(async move {
        let mut a = Ws::connect(addr, Some(&token)).await.unwrap();
        a.call("tools.invoke", json!({"sessionKey": "main", "toolName": "exec", "toolCallId": "asked", "params": {"command": cmd}})).await
    });
    let req = approver.notification("approval.requested").await;
    assert_eq!(req["params"]["callId"], json!("asked"));
    gw.signal(9);
    assert_eq!(gw.wait_exit(Duration::from_secs(5)), None);
    gw.spawn();
    let mut ws = gw.ws().await;
    let h = ws.ok("health", json!({})).await;
    assert_eq!(h["approvalsDeniedAtStart"], json!(1), "{h}");
    assert_eq!(h["interruptedAtStart"], json!(1), "{h}");
    let pending = ws.ok("approvals.list", json!({})).await;
    assert_eq!(pending["approvals"], json!([]), "{pending}");
    // The old approval id can no longer let anything run.
    let id = req["params"]["id"].as_str().unwrap();
    let late = ws
        .ok(
            "approvals.resolve",
            json!({"id": id, "decision": "allow-once"}),
        )
        .await;
    assert_ne!(late["outcome"], json!("applied"), "{late}");
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(
        !marker.exists(),
        "a call denied by the crash must never run"
    );
    // A second restart has nothing left to deny.
    drop(ws);
    gw.signal(15);
    assert_eq!(gw.wait_exit(Duration::from_secs(20)), Some(0));
    gw.spawn();
    let mut ws = gw.ws().await;
    let h = ws.ok("health", json!({})).await;
    assert_eq!(h["approvalsDeniedAtStart"], json!(0), "{h}");
}
