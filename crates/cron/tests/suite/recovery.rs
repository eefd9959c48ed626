use std::sync::Arc;

use pretty_assertions::assert_eq;
use talon_cron::*;

use super::common::*;

#[tokio::test(start_paused = true)]
async fn a_run_killed_mid_flight_is_recovered_on_restart() {
    let dir = tempfile::tempdir().unwrap();
    let clock = TokioClock::new(T0);
    let hanging = Scripted::new([Step::Hang]);
    let first = service(dir.path(), hanging.clone(), Arc::new(clock.clone()));
    first.start().unwrap();
    let job = first
        .add(agent_turn("nightly", every(60_000)), &operator())
        .unwrap()
        .job;
    let once = first
        .add(
            agent_turn(
                "once",
                Schedule::At {
                    at: format_utc(T0 + 60_000),
                },
            ),
            &operator(),
        )
        .unwrap()
        .job;
    // The recurring job starts at 60 s; the one-shot one waits its turn.
    sleep_s(61).await;
    assert_eq!(hanging.calls().len(), 1);
    // The process dies: the timer and the run vanish, the records stay.
    first.stop();
    drop(first);
    let store = CronStore::open(&dir.path().join("talon.db")).unwrap();
    let stuck = store.get(&job.id).unwrap().unwrap();
    assert!(stuck.state.running_at_ms.is_some());
    assert_eq!(
        store.runs(&job.id, 0).unwrap()[0].status,
        RunStatus::Running
    );
    drop(store);

    sleep_s(5).await;
    let ok = Scripted::new([]);
    let second = service(dir.path(), ok.clone(), Arc::new(clock.clone()));
    let report = second.start().unwrap();
    assert_eq!(report.interrupted, vec![job.id.clone()]);
    assert!(
        report.caught_up.contains(&once.id),
        "the missed one-shot runs now"
    );
    let j = second.get(&job.id).unwrap().unwrap();
    assert_eq!(j.state.running_at_ms, None);
    assert_eq!(j.state.last_status, Some(RunStatus::Interrupted));
    let next = j.state.next_run_at_ms.unwrap();
    assert!(
        next > clock.now_ms(),
        "rescheduled to the next natural slot, not re-run at once"
    );
    let history = second.runs(&job.id, 0).unwrap();
    assert_eq!(history[0].status, RunStatus::Interrupted);
    assert!(history[0].ended_at_ms.is_some());

    sleep_s(60).await;
    let names: Vec<String> = ok.calls().iter().map(|c| c.job_name.clone()).collect();
    assert!(names.contains(&"once".to_string()));
    assert!(names.contains(&"nightly".to_string()));
    assert_eq!(
        second.get(&job.id).unwrap().unwrap().state.last_status,
        Some(RunStatus::Ok)
    );
    assert!(
        second.get(&once.id).unwrap().is_none(),
        "one-shot deleted after its good run"
    );
    second.stop();
}

#[tokio::test(start_paused = true)]
async fn missed_jobs_catch_up_at_most_five_staggered() {
    let dir = tempfile::tempdir().unwrap();
    let clock = TokioClock::new(T0);
    let path = dir.path().join("talon.db");
    // Jobs written by a process that then stayed down for a day.
    let mut ids = Vec::new();
    {
        let mut store = CronStore::open(&path).unwrap();
        let mut jobs = Vec::new();
        for i in 0..9 {
            let schedule = if i < 7 {
                Schedule::Every {
                    every_ms: 3_600_000,
                    anchor_ms: Some(T0 - 86_400_000),
                }
            } else {
                Schedule::At {
                    at: format_utc(T0 - 1_000 * (10 - i)),
                }
            };
            let (mut job, _) = build_job(
                format!("job-{i}"),
                agent_turn(
                    &format!("j{i}"),
                    Schedule::Every {
                        every_ms: 1,
                        anchor_ms: None,
                    },
                ),
                &operator(),
                T0 - 86_400_000,
            )
            .unwrap();
            job.schedule = schedule;
            job.state.next_run_at_ms = Some(T0 - 60_000 + i * 1_000);
            ids.push(job.id.clone());
            jobs.push(job);
        }
        store.put_many(&jobs).unwrap();
    }
    let runner = Scripted::new([]).with_clock(Arc::new(clock.clone()));
    let svc = service(dir.path(), runner.clone(), Arc::new(clock.clone()));
    let report = svc.start().unwrap();
    assert_eq!(report.caught_up, ids[..5].to_vec());
    assert_eq!(report.skipped, ids[5..7].to_vec());
    assert_eq!(report.deferred, ids[7..].to_vec());
    sleep_s(40).await;
    let times = runner.call_times.lock().unwrap().clone();
    assert_eq!(times.len(), 5, "only the five caught-up jobs ran so far");
    for w in times.windows(2) {
        assert!(w[1] - w[0] >= MISSED_JOB_STAGGER_MS, "staggered: {times:?}");
    }
    // The deferred one-shots run about 2 min after the start.
    sleep_s(120).await;
    let names: Vec<String> = runner.calls().iter().map(|c| c.job_name.clone()).collect();
    assert!(
        names.contains(&"j7".to_string()) && names.contains(&"j8".to_string()),
        "{names:?}"
    );
    assert!(
        !names.contains(&"j5".to_string()),
        "skipped to its next hourly slot"
    );
    svc.stop();
}

