//! `web_fetch` benchmarks against a small page on a loopback server (the
//! same hand-rolled HTTP/1.1 server the tests use, one request per
//! connection).
//!
//! - `web_fetch_small_page`: the whole tool, cache off: parameter reading,
//!   the SSRF pre-check, the pinned resolver is not involved (IP literal,
//!   allowlisted by CIDR), the GET, the capped body read, HTML → Markdown
//!   with main-content selection, truncation and the JSON result.
//! - `web_fetch_small_page_named`: the same through a host name, so the
//!   pinned resolver runs (a `StaticResolver` answering 127.0.0.1, the
//!   name allowlisted) and every address is vetted.
//! - `reqwest_get_small_page`: a plain `reqwest` GET of the same page and
//!   its body as bytes, in the same run — the floor the tool is measured
//!   against.

// A panic here is a benchmark setup failure, never a measured path.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[path = "../tests/suite/web/server.rs"]
#[allow(dead_code)]
mod server;

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::{Map, Value, json};
use std::sync::Arc;
use talon_tool_catalog::{CancellationToken, Tool, ToolCall, ToolContext};

use talon_tools::{SsrfAllowlistConfig, StaticResolver, WebFetchConfig, WebFetchTool};

use crate::server::{Reply, TestServer};

const PAGE: &str = r#"<!doctype html><html><head><title>Bench page</title>
<script>var x = 1;</script></head><body><nav><a href="/">Home</a></nav>
<main><h1>Benchmark</h1><p>A small page with a <a href="https://example.com/">link</a>,
some <b>bold</b> text and a list:</p><ul><li>alpha</li><li>beta</li><li>gamma</li></ul>
<p>Second paragraph of ordinary prose to give the converter something to do.</p></main>
<footer>footer</footer></body></html>"#;

fn bench_fetch(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let server = rt.block_on(TestServer::start("127.0.0.1:0", |_| {
        Reply::new(200, "text/html; charset=utf-8", PAGE)
    }));
    let url = server.url("/page");
    let config = WebFetchConfig {
        cache_ttl_minutes: Some(0),
        ssrf_allowlist: Some(SsrfAllowlistConfig {
            hosts: vec![],
            cidrs: vec!["127.0.0.1/32".into()],
        }),
        ..WebFetchConfig::default()
    };
    let tool = WebFetchTool::new(&config).unwrap();
    let mut params = Map::new();
    params.insert("url".into(), Value::String(url.clone()));
    let call = ToolCall {
        id: "bench".into(),
        name: "web_fetch".into(),
        params,
    };
    let ctx = ToolContext::new("main", "agent:main:main");
    let abort = CancellationToken::new();

    // Sanity: the tool really fetched and converted the page.
    let out = rt.block_on(tool.execute(&call, &ctx, &abort)).unwrap();
    assert_eq!(out.details["extractor"], json!("main"));

    let mut group = c.benchmark_group("web");
    group.bench_function("web_fetch_small_page", |b| {
        b.iter(|| black_box(rt.block_on(tool.execute(&call, &ctx, &abort)).unwrap()));
    });
    let named_config = WebFetchConfig {
        cache_ttl_minutes: Some(0),
        ssrf_allowlist: Some(SsrfAllowlistConfig {
            hosts: vec!["bench.test".into()],
            cidrs: vec![],
        }),
        ..WebFetchConfig::default()
    };
    let resolver = StaticResolver::new().with("bench.test", ["127.0.0.1".parse().unwrap()]);
    let named = WebFetchTool::with_resolver(&named_config, Arc::new(resolver)).unwrap();
    let mut named_params = Map::new();
    named_params.insert(
        "url".into(),
        Value::String(format!("http://bench.test:{}/page", server.addr.port())),
    );
    let named_call = ToolCall {
        id: "bench-named".into(),
        name: "web_fetch".into(),
        params: named_params,
    };
    let out = rt
        .block_on(named.execute(&named_call, &ctx, &abort))
        .unwrap();
    assert_eq!(out.details["extractor"], json!("main"));
    group.bench_function("web_fetch_small_page_named", |b| {
        b.iter(|| {
            black_box(
                rt.block_on(named.execute(&named_call, &ctx, &abort))
                    .unwrap(),
            )
        });
    });
    let client = reqwest::Client::builder().no_proxy().build().unwrap();
    group.bench_function("reqwest_get_small_page", |b| {
        b.iter(|| {
            black_box(rt.block_on(async {
                client
                    .get(url.as_str())
                    .send()
                    .await
                    .unwrap()
                    .bytes()
                    .await
                    .unwrap()
            }))
        });
    });
    group.finish();
}

criterion_group!(benches, bench_fetch);
criterion_main!(benches);
