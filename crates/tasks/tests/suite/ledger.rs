//! The ledger through its public API.

use std::sync::Arc;
use std::time::Duration;

use talon_tasks::*;

use super::engines::{Engine, on_every_engine};

const T0: i64 = 1_800_000_000_000;

on_every_engine!(
    illegal_transitions_are_refused_and_change_nothing,
    bad_input_is_refused_with_the_field,
    cancellation_reaches_the_running_work,
    cancel_from_another_handle_fires_at_the_next_sweep,
    finalize_by_run_id_and_provisional_cancel,
    sweep_marks_stale_running_work_lost_and_retention_prunes,
    records_survive_reopen_and_list_filters,
    a_corrupt_persisted_status_is_a_clear_error,
    delivery_is_recorded_after_the_task_ended_and_survives_reopen,
    a_cancel_elsewhere_is_noticed_by_polling_and_by_progress,
    racing_ledgers_leave_exactly_one_terminal_status,
    the_member_that_runs_a_task_is_recorded,
    work_running_here_stops_when_another_gateway_cancels_it,
);

fn ledger(e: &dyn Engine) -> (TaskLedger, ManualClock) {
    let clock = ManualClock::new(T0);
    (e.open(Arc::new(clock.clone())), clock)
}

fn new(runtime: TaskRuntime, run_id: &str) -> NewTask {
    NewTask {
        runtime: Some(runtime),
        requester_session_key: "agent:main:main".into(),
        run_id: Some(run_id.into()),
        task: "do the thing".into(),
        ..NewTask::default()
    }
}

#[test]
fn transition_table_matches_the_rules() {
    use TaskStatus::*;
    let terminal = [Succeeded, Failed, TimedOut, Cancelled, Lost];
    for &from in TaskStatus::ALL {
        for &to in TaskStatus::ALL {
            let ok = check_transition(from, to, false).is_ok();
            let expected = from == to
                || !from.is_terminal()
                || (from == Succeeded && terminal.contains(&to) && to != Lost);
            assert_eq!(ok, expected, "{from} -> {to}");
        }
    }
    // Provisional cancellation: a real outcome that predates it wins.
    for to in [Succeeded, Failed, TimedOut] {
        assert!(check_transition(Cancelled, to, true).is_ok());
    }
    assert!(check_transition(Cancelled, Lost, true).is_err());
    assert!(check_transition(Cancelled, Running, true).is_err());
}

fn illegal_transitions_are_refused_and_change_nothing(e: &dyn Engine) {
    let (l, _c) = ledger(e);
    let t = l.create(new(TaskRuntime::Subagent, "r1")).unwrap();
    l.start(&t.task_id).unwrap();
    l.finish(
        &t.task_id,
        TaskStatus::Failed,
        TaskOutcome {
            error: Some("boom".into()),
            ..Default::default()
        },
    )
    .unwrap();
    let err = l
        .finish(&t.task_id, TaskStatus::Running, TaskOutcome::default())
        .unwrap_err();
    let msg = err.to_string();
    assert!(msg.contains("failed") && msg.contains("running"), "{msg}");
    assert!(matches!(err, TaskError::IllegalTransition { .. }));
    let err = l
        .finish(&t.task_id, TaskStatus::Succeeded, TaskOutcome::default())
        .unwrap_err();
    assert!(matches!(err, TaskError::IllegalTransition { .. }));
    let now = l.get(&t.task_id).unwrap().unwrap();
    assert_eq!(now.status, TaskStatus::Failed);
    assert_eq!(now.error.as_deref(), Some("boom"));
    // Succeeded may not become lost.
    let t2 = l.create(new(TaskRuntime::Acp, "r2")).unwrap();
    l.finish(&t2.task_id, TaskStatus::Succeeded, TaskOutcome::default())
        .unwrap();
    assert!(
        l.finish(&t2.task_id, TaskStatus::Lost, TaskOutcome::default())
            .is_err()
    );
    assert!(l.cancel(&t2.task_id, None).is_err());
}

