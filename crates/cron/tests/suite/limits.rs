//! What the service promises about a job's limits: the per-creator and
//! per-agent quotas, the minimum interval, and the run's time budget.

use std::sync::Arc;

use pretty_assertions::assert_eq;
use talon_cron::*;

use super::common::*;

fn quota_service(dir: &std::path::Path, runner: Arc<Scripted>, quotas: CronQuotas) -> CronService {
    let opts = CronOptions {
        clock: Arc::new(TokioClock::new(T0)),
        quotas,
        ..CronOptions::default()
    };
    CronService::open(&dir.join("talon.db"), runner, opts).unwrap()
}

fn session(key: &str) -> Creator {
    Creator {
        agent_id: "main".into(),
        session_key: Some(key.into()),
        tools: Some(vec!["read".into()]),
    }
}

fn cron_expr(expr: &str) -> Schedule {
    Schedule::Cron {
        expr: expr.into(),
        tz: Some("UTC".into()),
        stagger_ms: Some(0),
    }
}

/// The N+1th job of one creating session is refused with the limit and
/// its config key; another session still has its own allowance, and
/// removing a job makes room again.
#[tokio::test]
async fn the_creator_quota_refuses_the_job_past_the_limit() {
    let dir = tempfile::tempdir().unwrap();
    let quotas = CronQuotas {
        max_jobs_per_creator: 3,
        ..CronQuotas::default()
    };
    let svc = quota_service(dir.path(), Scripted::new([]), quotas);
    let a = session("agent:main:gw:a");
    let mut ids = Vec::new();
    for i in 0..3 {
        ids.push(
            svc.add(agent_turn(&format!("j{i}"), every(3_600_000)), &a)
                .unwrap()
                .job
                .id,
        );
    }
    let err = svc.add(agent_turn("j3", every(3_600_000)), &a).unwrap_err();
    match &err {
        CronError::Quota {
            limit,
            config_key,
            max,
            ..
        } => {
            assert_eq!(*limit, QuotaLimit::JobsPerCreator);
            assert_eq!(*config_key, "cron.quotas.maxJobsPerCreator");
            assert_eq!(*max, 3);
        }
        other => panic!("expected a quota error, got {other:?}"),
    }
    let text = err.to_string();
    assert!(text.contains("agent:main:gw:a"), "{text}");
    assert!(text.contains("cron.quotas.maxJobsPerCreator"), "{text}");
    assert_eq!(svc.list(true).unwrap().len(), 3, "nothing was stored");
    // Another session has its own allowance.
    svc.add(
        agent_turn("other", every(3_600_000)),
        &session("agent:main:gw:b"),
    )
    .unwrap();
    // Removing one makes room.
    assert!(svc.remove(&ids[0]).unwrap());
    svc.add(agent_turn("again", every(3_600_000)), &a).unwrap();
}

/// The agent quota counts every creator's jobs, operator jobs included.
#[tokio::test]
async fn the_agent_quota_counts_every_creator() {
    let dir = tempfile::tempdir().unwrap();
    let quotas = CronQuotas {
        max_jobs_per_agent: 2,
        ..CronQuotas::default()
    };
    let svc = quota_service(dir.path(), Scripted::new([]), quotas);
    svc.add(
        agent_turn("a", every(3_600_000)),
        &session("agent:main:gw:a"),
    )
    .unwrap();
    let cli = Creator {
        agent_id: "main".into(),
        session_key: None,
        tools: None,
    };
    svc.add(agent_turn("b", every(3_600_000)), &cli).unwrap();
    let err = svc
        .add(
            agent_turn("c", every(3_600_000)),
            &session("agent:main:gw:c"),
        )
        .unwrap_err();
    assert!(
        matches!(
            err,
            CronError::Quota {
                limit: QuotaLimit::JobsPerAgent,
                config_key: "cron.quotas.maxJobsPerAgent",
                max: 2,
                ..
            }
        ),
        "{err:?}"
    );
}

/// Ten thousand jobs from one session are no longer accepted: with the
/// defaults the 101st is refused.
#[tokio::test]
async fn the_default_quota_stops_a_flood_from_one_session() {
    let dir = tempfile::tempdir().unwrap();
    let svc = quota_service(dir.path(), Scripted::new([]), CronQuotas::default());
    let a = session("agent:main:gw:flood");
    let mut accepted = 0;
    let mut refused = 0;
    for i in 0..10_000 {
        match svc.add(agent_turn(&format!("f{i}"), every(3_600_000)), &a) {
            Ok(_) => accepted += 1,
            Err(CronError::Quota { .. }) => {
                refused += 1;
                if refused == 50 {
                    break;
                }
            }
            Err(e) => panic!("{e}"),
        }
    }
    assert_eq!(accepted, DEFAULT_MAX_JOBS_PER_CREATOR);
    assert_eq!(svc.list(true).unwrap().len(), 100);
}

