//! Local backend benchmarks (real bubblewrap, `cargo xtask bwrap-install`
//! provides it):
//!
//! - `local_exec_true_backend`: `exec` of `true` through the backend's
//!   launcher (seccomp fds, wrapper, bwrap, namespaces, mounts, wait);
//! - `local_exec_true_raw_bwrap`: the same `bwrap` command line run
//!   directly (no seccomp filter, no wrapper), the floor to compare with;
//! - `local_exec_true_pids_limit`: the backend with `docker.pidsLimit`, so
//!   each command also gets (and removes) a cgroup leaf;
//! - `local_ensure_warm`: `ensure` of a sandbox already built;
//! - `local_exec_true_landlock`: through the `talon-sandbox-exec` helper
//!   (Landlock rules applied, then exec);
//! - `local_exec_true_bridge`: the same with `network: "bridge"`, so the
//!   helper also binds 127.0.0.1:3128 and starts the egress forwarder.
//!
//! Docker's `docker_exec_true_backend` (the `docker` bench of
//! `talon-sandbox-docker`, same `cargo xtask bench` run) is the figure to
//! compare with a container.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
#![allow(
    clippy::disallowed_methods,
    reason = "test and tooling code starts its probes, engines and binaries directly; Talon's own children go through talon_proc_tree::ChildCommand"
)]

use std::path::Path;
use std::process::{Command, Stdio};

use criterion::{Criterion, criterion_group, criterion_main};
use talon_sandbox_core::{
    DockerConfig, LaunchRequest, ResolvedSandboxConfig, SandboxConfig, SandboxHandle,
    SandboxInputs, SandboxMode, SandboxRequest, WorkspaceAccess,
};
use talon_sandbox_local::{LocalBackend, LocalSandbox};
use talon_tool_policy::config::ToolsConfig;

fn request(state: &Path, docker: DockerConfig) -> SandboxRequest {
    let defaults = SandboxConfig {
        mode: Some(SandboxMode::All),
        backend: Some("local".to_owned()),
        workspace_access: Some(WorkspaceAccess::Rw),
        docker: Some(docker),
        ..Default::default()
    };
    let tools = ToolsConfig::default();
    let resolved = ResolvedSandboxConfig::resolve(&SandboxInputs {
        agent_id: "main",
        defaults: Some(&defaults),
        agent: None,
        agent_key: None,
        state_dir: state,
        home: None,
        tools: &tools,
        agent_tools: None,
    });
    SandboxRequest::new(resolved, "agent:main:main", &state.join("workspace"), None)
}

async fn exec_true(sandbox: &LocalSandbox) {
    let mut proc = sandbox
        .launcher()
        .launch(LaunchRequest {
            command: "true".to_owned(),
            ..Default::default()
        })
        .await
        .unwrap();
    proc.stdin = None;
    assert!(proc.control.wait().await.unwrap().success());
}

fn benches(c: &mut Criterion) {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let state = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(state.path().join("workspace")).unwrap();
    let backend = LocalBackend::new().unwrap_or_else(|e| {
        panic!("the local benches need bubblewrap: {e}\nrun `cargo xtask bwrap-install`")
    });
    let plain = request(state.path(), DockerConfig::default());
    let sandbox = rt.block_on(backend.ensure_local(&plain)).unwrap();

    c.bench_function("local_exec_true_backend", |b| {
        b.iter(|| rt.block_on(exec_true(&sandbox)));
    });

    // The same bwrap command line without the seccomp descriptors.
    let mut raw_args = Vec::new();
    let mut args = sandbox.bwrap_args().iter();
    while let Some(arg) = args.next() {
        if arg == "--add-seccomp-fd" {
            args.next();
            continue;
        }
        raw_args.push(arg.clone());
    }
    let bwrap = backend.bwrap().to_path_buf();
    c.bench_function("local_exec_true_raw_bwrap", |b| {
        b.iter(|| {
            let status = Command::new(&bwrap)
                .args(&raw_args)
                .args(["--chdir", "/workspace", "--", "/bin/sh", "-c", "true"])
                .env_clear()
                .stdin(Stdio::null())
                .status()
                .unwrap();
            assert!(status.success());
        });
    });

    let limited = request(
        state.path(),
        DockerConfig {
            pids_limit: Some(256),
            ..Default::default()
        },
    );
    let limited = rt
        .block_on(backend.ensure_local(&limited))
        .unwrap_or_else(|e| panic!("the pids-limit bench needs cgroup limits: {e}"));
    c.bench_function("local_exec_true_pids_limit", |b| {
        b.iter(|| rt.block_on(exec_true(&limited)));
    });

    c.bench_function("local_ensure_warm", |b| {
        b.iter(|| rt.block_on(backend.ensure_local(&plain)).unwrap());
    });

    // With the helper: Landlock, then Landlock plus the egress forwarder.
    let helped = LocalBackend::new()
        .unwrap()
        .with_sandbox_exec(env!("CARGO_BIN_EXE_talon-sandbox-exec"))
        .unwrap();
    let landlocked = rt.block_on(helped.ensure_local(&plain)).unwrap();
    c.bench_function("local_exec_true_landlock", |b| {
        b.iter(|| rt.block_on(exec_true(&landlocked)));
    });
    let bridge = request(
        state.path(),
        DockerConfig {
            network: Some("bridge".to_owned()),
            ..Default::default()
        },
    );
    let bridged = rt.block_on(helped.ensure_local(&bridge)).unwrap();
    c.bench_function("local_exec_true_bridge", |b| {
        b.iter(|| rt.block_on(exec_true(&bridged)));
    });
}

criterion_group!(local, benches);
criterion_main!(local);
