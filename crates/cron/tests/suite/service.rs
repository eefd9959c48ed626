use std::sync::Arc;

use pretty_assertions::assert_eq;
use talon_cron::*;
use talon_tool_policy::config::ToolsConfig;
use talon_tool_policy::{PolicyConfig, PolicyEngine, RunContext, ToolUniverse, Trigger};

use super::common::*;

#[tokio::test(start_paused = true)]
async fn stuck_job_refires_no_faster_than_the_min_gap() {
    let dir = tempfile::tempdir().unwrap();
    let runner = Scripted::new([Step::Hang]);
    let svc = service(dir.path(), runner.clone(), Arc::new(TokioClock::new(T0)));
    svc.start().unwrap();
    svc.add(agent_turn("stuck", every(1_000)), &operator())
        .unwrap();
    sleep_s(20).await;
    let stats = svc.stats();
    assert_eq!(runner.calls().len(), 1, "one run in flight, not restarted");
    // The job's next run is in the past while it hangs: without the gap
    // the timer would spin; with it, at most one fire per 2 s.
    assert!(stats.fires <= 11, "fires: {}", stats.fires);
    assert!(
        stats.fires >= 8,
        "the timer keeps checking: {}",
        stats.fires
    );
    assert_eq!(stats.last_delay_ms, Some(MIN_REFIRE_GAP_MS));
    svc.stop();
}

#[tokio::test(start_paused = true)]
async fn timer_wakes_at_least_every_minute() {
    let dir = tempfile::tempdir().unwrap();
    let runner = Scripted::new([]);
    let svc = service(dir.path(), runner.clone(), Arc::new(TokioClock::new(T0)));
    svc.start().unwrap();
    svc.add(agent_turn("daily", every(86_400_000)), &operator())
        .unwrap();
    assert_eq!(svc.stats().last_delay_ms, Some(MAX_TIMER_DELAY_MS));
    sleep_s(5 * 60 + 1).await;
    let stats = svc.stats();
    assert_eq!(stats.fires, 5, "one wake per minute, nothing due");
    assert!(runner.calls().is_empty());
    // With no jobs at all it still wakes each minute.
    let empty = tempfile::tempdir().unwrap();
    let idle = service(
        empty.path(),
        Scripted::new([]),
        Arc::new(TokioClock::new(T0)),
    );
    idle.start().unwrap();
    sleep_s(121).await;
    assert_eq!(idle.stats().fires, 2);
    svc.stop();
    idle.stop();
}

#[tokio::test(start_paused = true)]
async fn a_forward_clock_jump_is_noticed_within_a_minute() {
    let dir = tempfile::tempdir().unwrap();
    let runner = Scripted::new([]);
    let clock = JumpClock::new(T0);
    let svc = service(dir.path(), runner.clone(), Arc::new(clock.clone()));
    svc.start().unwrap();
    let job = svc
        .add(agent_turn("in-an-hour", every(3_600_000)), &operator())
        .unwrap()
        .job;
    sleep_s(10).await;
    assert!(runner.calls().is_empty());
    // Suspend/resume: the wall clock leaps two hours while the timer sleeps.
    clock.jump(2 * 3_600_000);
    sleep_s(61).await;
    assert_eq!(runner.calls().len(), 1, "ran after the jump, once");
    let after = svc.get(&job.id).unwrap().unwrap();
    assert!(after.state.next_run_at_ms.unwrap() > clock.now_ms());
    svc.stop();
}

#[tokio::test(start_paused = true)]
async fn due_jobs_run_as_isolated_cron_runs() {
    let dir = tempfile::tempdir().unwrap();
    let runner = Scripted::new([]);
    let svc = service(dir.path(), runner.clone(), Arc::new(TokioClock::new(T0)));
    svc.start().unwrap();
    let creator = Creator {
        agent_id: "ops".into(),
        session_key: Some("agent:ops:telegram:direct:4242".into()),
        tools: Some(vec!["read".into(), "web_fetch".into(), "cron".into()]),
    };
    let job = svc
        .add(agent_turn("poll", every(10_000)), &creator)
        .unwrap()
        .job;
    // Re-armed by the add: the first run is 10 s later.
    sleep_s(35).await;
    let calls = runner.calls();
    assert_eq!(calls.len(), 3);
    let keys: std::collections::HashSet<_> = calls.iter().map(|c| c.session_key.clone()).collect();
    assert_eq!(keys.len(), 3, "a fresh session per run");
    for c in &calls {
        assert_eq!(c.job_id, job.id);
        assert_eq!(c.trigger(), Trigger::Cron);
        assert!(
            c.session_key
                .starts_with(&format!("agent:ops:cron:{}:run:", job.id))
        );
        let ctx = c.run_context();
        assert_eq!(ctx.trigger, Trigger::Cron);
        assert_eq!(
            ctx.inherited.as_deref(),
            Some(&creator.tools.clone().unwrap()[..])
        );
        // Delivery inferred from the creating session.
        let d = c.delivery.clone().unwrap();
        assert_eq!(
            (d.channel.as_deref(), d.to.as_deref()),
            (Some("telegram"), Some("4242"))
        );
    }
    let runs = svc.runs(&job.id, 0).unwrap();
    assert_eq!(runs.len(), 3);
    assert!(runs.iter().all(|r| r.status == RunStatus::Ok));
    svc.stop();
}

