//! A trivial tool call over `/mcp` (rmcp's client, loopback, one MCP
//! session) against the same call straight through the table, in one run;
//! and the same pair for a policy-denied `exec`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[path = "../tests/suite/support.rs"]
mod support;

use std::collections::HashMap;

use axum::http::{HeaderName, HeaderValue};
use criterion::{Criterion, criterion_group, criterion_main};
use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use serde_json::json;
use talon_mcp_serve::ServeConfig;
use talon_runtime::ModelToolCall;

use support::{AGENT_TOKEN, TestSource, serve};

fn bench(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let source = TestSource::new();
    let table = source.table("main");
    let (_served, client) = rt.block_on(async {
        let served = serve(source.clone(), ServeConfig::default()).await;
        let headers = HashMap::from([(
            HeaderName::from_static("x-talon-session"),
            HeaderValue::from_static("main"),
        )]);
        let config = StreamableHttpClientTransportConfig::with_uri(served.url.as_str())
            .auth_header(AGENT_TOKEN)
            .custom_headers(headers);
        let client = ().serve(StreamableHttpClientTransport::from_config(config)).await.unwrap();
        (served, client)
    });
    let echo_args = json!({"text": "hi"}).as_object().unwrap().clone();
    let exec_args = json!({"command": "id"}).as_object().unwrap().clone();

    let mut g = c.benchmark_group("mcp_serve");
    g.bench_function("echo_over_mcp", |b| {
        b.iter(|| {
            let params = CallToolRequestParams::new("echo").with_arguments(echo_args.clone());
            let r = rt.block_on(client.call_tool(params)).unwrap();
            assert_eq!(r.is_error, Some(false));
        });
    });
    g.bench_function("echo_direct_table", |b| {
        b.iter(|| {
            let call = ModelToolCall::new("b1", "echo", json!({"text": "hi"}));
            let out = rt.block_on(table.invoke(call));
            assert!(!out.is_blocked());
        });
    });
    g.bench_function("exec_denied_over_mcp", |b| {
        b.iter(|| {
            let params = CallToolRequestParams::new("exec").with_arguments(exec_args.clone());
            let r = rt.block_on(client.call_tool(params)).unwrap();
            assert_eq!(r.is_error, Some(true));
        });
    });
    g.bench_function("exec_denied_direct_table", |b| {
        b.iter(|| {
            let call = ModelToolCall::new("b2", "exec", json!({"command": "id"}));
            let out = rt.block_on(table.invoke(call));
            assert!(out.is_blocked());
        });
    });
    g.finish();
    rt.block_on(async { client.cancel().await.unwrap() });
}

criterion_group!(benches, bench);
criterion_main!(benches);
