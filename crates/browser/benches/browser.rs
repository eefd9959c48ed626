//! The browser tool's hot paths against floors measured in the same run:
//!
//! - `start_to_first_snapshot`: `Browser::launch` (Chromium, the egress
//!   proxy, DevTools connection, interception set up on the first tab)
//!   and a snapshot of the blank tab; floor `floor_raw_chromium_start`:
//!   Chromium spawned with the same flags (no proxy) until its
//!   `DevToolsActivePort` file appears.
//! - `snapshot_1000_elements`: `Browser::snapshot` of a page of 1,000
//!   buttons (AX tree, rendering, refs, location); floor
//!   `floor_raw_get_full_ax_tree`: the bare `Accessibility.getFullAXTree`
//!   round trip on the same tab.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::disallowed_methods,
    missing_docs,
    reason = "bench setup panics on failure; the floor starts chromium directly on purpose"
)]

use std::hint::black_box;
use std::os::unix::process::CommandExt as _;
use std::path::Path;
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::json;
use talon_browser::{Act, Browser, BrowserSettings, EgressGuard, SnapshotOptions};

fn raw_start(dir: &Path) {
    let port_file = dir.join("DevToolsActivePort");
    let _ = std::fs::remove_file(&port_file);
    let mut args = vec![
        "--headless".to_owned(),
        "--disable-gpu".to_owned(),
        "--disable-quic".to_owned(),
        "--no-first-run".to_owned(),
        "--disable-background-networking".to_owned(),
        "--disable-component-update".to_owned(),
        "--disable-sync".to_owned(),
        format!("--user-data-dir={}", dir.display()),
        "--remote-debugging-port=0".to_owned(),
        "about:blank".to_owned(),
    ];
    if std::fs::read_to_string("/proc/self/status")
        .unwrap()
        .lines()
        .any(|l| l.starts_with("Uid:") && l.split_whitespace().nth(2) == Some("0"))
    {
        args.push("--no-sandbox".to_owned());
    }
    let mut child = std::process::Command::new("/usr/bin/chromium")
        .args(&args)
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env("HOME", dir)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .process_group(0)
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    while !std::fs::read_to_string(&port_file).is_ok_and(|t| t.lines().count() >= 2) {
        assert!(Instant::now() < deadline, "chromium did not start");
        std::thread::sleep(Duration::from_millis(5));
    }
    // The whole group: the browser and its helpers.
    let _ = nix_kill(child.id());
    let _ = child.wait();
}

fn nix_kill(pid: u32) -> std::io::Result<std::process::ExitStatus> {
    std::process::Command::new("/bin/kill")
        .args(["-KILL", "--", &format!("-{pid}")])
        .status()
}

fn bench(c: &mut Criterion) {
    assert!(
        Path::new("/usr/bin/chromium").exists(),
        "chromium is missing: install Debian's chromium (`cargo xtask media-install`)"
    );
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let settings = BrowserSettings::default();

    let mut group = c.benchmark_group("browser");
    group.sample_size(10);
    group.bench_function("start_to_first_snapshot", |b| {
        b.iter(|| {
            rt.block_on(async {
                let br = Browser::launch(
                    &dir.path().join("profile"),
                    EgressGuard::strict(),
                    settings.clone(),
                )
                .await
                .unwrap();
                let snap = br.snapshot(None, SnapshotOptions::default()).await.unwrap();
                br.kill();
                black_box(snap)
            })
        });
    });
    let raw_dir = dir.path().join("raw-profile");
    std::fs::create_dir_all(&raw_dir).unwrap();
    group.bench_function("floor_raw_chromium_start", |b| {
        b.iter(|| raw_start(&raw_dir));
    });

    let br = rt
        .block_on(Browser::launch(
            &dir.path().join("profile"),
            EgressGuard::strict(),
            settings.clone(),
        ))
        .unwrap();
    rt.block_on(br.act(
        None,
        Act::Evaluate {
            function: "() => { for (let i = 0; i < 1000; i++) { const b = document.createElement('button'); b.textContent = 'button ' + i; document.body.appendChild(b); } return document.querySelectorAll('button').length; }".to_owned(),
        },
    ))
    .unwrap();
    let (first, _, _) = rt
        .block_on(br.snapshot(None, SnapshotOptions::default()))
        .unwrap();
    assert_eq!(first.refs.len(), 1000, "{}", first.text);
    let session = br.session_of(None).unwrap();
    group.bench_function("snapshot_1000_elements", |b| {
        b.iter(|| {
            black_box(
                rt.block_on(br.snapshot(None, SnapshotOptions::default()))
                    .unwrap(),
            )
        });
    });
    group.bench_function("floor_raw_get_full_ax_tree", |b| {
        b.iter(|| {
            black_box(
                rt.block_on(br.cdp().call(
                    Some(&session),
                    "Accessibility.getFullAXTree",
                    json!({}),
                    Duration::from_secs(15),
                ))
                .unwrap(),
            )
        });
    });
    group.finish();
    br.kill();
}

criterion_group!(benches, bench);
criterion_main!(benches);