fn bad_input_is_refused_with_the_field(e: &dyn Engine) {
    let (l, _c) = ledger(e);
    let mut n = new(TaskRuntime::Cli, "r");
    n.runtime = None;
    assert!(l.create(n).unwrap_err().to_string().contains("runtime"));
    let mut n = new(TaskRuntime::Cli, "r");
    n.task = "  ".into();
    assert!(l.create(n).unwrap_err().to_string().contains("task"));
    let mut n = new(TaskRuntime::Cli, "r");
    n.task_id = Some("dup".into());
    l.create(n.clone()).unwrap();
    assert!(
        l.create(n)
            .unwrap_err()
            .to_string()
            .contains("already exists")
    );
    assert!(
        "bogus"
            .parse::<TaskStatus>()
            .unwrap_err()
            .to_string()
            .contains("queued")
    );
    assert!(matches!(
        l.cancel("nope", None),
        Err(TaskError::NotFound { .. })
    ));
}

fn cancellation_reaches_the_running_work(e: &dyn Engine) {
    let (l, _c) = ledger(e);
    tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap()
        .block_on(cancellation_reaches(l));
}

async fn cancellation_reaches(l: TaskLedger) {
    let t = l.create(new(TaskRuntime::Subagent, "run-c")).unwrap();
    let (_, token) = l.start(&t.task_id).unwrap();
    let work = tokio::spawn(async move {
        tokio::select! {
            _ = token.cancelled() => "stopped",
            _ = tokio::time::sleep(Duration::from_secs(30)) => "ran to the end",
        }
    });
    tokio::time::sleep(Duration::from_millis(20)).await;
    let r = l.cancel(&t.task_id, Some("user asked")).unwrap();
    assert_eq!(r.status, TaskStatus::Cancelled);
    let outcome = tokio::time::timeout(Duration::from_secs(5), work)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(outcome, "stopped");
    // A token asked for after the cancel comes back cancelled.
    assert!(l.token(&t.task_id).is_cancelled());
}

fn cancel_from_another_handle_fires_at_the_next_sweep(e: &dyn Engine) {
    let (l, _c) = ledger(e);
    let t = l.create(new(TaskRuntime::Subagent, "x")).unwrap();
    let (_, token) = l.start(&t.task_id).unwrap();
    // Another process (the CLI) opens the same database and cancels.
    let other = e.open(Arc::new(SystemClock));
    other.cancel(&t.task_id, None).unwrap();
    assert!(!token.is_cancelled());
    let rep = l.sweep().unwrap();
    assert_eq!(rep.cancelled_tokens, 1);
    assert!(token.is_cancelled());
}

fn finalize_by_run_id_and_provisional_cancel(e: &dyn Engine) {
    let (l, c) = ledger(e);
    let t = l.create(new(TaskRuntime::Subagent, "run-9")).unwrap();
    l.start(&t.task_id).unwrap();
    l.progress(&t.task_id, Some("half way"), Some("read"))
        .unwrap();
    l.progress(&t.task_id, None, Some("exec")).unwrap();
    c.advance(1_000);
    let finished_at = c.now_ms();
    c.advance(1_000);
    l.cancel(&t.task_id, Some("kill")).unwrap();
    // The run really finished before the kill: the outcome wins.
    let r = l
        .finalize_by_run_id(
            "run-9",
            TaskStatus::Succeeded,
            TaskOutcome {
                ended_at: Some(finished_at),
                summary: Some("done".into()),
                ..Default::default()
            },
        )
        .unwrap();
    assert_eq!(r.status, TaskStatus::Succeeded);
    assert_eq!(r.tool_use_count, Some(2));
    assert_eq!(r.last_tool_name.as_deref(), Some("exec"));
    assert_eq!(r.progress_summary.as_deref(), Some("half way"));
    assert_eq!(r.ended_at, Some(finished_at));
    // An outcome after the cancel is refused.
    let t2 = l.create(new(TaskRuntime::Subagent, "run-10")).unwrap();
    l.cancel(&t2.task_id, None).unwrap();
    c.advance(5);
    let err = l
        .finalize_by_run_id(
            "run-10",
            TaskStatus::Failed,
            TaskOutcome {
                ended_at: Some(c.now_ms()),
                ..Default::default()
            },
        )
        .unwrap_err();
    assert!(matches!(err, TaskError::IllegalTransition { .. }));
    assert!(matches!(
        l.finalize_by_run_id("no-such-run", TaskStatus::Failed, TaskOutcome::default()),
        Err(TaskError::NotFound { what: "run id", .. })
    ));
}