#[tokio::test(start_paused = true)]
async fn failures_back_off_and_success_resets() {
    let dir = tempfile::tempdir().unwrap();
    let runner = Scripted::new([
        Step::Fail("model exploded"),
        Step::Fail("model exploded"),
        Step::Ok,
    ]);
    let clock = TokioClock::new(T0);
    let svc = service(dir.path(), runner.clone(), Arc::new(clock.clone()));
    svc.start().unwrap();
    let job = svc
        .add(agent_turn("flaky", every(10_000)), &operator())
        .unwrap()
        .job;
    sleep_s(11).await;
    let j = svc.get(&job.id).unwrap().unwrap();
    assert_eq!(j.state.consecutive_errors, 1);
    assert_eq!(j.state.last_status, Some(RunStatus::Error));
    let ran_at = j.state.last_run_at_ms.unwrap();
    assert_eq!(
        j.state.next_run_at_ms,
        Some(ran_at + 30_000),
        "natural slot (10 s) < 30 s backoff"
    );
    sleep_s(30).await;
    let j = svc.get(&job.id).unwrap().unwrap();
    assert_eq!(j.state.consecutive_errors, 2);
    assert_eq!(
        j.state.next_run_at_ms,
        Some(j.state.last_run_at_ms.unwrap() + 60_000)
    );
    sleep_s(60).await;
    let j = svc.get(&job.id).unwrap().unwrap();
    assert_eq!(j.state.consecutive_errors, 0);
    assert_eq!(j.state.last_status, Some(RunStatus::Ok));
    assert_eq!(runner.calls().len(), 3);
    svc.stop();
}

#[tokio::test(start_paused = true)]
async fn one_shot_jobs_are_deleted_or_disabled_after_running() {
    let dir = tempfile::tempdir().unwrap();
    let runner = Scripted::new([
        Step::Ok,
        Step::Ok,
        Step::Fail("rate limit exceeded (429)"),
        Step::Fail("invalid prompt"),
    ]);
    let clock = TokioClock::new(T0);
    let svc = service(dir.path(), runner.clone(), Arc::new(clock.clone()));
    svc.start().unwrap();
    let at = |s: i64| Schedule::At {
        at: format_utc(T0 + s * 1000),
    };
    let deleted = svc.add(agent_turn("once", at(5)), &operator()).unwrap().job;
    assert!(deleted.delete_after_run, "one-shot default");
    let mut keep = agent_turn("keep", at(10));
    keep.delete_after_run = Some(false);
    let kept = svc.add(keep, &operator()).unwrap().job;
    sleep_s(15).await;
    assert!(svc.get(&deleted.id).unwrap().is_none());
    let k = svc.get(&kept.id).unwrap().unwrap();
    assert!(!k.enabled);
    assert_eq!(k.state.next_run_at_ms, None);
    assert_eq!(k.state.last_status, Some(RunStatus::Ok));
    // Transient error: retried after the backoff; permanent: disabled, kept.
    let retried = svc
        .add(agent_turn("retry", at(20)), &operator())
        .unwrap()
        .job;
    sleep_s(6 + 1).await;
    let r = svc.get(&retried.id).unwrap().unwrap();
    assert!(r.enabled);
    assert_eq!(r.state.consecutive_errors, 1);
    assert_eq!(
        r.state.next_run_at_ms,
        Some(r.state.last_run_at_ms.unwrap() + 30_000)
    );
    sleep_s(31).await;
    let r = svc.get(&retried.id).unwrap().unwrap();
    assert!(!r.enabled, "a permanent error disables");
    assert_eq!(r.state.last_error.as_deref(), Some("invalid prompt"));
    assert_eq!(svc.runs(&retried.id, 0).unwrap().len(), 2);
    svc.stop();
}

