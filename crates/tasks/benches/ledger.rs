//! Task ledger write throughput: create, start and finish (each one SQLite
//! transaction on a WAL database).
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use criterion::{Criterion, criterion_group, criterion_main};
use talon_tasks::{NewTask, TaskLedger, TaskOutcome, TaskRuntime, TaskStatus};

fn bench(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let ledger = TaskLedger::open(&dir.path().join("talon.db")).unwrap();
    let mut n = 0u64;
    c.bench_function("tasks/create_start_finish", |b| {
        b.iter(|| {
            n += 1;
            let t = ledger
                .create(NewTask {
                    runtime: Some(TaskRuntime::Subagent),
                    requester_session_key: "agent:main:main".into(),
                    run_id: Some(format!("run-{n}")),
                    task: "bench".into(),
                    ..NewTask::default()
                })
                .unwrap();
            ledger.start(&t.task_id).unwrap();
            ledger
                .finalize_by_run_id(
                    &format!("run-{n}"),
                    TaskStatus::Succeeded,
                    TaskOutcome::default(),
                )
                .unwrap();
        });
    });
    c.bench_function("tasks/list_50_newest", |b| {
        b.iter(|| {
            ledger
                .list(&talon_tasks::TaskFilter {
                    limit: 50,
                    ..Default::default()
                })
                .unwrap()
        });
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