fn sweep_marks_stale_running_work_lost_and_retention_prunes(e: &dyn Engine) {
    let (l, c) = ledger(e);
    let stale = l.create(new(TaskRuntime::Subagent, "a")).unwrap();
    let (_, token) = l.start(&stale.task_id).unwrap();
    let fresh = l.create(new(TaskRuntime::Subagent, "b")).unwrap();
    l.start(&fresh.task_id).unwrap();
    let done = l.create(new(TaskRuntime::Acp, "c")).unwrap();
    l.finish(&done.task_id, TaskStatus::Succeeded, TaskOutcome::default())
        .unwrap();
    let cron_done = l.create(new(TaskRuntime::Cron, "d")).unwrap();
    l.finish(
        &cron_done.task_id,
        TaskStatus::Failed,
        TaskOutcome::default(),
    )
    .unwrap();

    c.advance(STALE_RUNNING_MS - 60_000);
    l.progress(&fresh.task_id, Some("alive"), None).unwrap();
    c.advance(60_000);
    let rep = l.sweep().unwrap();
    assert_eq!(rep.lost, vec![stale.task_id.clone()]);
    assert!(token.is_cancelled());
    assert_eq!(
        l.get(&fresh.task_id).unwrap().unwrap().status,
        TaskStatus::Running
    );

    // Lost: pruned after 1 day; succeeded after 7 days; cron never (unless lost).
    c.advance(LOST_RETENTION_MS);
    let rep = l.sweep().unwrap();
    assert_eq!(rep.pruned, 1);
    assert!(l.get(&stale.task_id).unwrap().is_none());
    assert!(l.get(&done.task_id).unwrap().is_some());
    // `fresh` goes lost in this sweep (no progress for a day).
    c.advance(TERMINAL_RETENTION_MS);
    l.sweep().unwrap();
    assert!(l.get(&done.task_id).unwrap().is_none());
    assert!(l.get(&cron_done.task_id).unwrap().is_some());
    assert!(
        l.get(&fresh.task_id).unwrap().is_none(),
        "lost a day ago: pruned"
    );
}

fn records_survive_reopen_and_list_filters(e: &dyn Engine) {
    let (l, _c) = ledger(e);
    for i in 0..5 {
        l.create(new(
            if i % 2 == 0 {
                TaskRuntime::Cron
            } else {
                TaskRuntime::Acp
            },
            &format!("r{i}"),
        ))
        .unwrap();
    }
    drop(l);
    let l = e.open(Arc::new(SystemClock));
    assert_eq!(l.list(&TaskFilter::default()).unwrap().len(), 5);
    let cron = l
        .list(&TaskFilter {
            runtime: Some(TaskRuntime::Cron),
            ..TaskFilter::default()
        })
        .unwrap();
    assert_eq!(cron.len(), 3);
    let limited = l
        .list(&TaskFilter {
            limit: 2,
            ..TaskFilter::default()
        })
        .unwrap();
    assert_eq!(limited.len(), 2);
    assert_eq!(
        l.get_by_run_id("r3").unwrap().unwrap().runtime,
        TaskRuntime::Acp
    );
}

fn a_corrupt_persisted_status_is_a_clear_error(e: &dyn Engine) {
    let (l, _c) = ledger(e);
    let t = l.create(new(TaskRuntime::Cli, "z")).unwrap();
    let data = serde_json::to_string(&t)
        .unwrap()
        .replace("\"queued\"", "\"zombie\"");
    e.corrupt(&t.task_id, &data);
    let err = l.get(&t.task_id).unwrap_err();
    assert_eq!(err.code(), "task.store_invalid");
    assert!(err.to_string().contains("invalid persisted task"), "{err}");
}

fn delivery_is_recorded_after_the_task_ended_and_survives_reopen(e: &dyn Engine) {
    let (l, _c) = ledger(e);
    let t = l.create(new(TaskRuntime::Subagent, "run-d")).unwrap();
    assert_eq!(t.delivery_status, DeliveryStatus::Pending);
    l.start(&t.task_id).unwrap();
    l.finish(&t.task_id, TaskStatus::Succeeded, TaskOutcome::default())
        .unwrap();
    let r = l
        .set_delivery(&t.task_id, DeliveryStatus::SessionQueued)
        .unwrap();
    assert_eq!(r.delivery_status, DeliveryStatus::SessionQueued);
    assert_eq!(r.status, TaskStatus::Succeeded);
    drop(l);
    let again = e.open(Arc::new(SystemClock));
    let r = again.get(&t.task_id).unwrap().unwrap();
    assert_eq!(r.delivery_status, DeliveryStatus::SessionQueued);
    assert!(matches!(
        again.set_delivery("nope", DeliveryStatus::Delivered),
        Err(TaskError::NotFound { .. })
    ));
}

