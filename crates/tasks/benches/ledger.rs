//! Task ledger throughput on each engine, in the same run: create, start
//! and finish (three writes; each a transaction on SQLite's WAL file, a
//! statement on a pooled PostgreSQL connection) and the 50 newest tasks.
//! PostgreSQL is a private server on loopback started by the bench
//! (`talon_test_support::postgres`), so the ratio PostgreSQL / SQLite is
//! the price of a shared, networked database for one gateway;
//! `postgres_3_gateways_3_tasks` is three ledgers on three pools writing
//! at once (how the ledger's throughput grows from one gateway to three).
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::sync::atomic::{AtomicU64, Ordering};

use criterion::{Criterion, criterion_group, criterion_main};
use talon_tasks::{NewTask, TaskFilter, TaskLedger, TaskOutcome, TaskRuntime, TaskStatus};

static RUN: AtomicU64 = AtomicU64::new(0);

fn create_start_finish(ledger: &TaskLedger) {
    let run_id = format!("run-{}", RUN.fetch_add(1, Ordering::Relaxed));
    let t = ledger
        .create(NewTask {
            runtime: Some(TaskRuntime::Subagent),
            requester_session_key: "agent:main:main".into(),
            run_id: Some(run_id.clone()),
            task: "bench".into(),
            ..NewTask::default()
        })
        .unwrap();
    ledger.start(&t.task_id).unwrap();
    ledger
        .finalize_by_run_id(&run_id, TaskStatus::Succeeded, TaskOutcome::default())
        .unwrap();
}

fn bench(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let db = talon_test_support::postgres::shared_database().unwrap();
    let pool = db.pool().unwrap();
    let engines = [
        ("", TaskLedger::open(&dir.path().join("talon.db")).unwrap()),
        ("postgres_", TaskLedger::open_postgres(&pool).unwrap()),
    ];
    for (prefix, ledger) in &engines {
        c.bench_function(&format!("tasks/{prefix}create_start_finish"), |b| {
            b.iter(|| create_start_finish(ledger));
        });
        c.bench_function(&format!("tasks/{prefix}list_50_newest"), |b| {
            b.iter(|| {
                ledger
                    .list(&TaskFilter {
                        limit: 50,
                        ..Default::default()
                    })
                    .unwrap()
            });
        });
    }
    // A fleet: three gateways (a pool and a ledger each) on the one
    // database, each finishing one task per iteration at the same time.
    // Three tasks per iteration: the throughput gain over one gateway is
    // 3 × postgres_create_start_finish / this.
    let fleet: Vec<TaskLedger> = (0..3)
        .map(|_| TaskLedger::open_postgres(&db.pool().unwrap()).unwrap())
        .collect();
    c.bench_function("tasks/postgres_3_gateways_3_tasks", |b| {
        b.iter(|| {
            std::thread::scope(|s| {
                for ledger in &fleet {
                    s.spawn(move || create_start_finish(ledger));
                }
            });
        });
    });
    // The floor of every PostgreSQL call: one round trip through the pool.
    c.bench_function("tasks/postgres_floor_select_1", |b| {
        b.iter(|| {
            pool.run(|c| Ok(c.simple_query("SELECT 1").map(drop)?))
                .unwrap()
        });
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
