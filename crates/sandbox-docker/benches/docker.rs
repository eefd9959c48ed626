//! Docker backend benchmarks against the real engine (`cargo xtask
//! docker-up` provides it and the test image):
//!
//! - `docker_exec_true_backend`: a warm `exec` of `true` through the
//!   backend's launcher (create exec, attach, pid marker, exit code);
//! - `docker_exec_true_raw_api`: the floor, measured in the same run on
//!   the same container: the Engine API round trip alone (bollard
//!   `create_exec` of `/bin/sh -lc true` with stdout and stderr attached,
//!   `start_exec`, the output read to its end, `inspect_exec` for the exit
//!   code), with nothing of Talon's around it;
//! - before those, the two interleaved call by call (so the machine's
//!   load hits both alike), printed with the floor plus stdin alone and
//!   plus one wrapper shell alone (where Talon's extra time goes);
//! - `docker_exec_true_cli`: the same through the `docker exec` CLI, as
//!   OpenClaw runs it (`docker exec -i NAME /bin/sh -lc true`);
//! - `docker_ensure_warm`: `ensure` of a running container whose hash
//!   matches (one inspect);
//! - `docker_ensure_cold`: `ensure` that creates and starts a container
//!   and waits until it runs an exec (removal not timed).
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stderr
)]
#![allow(
    clippy::disallowed_methods,
    reason = "test and tooling code starts its probes, engines and binaries directly; Talon's own children go through talon_proc_tree::ChildCommand"
)]

use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use bollard::exec::{CreateExecOptions, StartExecResults};
use criterion::{Criterion, criterion_group, criterion_main};
use futures::StreamExt;
use talon_sandbox_core::{LaunchRequest, ProcessLauncher, SandboxHandle};
use talon_sandbox_docker::{ContainerSpec, DockerBackend};
use tokio::io::AsyncReadExt;

const IMAGE: &str = "talon-sandbox-test:busybox";

fn spec(name: &str, ws: &std::path::Path) -> ContainerSpec {
    let mut spec = ContainerSpec::new(name, format!("bench:{name}"), ws, "bench");
    spec.image = IMAGE.to_owned();
    spec.extra_labels
        .insert("talon.test".to_owned(), "1".to_owned());
    spec
}

fn remove(name: &str) {
    let _ = Command::new("docker")
        .args(["rm", "-f", "-v", name])
        .output();
}

/// Rounds of the interleaved comparison.
const PAIRS: usize = 60;

/// A warm `exec` of `true` through the backend's launcher, as the `exec`
/// tool runs it (stdin handed out and closed, stdout read to its end, the
/// exit status waited for).
async fn launch_true(launcher: &dyn ProcessLauncher) {
    let mut proc = launcher
        .launch(LaunchRequest {
            command: "true".to_owned(),
            ..Default::default()
        })
        .await
        .unwrap();
    if !KEEP_STDIN.load(Ordering::Relaxed) {
        proc.stdin = None;
    }
    let mut sink = Vec::new();
    proc.stdout.read_to_end(&mut sink).await.unwrap();
    assert!(proc.control.wait().await.unwrap().success());
}

/// Floor rounds whose first `inspect_exec` still said running.
static STILL_RUNNING: AtomicUsize = AtomicUsize::new(0);

/// Whether [`launch_true`] keeps the exec's stdin open until it ended.
static KEEP_STDIN: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// One exec straight through the Engine API (bollard), nothing of Talon's.
#[derive(Clone, Copy)]
struct RawExec<'a> {
    docker: &'a bollard::Docker,
    container: &'a str,
    stdin: bool,
    cmd: &'a [&'a str],
}

impl RawExec<'_> {
    async fn run(&self) {
        let created = self
            .docker
            .create_exec(
                self.container,
                CreateExecOptions {
                    attach_stdin: Some(self.stdin),
                    attach_stdout: Some(true),
                    attach_stderr: Some(true),
                    cmd: Some(self.cmd.to_vec()),
                    ..Default::default()
                },
            )
            .await
            .unwrap();
        let StartExecResults::Attached { mut output, input } =
            self.docker.start_exec(&created.id, None).await.unwrap()
        else {
            panic!("not attached")
        };
        drop(input);
        while let Some(item) = output.next().await {
            item.unwrap();
        }
        // The floor polls without pausing: whatever the engine needs to
        // record the exit is part of the floor.
        let mut first = true;
        loop {
            let inspect = self.docker.inspect_exec(&created.id).await.unwrap();
            if inspect.running != Some(true) {
                assert_eq!(inspect.exit_code, Some(0));
                break;
            }
            if first {
                STILL_RUNNING.fetch_add(1, Ordering::Relaxed);
                first = false;
            }
        }
    }
}

