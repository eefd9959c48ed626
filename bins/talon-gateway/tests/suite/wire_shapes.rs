//! insta snapshots of every gateway response shape one daemon can show
//! cheaply: `/healthz`, `health`, `sessions.create|list|close`,
//! `tools.list`, `tools.invoke` (ok, blocked, tool error, unknown tool),
//! `approvals.list`, JSON-RPC errors (unknown method, bad params) and
//! `POST /tools/invoke` (ok, blocked, bad body). Volatile values (ids,
//! times, tokens, temp paths) are redacted; a change of shape is a
//! snapshot diff to review.

use serde_json::{Value, json};
use talon_test_support::snapshot::Redactions;

use super::support::{Gw, GwExt as _, http};

const CONFIG: &str = r#"{ "tools": {"deny": ["exec", "process"]} }"#;

fn redactions(gw: &Gw) -> Redactions {
    // `version` is the crate's; `containment` depends on the host's
    // cgroups.
    Redactions::new()
        .key("version")
        .key("containment")
        .path(gw.dir.path(), "[dir]")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ws_and_http_response_shapes() {
    let gw = Gw::start(CONFIG);
    let r = redactions(&gw);
    let mut ws = gw.ws().await;
    let shot = |name: &str, value: Value| {
        insta::assert_json_snapshot!(name, r.apply(&value));
    };

    let (status, body) = http(gw.addr, "GET", "/healthz", None, None).unwrap();
    assert_eq!(status, 200, "{body}");
    shot(
        "healthz",
        serde_json::from_str(&body).unwrap_or(Value::String(body)),
    );

    shot("health", ws.call("health", json!({})).await);
    shot(
        "sessions_create",
        ws.call(
            "sessions.create",
            json!({"sessionKey": "s1", "agentId": "main", "provider": "openai", "sender": "u1"}),
        )
        .await,
    );
    shot("sessions_list", ws.call("sessions.list", json!({})).await);
    shot(
        "tools_list",
        ws.call("tools.list", json!({"sessionKey": "s1"})).await,
    );
    shot(
        "tools_invoke_ok",
        ws.call(
            "tools.invoke",
            json!({"sessionKey": "s1", "toolName": "session_status", "toolCallId": "c1"}),
        )
        .await,
    );
    shot(
        "tools_invoke_blocked",
        ws.call(
            "tools.invoke",
            json!({"sessionKey": "s1", "toolName": "exec", "toolCallId": "c2", "params": {"command": "id"}}),
        )
        .await,
    );
    shot(
        "tools_invoke_tool_error",
        ws.call(
            "tools.invoke",
            json!({"sessionKey": "s1", "toolName": "read", "toolCallId": "c3", "params": {}}),
        )
        .await,
    );
    shot(
        "tools_invoke_unknown_tool",
        ws.call(
            "tools.invoke",
            json!({"sessionKey": "s1", "toolName": "no_such_tool", "toolCallId": "c4"}),
        )
        .await,
    );
    shot("approvals_list", ws.call("approvals.list", json!({})).await);
    shot(
        "error_unknown_method",
        ws.call("no.such.method", json!({})).await,
    );
    shot(
        "error_bad_params",
        ws.call("tools.list", json!({"sessionKey": "s1", "bogus": 1}))
            .await,
    );
    shot(
        "sessions_close",
        ws.call("sessions.close", json!({"sessionKey": "s1"})).await,
    );

    let (status, ok) = gw.post_invoke(None, json!({"tool": "session_status", "args": {}}));
    assert_eq!(status, 200, "{ok}");
    shot("http_invoke_ok", ok);
    let (status, blocked) =
        gw.post_invoke(None, json!({"tool": "process", "args": {"action": "list"}}));
    assert_ne!(status, 200, "{blocked}");
    shot(
        "http_invoke_blocked",
        json!({"status": status, "body": blocked}),
    );
    let (status, hard) = gw.post_invoke(None, json!({"tool": "exec", "args": {"command": "id"}}));
    assert_eq!(status, 404, "{hard}");
    shot(
        "http_invoke_hard_denied",
        json!({"status": status, "body": hard}),
    );
    let (status, bad) = gw.post_invoke(None, json!({"args": {}}));
    assert_eq!(status, 400, "{bad}");
    shot("http_invoke_bad_body", bad);
}