fn a_cancel_elsewhere_is_noticed_by_polling_and_by_progress(e: &dyn Engine) {
    let (l, _c) = ledger(e);
    let other = e.open(Arc::new(SystemClock));
    assert_eq!(l.poll_cancelled().unwrap(), 0, "no work here: no query");
    let a = l.create(new(TaskRuntime::Subagent, "pa")).unwrap();
    let b = l.create(new(TaskRuntime::Subagent, "pb")).unwrap();
    let c = l.create(new(TaskRuntime::Subagent, "pc")).unwrap();
    let (_, ta) = l.start(&a.task_id).unwrap();
    let (_, tb) = l.start(&b.task_id).unwrap();
    let (_, tc) = l.start(&c.task_id).unwrap();
    // Another gateway cancels `a` and finishes `c`; this one polls.
    other.cancel(&a.task_id, Some("from elsewhere")).unwrap();
    other
        .finish(&c.task_id, TaskStatus::Succeeded, TaskOutcome::default())
        .unwrap();
    assert!(!ta.is_cancelled());
    assert_eq!(l.poll_cancelled().unwrap(), 1);
    assert!(ta.is_cancelled());
    assert!(!tb.is_cancelled());
    assert!(!tc.is_cancelled(), "a success elsewhere stops nothing");
    assert_eq!(l.poll_cancelled().unwrap(), 0, "fired once");
    // Progress on a task cancelled elsewhere is refused and fires the token.
    other.cancel(&b.task_id, None).unwrap();
    let err = l
        .progress(&b.task_id, Some("still going"), None)
        .unwrap_err();
    assert_eq!(err.code(), "task.illegal_transition");
    assert!(tb.is_cancelled());
}

