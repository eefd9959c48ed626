//! rmcp's own client (and raw HTTP) against the server face, in process, on
//! loopback, over a real `talon_runtime` table.

use super::support;

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use axum::http::{HeaderName, HeaderValue};
use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CallToolResult, ClientRequest, ContentBlock,
    PaginatedRequestParams,
};
use rmcp::service::{PeerRequestOptions, RunningService};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{RoleClient, ServiceExt};
use serde_json::{Value, json};
use talon_mcp_serve::ServeConfig;
use talon_runtime::{InvokeOutcome, ModelToolCall};
use tokio::time::timeout;

use support::{AGENT_TOKEN, PIXEL_PNG, READER_TOKEN, Served, TestSource, serve};

const LIMIT: Duration = Duration::from_secs(10);

async fn connect(url: &str, token: &str, session: &str) -> RunningService<RoleClient, ()> {
    let headers = HashMap::from([(
        HeaderName::from_static("x-talon-session"),
        HeaderValue::from_str(session).unwrap(),
    )]);
    let config = StreamableHttpClientTransportConfig::with_uri(url)
        .auth_header(token)
        .custom_headers(headers);
    let transport = StreamableHttpClientTransport::from_config(config);
    timeout(LIMIT, ().serve(transport)).await.unwrap().unwrap()
}

async fn started(config: ServeConfig) -> (Arc<TestSource>, Served) {
    let source = TestSource::new();
    let served = serve(source.clone(), config).await;
    (source, served)
}

fn args(v: Value) -> serde_json::Map<String, Value> {
    v.as_object().unwrap().clone()
}

async fn call(
    client: &RunningService<RoleClient, ()>,
    name: &str,
    arguments: Value,
) -> CallToolResult {
    let params = CallToolRequestParams::new(name.to_owned()).with_arguments(args(arguments));
    timeout(LIMIT, client.call_tool(params))
        .await
        .unwrap()
        .unwrap()
}

fn only_text(result: &CallToolResult) -> &str {
    assert_eq!(result.content.len(), 1, "{result:?}");
    match &result.content[0] {
        ContentBlock::Text(t) => &t.text,
        other => panic!("not text: {other:?}"),
    }
}

fn raw_client() -> reqwest::Client {
    reqwest::Client::builder()
        .pool_max_idle_per_host(0)
        .build()
        .unwrap()
}

fn initialize_body() -> Value {
    json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "raw", "version": "0"}}})
}

fn post(
    http: &reqwest::Client,
    url: &str,
    token: Option<&str>,
    session: &str,
    body: &Value,
) -> reqwest::RequestBuilder {
    let mut req = http
        .post(url)
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json")
        .header("x-talon-session", session)
        .body(body.to_string());
    if let Some(t) = token {
        req = req.bearer_auth(t);
    }
    req
}

/// Opens an MCP session over raw HTTP; returns its id.
/// A `tools/call` of `slow` sent in its own task, so the test goes on
/// while it waits: answered directly as JSON (the guard's path) or, with
/// a progress token, through rmcp's session and SSE stream.
fn slow_call(
    http: &reqwest::Client,
    url: &str,
    session_id: &str,
    id: u64,
    via_rmcp: bool,
) -> tokio::task::JoinHandle<reqwest::Result<reqwest::Response>> {
    let mut params = json!({"name": "slow", "arguments": {}});
    if via_rmcp {
        params["_meta"] = json!({"progressToken": id});
    }
    let body = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params});
    let req =
        post(http, url, Some(AGENT_TOKEN), "main", &body).header("mcp-session-id", session_id);
    tokio::spawn(req.send())
}

async fn raw_session(http: &reqwest::Client, url: &str, session: &str) -> String {
    let resp = post(http, url, Some(AGENT_TOKEN), session, &initialize_body())
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    let id = resp.headers()["mcp-session-id"]
        .to_str()
        .unwrap()
        .to_owned();
    let _ = resp.text().await.unwrap();
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let resp = post(http, url, Some(AGENT_TOKEN), session, &initialized)
        .header("mcp-session-id", &id)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 202);
    id
}

