//! MCP benchmarks: a trivial call through the runtime gate to a stdio
//! server vs the same call made directly with rmcp, and the cold start of
//! a set of three stdio servers.
//!
//! The fixture server is looked up in `<target>/debug` and built with
//! `cargo build -p talon-mcp-fixture-server` when missing.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]
#![allow(
    clippy::disallowed_methods,
    reason = "test and tooling code starts its probes, engines and binaries directly; Talon's own children go through talon_proc_tree::ChildCommand"
)]

use std::path::PathBuf;
use std::sync::Arc;

use criterion::{Criterion, criterion_group, criterion_main};
use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::transport::TokioChildProcess;
use serde_json::json;
use talon_mcp::McpManager;
use talon_runtime::{InvokeOutcome, ModelToolCall, RunSpec, RuntimeBuilder};
use talon_tool_policy::{PolicyConfig, RunContext};

fn fixture_bin() -> PathBuf {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("target"));
    let bin = target.join("debug/talon-mcp-fixture-server");
    if !bin.exists() {
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
        let ok = std::process::Command::new(cargo)
            .args(["build", "-p", "talon-mcp-fixture-server"])
            .current_dir(&root)
            .status()
            .unwrap()
            .success();
        assert!(ok, "building the fixture server failed");
    }
    bin
}

fn manager(names: &[&str]) -> McpManager {
    let bin = fixture_bin();
    let mut servers = serde_json::Map::new();
    for n in names {
        servers.insert((*n).to_owned(), json!({"command": bin.to_str().unwrap()}));
    }
    let cfg = talon_mcp::parse_config(&json!({ "servers": servers }), "mcp").unwrap();
    McpManager::new(cfg, Vec::new())
}

fn bench(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();

    // Through the runtime: policy-built table, gate, McpTool, rmcp.
    let m = Arc::new(manager(&["fix"]));
    rt.block_on(m.ensure_agent("main"));
    let runtime = RuntimeBuilder::new(PolicyConfig::default())
        .mcp_manager(Arc::clone(&m))
        .build()
        .unwrap();
    let table = runtime.assemble(RunSpec::new(RunContext::new("main")));
    c.bench_function("mcp_call_through_gate", |b| {
        b.iter(|| {
            let out = rt.block_on(table.invoke(ModelToolCall::new(
                "c",
                "fix__add",
                json!({"a": 1, "b": 2}),
            )));
            assert!(matches!(out, InvokeOutcome::Completed { .. }));
        });
    });

    // Directly with rmcp, same server binary.
    let client = rt.block_on(async {
        let cmd = tokio::process::Command::new(fixture_bin());
        ().serve(TokioChildProcess::new(cmd).unwrap())
            .await
            .unwrap()
    });
    let args = json!({"a": 1, "b": 2}).as_object().cloned().unwrap();
    c.bench_function("mcp_call_direct_rmcp", |b| {
        b.iter(|| {
            let r = rt.block_on(
                client.call_tool(CallToolRequestParams::new("add").with_arguments(args.clone())),
            );
            assert!(r.is_ok());
        });
    });

    // Cold start: spawn, initialise and list three servers, then stop them.
    c.bench_function("mcp_cold_start_3_servers", |b| {
        b.iter(|| {
            let m = manager(&["a", "b", "c"]);
            rt.block_on(async {
                let reports = m.ensure_agent("main").await;
                assert!(reports.iter().all(|r| r.error.is_none()));
                m.shutdown().await;
            });
        });
    });

    rt.block_on(async {
        let _ = client.cancel().await;
        m.shutdown().await;
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
