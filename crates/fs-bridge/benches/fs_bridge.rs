//! `MountBridge` against plain `std::fs` on the same files: reads and
//! writes of 4 KiB and 4 MiB, and per-call path resolution of a 3-deep path.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::hint::black_box;
use std::io::Write;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use talon_fs_bridge::{Access, FsBridge, Mount, MountBridge, WriteOptions};

const SIZES: [(&str, usize); 2] = [("4KiB", 4 * 1024), ("4MiB", 4 * 1024 * 1024)];

fn setup() -> (tempfile::TempDir, MountBridge, tokio::runtime::Runtime) {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(tmp.path().join("ws/a/b/c")).unwrap();
    let bridge = MountBridge::new(
        vec![Mount::writable("/workspace", tmp.path().join("ws"))],
        "/workspace",
    )
    .unwrap();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    (tmp, bridge, rt)
}

fn read(c: &mut Criterion) {
    let (tmp, bridge, rt) = setup();
    let mut group = c.benchmark_group("fs_bridge/read");
    for (label, size) in SIZES {
        let name = format!("a/b/c/read-{label}.bin");
        let host = tmp.path().join("ws").join(&name);
        std::fs::write(&host, vec![7u8; size]).unwrap();
        group.throughput(Throughput::Bytes(size as u64));
        group.bench_with_input(BenchmarkId::new("bridge", label), &name, |b, name| {
            b.iter(|| rt.block_on(bridge.read(black_box(name), None)).unwrap());
        });
        group.bench_with_input(BenchmarkId::new("std_fs", label), &host, |b, host| {
            b.iter(|| std::fs::read(black_box(host)).unwrap());
        });
    }
    group.finish();
}

fn write(c: &mut Criterion) {
    let (tmp, bridge, rt) = setup();
    let mut group = c.benchmark_group("fs_bridge/write");
    group.sample_size(20);
    for (label, size) in SIZES {
        let data = vec![9u8; size];
        let name = format!("a/b/c/write-{label}.bin");
        let host = tmp.path().join("ws").join(&name);
        group.throughput(Throughput::Bytes(size as u64));
        group.bench_with_input(
            BenchmarkId::new("bridge_atomic", label),
            &data,
            |b, data| {
                b.iter(|| {
                    rt.block_on(bridge.write(black_box(&name), data, WriteOptions::default()))
                        .unwrap()
                });
            },
        );
        // The same durability as the bridge: temp file, fsync, rename.
        let tmp_path = host.with_extension("tmp");
        group.bench_with_input(
            BenchmarkId::new("std_fs_atomic", label),
            &data,
            |b, data| {
                b.iter(|| {
                    let mut f = std::fs::File::create(&tmp_path).unwrap();
                    f.write_all(data).unwrap();
                    f.sync_all().unwrap();
                    std::fs::rename(&tmp_path, &host).unwrap();
                });
            },
        );
        group.bench_with_input(BenchmarkId::new("std_fs_plain", label), &data, |b, data| {
            b.iter(|| std::fs::write(black_box(&host), data).unwrap());
        });
    }
    group.finish();
}

fn resolve(c: &mut Criterion) {
    let (tmp, bridge, rt) = setup();
    std::fs::write(tmp.path().join("ws/a/b/c/f.txt"), b"x").unwrap();
    let host = tmp.path().join("ws/a/b/c/f.txt");
    let mut group = c.benchmark_group("fs_bridge/resolve_3_deep");
    group.bench_function("bridge_openat2_sync", |b| {
        bridge.set_kernel_resolution(true);
        b.iter(|| {
            bridge
                .resolve_blocking(black_box("a/b/c/f.txt"), Access::Read)
                .unwrap()
        });
    });
    group.bench_function("bridge_walk_sync", |b| {
        bridge.set_kernel_resolution(false);
        b.iter(|| {
            bridge
                .resolve_blocking(black_box("a/b/c/f.txt"), Access::Read)
                .unwrap()
        });
        bridge.set_kernel_resolution(true);
    });
    group.bench_function("bridge_openat2_async", |b| {
        b.iter(|| {
            rt.block_on(bridge.resolve(black_box("a/b/c/f.txt"), Access::Read))
                .unwrap()
        });
    });
    group.bench_function("bridge_stat_async", |b| {
        b.iter(|| rt.block_on(bridge.stat(black_box("a/b/c/f.txt"))).unwrap());
    });
    group.bench_function("std_canonicalize", |b| {
        b.iter(|| std::fs::canonicalize(black_box(&host)).unwrap());
    });
    group.finish();
}

criterion_group!(benches, read, write, resolve);
criterion_main!(benches);
