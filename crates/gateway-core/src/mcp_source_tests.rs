#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::atomic::Ordering;
use std::time::Duration;

use axum::http::HeaderValue;

use super::*;
use crate::gateway::GatewayOptions;

/// `/mcp` authenticates once per HTTP request: `authorize` checks the
/// token and resolves the session into a grant, and `tools/list` and
/// `tools/call` act on that grant alone — they neither read the
/// `Authorization` header again nor accept a request without a grant.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_authentication_per_request() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("talon.json");
    std::fs::write(
        &config,
        r#"{ "gateway": { "auth": { "tokens": [{ "token": "read-token-aaaaaaaaaaaa", "scope": "read-only" }] } } }"#,
    )
    .unwrap();
    let gw = Gateway::open(GatewayOptions {
        config_path: Some(config),
        state_dir: dir.path().join("state"),
        bind: None,
        turn_runner: None,
    })
    .unwrap();
    let source = GatewayToolSource::new(gw.clone());

    let mut caller = McpCaller::default();
    caller.headers.insert(
        axum::http::header::AUTHORIZATION,
        HeaderValue::from_static("Bearer read-token-aaaaaaaaaaaa"),
    );
    caller.query = Some("session=agent%3Amain%3Amain".into());
    // Without the guard's grant nothing is served, whatever the headers.
    let refused = source.list_tools(&caller).await.unwrap_err();
    assert!(
        matches!(refused, SourceError::Unauthorized(_)),
        "{refused:?}"
    );

    let grant = source.authorize(&caller).await.unwrap();
    assert!(grant.is_some());
    // The grant is what counts: the header is not read again.
    let mut granted = McpCaller {
        grant,
        ..McpCaller::default()
    };
    let tools = source.list_tools(&granted).await.unwrap();
    assert!(tools.iter().any(|t| t.name == "read"), "{tools:?}");
    // A read-only grant cannot call.
    let call = ModelToolCall::new("c1", "session_status", serde_json::json!({}));
    let forbidden = source.call_tool(&granted, call).await.unwrap_err();
    assert!(
        matches!(forbidden, SourceError::Forbidden(_)),
        "{forbidden:?}"
    );

    // A bad token is one failure, counted once.
    let before = gw.metrics().auth_failures.load(Ordering::Relaxed);
    granted.grant = None;
    granted.headers.insert(
        axum::http::header::AUTHORIZATION,
        HeaderValue::from_static("Bearer wrong-token-bbbbbbbbbb"),
    );
    assert!(source.authorize(&granted).await.is_err());
    assert_eq!(
        gw.metrics().auth_failures.load(Ordering::Relaxed),
        before + 1
    );
    gw.shutdown(Duration::from_secs(5)).await;
}
