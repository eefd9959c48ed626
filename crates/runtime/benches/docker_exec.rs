//! A warm `exec` of `true` in a Docker sandbox through the whole runtime
//! (`ToolTable::invoke`: argument decoding, the gate, the `exec` tool with
//! its session bookkeeping, the lazy sandbox and the Docker backend), and
//! the raw Engine API round trip on the same container in the same run
//! (bollard `create_exec` of `/bin/sh -lc true`, `start_exec`, the output
//! read to its end, `inspect_exec`): the floor the issue measured against.
//! The engine and the test image come from `cargo xtask docker-up`
//! (`cargo xtask bench` runs it first).
//!
//! Besides criterion's two figures, the bench prints both interleaved
//! call by call (so load from elsewhere hits both alike).

#![allow(
    clippy::disallowed_methods,
    reason = "test and tooling code starts its probes, engines and binaries directly; Talon's own children go through talon_proc_tree::ChildCommand"
)]
// A panic here is a benchmark setup failure, never a measured path.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
#![allow(
    clippy::print_stderr,
    reason = "the bench prints the interleaved comparison once, next to criterion's output"
)]

use std::process::Command;
use std::time::{Duration, Instant};

use bollard::Docker;
use bollard::exec::{CreateExecOptions, StartExecResults};
use criterion::{Criterion, criterion_group, criterion_main};
use futures::StreamExt;
use serde_json::json;
use talon_runtime::{InvokeOutcome, ModelToolCall, RunSpec, RuntimeBuilder, ToolTable};
use talon_tool_policy::RunContext;

/// Rounds of the interleaved comparison.
const ROUNDS: usize = 40;

async fn invoke_true(table: &ToolTable) {
    let out = table
        .invoke(ModelToolCall::new(
            "b",
            "exec",
            json!({ "command": "true" }),
        ))
        .await;
    match out {
        InvokeOutcome::Completed { result, .. } => {
            assert_eq!(result.details["exitCode"], json!(0), "{result:?}")
        }
        other => panic!(
            "the sandboxed exec failed (is the engine up? `cargo xtask docker-up`): {other:?}"
        ),
    }
}

async fn raw_true(docker: &Docker, container: &str) {
    let created = docker
        .create_exec(
            container,
            CreateExecOptions {
                attach_stdout: Some(true),
                attach_stderr: Some(true),
                cmd: Some(vec!["/bin/sh", "-lc", "true"]),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    let StartExecResults::Attached { mut output, .. } =
        docker.start_exec(&created.id, None).await.unwrap()
    else {
        panic!("not attached")
    };
    while let Some(item) = output.next().await {
        item.unwrap();
    }
    loop {
        let inspect = docker.inspect_exec(&created.id).await.unwrap();
        if inspect.running != Some(true) {
            assert_eq!(inspect.exit_code, Some(0));
            break;
        }
    }
}

fn median_ms(mut times: Vec<Duration>) -> f64 {
    times.sort();
    times[times.len() / 2].as_secs_f64() * 1000.0
}

fn benches(c: &mut Criterion) {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("ws")).unwrap();
    let agent = format!("bench-exec-{}", std::process::id());
    let prefix = format!("talon-bench-rt-{}-", std::process::id());
    let config = format!(
        r#"{{ agents: {{ defaults: {{ workspace: "./ws", sandbox: {{ mode: "all", workspaceAccess: "rw",
            workspaceRoot: "{root}", docker: {{ image: "talon-sandbox-test:busybox",
            containerPrefix: "{prefix}" }} }} }}, list: [{{ id: "{agent}" }}] }} }}"#,
        root = dir.path().join("sandboxes").display(),
    );
    let loaded = talon_config::load_str(&config, "talon.json").unwrap();
    let runtime = RuntimeBuilder::from_config(&loaded.config, dir.path())
        .unwrap()
        .build()
        .unwrap();
    let table = runtime.assemble(RunSpec::new(RunContext::new(agent)));
    // The first call creates the container; every later one is warm.
    rt.block_on(invoke_true(&table));
    let listed = Command::new("docker")
        .args(["ps", "-q", "--filter", &format!("name={prefix}")])
        .output()
        .unwrap();
    let container = String::from_utf8_lossy(&listed.stdout).trim().to_owned();
    assert!(
        !container.is_empty(),
        "the runtime's container is not running"
    );
    let docker = Docker::connect_with_local_defaults().unwrap();

    let mut times: [Vec<Duration>; 2] = Default::default();
    for _ in 0..ROUNDS {
        let t = Instant::now();
        rt.block_on(raw_true(&docker, &container));
        times[0].push(t.elapsed());
        let t = Instant::now();
        rt.block_on(invoke_true(&table));
        times[1].push(t.elapsed());
    }
    let [floor_ms, talon_ms] = times.map(median_ms);
    eprintln!(
        "runtime warm exec in Docker, {ROUNDS} interleaved rounds, medians: ToolTable::invoke \
         {talon_ms:.2} ms, raw Engine API floor {floor_ms:.2} ms, ratio {:.3}",
        talon_ms / floor_ms
    );

    c.bench_function("runtime_exec_true_docker", |b| {
        b.iter(|| rt.block_on(invoke_true(&table)))
    });
    c.bench_function("runtime_exec_true_docker_raw_api", |b| {
        b.iter(|| rt.block_on(raw_true(&docker, &container)))
    });

    let _ = Command::new("docker")
        .args(["rm", "-f", "-v", &container])
        .output();
}

criterion_group!(docker_exec, benches);
criterion_main!(docker_exec);