/// A recurring schedule that runs more often than the minimum interval is
/// refused, on add and on update, for `every` and for `cron` expressions
/// (including a 6-field one with seconds and one whose short gap is only
/// between some of its fire times); an `at` job is not recurring.
#[tokio::test]
async fn a_too_short_interval_is_refused_on_add_and_update() {
    let dir = tempfile::tempdir().unwrap();
    let svc = quota_service(dir.path(), Scripted::new([]), CronQuotas::default());
    let a = session("agent:main:gw:a");
    for (schedule, field) in [
        (every(10_000), "job.schedule.everyMs"),
        (every(59_999), "job.schedule.everyMs"),
        (cron_expr("*/5 * * * * *"), "job.schedule.expr"),
        (cron_expr("0,30 * * * * *"), "job.schedule.expr"),
        (cron_expr("0,30 0 9 * * *"), "job.schedule.expr"),
    ] {
        let err = svc
            .add(agent_turn("fast", schedule.clone()), &a)
            .unwrap_err();
        let CronError::Quota {
            limit,
            config_key,
            max,
            message,
        } = &err
        else {
            panic!("{schedule:?}: expected a quota error, got {err:?}");
        };
        assert_eq!(*limit, QuotaLimit::MinInterval);
        assert_eq!(*config_key, "cron.quotas.minIntervalSeconds");
        assert_eq!(*max, 60);
        assert!(message.starts_with(field), "{schedule:?}: {message}");
    }
    assert!(svc.list(true).unwrap().is_empty(), "nothing was stored");
    // At the limit and above it, and one-shot jobs, are fine.
    let ok = svc
        .add(agent_turn("minute", every(60_000)), &a)
        .unwrap()
        .job;
    svc.add(agent_turn("cron", cron_expr("* * * * *")), &a)
        .unwrap();
    svc.add(
        agent_turn(
            "once",
            Schedule::At {
                at: "2026-06-01T00:00:00Z".into(),
            },
        ),
        &a,
    )
    .unwrap();
    // An update to a faster schedule is refused and changes nothing.
    let patch = JobPatch {
        schedule: Some(every(1_000)),
        ..JobPatch::default()
    };
    let err = svc.update(&ok.id, patch, &a).unwrap_err();
    assert!(
        matches!(
            err,
            CronError::Quota {
                limit: QuotaLimit::MinInterval,
                ..
            }
        ),
        "{err:?}"
    );
    assert_eq!(svc.get(&ok.id).unwrap().unwrap().schedule, ok.schedule);
}

/// A run past its time budget is cancelled (the runner's token fires) and
/// recorded `timeout`, in the run history and the job's state.
#[tokio::test(start_paused = true)]
async fn a_run_past_its_timeout_is_cancelled_and_recorded_timeout() {
    let dir = tempfile::tempdir().unwrap();
    let runner = Scripted::new([Step::Hang]);
    let svc = service(dir.path(), runner.clone(), Arc::new(TokioClock::new(T0)));
    svc.start().unwrap();
    let mut spec = agent_turn("slow", every(3_600_000));
    spec.payload = Some(Payload::AgentTurn {
        message: "take your time".into(),
        model: None,
        thinking: None,
        timeout_seconds: Some(5.0),
    });
    let job = svc.add(spec, &operator()).unwrap().job;
    svc.run_now(&job.id, true).unwrap();
    sleep_s(4).await;
    assert_eq!(svc.status().unwrap().running, vec![job.id.clone()]);
    let run = runner.calls().remove(0);
    assert!(!run.cancel.is_cancelled());
    assert_eq!(run.timeout, std::time::Duration::from_secs(5));
    sleep_s(2).await;
    assert!(run.cancel.is_cancelled(), "the runner was told to stop");
    assert!(tokio::time::Instant::now() >= run.deadline);
    assert!(svc.status().unwrap().running.is_empty());
    let runs = svc.runs(&job.id, 0).unwrap();
    assert_eq!(runs[0].status, RunStatus::Timeout);
    assert!(
        runs[0]
            .error
            .as_deref()
            .unwrap_or("")
            .contains("timed out after 5 s"),
        "{:?}",
        runs[0].error
    );
    let j = svc.get(&job.id).unwrap().unwrap();
    assert_eq!(j.state.last_status, Some(RunStatus::Timeout));
    svc.stop();
}
