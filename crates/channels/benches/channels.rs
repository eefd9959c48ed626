//! `message` send overhead over the webhook channel, against a raw HTTP
//! POST to the same loopback receiver in the same run (the floor).
//!
//! - `message/raw_http_post`: a plain `reqwest` POST of a small JSON body
//!   and its answer read: the floor.
//! - `message/webhook_channel_send`: the channel alone: canonical JSON
//!   body, HMAC-SHA256 signature, the guarded client (IP literal,
//!   allowlisted by CIDR), the answer read.
//! - `message/message_tool_send`: the whole tool: parameter checks,
//!   owner and capability checks, the send ledger's write-ahead record and
//!   its end record (SQLite, `synchronous=FULL`: two synced commits), then
//!   the channel.
//! - `message/message_tool_send_no_ledger`: the tool without a ledger.
//!
//! The receiver keeps connections alive, so every client reuses one.

// A panic here is a benchmark setup failure, never a measured path.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::hint::black_box;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::{Map, Value, json};
use talon_channels::{
    ActionRequest, Channel, ChannelSet, MessageAction, MessageTool, SendLedger, WebhookChannel,
};
use talon_config::{ChannelConnections, WebhookChannelConfig};
use talon_egress::SsrfAllowlistConfig;
use talon_test_support::http_receiver::HttpReceiver;
use talon_tool_catalog::{CancellationToken, Tool, ToolCall, ToolContext};

fn config(url: String) -> WebhookChannelConfig {
    WebhookChannelConfig {
        url,
        secret: Some("bench-secret".into()),
        ssrf_allowlist: Some(SsrfAllowlistConfig {
            hosts: Vec::new(),
            cidrs: vec!["127.0.0.1/32".into()],
        }),
        ..WebhookChannelConfig::default()
    }
}

fn bench_send(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let receiver = HttpReceiver::start().unwrap();
    receiver.count_only();
    let url = receiver.url("/hook");
    let mut g = c.benchmark_group("message");

    let raw = reqwest::Client::builder().no_proxy().build().unwrap();
    let body = json!({"action": "send", "message": "deploy done", "target": "ops"}).to_string();
    g.bench_function("raw_http_post", |b| {
        b.iter(|| {
            rt.block_on(async {
                let r = raw
                    .post(&url)
                    .header("content-type", "application/json")
                    .body(body.clone())
                    .send()
                    .await
                    .unwrap();
                black_box(r.bytes().await.unwrap());
            })
        })
    });

    let channel = WebhookChannel::new(&config(url.clone()), Some("bench-secret".into())).unwrap();
    let n = AtomicU64::new(0);
    let abort = CancellationToken::new();
    g.bench_function("webhook_channel_send", |b| {
        b.iter(|| {
            let key = format!("k-{}", n.fetch_add(1, Ordering::Relaxed));
            let req = ActionRequest::new(MessageAction::Send, key)
                .with_target("ops")
                .with_message("deploy done");
            black_box(rt.block_on(channel.perform(&req, &abort)).unwrap());
        })
    });

    let dir = tempfile::tempdir().unwrap();
    let ledger = Arc::new(SendLedger::open(&dir.path().join("sends.sqlite")).unwrap());
    let set = Arc::new(ChannelSet::from_config(
        &ChannelConnections {
            webhook: Some(config(url.clone())),
            irc: None,
        },
        &talon_config::secrets::SecretStore::default(),
    ));
    let tools = [
        (
            "message_tool_send",
            MessageTool::new(Arc::clone(&set), Some(ledger)),
        ),
        (
            "message_tool_send_no_ledger",
            MessageTool::new(Arc::clone(&set), None),
        ),
    ];
    let ctx = ToolContext::new("main", "agent:main:main").with_sender_is_owner(Some(true));
    let params: Map<String, Value> = serde_json::from_value(
        json!({"action": "send", "target": "ops", "message": "deploy done"}),
    )
    .unwrap();
    for (name, tool) in &tools {
        g.bench_function(*name, |b| {
            b.iter(|| {
                let call = ToolCall {
                    id: format!("c-{}", n.fetch_add(1, Ordering::Relaxed)),
                    name: "message".into(),
                    params: params.clone(),
                };
                black_box(rt.block_on(tool.execute(&call, &ctx, &abort)).unwrap());
            })
        });
    }
    g.finish();
}

criterion_group!(benches, bench_send);
criterion_main!(benches);