#[tokio::test]
async fn tools_list_is_the_sessions_table_in_order_with_its_schemas() {
    let (source, served) = started(ServeConfig::default()).await;
    let client = connect(&served.url, AGENT_TOKEN, "main").await;
    let tools = timeout(LIMIT, client.list_all_tools())
        .await
        .unwrap()
        .unwrap();
    let table = source.table("main").definitions();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    let expected: Vec<&str> = table.iter().map(|d| d.name.as_str()).collect();
    assert_eq!(names, expected);
    assert!(
        names.contains(&"echo") && !names.contains(&"exec"),
        "{names:?}"
    );
    for (tool, def) in tools.iter().zip(&table) {
        assert_eq!(Value::Object((*tool.input_schema).clone()), def.parameters);
        assert_eq!(tool.description.as_deref(), Some(def.description.as_str()));
    }
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn tools_list_pages_follow_the_cursor_deterministically() {
    let (source, served) = started(ServeConfig::default().page_size(2)).await;
    let client = connect(&served.url, AGENT_TOKEN, "main").await;
    let first = client.list_tools(None).await.unwrap();
    assert_eq!(first.tools.len(), 2);
    let cursor = first.next_cursor.clone().expect("a second page");
    let mut names: Vec<String> = first.tools.iter().map(|t| t.name.to_string()).collect();
    let mut next = Some(cursor);
    while let Some(c) = next {
        let page = client
            .list_tools(Some(PaginatedRequestParams::default().with_cursor(Some(c))))
            .await
            .unwrap();
        assert!(page.tools.len() <= 2);
        names.extend(page.tools.iter().map(|t| t.name.to_string()));
        next = page.next_cursor;
    }
    let expected: Vec<String> = source
        .table("main")
        .names()
        .iter()
        .map(|s| s.to_string())
        .collect();
    assert_eq!(names, expected);
    let again = client.list_tools(None).await.unwrap();
    assert_eq!(
        again.tools, first.tools,
        "the first page changed between listings"
    );

    let bad = client
        .list_tools(Some(
            PaginatedRequestParams::default().with_cursor(Some("garbage".into())),
        ))
        .await
        .unwrap_err();
    assert!(
        bad.to_string().contains("invalid tools/list cursor"),
        "{bad}"
    );
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn a_call_runs_through_the_table_with_a_fresh_call_id() {
    let (source, served) = started(ServeConfig::default()).await;
    let client = connect(&served.url, AGENT_TOKEN, "main").await;
    let r = call(&client, "echo", json!({"text": "hello"})).await;
    assert_eq!(r.is_error, Some(false));
    assert_eq!(only_text(&r), "echo: hello");
    let _ = call(&client, "echo", json!({"text": "again"})).await;
    let ids = source.probe.call_ids.lock().unwrap().clone();
    assert_eq!(ids.len(), 2);
    assert_ne!(ids[0], ids[1], "call ids repeat");
    assert!(
        ids.iter()
            .all(|id| id.starts_with("mcp-") && id.len() == 28),
        "{ids:?}"
    );
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn a_policy_denied_call_is_an_error_result_naming_the_layer_and_key() {
    let (source, served) = started(ServeConfig::default()).await;
    let client = connect(&served.url, AGENT_TOKEN, "main").await;
    let r = call(&client, "exec", json!({"command": "id"})).await;
    assert_eq!(r.is_error, Some(true));
    let blocked: Value = serde_json::from_str(only_text(&r)).unwrap();
    assert_eq!(blocked["status"], "blocked");
    assert_eq!(blocked["tool"], "exec");
    assert_eq!(blocked["configKey"], "tools.deny", "{blocked}");
    assert!(
        blocked["reason"].as_str().unwrap().contains("exec"),
        "{blocked}"
    );
    assert_eq!(
        source.probe.calls.load(Ordering::SeqCst),
        0,
        "the denied tool ran"
    );
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn failures_and_unknown_tools_carry_the_runtimes_text() {
    let (source, served) = started(ServeConfig::default()).await;
    let client = connect(&served.url, AGENT_TOKEN, "main").await;
    let r = call(&client, "fails", json!({})).await;
    assert_eq!(r.is_error, Some(true));
    assert_eq!(only_text(&r), "the disk is on fire");

    let r = call(&client, "no_such_tool", json!({})).await;
    assert_eq!(r.is_error, Some(true));
    let direct = source
        .table("main")
        .invoke(ModelToolCall::new("d1", "no_such_tool", json!({})))
        .await;
    let InvokeOutcome::Failed(e) = direct else {
        panic!("{direct:?}")
    };
    assert_eq!(only_text(&r), e.to_string());
    assert!(only_text(&r).contains("unknown tool: no_such_tool"));
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn images_are_image_blocks_and_details_stay_on_the_host() {
    let (_source, served) = started(ServeConfig::default()).await;
    let client = connect(&served.url, AGENT_TOKEN, "main").await;
    let r = call(&client, "picture", json!({})).await;
    assert_eq!(r.is_error, Some(false));
    assert_eq!(r.content.len(), 2);
    match (&r.content[0], &r.content[1]) {
        (ContentBlock::Text(t), ContentBlock::Image(i)) => {
            assert_eq!(t.text, "a pixel");
            assert_eq!(i.data, PIXEL_PNG);
            assert_eq!(i.mime_type, "image/png");
        }
        other => panic!("{other:?}"),
    }
    let wire = serde_json::to_string(&r).unwrap();
    assert!(!wire.contains("host-only"), "details leaked: {wire}");
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn refusals_are_http_statuses_before_any_mcp_processing() {
    let (source, served) = started(ServeConfig::default()).await;
    let http = raw_client();
    let init = initialize_body();

    let resp = post(&http, &served.url, Some("wrong"), "main", &init)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 401);
    assert!(
        resp.headers()["www-authenticate"]
            .to_str()
            .unwrap()
            .starts_with("Bearer")
    );
    assert!(
        resp.headers().get("mcp-session-id").is_none(),
        "a session was opened"
    );
    let body: Value = resp.json().await.unwrap();
    assert_eq!(body["error"]["code"], "unauthorized");

    let resp = post(&http, &served.url, None, "main", &init)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 401);

    let resp = post(&http, &served.url, Some(READER_TOKEN), "main", &init)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 403);
    let body: Value = resp.json().await.unwrap();
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("read-only"),
        "{body}"
    );

    let resp = post(&http, &served.url, Some(AGENT_TOKEN), "nope", &init)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 404);
    let body: Value = resp.json().await.unwrap();
    let msg = body["error"]["message"].as_str().unwrap();
    assert!(
        msg.contains("nope") && msg.contains("X-Talon-Session"),
        "{msg}"
    );

    // GET and DELETE are guarded too.
    let resp = http.get(&served.url).send().await.unwrap();
    assert_eq!(resp.status(), 401);
    let resp = http
        .delete(&served.url)
        .header("mcp-session-id", "x")
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 401);
    assert_eq!(source.probe.calls.load(Ordering::SeqCst), 0);

    // rmcp's client sees the refusal as a failed connection.
    let config =
        StreamableHttpClientTransportConfig::with_uri(served.url.as_str()).auth_header("wrong");
    let refused = ().serve(StreamableHttpClientTransport::from_config(config)).await;
    assert!(refused.is_err());
}