fn racing_ledgers_leave_exactly_one_terminal_status(e: &dyn Engine) {
    let ledgers = [e.open(Arc::new(SystemClock)), e.open(Arc::new(SystemClock))];
    for round in 0..10 {
        let t = ledgers[0]
            .create(new(TaskRuntime::Subagent, &format!("race-{round}")))
            .unwrap();
        ledgers[1].start(&t.task_id).unwrap();
        let barrier = Arc::new(std::sync::Barrier::new(4));
        let wins: Vec<Option<TaskStatus>> = std::thread::scope(|s| {
            let attempts = [
                TaskStatus::Cancelled,
                TaskStatus::Failed,
                TaskStatus::TimedOut,
                TaskStatus::Lost,
            ];
            let handles: Vec<_> = attempts
                .iter()
                .enumerate()
                .map(|(i, &to)| {
                    let l = &ledgers[i % 2];
                    let id = t.task_id.clone();
                    let barrier = Arc::clone(&barrier);
                    s.spawn(move || {
                        barrier.wait();
                        let got = if to == TaskStatus::Cancelled {
                            l.cancel(&id, Some("race"))
                        } else {
                            l.finish(&id, to, TaskOutcome::default())
                        };
                        match got {
                            Ok(r) => Some(r.status),
                            Err(TaskError::IllegalTransition { .. }) => None,
                            Err(other) => panic!("{to}: {other}"),
                        }
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        let winners: Vec<TaskStatus> = wins.into_iter().flatten().collect();
        assert_eq!(winners.len(), 1, "round {round}: {winners:?}");
        for l in &ledgers {
            assert_eq!(l.get(&t.task_id).unwrap().unwrap().status, winners[0]);
        }
    }
}

fn the_member_that_runs_a_task_is_recorded(e: &dyn Engine) {
    let a = e.open(Arc::new(SystemClock)).with_member("gw-a");
    let b = e.open(Arc::new(SystemClock)).with_member("gw-b");
    assert_eq!(a.clone().member(), Some("gw-a"));
    let queued = a.create(new(TaskRuntime::Subagent, "m1")).unwrap();
    assert_eq!(queued.member_id, None, "nobody runs a queued task");
    let (started, _) = b.start(&queued.task_id).unwrap();
    assert_eq!(started.member_id.as_deref(), Some("gw-b"));
    let mut running = new(TaskRuntime::Cron, "m2");
    running.start_running = true;
    let r = a.create(running).unwrap();
    assert_eq!(r.member_id.as_deref(), Some("gw-a"));
    // Seen through the other member, and in the wire form.
    let seen = b.get(&r.task_id).unwrap().unwrap();
    assert_eq!(seen.member_id.as_deref(), Some("gw-a"));
    assert_eq!(serde_json::to_value(&seen).unwrap()["memberId"], "gw-a");
    let plain = e.open(Arc::new(SystemClock));
    let t = plain.create(new(TaskRuntime::Cli, "m3")).unwrap();
    let (t, _) = plain.start(&t.task_id).unwrap();
    assert_eq!(t.member_id, None);
    assert!(serde_json::to_value(&t).unwrap().get("memberId").is_none());
}

/// An engine whose row always changes between the read and the write
/// (a writer that never lets go): the ledger gives up, typed.
#[derive(Debug)]
struct EverChanging(SqliteLedger);

impl LedgerBackend for EverChanging {
    fn location(&self) -> String {
        self.0.location()
    }
    fn insert(&self, record: &TaskRecord) -> Result<()> {
        self.0.insert(record)
    }
    fn load(&self, lookup: Lookup<'_>) -> Result<Option<StoredTask>> {
        self.0.load(lookup)
    }
    fn list(&self, filter: &TaskFilter) -> Result<Vec<TaskRecord>> {
        self.0.list(filter)
    }
    fn replace(&self, _read: &StoredTask, _record: &TaskRecord) -> Result<bool> {
        Ok(false)
    }
    fn finished(&self) -> Result<Vec<TaskRecord>> {
        self.0.finished()
    }
    fn delete_finished(&self, task_ids: &[String]) -> Result<usize> {
        self.0.delete_finished(task_ids)
    }
    fn statuses(&self, task_ids: &[String]) -> Result<Vec<(String, TaskStatus)>> {
        self.0.statuses(task_ids)
    }
}

#[test]
fn a_task_that_never_stops_changing_is_refused_as_contended() {
    let dir = tempfile::tempdir().unwrap();
    let backend = SqliteLedger::open(&dir.path().join("talon.db")).unwrap();
    let l = TaskLedger::with_backend(Box::new(EverChanging(backend)), Arc::new(SystemClock));
    assert_eq!(l.path(), None);
    let t = l.create(new(TaskRuntime::Cli, "busy")).unwrap();
    let err = l
        .finish(&t.task_id, TaskStatus::Failed, TaskOutcome::default())
        .unwrap_err();
    assert_eq!(err.code(), "task.contended");
    assert!(matches!(err, TaskError::Contended { ref id } if *id == t.task_id));
    assert_eq!(
        l.get(&t.task_id).unwrap().unwrap().status,
        TaskStatus::Queued,
        "nothing was written"
    );
}

fn work_running_here_stops_when_another_gateway_cancels_it(e: &dyn Engine) {
    let here = e.open(Arc::new(SystemClock)).with_member("gw-here");
    let there = e.open(Arc::new(SystemClock)).with_member("gw-there");
    let t = here
        .create(new(TaskRuntime::Subagent, "fleet-cancel"))
        .unwrap();
    let (_, token) = here.start(&t.task_id).unwrap();
    let id = t.task_id.clone();
    let outcome = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap()
        .block_on(async move {
            let work = tokio::spawn(async move {
                tokio::select! {
                    _ = token.cancelled() => "stopped",
                    _ = tokio::time::sleep(Duration::from_secs(30)) => "ran to the end",
                }
            });
            // This gateway's poller, as the embedder runs it.
            let poller = {
                let here = here.clone();
                tokio::spawn(async move {
                    loop {
                        tokio::time::sleep(Duration::from_millis(50)).await;
                        let here = here.clone();
                        let fired = tokio::task::spawn_blocking(move || here.poll_cancelled())
                            .await
                            .unwrap()
                            .unwrap();
                        if fired > 0 {
                            return fired;
                        }
                    }
                })
            };
            // `tasks.cancel` served by the other gateway.
            let cancelled =
                tokio::task::spawn_blocking(move || there.cancel(&id, Some("elsewhere")))
                    .await
                    .unwrap()
                    .unwrap();
            assert_eq!(cancelled.status, TaskStatus::Cancelled);
            assert_eq!(poller.await.unwrap(), 1);
            tokio::time::timeout(Duration::from_secs(5), work)
                .await
                .unwrap()
                .unwrap()
        });
    assert_eq!(outcome, "stopped");
}