#[tokio::test(start_paused = true)]
async fn system_events_go_to_the_main_session_and_runs_enter_the_ledger() {
    let dir = tempfile::tempdir().unwrap();
    let runner = Scripted::new([]);
    let clock = Arc::new(TokioClock::new(T0));
    let ledger =
        talon_tasks::TaskLedger::open_with_clock(&dir.path().join("talon.db"), clock.clone())
            .unwrap();
    let opts = CronOptions {
        clock,
        ledger: Some(ledger.clone()),
        quotas: CronQuotas::unlimited(),
        ..CronOptions::default()
    };
    let svc = CronService::open(&dir.path().join("talon.db"), runner.clone(), opts).unwrap();
    svc.start().unwrap();
    let mut spec = agent_turn("remind", every(5_000));
    spec.payload = Some(Payload::SystemEvent {
        text: "stand up".into(),
    });
    let job = svc.add(spec, &operator()).unwrap().job;
    sleep_s(6).await;
    let events = runner.events.lock().unwrap().clone();
    assert_eq!(events.len(), 1);
    assert_eq!(events[0].text, "stand up");
    assert_eq!(events[0].job_id.as_deref(), Some(job.id.as_str()));
    let tasks = ledger.list(&talon_tasks::TaskFilter::default()).unwrap();
    assert_eq!(tasks.len(), 1);
    assert_eq!(tasks[0].runtime, talon_tasks::TaskRuntime::Cron);
    assert_eq!(tasks[0].status, talon_tasks::TaskStatus::Succeeded);
    assert_eq!(tasks[0].source_id.as_deref(), Some(job.id.as_str()));
    svc.stop();
}

fn narrow_engine() -> PolicyEngine {
    PolicyEngine::new(&PolicyConfig {
        tools: ToolsConfig {
            allow: Some(vec!["read".into(), "cron".into(), "session_status".into()]),
            ..ToolsConfig::default()
        },
        ..PolicyConfig::default()
    })
    .unwrap()
}

#[tokio::test(start_paused = true)]
async fn creator_cap_holds_even_after_the_config_widens() {
    let dir = tempfile::tempdir().unwrap();
    let runner = Scripted::new([]);
    let svc = service(dir.path(), runner.clone(), Arc::new(TokioClock::new(T0)));
    svc.start().unwrap();
    // The creating run was restricted.
    let creating = narrow_engine().evaluate(&RunContext::new("main"), &ToolUniverse::core());
    assert!(!creating.allows("exec"));
    let creator = Creator {
        agent_id: "main".into(),
        session_key: Some("agent:main:main".into()),
        tools: Some(creating.tools.clone()),
    };
    let mut spec = agent_turn("sneaky", every(10_000));
    spec.tools_allow = Some(vec!["exec".into(), "read".into(), "group:runtime".into()]);
    let change = svc.add(spec, &creator).unwrap();
    assert_eq!(change.job.tools_allow, Some(vec!["read".to_string()]));
    assert!(change.dropped_tools.contains(&"exec".to_string()));
    // No request → exactly the creator's tools; "*" likewise.
    let all = svc
        .add(agent_turn("all", every(10_000)), &creator)
        .unwrap()
        .job;
    assert_eq!(all.tools_allow.as_ref(), Some(&creating.tools));
    assert!(all.tools_allow_is_default);
    // An update cannot widen it either.
    let patched = svc
        .update(
            &change.job.id,
            JobPatch {
                tools_allow: Some(vec!["*".into(), "exec".into()]),
                ..JobPatch::default()
            },
            &creator,
        )
        .unwrap();
    assert!(
        !patched
            .job
            .tools_allow
            .as_ref()
            .unwrap()
            .contains(&"exec".to_string())
    );

    // Both are due at 10 s; one run at a time, the second 2 s later.
    sleep_s(13).await;
    // Later the operator widens the agent's config to everything.
    let wide = PolicyEngine::new(&PolicyConfig::default()).unwrap();
    for call in runner.calls() {
        let outcome = wide.evaluate(&call.run_context(), &ToolUniverse::core());
        assert!(!outcome.allows("exec"), "{}: exec leaked", call.job_name);
        for t in &outcome.tools {
            assert!(creating.tools.contains(t), "{t} is wider than the creator");
        }
        // Sanity: the wide config on its own would allow exec.
        assert!(
            wide.evaluate(&RunContext::new("main"), &ToolUniverse::core())
                .allows("exec")
        );
    }
    assert_eq!(runner.calls().len(), 2);
    svc.stop();
}

