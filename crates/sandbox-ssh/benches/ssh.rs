//! SSH backend benchmarks against a throwaway sshd on a loopback port
//! (the same harness as the integration tests; `cargo xtask sshd-install`
//! installs sshd):
//!
//! - `ssh_roundtrip_native_mux`: `true` over the scope's multiplexed
//!   connection (openssh native-mux, one channel per command);
//! - `ssh_roundtrip_cli_control_master`: the same through the `ssh` CLI
//!   attached to that connection's ControlMaster (`ssh -S ctl ... true`),
//!   in the same run;
//! - `ssh_upload_1000_files`: the first sync of a 1,000-file workspace
//!   into a fresh remote directory (listing, directories, parallel
//!   uploads, manifest);
//! - `ssh_incremental_sync_one_change`: a sync after one file changed.
//!
//! Note: every remote command runs under the remote user's login shell;
//! a heavy shell start-up file (`~/.bashrc`) adds its cost to each.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
#![allow(
    clippy::disallowed_methods,
    reason = "test and tooling code starts its probes, engines and binaries directly; Talon's own children go through talon_proc_tree::ChildCommand"
)]

#[path = "../tests/suite/common.rs"]
mod common;

use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use talon_sandbox_ssh::{SyncRoot, WorkspaceSync};

fn benches(c: &mut Criterion) {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let sshd = common::Sshd::start();
    let conn = sshd.connection();
    let socket =
        rt.block_on(async { conn.session().await.unwrap().control_socket().to_path_buf() });

    c.bench_function("ssh_roundtrip_native_mux", |b| {
        b.iter(|| {
            rt.block_on(async {
                let out = conn
                    .run("true", &[], None, Duration::from_secs(10))
                    .await
                    .unwrap();
                assert!(out.status.success());
            })
        })
    });
    c.bench_function("ssh_roundtrip_cli_control_master", |b| {
        b.iter(|| {
            let status = Command::new("ssh")
                .arg("-S")
                .arg(&socket)
                .args(["-o", "BatchMode=yes", "placeholder", "true"])
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .unwrap();
            assert!(status.success());
        })
    });

    let host = tempfile::tempdir().unwrap();
    let ws = host.path().join("ws");
    for i in 0..1000 {
        let dir = ws.join(format!("d{}", i % 20));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join(format!("f{i}.txt")),
            format!("file {i}\n").repeat(8),
        )
        .unwrap();
    }
    let root = sshd.remote_root();
    let counter = AtomicUsize::new(0);
    let sync_for = |remote: String| {
        WorkspaceSync::new(
            Arc::clone(&conn),
            vec![SyncRoot {
                host: ws.clone(),
                remote: format!("{remote}/workspace"),
                sync_back: true,
                excludes: Vec::new(),
            }],
            format!("{remote}/manifest.json"),
        )
    };
    let mut group = c.benchmark_group("ssh_sync");
    group.sample_size(10);
    group.bench_function("ssh_upload_1000_files", |b| {
        b.iter(|| {
            let n = counter.fetch_add(1, Ordering::SeqCst);
            let sync = sync_for(format!("{root}/up{n}"));
            let report = rt.block_on(sync.sync()).unwrap();
            assert_eq!(report.uploaded, 1000);
        })
    });
    let sync = sync_for(format!("{root}/incremental"));
    rt.block_on(sync.sync()).unwrap();
    let changed = ws.join("d0/f0.txt");
    let round = AtomicUsize::new(0);
    group.bench_function("ssh_incremental_sync_one_change", |b| {
        b.iter(|| {
            let n = round.fetch_add(1, Ordering::SeqCst);
            std::fs::write(&changed, format!("changed {n}\n")).unwrap();
            let report = rt.block_on(sync.sync()).unwrap();
            assert_eq!(report.uploaded, 1);
        })
    });
    group.finish();
}

criterion_group!(ssh, benches);
criterion_main!(ssh);