fn median_ms(mut times: Vec<Duration>) -> f64 {
    times.sort();
    times[times.len() / 2].as_secs_f64() * 1000.0
}

fn benches(c: &mut Criterion) {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let backend = rt.block_on(DockerBackend::connect()).unwrap_or_else(|e| {
        panic!("the Docker benches need the engine: {e}\nrun `cargo xtask docker-up`")
    });
    let ws = tempfile::tempdir().unwrap();
    let warm_name = format!("talon-bench-{}-warm", std::process::id());
    let warm = spec(&warm_name, ws.path());
    let sandbox = rt.block_on(backend.ensure_container(&warm)).unwrap();
    let launcher = sandbox.launcher();

    c.bench_function("docker_exec_true_backend", |b| {
        b.iter(|| rt.block_on(launch_true(&*launcher)))
    });

    let docker = backend.docker().clone();
    let floor = RawExec {
        docker: &docker,
        container: &warm_name,
        stdin: false,
        cmd: &["/bin/sh", "-lc", "true"],
    };
    c.bench_function("docker_exec_true_raw_api", |b| {
        b.iter(|| rt.block_on(floor.run()))
    });

    // The same comparison with the two interleaved call by call, so load
    // from elsewhere on the machine hits both alike; plus the floor with
    // each of Talon's additions alone, to show where time goes.
    let with_stdin = RawExec {
        stdin: true,
        ..floor
    };
    let wrapped = RawExec {
        cmd: &[
            "/bin/sh",
            "-c",
            "echo \"$$\"; exec \"$@\"",
            "talon-exec",
            "/bin/sh",
            "-lc",
            "true",
        ],
        ..floor
    };
    let mut times: [Vec<Duration>; 5] = Default::default();
    STILL_RUNNING.store(0, Ordering::Relaxed);
    for _ in 0..PAIRS {
        KEEP_STDIN.store(true, Ordering::Relaxed);
        let t = Instant::now();
        rt.block_on(launch_true(&*launcher));
        times[4].push(t.elapsed());
        KEEP_STDIN.store(false, Ordering::Relaxed);
        let t = Instant::now();
        rt.block_on(floor.run());
        times[0].push(t.elapsed());
        let t = Instant::now();
        rt.block_on(launch_true(&*launcher));
        times[1].push(t.elapsed());
        let t = Instant::now();
        rt.block_on(with_stdin.run());
        times[2].push(t.elapsed());
        let t = Instant::now();
        rt.block_on(wrapped.run());
        times[3].push(t.elapsed());
    }
    let [floor_ms, talon_ms, stdin_ms, wrapped_ms, kept_ms] = times.map(median_ms);
    eprintln!(
        "docker warm exec, {PAIRS} interleaved rounds, medians: Talon backend {talon_ms:.2} ms \
         (stdin kept open to the end, as the exec tool does: {kept_ms:.2} ms), raw Engine API \
         floor {floor_ms:.2} ms, ratio {:.3}; floor + stdin attached {stdin_ms:.2} ms, floor + \
         a wrapper shell {wrapped_ms:.2} ms; the engine still said running right after the \
         output ended in {} of {} raw rounds",
        talon_ms / floor_ms,
        STILL_RUNNING.load(Ordering::Relaxed),
        3 * PAIRS
    );

    c.bench_function("docker_exec_true_cli", |b| {
        b.iter(|| {
            let status = Command::new("docker")
                .args(["exec", "-i", &warm_name, "/bin/sh", "-lc", "true"])
                .stdin(Stdio::null())
                .status()
                .unwrap();
            assert!(status.success());
        })
    });

    c.bench_function("docker_ensure_warm", |b| {
        b.iter(|| rt.block_on(backend.ensure_container(&warm)).unwrap())
    });

    drop(sandbox);
    remove(&warm_name);
}

fn cold_benches(c: &mut Criterion) {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let backend = rt.block_on(DockerBackend::connect()).unwrap_or_else(|e| {
        panic!("the Docker benches need the engine: {e}\nrun `cargo xtask docker-up`")
    });
    let ws = tempfile::tempdir().unwrap();
    let counter = AtomicUsize::new(0);
    c.bench_function("docker_ensure_cold", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                let n = counter.fetch_add(1, Ordering::Relaxed);
                let name = format!("talon-bench-{}-cold-{n}", std::process::id());
                let cold = spec(&name, ws.path());
                let started = Instant::now();
                let handle = rt.block_on(backend.ensure_container(&cold)).unwrap();
                total += started.elapsed();
                assert!(handle.created());
                remove(&name);
            }
            total
        })
    });
}

criterion_group!(warm, benches);
criterion_group! {
    name = cold;
    config = Criterion::default().sample_size(10);
    targets = cold_benches
}
criterion_main!(warm, cold);
