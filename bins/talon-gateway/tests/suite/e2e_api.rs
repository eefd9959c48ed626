//! End-to-end: the built `talon-gateway` binary, real sockets, real
//! clients. Start-up, auth, scopes, JSON-RPC errors, tool calls over WS and
//! HTTP, metrics.

use super::support;

use std::os::unix::fs::PermissionsExt as _;
use std::time::Duration;

use serde_json::{Value, json};
use support::{Gw, GwExt as _, Ws, http, http_response, http_with_headers};

const DENY_EXEC: &str = r#"{
  "tools": {"deny": ["exec"]},
  "gateway": {"auth": {"tokens": [
    {"token": "reader-token-0123456789", "scope": "read-only"},
    {"token": "agent-token-0123456789", "scope": "agent"}
  ], "maxFailures": 3, "windowMs": 60000}}
}"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn starts_on_defaults_with_a_private_token_and_answers_health() {
    let gw = Gw::start("{}");
    // Healthy quickly (the release-build figure is in BENCHMARKS.md).
    assert!(
        gw.healthy_after < Duration::from_secs(5),
        "{:?}",
        gw.healthy_after
    );
    let token_file = gw.state().join("gateway.token");
    let mode = std::fs::metadata(&token_file).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
    assert_eq!(gw.token.len(), 64);
    let log = gw.log_text();
    assert!(
        log.contains(&token_file.display().to_string()),
        "token path printed: {log}"
    );
    assert!(
        !log.contains(&gw.token),
        "the token itself must never be logged"
    );
    let (status, body) = http(gw.addr, "GET", "/healthz", None, None).unwrap();
    assert_eq!(status, 200);
    assert_eq!(
        serde_json::from_str::<Value>(&body).unwrap()["ok"],
        json!(true)
    );
    let mut ws = gw.ws().await;
    let h = ws.ok("health", json!({})).await;
    assert_eq!(h["ok"], json!(true));
    assert_eq!(h["generation"], json!(1));
}