#[tokio::test]
async fn every_request_is_authorised_so_a_revoked_token_stops_at_once() {
    let (source, served) = started(ServeConfig::default()).await;
    let client = connect(&served.url, AGENT_TOKEN, "main").await;
    let before = source.authorizations.load(Ordering::SeqCst);
    let _ = call(&client, "echo", json!({"text": "1"})).await;
    let _ = call(&client, "echo", json!({"text": "2"})).await;
    assert!(
        source.authorizations.load(Ordering::SeqCst) >= before + 2,
        "calls were not each authorised"
    );
    source.revoke(AGENT_TOKEN);
    let params = CallToolRequestParams::new("echo").with_arguments(args(json!({"text": "3"})));
    let err = timeout(LIMIT, client.call_tool(params)).await.unwrap();
    assert!(err.is_err(), "a revoked token still called: {err:?}");
    assert_eq!(source.probe.calls.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn an_mcp_session_is_bound_to_the_caller_that_opened_it() {
    let (source, served) = started(ServeConfig::default()).await;
    let http = raw_client();
    let id = raw_session(&http, &served.url, "main").await;
    let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"});
    // Same credentials, another Talon session: refused.
    let resp = post(&http, &served.url, Some(AGENT_TOKEN), "ops", &list)
        .header("mcp-session-id", &id)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 403);
    // The opener still works.
    let resp = post(&http, &served.url, Some(AGENT_TOKEN), "main", &list)
        .header("mcp-session-id", &id)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    let text = resp.text().await.unwrap();
    assert!(text.contains("\"echo\""), "{text}");
    assert_eq!(source.probe.calls.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn a_cancelled_request_drops_the_call() {
    let (source, served) = started(ServeConfig::default()).await;
    let client = connect(&served.url, AGENT_TOKEN, "main").await;
    let request =
        ClientRequest::CallToolRequest(CallToolRequest::new(CallToolRequestParams::new("slow")));
    let handle = client
        .peer()
        .send_cancellable_request(request, PeerRequestOptions::no_options())
        .await
        .unwrap();
    timeout(LIMIT, source.probe.sleep_started.notified())
        .await
        .expect("slow never started");
    handle
        .cancel(Some("user pressed stop".into()))
        .await
        .unwrap();
    timeout(
        Duration::from_secs(5),
        source.probe.sleep_dropped_notify.notified(),
    )
    .await
    .expect("the call's future was not dropped after notifications/cancelled");
    assert!(source.probe.sleep_dropped.load(Ordering::SeqCst));
    assert!(!source.probe.sleep_finished.load(Ordering::SeqCst));
    // The session still serves.
    let r = call(&client, "echo", json!({"text": "after"})).await;
    assert_eq!(only_text(&r), "echo: after");
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn a_client_that_disconnects_mid_call_drops_the_call() {
    for via_rmcp in [false, true] {
        let config = ServeConfig::default().sse_keep_alive(Duration::from_millis(100));
        let (source, served) = started(config).await;
        let http = raw_client();
        let id = raw_session(&http, &served.url, "main").await;
        let pending = slow_call(&http, &served.url, &id, 7, via_rmcp);
        timeout(LIMIT, source.probe.sleep_started.notified())
            .await
            .expect("slow never started");
        // Dropping the request (and the connection) mid-call.
        pending.abort();
        drop(http);
        timeout(
            Duration::from_secs(5),
            source.probe.sleep_dropped_notify.notified(),
        )
        .await
        .unwrap_or_else(|_| {
            panic!("the call's future was not dropped after the client went away (via rmcp: {via_rmcp})")
        });
        assert!(!source.probe.sleep_finished.load(Ordering::SeqCst));
    }
}

#[tokio::test]
async fn closing_the_mcp_session_drops_its_calls() {
    let (source, served) = started(ServeConfig::default()).await;
    let client = connect(&served.url, AGENT_TOKEN, "main").await;
    let peer = client.peer().clone();
    let pending =
        tokio::spawn(async move { peer.call_tool(CallToolRequestParams::new("slow")).await });
    timeout(LIMIT, source.probe.sleep_started.notified())
        .await
        .expect("slow never started");
    client.cancel().await.unwrap(); // sends DELETE
    timeout(
        Duration::from_secs(5),
        source.probe.sleep_dropped_notify.notified(),
    )
    .await
    .expect("closing the session left the call running");
    pending.abort();
}

#[tokio::test]
async fn the_session_cap_refuses_new_sessions_with_503_until_one_closes() {
    let (_source, served) = started(ServeConfig::default().max_sessions(1)).await;
    let first = connect(&served.url, AGENT_TOKEN, "main").await;
    let http = raw_client();
    let resp = post(
        &http,
        &served.url,
        Some(AGENT_TOKEN),
        "main",
        &initialize_body(),
    )
    .send()
    .await
    .unwrap();
    assert_eq!(resp.status(), 503);
    assert_eq!(resp.headers()["retry-after"], "5");
    let body: Value = resp.json().await.unwrap();
    assert_eq!(body["error"]["code"], "too_many_sessions");
    // At the cap, a request that opens no session still reaches rmcp intact
    // (here it answers that a session id is required).
    let list = json!({"jsonrpc": "2.0", "id": 4, "method": "tools/list"});
    let resp = post(&http, &served.url, Some(AGENT_TOKEN), "main", &list)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 400);
    assert!(
        resp.text()
            .await
            .unwrap()
            .contains("Session ID is required")
    );
    // The existing session is unaffected.
    let r = call(&first, "echo", json!({"text": "still here"})).await;
    assert_eq!(only_text(&r), "echo: still here");
    first.cancel().await.unwrap();
    // Closing it frees the slot (the close is asynchronous: allow a moment).
    let mut ok = false;
    for _ in 0..50 {
        let resp = post(
            &http,
            &served.url,
            Some(AGENT_TOKEN),
            "main",
            &initialize_body(),
        )
        .send()
        .await
        .unwrap();
        if resp.status() == 200 {
            ok = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(ok, "the slot was not freed after the session closed");
}

#[tokio::test]
async fn idle_sessions_expire() {
    let config = ServeConfig::default().session_idle(Duration::from_millis(300));
    let (_source, served) = started(config).await;
    let http = raw_client();
    let id = raw_session(&http, &served.url, "main").await;
    tokio::time::sleep(Duration::from_millis(900)).await;
    let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"});
    let resp = post(&http, &served.url, Some(AGENT_TOKEN), "main", &list)
        .header("mcp-session-id", &id)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 404, "an idle session survived its expiry");
}

#[tokio::test]
async fn oversized_bodies_are_refused_with_413() {
    let (source, served) = started(ServeConfig::default().max_body_bytes(1024)).await;
    let http = raw_client();
    let id = raw_session(&http, &served.url, "main").await;
    let big = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
        "params": {"name": "echo", "arguments": {"text": "x".repeat(4096)}}});
    let resp = post(&http, &served.url, Some(AGENT_TOKEN), "main", &big)
        .header("mcp-session-id", &id)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 413);
    assert_eq!(source.probe.calls.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn the_tool_result_for_every_outcome_matches_the_direct_table_call() {
    // The same call through /mcp and directly through the table gives the
    // same text (a denied call's blocked JSON included).
    let (source, served) = started(ServeConfig::default()).await;
    let client = connect(&served.url, AGENT_TOKEN, "main").await;
    let table = source.table("main");
    let direct = table
        .invoke(ModelToolCall::new("d2", "exec", json!({"command": "id"})))
        .await;
    let InvokeOutcome::Blocked(b) = &direct else {
        panic!("{direct:?}")
    };
    let r = call(&client, "exec", json!({"command": "id"})).await;
    let served_json: Value = serde_json::from_str(only_text(&r)).unwrap();
    assert_eq!(served_json, b.to_model_json("exec"));
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn deleting_the_mcp_session_drops_its_calls_even_with_the_stream_open() {
    for via_rmcp in [false, true] {
        let (source, served) = started(ServeConfig::default()).await;
        let http = raw_client();
        let id = raw_session(&http, &served.url, "main").await;
        let pending = slow_call(&http, &served.url, &id, 9, via_rmcp);
        timeout(LIMIT, source.probe.sleep_started.notified())
            .await
            .expect("slow never started");
        let del = http
            .delete(&served.url)
            .bearer_auth(AGENT_TOKEN)
            .header("x-talon-session", "main")
            .header("mcp-session-id", &id)
            .send()
            .await
            .unwrap();
        assert!(del.status().is_success(), "{}", del.status());
        timeout(
            Duration::from_secs(5),
            source.probe.sleep_dropped_notify.notified(),
        )
        .await
        .unwrap_or_else(|_| {
            panic!("DELETE of the session left the call running (via rmcp: {via_rmcp})")
        });
        pending.abort();
    }
}

#[tokio::test]
async fn notifications_cancelled_alone_drops_the_call_while_the_stream_stays_open() {
    for via_rmcp in [false, true] {
        let (source, served) = started(ServeConfig::default()).await;
        let http = raw_client();
        let id = raw_session(&http, &served.url, "main").await;
        let pending = slow_call(&http, &served.url, &id, 11, via_rmcp);
        timeout(LIMIT, source.probe.sleep_started.notified())
            .await
            .expect("slow never started");
        let cancel = json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
            "params": {"requestId": 11, "reason": "stop"}});
        let ack = post(&http, &served.url, Some(AGENT_TOKEN), "main", &cancel)
            .header("mcp-session-id", &id)
            .send()
            .await
            .unwrap();
        assert_eq!(ack.status(), 202);
        timeout(
            Duration::from_secs(5),
            source.probe.sleep_dropped_notify.notified(),
        )
        .await
        .unwrap_or_else(|_| {
            panic!("notifications/cancelled left the call running (via rmcp: {via_rmcp})")
        });
        if !via_rmcp {
            // The direct answer says the call was cancelled.
            let answer = pending.await.unwrap().unwrap();
            assert_eq!(answer.status(), 200);
            assert_eq!(answer.headers()["content-type"], "application/json");
            let v: Value = answer.json().await.unwrap();
            assert_eq!(v["id"], json!(11), "{v}");
            assert!(
                v["error"]["message"]
                    .as_str()
                    .unwrap()
                    .contains("was cancelled"),
                "{v}"
            );
        } else {
            pending.abort();
        }
    }
}

#[tokio::test]
async fn browser_origins_and_foreign_hosts_are_refused() {
    let (source, served) = started(ServeConfig::default()).await;
    let http = raw_client();
    let resp = post(
        &http,
        &served.url,
        Some(AGENT_TOKEN),
        "main",
        &initialize_body(),
    )
    .header("origin", "http://evil.example")
    .send()
    .await
    .unwrap();
    assert_eq!(resp.status(), 403);
    assert!(resp.headers().get("mcp-session-id").is_none());
    let resp = post(
        &http,
        &served.url,
        Some(AGENT_TOKEN),
        "main",
        &initialize_body(),
    )
    .header("host", "evil.example")
    .send()
    .await
    .unwrap();
    assert_eq!(resp.status(), 403);
    assert_eq!(source.probe.calls.load(Ordering::SeqCst), 0);

    // An allowed origin passes.
    let config = ServeConfig::default().allowed_origins(["http://localhost:*"]);
    let (_source, served) = started(config).await;
    let resp = post(
        &http,
        &served.url,
        Some(AGENT_TOKEN),
        "main",
        &initialize_body(),
    )
    .header("origin", "http://localhost:5173")
    .send()
    .await
    .unwrap();
    assert_eq!(resp.status(), 200);
}

#[tokio::test]
async fn a_long_call_keeps_its_session_alive_past_the_idle_limit() {
    for via_rmcp in [false, true] {
        let config = ServeConfig::default().session_idle(Duration::from_millis(200));
        let (source, served) = started(config).await;
        let http = raw_client();
        let id = raw_session(&http, &served.url, "main").await;
        let pending = slow_call(&http, &served.url, &id, 5, via_rmcp);
        timeout(LIMIT, source.probe.sleep_started.notified())
            .await
            .expect("slow never started");
        tokio::time::sleep(Duration::from_millis(800)).await;
        assert!(
            !source.probe.sleep_dropped.load(Ordering::SeqCst),
            "the idle expiry ended a running call (via rmcp: {via_rmcp})"
        );
        let list = json!({"jsonrpc": "2.0", "id": 6, "method": "tools/list"});
        let still = post(&http, &served.url, Some(AGENT_TOKEN), "main", &list)
            .header("mcp-session-id", &id)
            .send()
            .await
            .unwrap();
        assert_eq!(
            still.status(),
            200,
            "the session expired under a running call (via rmcp: {via_rmcp})"
        );
        pending.abort();
    }
}

/// A `tools/call` on a bound session with a foreign `Host` or any `Origin`
/// is never answered directly: rmcp's DNS-rebinding and origin checks
/// refuse it as they refuse an `initialize`, and nothing runs.
#[tokio::test]
async fn a_foreign_host_or_an_origin_never_reaches_a_tool_on_a_bound_session() {
    let (source, served) = started(ServeConfig::default()).await;
    let http = raw_client();
    let id = raw_session(&http, &served.url, "main").await;
    let body = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
        "params": {"name": "echo", "arguments": {"text": "x"}}});
    for (name, value) in [("host", "evil.example"), ("origin", "http://evil.example")] {
        let resp = post(&http, &served.url, Some(AGENT_TOKEN), "main", &body)
            .header("mcp-session-id", &id)
            .header(name, value)
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), 403, "{name}: {value}");
    }
    assert_eq!(source.probe.calls.load(Ordering::SeqCst), 0);
    // The same call without them is answered.
    let resp = post(&http, &served.url, Some(AGENT_TOKEN), "main", &body)
        .header("mcp-session-id", &id)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    assert_eq!(source.probe.calls.load(Ordering::SeqCst), 1);
}

