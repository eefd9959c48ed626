//! The browser tool's hot paths against floors measured in the same run:
//!
//! - `start_to_first_snapshot`: `Browser::launch` (Chromium, the egress
//!   proxy, DevTools connection, interception set up on the first tab)
//!   and a snapshot of the blank tab; floor `floor_raw_chromium_start`:
//!   Chromium spawned with the same flags (no proxy) until its
//!   `DevToolsActivePort` file appears.
//! - `sandboxed_start_to_first_snapshot`: `Browser::launch_in_sandbox`
//!   in a real local (bubblewrap) sandbox with egress (Chromium as one
//!   sandbox command, DevTools over its pipes, the download staging dir
//!   through the bridge) and a snapshot of the blank tab, then `shutdown`;
//!   its floor is `start_to_first_snapshot` (the host browser) in the
//!   same run. Needs `/usr/bin/bwrap` and the `talon-sandbox-exec` helper
//!   built beside this bench (`cargo xtask bench` benches
//!   `talon-sandbox-local` first, which builds it).
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
use talon_browser::{Act, Browser, BrowserSettings, EgressGuard, SandboxTarget, SnapshotOptions};
use talon_sandbox_core::{
    DockerConfig, ResolvedSandboxConfig, SandboxConfig, SandboxHandle, SandboxInputs, SandboxMode,
    SandboxRequest, WorkspaceAccess,
};

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

/// A local sandbox with egress, as the runtime makes one.
fn local_sandbox(
    rt: &tokio::runtime::Runtime,
    dir: &Path,
) -> std::sync::Arc<talon_sandbox_local::LocalSandbox> {
    assert!(
        Path::new("/usr/bin/bwrap").exists(),
        "bubblewrap is missing: install Debian's bubblewrap (`cargo xtask test` does)"
    );
    let exe = std::env::current_exe().unwrap();
    let helper = exe
        .parent()
        .unwrap()
        .parent()
        .unwrap()
        .join("talon-sandbox-exec");
    assert!(
        helper.is_file(),
        "{} is missing: build it with `cargo build --release -p talon-sandbox-local --bin talon-sandbox-exec` (`cargo xtask bench` benches talon-sandbox-local first, which builds it)",
        helper.display()
    );
    std::fs::create_dir_all(dir.join("state/workspace")).unwrap();
    std::fs::create_dir_all(dir.join("home")).unwrap();
    let defaults = SandboxConfig {
        mode: Some(SandboxMode::All),
        backend: Some("local".to_owned()),
        workspace_access: Some(WorkspaceAccess::Rw),
        docker: Some(DockerConfig {
            network: Some("bridge".to_owned()),
            ..Default::default()
        }),
        ..Default::default()
    };
    let tools = talon_tool_policy::config::ToolsConfig::default();
    let resolved = ResolvedSandboxConfig::resolve(&SandboxInputs {
        agent_id: "main",
        defaults: Some(&defaults),
        agent: None,
        agent_key: None,
        state_dir: &dir.join("state"),
        home: Some(&dir.join("home")),
        tools: &tools,
        agent_tools: None,
    });
    let request = SandboxRequest::new(
        resolved,
        "agent:main:main",
        &dir.join("state/workspace"),
        None,
    );
    let backend = talon_sandbox_local::LocalBackend::new()
        .unwrap()
        .with_home_dirs(vec![dir.join("home")])
        .with_sandbox_exec(helper)
        .unwrap();
    rt.block_on(backend.ensure_local(&request)).unwrap()
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
    let sandbox = local_sandbox(&rt, &dir.path().join("sandbox"));
    let target = SandboxTarget {
        launcher: sandbox.launcher(),
        bridge: sandbox.fs_bridge().unwrap(),
        name: sandbox.name().to_owned(),
    };
    group.bench_function("sandboxed_start_to_first_snapshot", |b| {
        b.iter(|| {
            rt.block_on(async {
                let br =
                    Browser::launch_in_sandbox(&target, EgressGuard::strict(), settings.clone())
                        .await
                        .unwrap();
                let snap = br.snapshot(None, SnapshotOptions::default()).await.unwrap();
                br.shutdown().await;
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