#[test]
fn refuses_a_non_loopback_bind_without_a_configured_token() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("talon.json");
    std::fs::write(&config, "{}").unwrap();
    let out = std::process::Command::new(support::BIN)
        .arg("--config")
        .arg(&config)
        .arg("--state-dir")
        .arg(dir.path().join("state"))
        .arg("--bind")
        .arg("0.0.0.0:0")
        .env("HOME", dir.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("non-loopback") && err.contains("gateway.auth.token"),
        "{err}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn auth_is_required_and_failures_are_rate_limited() {
    let gw = Gw::start(DENY_EXEC);
    let err = Ws::connect(gw.addr, None).await.err().unwrap().to_string();
    assert!(err.contains("401"), "{err}");
    // maxFailures is 3: the missing token above, a wrong one and a bad one
    // on /metrics; then further failures from this address are refused with
    // 429 and when to retry, on every surface (/mcp included)…
    let err = Ws::connect(gw.addr, Some("wrong-token-0123456789"))
        .await
        .err()
        .unwrap()
        .to_string();
    assert!(err.contains("401"), "{err}");
    let (status, _) = http(gw.addr, "GET", "/metrics", Some("bad"), None).unwrap();
    assert_eq!(status, 401);
    for path in ["/metrics", "/mcp"] {
        let method = if path == "/mcp" { "POST" } else { "GET" };
        let r = http_response(
            gw.addr,
            method,
            path,
            Some("still-wrong-0123456789"),
            Some("{}"),
        )
        .unwrap();
        assert_eq!(r.status, 429, "{path}: {}", r.body);
        let wait: u64 = r
            .header("retry-after")
            .and_then(|v| v.parse().ok())
            .unwrap_or(0);
        assert!((1..=60).contains(&wait), "{path}: Retry-After {wait}");
    }
    let err = Ws::connect(gw.addr, Some("wrong-token-0123456789"))
        .await
        .err()
        .unwrap()
        .to_string();
    assert!(err.contains("429"), "{err}");
    // …but the valid token is never locked out by them.
    let mut ws = Ws::connect(gw.addr, Some(&gw.token)).await.unwrap();
    assert_eq!(ws.ok("health", json!({})).await["ok"], json!(true));
    let (status, _) = http(gw.addr, "GET", "/metrics", Some(&gw.token), None).unwrap();
    assert_eq!(status, 200);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn json_rpc_errors_follow_the_spec() {
    let gw = Gw::start("{}");
    let mut ws = gw.ws().await;
    ws.send_text("{not json").await;
    let v = ws.next_frame().await.unwrap();
    assert_eq!(v["error"]["code"], json!(-32700));
    assert_eq!(v["id"], Value::Null);
    ws.send_text(r#"{"jsonrpc":"1.0","id":5,"method":"health"}"#)
        .await;
    let v = ws.next_frame().await.unwrap();
    assert_eq!(
        (v["error"]["code"].clone(), v["id"].clone()),
        (json!(-32600), json!(5))
    );
    let v = ws.call("tools.delete", json!({})).await;
    assert_eq!(v["error"]["code"], json!(-32601));
    let v = ws.call("tools.invoke", json!({"sessionKey": "main"})).await;
    assert_eq!(v["error"]["code"], json!(-32602));
    assert!(
        v["error"]["message"].as_str().unwrap().contains("toolName"),
        "{v}"
    );
    let v = ws
        .call("tools.list", json!({"sessionKey": "main", "bogus": 1}))
        .await;
    assert_eq!(v["error"]["code"], json!(-32602));
    // A batch: answers for requests, none for the notification.
    ws.send_text(r#"[{"jsonrpc":"2.0","id":"a","method":"health"},{"jsonrpc":"2.0","method":"health"},{"jsonrpc":"2.0","id":"b","method":"nope"}]"#).await;
    let v = ws.next_frame().await.unwrap();
    let arr = v.as_array().unwrap();
    assert_eq!(arr.len(), 2);
    assert_eq!(arr[0]["result"]["ok"], json!(true));
    assert_eq!(arr[1]["error"]["code"], json!(-32601));
    // The connection survives bad input.
    assert_eq!(ws.ok("health", json!({})).await["ok"], json!(true));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scopes_are_least_privilege() {
    let gw = Gw::start(DENY_EXEC);
    let mut reader = Ws::connect(gw.addr, Some("reader-token-0123456789"))
        .await
        .unwrap();
    let listed = reader.ok("tools.list", json!({"sessionKey": "main"})).await;
    assert!(
        listed["tools"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["name"] == "session_status")
    );
    let v = reader
        .call(
            "tools.invoke",
            json!({"sessionKey": "main", "toolName": "session_status"}),
        )
        .await;
    assert_eq!(v["error"]["code"], json!(-32001));
    assert_eq!(v["error"]["data"]["required"], json!("runner"));
    let mut agent = Ws::connect(gw.addr, Some("agent-token-0123456789"))
        .await
        .unwrap();
    let r = agent
        .ok(
            "tools.invoke",
            json!({"sessionKey": "main", "toolName": "session_status", "toolCallId": "c1"}),
        )
        .await;
    assert_eq!(r["status"], json!("ok"));
    let v = agent
        .call("approvals.resolve", json!({"id": "x", "decision": "deny"}))
        .await;
    assert_eq!(v["error"]["code"], json!(-32001));
    let v = agent.call("cron.add", json!({})).await;
    assert_eq!(v["error"]["code"], json!(-32001));
    // The operator (generated token) may.
    let mut op = gw.ws().await;
    let r = op
        .ok(
            "approvals.resolve",
            json!({"id": "nope", "decision": "deny"}),
        )
        .await;
    assert_eq!(r["outcome"], json!("unknown"));
    // HTTP: read-only may not invoke.
    let (status, _) = gw.post_invoke(
        Some("reader-token-0123456789"),
        json!({"tool": "session_status"}),
    );
    assert_eq!(status, 403);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tools_list_invoke_and_blocked_calls_over_ws_and_http() {
    let gw = Gw::start(DENY_EXEC);
    let mut ws = gw.ws().await;
    let s = ws
        .ok(
            "sessions.create",
            json!({"sessionKey": "s1", "agentId": "main", "provider": "openai", "sender": "u1"}),
        )
        .await;
    assert_eq!(s["session"]["sessionKey"], json!("s1"));
    let tools: Vec<String> = serde_json::from_value(s["tools"].clone()).unwrap();
    assert!(tools.contains(&"session_status".to_owned()));
    assert!(!tools.contains(&"exec".to_owned()));
    let listed = ws
        .ok("tools.list", json!({"sessionKey": "s1", "audit": true}))
        .await;
    let audit = listed["audit"]["layers"].as_array().unwrap();
    assert!(
        audit.iter().any(|l| l["removed"]
            .as_array()
            .is_some_and(|r| r.iter().any(|x| x["tool"] == "exec"))),
        "{listed}"
    );
    let ok = ws
        .ok("tools.invoke", json!({"sessionKey": "s1", "toolName": "session_status", "toolCallId": "call-1", "params": {}}))
        .await;
    assert_eq!(ok["status"], json!("ok"));
    assert_eq!(ok["toolCallId"], json!("call-1"));
    assert_eq!(ok["details"]["sessionKey"], json!("s1"));
    let blocked = ws
        .ok("tools.invoke", json!({"sessionKey": "s1", "toolName": "exec", "params": {"command": "touch /tmp/never"}}))
        .await;
    assert_eq!(blocked["status"], json!("blocked"));
    assert_eq!(blocked["deniedReason"], json!("tool-policy"));
    assert!(
        blocked["configKey"].as_str().unwrap().contains("tools"),
        "{blocked}"
    );
    assert!(blocked["layer"].is_string(), "{blocked}");
    let unknown = ws
        .call(
            "tools.invoke",
            json!({"sessionKey": "nope", "toolName": "read"}),
        )
        .await;
    assert_eq!(unknown["error"]["code"], json!(-32002));
    // HTTP, OpenClaw's shape: 200 ok / 404 not available.
    let (status, v) = gw.post_invoke(
        None,
        json!({"tool": "session_status", "args": {}, "sessionKey": "s1"}),
    );
    assert_eq!(status, 200, "{v}");
    assert_eq!(v["ok"], json!(true));
    assert_eq!(v["result"]["details"]["sessionKey"], json!("s1"));
    let (status, v) = gw.post_invoke(None, json!({"tool": "exec", "args": {"command": "id"}}));
    assert_eq!(status, 404, "{v}");
    assert_eq!(v["ok"], json!(false));
    assert_eq!(v["error"]["type"], json!("not_found"));
    let (status, _) = gw.post_invoke(None, json!({"args": {}}));
    assert_eq!(status, 400);
    // Tools that pivot into other sessions or schedule work are not on the
    // HTTP surface by default (gateway.tools.allow exposes them)…
    let (status, v) = gw.post_invoke(None, json!({"tool": "cron", "args": {"action": "list"}}));
    assert_eq!(status, 404, "{v}");
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap()
            .contains("gateway.tools.allow"),
        "{v}"
    );
    // …while the session's own API still has them.
    let over_ws = ws
        .ok(
            "tools.invoke",
            json!({"sessionKey": "s1", "toolName": "cron", "params": {"action": "list"}}),
        )
        .await;
    assert_eq!(over_ws["status"], json!("ok"), "{over_ws}");
    // Sessions list / close.
    let list = ws.ok("sessions.list", json!({})).await;
    assert!(
        list["sessions"]
            .as_array()
            .unwrap()
            .iter()
            .any(|s| s["sessionKey"] == "s1")
    );
    ws.ok("sessions.close", json!({"sessionKey": "s1"})).await;
    let v = ws.call("sessions.close", json!({"sessionKey": "s1"})).await;
    assert_eq!(v["error"]["code"], json!(-32002));
    // Metrics saw it all (the HTTP `exec` was refused by the HTTP surface's
    // hard deny before the session's table, so only the WS call counts).
    let (status, text) = http(gw.addr, "GET", "/metrics", Some(&gw.token), None).unwrap();
    assert_eq!(status, 200);
    assert!(
        text.contains("talon_gateway_calls_total{tool=\"exec\",outcome=\"blocked\"} 1"),
        "{text}"
    );
    assert!(
        text.contains("talon_gateway_calls_total{tool=\"session_status\",outcome=\"ok\"} 2"),
        "{text}"
    );
    assert!(
        text.contains("talon_gateway_blocked_total{layer=\"tool-policy\"} 1"),
        "{text}"
    );
    assert!(text.contains(
        "talon_gateway_call_duration_seconds_bucket{tool=\"session_status\",le=\"+Inf\"} 2"
    ));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn config_get_redacts_secrets_and_schema_lookup_works() {
    let gw = Gw::start(DENY_EXEC);
    let mut ws = Ws::connect(gw.addr, Some("reader-token-0123456789"))
        .await
        .unwrap();
    let c = ws.ok("config.get", json!({})).await;
    let text = c.to_string();
    assert!(!text.contains("agent-token-0123456789"), "{text}");
    assert!(!text.contains("reader-token-0123456789"), "{text}");
    assert_eq!(c["config"]["tools"]["deny"], json!(["exec"]));
    let s = ws
        .ok("config.schema.lookup", json!({"path": "tools.deny"}))
        .await;
    assert!(s.to_string().contains("array"), "{s}");
    let v = ws
        .call("config.schema.lookup", json!({"path": "no.such.key"}))
        .await;
    assert_eq!(v["error"]["code"], json!(-32602), "{v}");
}

#[test]
fn python_websockets_client() {
    let gw = Gw::start(DENY_EXEC);
    let script = support::write_script(
        gw.dir.path(),
        "client.py",
        r#"
import asyncio, json, sys
import websockets

async def main(url, token):
    async with websockets.connect(url, additional_headers={"Authorization": "Bearer " + token}) as ws:
        async def call(i, method, params):
            await ws.send(json.dumps({"jsonrpc": "2.0", "id": i, "method": method, "params": params}))
            while True:
                msg = json.loads(await ws.recv())
                if msg.get("id") == i:
                    return msg
        h = await call(1, "health", {})
        ok = await call(2, "tools.invoke", {"sessionKey": "main", "toolName": "session_status", "toolCallId": "py-1"})
        denied = await call(3, "tools.invoke", {"sessionKey": "main", "toolName": "exec", "params": {"command": "id"}})
        print(json.dumps({"health": h["result"]["ok"], "ok": ok["result"]["status"], "denied": denied["result"]["status"], "reason": denied["result"]["deniedReason"]}))

asyncio.run(main(sys.argv[1], sys.argv[2]))
"#,
    );
    let out = std::process::Command::new(support::python())
        .arg(&script)
        .arg(format!("ws://{}/ws", gw.addr))
        .arg(&gw.token)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        v,
        json!({"health": true, "ok": "ok", "denied": "blocked", "reason": "tool-policy"})
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tasks_skills_sandbox_and_mcp_status() {
    let gw = Gw::start("{}");
    let mut ws = gw.ws().await;
    // A task written by another process shows up as task.updated, and
    // cancelling it over the API is pushed too.
    let ledger = talon_tasks::TaskLedger::open(&gw.state().join("talon.db")).unwrap();
    tokio::time::sleep(Duration::from_millis(700)).await;
    let task = ledger
        .create(talon_tasks::NewTask {
            runtime: Some(talon_tasks::TaskRuntime::Subagent),
            requester_session_key: "agent:main:main".into(),
            task: "summarise".into(),
            start_running: true,
            ..Default::default()
        })
        .unwrap();
    let ev = ws.notification("task.updated").await;
    assert_eq!(ev["params"]["task"]["taskId"], json!(task.task_id));
    let listed = ws.ok("tasks.list", json!({})).await;
    assert!(
        listed["tasks"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["taskId"] == json!(task.task_id))
    );
    let got = ws.ok("tasks.get", json!({"taskId": task.task_id})).await;
    assert_eq!(got["task"]["taskId"], json!(task.task_id));
    let c = ws
        .ok(
            "tasks.cancel",
            json!({"taskId": task.task_id, "reason": "test"}),
        )
        .await;
    assert_eq!(c["task"]["status"], json!("cancelled"));
    let ev = ws.notification("task.updated").await;
    assert_eq!(ev["params"]["task"]["status"], json!("cancelled"));
    let v = ws.call("tasks.get", json!({"taskId": "nope"})).await;
    assert_eq!(v["error"]["code"], json!(-32002));
    let v = ws.call("tasks.list", json!({"status": "sideways"})).await;
    assert_eq!(v["error"]["code"], json!(-32602));
    // Skills from the managed root.
    let skill = gw.state().join("skills/demo");
    std::fs::create_dir_all(&skill).unwrap();
    std::fs::write(
        skill.join("SKILL.md"),
        "---\nname: demo\ndescription: A demo skill.\n---\n# Demo\n",
    )
    .unwrap();
    let s = ws.ok("skills.list", json!({})).await;
    assert!(
        s["skills"]
            .as_array()
            .unwrap()
            .iter()
            .any(|k| k["name"] == "demo"),
        "{s}"
    );
    let p = ws.ok("skills.prompt", json!({})).await;
    assert!(p["text"].as_str().unwrap().contains("demo"), "{p}");
    // Sandbox: off by default.
    let e = ws
        .ok("sandbox.explain", json!({"sessionKey": "main"}))
        .await;
    assert_eq!(e["sandboxed"], json!(false));
    assert_eq!(e["sandbox"]["mode"], json!("off"));
    let l = ws.ok("sandbox.list", json!({})).await;
    assert!(l["sandboxes"].is_array());
    let m = ws.ok("mcp.status", json!({})).await;
    // No MCP servers configured: none instantiated (e2e_mcp covers a real one).
    assert_eq!(m["servers"], json!([]));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_child_session_is_never_less_confined_than_its_parent() {
    let gw = Gw::start(
        r#"{ "agents": {
            "defaults": {"sandbox": {"mode": "non-main", "workspaceAccess": "none"}},
            "list": [{"id": "main"}, {"id": "open", "sandbox": {"mode": "off"}}]
        } }"#,
    );
    let mut ws = gw.ws().await;
    let parent = ws
        .ok(
            "sessions.create",
            json!({"sessionKey": "agent:main:group:7", "agentId": "main"}),
        )
        .await;
    assert_eq!(parent["session"]["sandboxed"], json!(true), "{parent}");
    // The agent's main key, and another agent whose sandbox is off, would
    // each run the child's exec on the host: both refused, nothing opened.
    for child in [
        json!({"sessionKey": "main", "parentSessionKey": "agent:main:group:7"}),
        json!({"agentId": "open", "parentSessionKey": "agent:main:group:7"}),
    ] {
        let refused = ws.call("sessions.create", child.clone()).await;
        assert_eq!(refused["error"]["code"], json!(-32602), "{refused}");
        assert_eq!(
            refused["error"]["data"]["errorCode"],
            json!("child_unsandboxed"),
            "{refused}"
        );
    }
    let listed = ws.ok("sessions.list", json!({})).await;
    assert_eq!(
        listed["sessions"].as_array().map(Vec::len),
        Some(1),
        "{listed}"
    );
    let ok = ws
        .ok(
            "sessions.create",
            json!({"sessionKey": "agent:main:sub:1", "parentSessionKey": "agent:main:group:7"}),
        )
        .await;
    assert_eq!(ok["session"]["sandboxed"], json!(true), "{ok}");
}

/// `POST /tools/invoke` keeps OpenClaw's hard deny even when the session's
/// policy allows the tool: `exec` and `apply_patch` are refused naming
/// `gateway.tools.allow`, and nothing runs; naming `exec` there exposes it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_invoke_refuses_exec_by_default_and_gateway_tools_allow_exposes_it() {
    let gw = Gw::start("{}");
    let marker = gw.state().join("ran-over-http");
    let command = format!("touch {}", marker.display());
    for (tool, args) in [
        ("exec", json!({"command": command})),
        (
            "apply_patch",
            json!({"input": "*** Begin Patch\n*** Add File: x.txt\n+x\n*** End Patch"}),
        ),
    ] {
        let (status, v) = gw.post_invoke(None, json!({"tool": tool, "args": args}));
        assert_eq!(status, 404, "{tool}: {v}");
        assert!(
            v["error"]["message"]
                .as_str()
                .is_some_and(|m| m.contains("gateway.tools.allow")),
            "{tool}: {v}"
        );
    }
    assert!(!marker.exists(), "exec ran over HTTP");
    // The WebSocket API keeps the session's own policy: exec is there.
    let mut ws = gw.ws().await;
    let list = ws.ok("tools.list", json!({"sessionKey": "main"})).await;
    assert!(list.to_string().contains("\"exec\""), "{list}");
    drop(ws);
    drop(gw);

    let gw = Gw::start(r#"{"gateway": {"tools": {"allow": ["exec"]}}}"#);
    let marker = gw.state().join("ran-over-http");
    let command = format!("touch {}", marker.display());
    let (status, v) = gw.post_invoke(None, json!({"tool": "exec", "args": {"command": command}}));
    assert_eq!(status, 200, "{v}");
    assert!(marker.exists(), "{v}");
}

/// `/metrics` labels only known tools: made-up names a caller sends share
/// the `other` series, so a token holder cannot grow it without bound.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metrics_label_only_known_tools() {
    let gw = Gw::start("{}");
    let mut ws = gw.ws().await;
    for i in 0..20 {
        let name = format!("made_up_tool_{i}");
        let _ = ws
            .call(
                "tools.invoke",
                json!({"sessionKey": "main", "toolName": name, "params": {}}),
            )
            .await;
    }
    ws.ok(
        "tools.invoke",
        json!({"sessionKey": "main", "toolName": "session_status", "params": {}}),
    )
    .await;
    let (status, text) = http(gw.addr, "GET", "/metrics", Some(&gw.token), None).unwrap();
    assert_eq!(status, 200);
    assert!(!text.contains("made_up_tool"), "{text}");
    assert!(text.contains("tool=\"other\""), "{text}");
    assert!(text.contains("tool=\"session_status\""), "{text}");
}

/// HTTP conventions: an oversized `POST /tools/invoke` body is a JSON 413
/// naming the limit; malformed JSON on `/mcp` is a JSON-RPC parse error;
/// `DELETE /mcp` of a session answers 200 or 204.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_conventions_for_oversized_bodies_bad_json_and_mcp_delete() {
    let gw = Gw::start(r#"{"gateway": {"limits": {"maxFrameBytes": 65536}}}"#);
    let big = format!(
        r#"{{"tool": "session_status", "args": {{"x": "{}"}}}}"#,
        "a".repeat(70_000)
    );
    let r = http_response(
        gw.addr,
        "POST",
        "/tools/invoke",
        Some(&gw.token),
        Some(&big),
    )
    .unwrap();
    assert_eq!(r.status, 413, "{}", r.body);
    let v: Value = serde_json::from_str(&r.body).unwrap();
    assert!(
        v["error"]["message"].as_str().unwrap().contains("65536"),
        "{v}"
    );

    let accept = [("Accept", "application/json, text/event-stream")];
    let r = http_with_headers(
        gw.addr,
        "POST",
        "/mcp",
        Some(&gw.token),
        &accept,
        Some("{not json"),
    )
    .unwrap();
    let v: Value = serde_json::from_str(&r.body).unwrap_or(Value::Null);
    assert_eq!(v["error"]["code"], json!(-32700), "{} {}", r.status, r.body);

    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"}}});
    let r = http_with_headers(
        gw.addr,
        "POST",
        "/mcp",
        Some(&gw.token),
        &accept,
        Some(&init.to_string()),
    )
    .unwrap();
    assert_eq!(r.status, 200, "{}", r.body);
    let id = r.header("mcp-session-id").expect("a session id").to_owned();
    let r = http_with_headers(
        gw.addr,
        "DELETE",
        "/mcp",
        Some(&gw.token),
        &[("Mcp-Session-Id", &id)],
        None,
    )
    .unwrap();
    assert!(matches!(r.status, 200 | 204), "{} {}", r.status, r.body);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn security_audit_runs_talon_audit_on_the_running_config() {
    let gw = Gw::start(DENY_EXEC);
    let mut ws = Ws::connect(gw.addr, Some("reader-token-0123456789"))
        .await
        .unwrap();
    // Read-only is enough: the audit only reads.
    let report = ws.ok("security.audit", json!({})).await;
    assert_eq!(report["deep"], json!(false));
    let findings = report["findings"].as_array().unwrap();
    let ids: Vec<&str> = findings
        .iter()
        .map(|f| f["checkId"].as_str().unwrap())
        .collect();
    // The tokens are in the config file, the default agent has a table.
    assert!(
        ids.contains(&"talon.secrets.gateway_token_in_config"),
        "{ids:?}"
    );
    assert!(ids.contains(&"talon.tools.effective"), "{ids:?}");
    let counted: u64 = ["critical", "warn", "info"]
        .iter()
        .map(|s| report["summary"][s].as_u64().unwrap())
        .sum();
    assert_eq!(counted, findings.len() as u64);
    let text = report.to_string();
    assert!(!text.contains("reader-token-0123456789"), "no token value");
    assert!(!text.contains("agent-token-0123456789"), "no token value");
    // The state dir audited is the gateway's own.
    assert_eq!(report["stateDir"], json!(gw.state().display().to_string()));
    let deep = ws.ok("security.audit", json!({"deep": true})).await;
    assert_eq!(deep["deep"], json!(true));
    let bad = ws.call("security.audit", json!({"deeep": true})).await;
    assert_eq!(bad["error"]["code"], json!(-32602), "{bad}");
}