/// A `tools/call` whose body is not declared JSON is never answered
/// directly: rmcp refuses it (415) as it refuses any such POST, and
/// nothing runs.
#[tokio::test]
async fn a_call_not_declared_json_never_reaches_a_tool() {
    let (source, served) = started(ServeConfig::default()).await;
    let http = raw_client();
    let id = raw_session(&http, &served.url, "main").await;
    let body = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
        "params": {"name": "echo", "arguments": {"text": "x"}}});
    for content_type in ["text/plain", "application/x-www-form-urlencoded"] {
        let resp = http
            .post(&served.url)
            .bearer_auth(AGENT_TOKEN)
            .header("accept", "application/json, text/event-stream")
            .header("content-type", content_type)
            .header("x-talon-session", "main")
            .header("mcp-session-id", &id)
            .body(body.to_string())
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), 415, "{content_type}");
    }
    assert_eq!(source.probe.calls.load(Ordering::SeqCst), 0);
}

/// A direct answer that takes longer than the keep-alive interval sends
/// its headers at once and a space every interval (valid JSON whitespace)
/// until the JSON-RPC reply, as the SSE path sends keep-alives.
#[tokio::test]
async fn a_long_direct_call_is_kept_alive_until_its_reply() {
    let config = ServeConfig::default().sse_keep_alive(Duration::from_millis(100));
    let (source, served) = started(config).await;
    let http = raw_client();
    let id = raw_session(&http, &served.url, "main").await;
    let pending = slow_call(&http, &served.url, &id, 21, false);
    timeout(LIMIT, source.probe.sleep_started.notified())
        .await
        .expect("slow never started");
    // Headers arrive while the call still runs.
    let mut resp = timeout(Duration::from_secs(5), pending)
        .await
        .expect("no headers within 5 s of a running call")
        .unwrap()
        .unwrap();
    assert_eq!(resp.status(), 200);
    assert_eq!(resp.headers()["content-type"], "application/json");
    let first = timeout(Duration::from_secs(5), resp.chunk())
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert!(
        !first.is_empty() && first.iter().all(|b| *b == b' '),
        "{first:?}"
    );
    assert!(!source.probe.sleep_finished.load(Ordering::SeqCst));
    // End it; the reply that follows the spaces is the JSON-RPC answer.
    let cancel = json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
        "params": {"requestId": 21}});
    let ack = post(&http, &served.url, Some(AGENT_TOKEN), "main", &cancel)
        .header("mcp-session-id", &id)
        .send()
        .await
        .unwrap();
    assert_eq!(ack.status(), 202);
    let rest = timeout(Duration::from_secs(5), resp.bytes())
        .await
        .unwrap()
        .unwrap();
    let v: Value = serde_json::from_slice(&rest).unwrap();
    assert_eq!(v["id"], json!(21), "{v}");
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap()
            .contains("was cancelled"),
        "{v}"
    );
}
