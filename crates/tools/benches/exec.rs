//! `exec` tool overhead: the tool running `true` (parameter parsing, env
//! policy, launch through `HostLauncher` as `/bin/sh -c true` in its own
//! process group, output pumps, supervision, group cleanup) against
//! spawning `/bin/true` directly with `std::process::Command`, and against
//! `std::process::Command` running `/bin/sh -c true` (the same shell hop the
//! tool makes), all in the same run.
//!
//! The exec calls run inside one `block_on` per batch (`iter_custom`), as
//! criterion's `to_async` would; the workspace's criterion has no
//! `async_tokio` feature.

#![allow(
    clippy::disallowed_methods,
    reason = "test and tooling code starts its probes, engines and binaries directly; Talon's own children go through talon_proc_tree::ChildCommand"
)]
// A panic here is a benchmark setup failure, never a measured path.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::hint::black_box;
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::{Value, json};
use talon_tool_catalog::{CancellationToken, Tool, ToolCall, ToolContext};
use talon_tools::{ExecConfig, ExecTool, HostLauncher, ProcessRegistry, RegistryOptions};

fn exec_call() -> ToolCall {
    let Value::Object(params) = json!({"command": "true"}) else {
        unreachable!("a JSON object literal")
    };
    ToolCall {
        id: "bench".into(),
        name: "exec".into(),
        params,
    }
}

fn bench_exec(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let config = ExecConfig::default();
    let registry = Arc::new(ProcessRegistry::new(RegistryOptions::from_config(&config)));
    let exec = ExecTool::new(
        Arc::new(HostLauncher::new(dir.path()).unwrap()),
        Arc::clone(&registry),
        config,
    )
    .unwrap();
    let call = exec_call();
    let ctx = ToolContext::new("main", "agent:main:main");
    let abort = CancellationToken::new();

    let mut group = c.benchmark_group("exec");
    group.sample_size(30);
    group.bench_function("exec_tool_true", |b| {
        b.iter_custom(|iters| {
            rt.block_on(async {
                let start = Instant::now();
                for _ in 0..iters {
                    let result = exec.execute(&call, &ctx, &abort).await.unwrap();
                    black_box(result);
                }
                start.elapsed()
            })
        });
    });
    group.bench_function("std_command_bin_true", |b| {
        b.iter(|| {
            let status = std::process::Command::new("/bin/true").status().unwrap();
            black_box(status)
        });
    });
    group.bench_function("std_command_sh_c_true", |b| {
        b.iter(|| {
            let status = std::process::Command::new("/bin/sh")
                .args(["-c", "true"])
                .status()
                .unwrap();
            black_box(status)
        });
    });
    group.finish();
    rt.block_on(async {
        tokio::time::timeout(Duration::from_secs(10), registry.shutdown())
            .await
            .unwrap();
    });
}

criterion_group!(benches, bench_exec);
criterion_main!(benches);