#[tokio::test]
async fn jobs_and_history_survive_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let clock = ManualClock::new(T0);
    let svc = service(dir.path(), Scripted::new([]), Arc::new(clock.clone()));
    let job = svc
        .add(agent_turn("persist", every(1_000)), &operator())
        .unwrap()
        .job;
    drop(svc);
    let again = service(dir.path(), Scripted::new([]), Arc::new(clock));
    assert_eq!(again.get(&job.id).unwrap().unwrap(), job);
    assert_eq!(again.list(true).unwrap().len(), 1);
}

#[test]
fn due_selection_uses_the_index() {
    let dir = tempfile::tempdir().unwrap();
    let store = CronStore::open(&dir.path().join("talon.db")).unwrap();
    drop(store);
    let conn = talon_tasks::open_database(&dir.path().join("talon.db")).unwrap();
    let plan: Vec<String> = conn
        .prepare(
            "EXPLAIN QUERY PLAN SELECT id, data FROM cron_jobs
             WHERE enabled = 1 AND next_run_at IS NOT NULL AND next_run_at <= 5
               AND running_at IS NULL ORDER BY next_run_at LIMIT 1",
        )
        .unwrap()
        .query_map([], |r| r.get::<_, String>(3))
        .unwrap()
        .map(|r| r.unwrap())
        .collect();
    let plan = plan.join(" | ");
    assert!(plan.contains("cron_jobs_due"), "{plan}");
    assert!(!plan.contains("SCAN cron_jobs"), "{plan}");
}

/// A one-shot run cut off by a crash: re-run only when the job says it is
/// idempotent; otherwise recorded `interrupted` and left for the operator.
#[tokio::test(start_paused = true)]
async fn an_interrupted_one_shot_runs_again_only_when_idempotent() {
    for idempotent in [false, true] {
        let dir = tempfile::tempdir().unwrap();
        let clock = TokioClock::new(T0);
        let hanging = Scripted::new([Step::Hang]);
        let first = service(dir.path(), hanging.clone(), Arc::new(clock.clone()));
        first.start().unwrap();
        let mut spec = agent_turn(
            "pay-invoice",
            Schedule::At {
                at: format_utc(T0 + 10_000),
            },
        );
        spec.idempotent = Some(idempotent);
        let job = first.add(spec, &operator()).unwrap().job;
        assert_eq!(job.idempotent, idempotent);
        sleep_s(11).await;
        assert_eq!(hanging.calls().len(), 1, "started once");
        first.stop();
        drop(first);

        sleep_s(5).await;
        let after = Scripted::new([]);
        let second = service(dir.path(), after.clone(), Arc::new(clock.clone()));
        let report = second.start().unwrap();
        assert_eq!(report.interrupted, vec![job.id.clone()]);
        let j = second.get(&job.id).unwrap().unwrap();
        assert_eq!(j.state.last_status, Some(RunStatus::Interrupted));
        // Well past any backoff.
        sleep_s(3_600).await;
        if idempotent {
            assert_eq!(after.calls().len(), 1, "an idempotent job is retried");
        } else {
            assert!(
                after.calls().is_empty(),
                "never re-run behind the operator's back"
            );
            let j = second.get(&job.id).unwrap().unwrap();
            assert_eq!(j.state.next_run_at_ms, None);
            assert!(
                j.state
                    .last_error
                    .as_deref()
                    .unwrap()
                    .contains("idempotent"),
                "{:?}",
                j.state.last_error
            );
            // The operator can still run it.
            assert!(second.run_now(&job.id, true).unwrap().ran);
            sleep_s(1).await;
            assert_eq!(after.calls().len(), 1);
        }
        second.stop();
    }
}