#[tokio::test(start_paused = true)]
async fn run_now_respects_due_and_force_and_remove_cancels() {
    let dir = tempfile::tempdir().unwrap();
    let runner = Scripted::new([Step::Ok, Step::Hang]);
    let svc = service(dir.path(), runner.clone(), Arc::new(TokioClock::new(T0)));
    svc.start().unwrap();
    let job = svc
        .add(agent_turn("later", every(3_600_000)), &operator())
        .unwrap()
        .job;
    let r = svc.run_now(&job.id, false).unwrap();
    assert_eq!((r.ran, r.reason.as_str()), (false, "not-due"));
    let r = svc.run_now(&job.id, true).unwrap();
    assert!(r.ran);
    sleep_s(1).await;
    assert_eq!(runner.calls().len(), 1);
    assert!(matches!(
        svc.run_now("nope", true),
        Err(CronError::NotFound(_))
    ));
    // A hanging run is cancelled when its job is removed.
    svc.run_now(&job.id, true).unwrap();
    sleep_s(1).await;
    assert_eq!(svc.status().unwrap().running, vec![job.id.clone()]);
    assert!(svc.remove(&job.id).unwrap());
    sleep_s(1).await;
    assert!(svc.status().unwrap().running.is_empty());
    assert!(runner.calls()[1].cancel.is_cancelled());
    svc.stop();
}

#[tokio::test(start_paused = true)]
async fn cancelling_the_runs_task_stops_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let runner = Scripted::new([Step::Hang]);
    let clock = Arc::new(TokioClock::new(T0));
    let ledger =
        talon_tasks::TaskLedger::open_with_clock(&dir.path().join("talon.db"), clock.clone())
            .unwrap();
    let opts = CronOptions {
        clock,
        ledger: Some(ledger.clone()),
        ..CronOptions::default()
    };
    let svc = CronService::open(&dir.path().join("talon.db"), runner.clone(), opts).unwrap();
    svc.start().unwrap();
    let job = svc
        .add(agent_turn("long", every(3_600_000)), &operator())
        .unwrap()
        .job;
    svc.run_now(&job.id, true).unwrap();
    sleep_s(1).await;
    let task = ledger
        .list(&talon_tasks::TaskFilter::default())
        .unwrap()
        .remove(0);
    assert_eq!(task.status, talon_tasks::TaskStatus::Running);
    ledger.cancel(&task.task_id, Some("operator")).unwrap();
    sleep_s(1).await;
    assert!(
        runner.calls()[0].cancel.is_cancelled(),
        "the runner saw the cancellation"
    );
    assert!(svc.status().unwrap().running.is_empty());
    let runs = svc.runs(&job.id, 0).unwrap();
    assert_eq!(runs[0].status, RunStatus::Error);
    assert_eq!(
        ledger.get(&task.task_id).unwrap().unwrap().status,
        talon_tasks::TaskStatus::Cancelled
    );
    svc.stop();
}

/// An every-10 s job keeps its interval when the wall clock steps back an
/// hour (it used to stall for the size of the step).
#[tokio::test(start_paused = true)]
async fn an_interval_survives_the_wall_clock_stepping_back() {
    let dir = tempfile::tempdir().unwrap();
    let clock = SteppedClock::new(T0);
    let runner = Scripted::new([]);
    let svc = service(dir.path(), runner.clone(), Arc::new(clock.clone()));
    svc.start().unwrap();
    svc.add(agent_turn("tick", every(10_000)), &operator())
        .unwrap();
    sleep_s(31).await;
    let before = runner.calls().len();
    assert!(before >= 3, "{before}");
    clock.step(-3_600_000);
    // Within two minutes of monotonic time the job has run on: the first
    // timer after the step notices it, then every 10 s.
    sleep_s(120).await;
    let after = runner.calls().len() - before;
    assert!(after >= 8, "ran {after} times in 120 s after the step");
    let job = &svc.list(false).unwrap()[0];
    let next = job.state.next_run_at_ms.unwrap();
    assert!(
        next <= clock.now_ms() + 10_000,
        "next run {} ms away",
        next - clock.now_ms()
    );
    svc.stop();
}
