//! Scheduling cost with 10 000 jobs: next-due selection and the next wake
//! come from the store's `(enabled, next_run_at)` index, so a tick does not
//! scan every job. Also: store write throughput and next-run computation.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::hint::black_box;

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use talon_cron::{Creator, CronExpr, CronStore, JobSpec, Payload, Schedule, build_job};

const T0: i64 = 1_767_225_600_000;
const JOBS: usize = 10_000;

fn jobs(n: usize) -> Vec<talon_cron::CronJob> {
    let creator = Creator {
        agent_id: "main".into(),
        session_key: Some("agent:main:main".into()),
        tools: Some(vec!["read".into(), "web_fetch".into()]),
    };
    (0..n)
        .map(|i| {
            let spec = JobSpec {
                name: format!("job {i}"),
                schedule: Some(Schedule::Every {
                    every_ms: 60_000 + i64::try_from(i).unwrap() * 1_000,
                    anchor_ms: Some(T0),
                }),
                payload: Some(Payload::AgentTurn {
                    message: "check".into(),
                    model: None,
                    thinking: None,
                    timeout_seconds: None,
                }),
                ..JobSpec::default()
            };
            build_job(format!("job-{i:05}"), spec, &creator, T0)
                .unwrap()
                .0
        })
        .collect()
}

fn bench(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let mut store = CronStore::open(&dir.path().join("talon.db")).unwrap();
    store.put_many(&jobs(JOBS)).unwrap();

    // A tick: the next wake, then the due jobs (10 of 10 000 are due).
    c.bench_function("cron/tick_next_wake_and_due_10k_jobs", |b| {
        b.iter(|| {
            let wake = store.next_wake().unwrap();
            let due = store.due(black_box(T0 + 60_000 + 9_000), 16).unwrap();
            black_box((wake, due.len()))
        });
    });
    c.bench_function("cron/next_wake_10k_jobs", |b| {
        b.iter(|| black_box(store.next_wake().unwrap()));
    });

    let one = jobs(1).pop().unwrap();
    c.bench_function("cron/store_put_one_job_txn", |b| {
        let mut i = 0u64;
        b.iter(|| {
            let mut j = one.clone();
            j.id = format!("w-{i}");
            i += 1;
            store.put(&j).unwrap();
        });
    });
    c.bench_function("cron/store_put_1000_jobs_one_txn", |b| {
        b.iter_batched(
            || {
                let wdir = tempfile::tempdir().unwrap();
                let s = CronStore::open(&wdir.path().join("talon.db")).unwrap();
                (wdir, s, jobs(1_000))
            },
            |(_d, mut s, js)| s.put_many(&js).unwrap(),
            BatchSize::PerIteration,
        );
    });

    let expr = CronExpr::parse("*/5 9-17 * * 1-5", Some("Europe/Berlin"), "s").unwrap();
    c.bench_function("cron/next_after_cron_expr_tz", |b| {
        b.iter(|| black_box(expr.next_after(black_box(T0)).unwrap()));
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
