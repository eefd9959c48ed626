//! File tool benchmarks: the `read` and `write` tools on 4 KiB and 4 MiB
//! text files, next to plain `std::fs` on the same files in the same run.
//!
//! The files live in a temporary workspace behind `MountBridge::host`, so
//! the figures include the tool's parameter handling, the bridge's
//! resolution beneath the pinned root fd (openat2), its hop to tokio's
//! blocking pool and, for `write`, its temp file plus rename; the page
//! cache is warm.
//!
//! - `read_tool/4KiB`, `read_tool/4MiB`: one `read` call with the default
//!   limits. For 4 MiB the tool reads the whole file (it is under the 16 MiB
//!   scan cap), checks it is text and returns the first page (2000 lines /
//!   50 KiB) with its note; `std_fs_read` reads the whole file into a
//!   `String`.
//! - `write_tool/4KiB`, `write_tool/4MiB`: one `write` call replacing the
//!   file (atomic: temp file in the same directory, then rename);
//!   `std_fs_write` is a plain `std::fs::write` (truncate and write in
//!   place, not atomic).

// A panic here is a benchmark setup failure, never a measured path.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::hint::black_box;
use std::sync::Arc;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use serde_json::{Value, json};
use talon_fs_bridge::{FsBridge, MountBridge};
use talon_tool_catalog::{CancellationToken, Tool, ToolCall, ToolContext};
use talon_tools::{ReadLimits, ReadTool, WriteTool};

/// About `size` bytes of 64-byte text lines.
fn text_of(size: usize) -> String {
    let line = format!("{}\n", "x".repeat(63));
    line.repeat(size / line.len())
}

fn call_of(name: &str, args: Value) -> ToolCall {
    ToolCall {
        id: "bench".into(),
        name: name.into(),
        params: args.as_object().cloned().unwrap(),
    }
}

fn files(c: &mut Criterion) {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().canonicalize().unwrap();
    let bridge: Arc<dyn FsBridge> = Arc::new(MountBridge::host(&root).unwrap());
    let read = ReadTool::new(bridge.clone(), ReadLimits::default());
    let write = WriteTool::new(bridge);
    let ctx = ToolContext::new("bench", "agent:bench:main");
    let abort = CancellationToken::new();
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();

    for (label, size) in [("4KiB", 4 * 1024), ("4MiB", 4 * 1024 * 1024)] {
        let content = text_of(size);
        let name = format!("file-{label}.txt");
        std::fs::write(root.join(&name), &content).unwrap();
        let read_call = call_of("read", json!({ "path": name }));
        let write_call = call_of("write", json!({ "path": name, "content": content }));
        // The tool's result is checked once, outside the measurement.
        let first = rt.block_on(read.execute(&read_call, &ctx, &abort)).unwrap();
        assert!(first.text().starts_with("xxxx"));

        let mut group = c.benchmark_group("files");
        group.throughput(Throughput::Bytes(content.len() as u64));
        group.bench_with_input(
            BenchmarkId::new("read_tool", label),
            &read_call,
            |b, call| {
                b.iter(|| black_box(rt.block_on(read.execute(call, &ctx, &abort)).unwrap()));
            },
        );
        group.bench_with_input(BenchmarkId::new("std_fs_read", label), &name, |b, name| {
            b.iter(|| black_box(std::fs::read_to_string(root.join(name)).unwrap()));
        });
        group.bench_with_input(
            BenchmarkId::new("write_tool", label),
            &write_call,
            |b, call| {
                b.iter(|| black_box(rt.block_on(write.execute(call, &ctx, &abort)).unwrap()));
            },
        );
        group.bench_with_input(BenchmarkId::new("std_fs_write", label), &name, |b, name| {
            b.iter(|| std::fs::write(root.join(name), black_box(&content)).unwrap());
        });
        group.finish();
    }
}

criterion_group!(benches, files);
criterion_main!(benches);
