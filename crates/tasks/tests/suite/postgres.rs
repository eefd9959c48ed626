//! What only the PostgreSQL engine has: a database that goes away, and a
//! schema written by a newer Talon.

use std::sync::Arc;

use talon_state::{PgPool, StateError};
use talon_tasks::*;
use talon_test_support::postgres::PgServer;

fn task(run_id: &str) -> NewTask {
    NewTask {
        runtime: Some(TaskRuntime::Subagent),
        requester_session_key: "agent:main:main".into(),
        run_id: Some(run_id.into()),
        task: "work".into(),
        ..NewTask::default()
    }
}

#[test]
fn a_lost_database_fails_calls_as_unavailable_and_they_work_again_after() {
    let mut server = PgServer::start().unwrap();
    let name = server.create_database().unwrap();
    let pool = PgPool::connect(server.config(&name).with_pool_size(1)).unwrap();
    let ledger = TaskLedger::open_postgres(&pool).unwrap();
    let t = ledger.create(task("lost-1")).unwrap();
    let (_, token) = ledger.start(&t.task_id).unwrap();
    // The test server runs with `synchronous_commit=off`: flush what was
    // committed, so the crash below loses the connection, not the rows.
    pool.run(|c| Ok(c.batch_execute("CHECKPOINT")?)).unwrap();
    server.stop().unwrap();
    for err in [
        ledger.get(&t.task_id).unwrap_err(),
        ledger
            .finish(&t.task_id, TaskStatus::Succeeded, TaskOutcome::default())
            .unwrap_err(),
        ledger.create(task("lost-2")).unwrap_err(),
        ledger.poll_cancelled().unwrap_err(),
    ] {
        assert!(err.is_unavailable(), "{err}");
        assert_eq!(err.code(), "task.unavailable");
        assert!(matches!(
            err,
            TaskError::State(StateError::Unavailable { .. })
        ));
    }
    assert!(
        !token.is_cancelled(),
        "an unreachable store cancels nothing"
    );
    server.start_again().unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    let done = loop {
        match ledger.finish(&t.task_id, TaskStatus::Succeeded, TaskOutcome::default()) {
            Ok(r) => break r,
            Err(e) if e.is_unavailable() && std::time::Instant::now() < deadline => {
                std::thread::sleep(std::time::Duration::from_millis(200));
            }
            Err(e) => panic!("{e:?}"),
        }
    };
    assert_eq!(done.status, TaskStatus::Succeeded);
}

#[test]
fn a_schema_newer_than_this_build_is_refused() {
    let db = talon_test_support::postgres::shared_database().unwrap();
    let pool = db.pool().unwrap();
    drop(TaskLedger::open_postgres(&pool).unwrap());
    pool.run(|c| {
        c.execute(
            "UPDATE talon_schema SET version = version + 1 WHERE store = 'tasks'",
            &[],
        )?;
        Ok(())
    })
    .unwrap();
    let err = TaskLedger::open_postgres_with_clock(&pool, Arc::new(SystemClock)).unwrap_err();
    assert_eq!(err.code(), "task.store_newer");
    assert!(err.to_string().contains("upgrade Talon"), "{err}");
}
