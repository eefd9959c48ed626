//! The job store's contract, run on every engine: each test is written
//! once against a [`CronStore`] and `store_tests!` runs it on SQLite and
//! (feature `postgres`) on a real PostgreSQL server.

use pretty_assertions::assert_eq;
use talon_cron::*;

use super::common::*;
use super::engines::Engine;

fn job(id: &str, agent: &str, next: Option<i64>) -> CronJob {
    let (mut job, _) = build_job(
        id.to_owned(),
        agent_turn(id, every(60_000)),
        &Creator {
            agent_id: agent.to_owned(),
            session_key: Some(format!("agent:{agent}:main")),
            tools: None,
        },
        T0,
    )
    .unwrap();
    job.state.next_run_at_ms = next;
    job
}

fn run(id: &str, job_id: &str, slot: Option<i64>, at: i64) -> RunRecord {
    RunRecord {
        run_id: id.to_owned(),
        job_id: job_id.to_owned(),
        session_key: Some(format!("agent:main:cron:{job_id}:run:{id}")),
        reason: if slot.is_some() {
            "scheduled"
        } else {
            "manual"
        }
        .to_owned(),
        started_at_ms: at,
        ended_at_ms: None,
        status: RunStatus::Running,
        error: None,
        summary: None,
        slot_ms: slot,
    }
}

fn ids(jobs: &[CronJob]) -> Vec<&str> {
    jobs.iter().map(|j| j.id.as_str()).collect()
}

fn claimed(mut j: CronJob, at: i64) -> CronJob {
    j.state.running_at_ms = Some(at);
    j.state.last_run_at_ms = Some(at);
    j
}

pub(crate) fn jobs_round_trip_and_list_in_next_run_order(e: &mut Engine) {
    let s = &mut e.store;
    let mut off = job("off", "main", Some(T0 + 1));
    off.enabled = false;
    s.put_many(&[
        job("c", "main", Some(T0 + 300)),
        job("idle", "main", None),
        job("a", "main", Some(T0 + 100)),
        job("b", "main", Some(T0 + 100)),
        off.clone(),
    ])
    .unwrap();
    assert_eq!(
        s.get("a").unwrap().unwrap(),
        job("a", "main", Some(T0 + 100))
    );
    assert_eq!(s.get("off").unwrap().unwrap(), off);
    assert_eq!(s.get("nope").unwrap(), None);
    assert_eq!(ids(&s.list(false).unwrap()), ["a", "b", "c", "idle"]);
    assert_eq!(
        ids(&s.list(true).unwrap()),
        ["off", "a", "b", "c", "idle"],
        "next run first (ties by id), jobs with none last"
    );
    // Replacing keeps one row and moves it.
    s.put(&job("a", "main", Some(T0 + 500))).unwrap();
    assert_eq!(ids(&s.list(false).unwrap()), ["b", "c", "a", "idle"]);
    assert_eq!(s.counts().unwrap(), (5, 4, 1));
}

pub(crate) fn delete_keeps_the_history(e: &mut Engine) {
    let s = &mut e.store;
    let j = job("gone", "main", Some(T0));
    s.put(&j).unwrap();
    assert!(
        s.begin_run(&claimed(j.clone(), T0), &run("r1", "gone", Some(T0), T0))
            .unwrap()
    );
    assert!(s.delete("gone").unwrap());
    assert!(!s.delete("gone").unwrap(), "a second delete finds nothing");
    assert_eq!(s.get("gone").unwrap(), None);
    assert_eq!(s.runs("gone", 0).unwrap().len(), 1);
}

pub(crate) fn due_selects_enabled_idle_jobs_earliest_first(e: &mut Engine) {
    let s = &mut e.store;
    let mut off = job("off", "main", Some(T0 - 50));
    off.enabled = false;
    let busy = job("busy", "main", Some(T0 - 40));
    s.put_many(&[
        job("late", "main", Some(T0 + 1)),
        job("now", "main", Some(T0)),
        job("early", "main", Some(T0 - 30)),
        job("none", "main", None),
        off,
        busy.clone(),
    ])
    .unwrap();
    assert!(
        s.begin_run(
            &claimed(busy, T0 - 40),
            &run("rb", "busy", Some(T0 - 40), T0)
        )
        .unwrap()
    );
    assert_eq!(ids(&s.due(T0, 10).unwrap()), ["early", "now"]);
    assert_eq!(ids(&s.due(T0, 1).unwrap()), ["early"]);
    assert_eq!(ids(&s.due(T0 - 31, 10).unwrap()), Vec::<&str>::new());
    // The next wake counts the running job (so a stuck one keeps the timer
    // at the minimum gap), never a disabled one.
    assert_eq!(s.next_wake().unwrap(), Some(T0 - 40));
    assert_eq!(s.running().unwrap().len(), 1);
}

pub(crate) fn counts_per_agent_and_creator(e: &mut Engine) {
    let s = &mut e.store;
    s.put_many(&[
        job("a1", "alpha", None),
        job("a2", "alpha", None),
        job("b1", "beta", None),
    ])
    .unwrap();
    assert_eq!(s.count_for_agent("alpha").unwrap(), 2);
    assert_eq!(s.count_for_agent("gamma").unwrap(), 0);
    assert_eq!(s.count_for_creator("agent:alpha:main").unwrap(), 2);
    assert_eq!(s.count_for_creator("agent:beta:main").unwrap(), 1);
    assert_eq!(s.count_for_creator("agent:gamma:main").unwrap(), 0);
    assert_eq!(s.counts().unwrap(), (3, 3, 3));
}

pub(crate) fn a_job_runs_once_at_a_time_and_its_outcome_is_recorded(e: &mut Engine) {
    let s = &mut e.store;
    let j = job("j", "main", Some(T0));
    s.put(&j).unwrap();
    let first = run("r1", "j", Some(T0), T0);
    assert!(s.begin_run(&claimed(j.clone(), T0), &first).unwrap());
    assert_eq!(
        s.begin_fenced_run(&claimed(j.clone(), T0), &run("r2", "j", None, T0), None)
            .unwrap(),
        BeginRun::AlreadyRunning,
        "the running marker is claimed in the store"
    );
    assert_eq!(ids(&s.running().unwrap()), ["j"]);
    let history = s.runs("j", 0).unwrap();
    assert_eq!(history, vec![first.clone()], "written ahead, `running`");

    let mut done = first.clone();
    done.status = RunStatus::Ok;
    done.ended_at_ms = Some(T0 + 10);
    done.summary = Some("fine".into());
    let mut next = j.clone();
    next.state.next_run_at_ms = Some(T0 + 60_000);
    next.state.last_status = Some(RunStatus::Ok);
    assert!(s.finish_run("j", Some(&next), &done).unwrap());
    assert_eq!(s.get("j").unwrap().unwrap(), next);
    assert_eq!(s.runs("j", 0).unwrap(), vec![done.clone()]);
    assert!(s.running().unwrap().is_empty());
    // The first terminal record wins.
    let mut again = done.clone();
    again.status = RunStatus::Error;
    assert!(!s.finish_run("j", None, &again).unwrap());
    assert_eq!(s.runs("j", 0).unwrap(), vec![done]);
    assert!(
        s.get("j").unwrap().is_some(),
        "a refused finish writes nothing"
    );

    // A finish with no job deletes it (a one-shot job after its good run).
    assert!(
        s.begin_run(
            &claimed(next.clone(), T0 + 60_000),
            &run("r3", "j", Some(T0 + 60_000), T0 + 60_000)
        )
        .unwrap()
    );
    let mut last = run("r3", "j", Some(T0 + 60_000), T0 + 60_000);
    last.status = RunStatus::Ok;
    last.ended_at_ms = Some(T0 + 60_001);
    assert!(s.finish_run("j", None, &last).unwrap());
    assert_eq!(s.get("j").unwrap(), None);
    let runs = s.runs("j", 0).unwrap();
    assert_eq!(
        runs.iter().map(|r| r.run_id.as_str()).collect::<Vec<_>>(),
        ["r3", "r1"],
        "newest first"
    );
    assert_eq!(s.runs("j", 1).unwrap().len(), 1);
}

pub(crate) fn a_slot_runs_at_most_once(e: &mut Engine) {
    let s = &mut e.store;
    let j = job("j", "main", Some(T0));
    s.put(&j).unwrap();
    assert!(
        s.begin_run(&claimed(j.clone(), T0), &run("r1", "j", Some(T0), T0))
            .unwrap()
    );
    let mut done = run("r1", "j", Some(T0), T0);
    done.status = RunStatus::Ok;
    done.ended_at_ms = Some(T0 + 5);
    assert!(s.finish_run("j", Some(&j), &done).unwrap());
    // The same slot again (a clock stepped back onto it, a second owner):
    // refused, and the job is not left claimed.
    assert_eq!(
        s.begin_fenced_run(
            &claimed(j.clone(), T0 + 7),
            &run("r2", "j", Some(T0), T0 + 7),
            None
        )
        .unwrap(),
        BeginRun::SlotTaken
    );
    assert_eq!(s.get("j").unwrap().unwrap().state.running_at_ms, None);
    assert_eq!(s.runs("j", 0).unwrap().len(), 1);
    // Manual runs carry no slot and never collide.
    for (i, id) in ["m1", "m2"].into_iter().enumerate() {
        let at = T0 + 100 + i64::try_from(i).unwrap();
        assert!(
            s.begin_run(&claimed(j.clone(), at), &run(id, "j", None, at))
                .unwrap()
        );
        let mut end = run(id, "j", None, at);
        end.status = RunStatus::Ok;
        end.ended_at_ms = Some(at);
        assert!(s.finish_run("j", Some(&j), &end).unwrap());
    }
    assert_eq!(s.runs("j", 0).unwrap().len(), 3);
}

pub(crate) fn interrupted_runs_are_marked_and_never_finished_later(e: &mut Engine) {
    let s = &mut e.store;
    let a = job("a", "main", Some(T0));
    let b = job("b", "main", Some(T0));
    s.put_many(&[a.clone(), b.clone()]).unwrap();
    assert!(
        s.begin_run(&claimed(a.clone(), T0), &run("ra", "a", Some(T0), T0))
            .unwrap()
    );
    assert!(
        s.begin_run(&claimed(b.clone(), T0), &run("rb", "b", Some(T0), T0))
            .unwrap()
    );
    let mut done = run("rb", "b", Some(T0), T0);
    done.status = RunStatus::Ok;
    done.ended_at_ms = Some(T0 + 1);
    assert!(s.finish_run("b", Some(&b), &done).unwrap());

    assert_eq!(s.interrupt_running_runs(T0 + 50).unwrap(), 1);
    let ra = &s.runs("a", 0).unwrap()[0];
    assert_eq!(ra.status, RunStatus::Interrupted);
    assert_eq!(ra.ended_at_ms, Some(T0 + 50));
    assert!(ra.error.is_some());
    assert_eq!(
        s.runs("b", 0).unwrap(),
        vec![done],
        "finished runs untouched"
    );
    // The process that started it comes back too late: nothing is written.
    let mut late = run("ra", "a", Some(T0), T0);
    late.status = RunStatus::Ok;
    late.ended_at_ms = Some(T0 + 60);
    assert!(!s.finish_run("a", Some(&a), &late).unwrap());
    assert_eq!(s.runs("a", 0).unwrap()[0].status, RunStatus::Interrupted);
    assert_eq!(s.interrupt_running_runs(T0 + 70).unwrap(), 0);
}

pub(crate) fn admission_counts_and_stores_in_one_step(e: &mut Engine) {
    let s = &mut e.store;
    let mine = |id: &str, session: &str| {
        let mut j = job(id, "alpha", None);
        j.creator_session_key = Some(session.to_owned());
        j
    };
    for id in ["a", "b"] {
        assert_eq!(
            s.put_admitted(&mine(id, "s1"), 2, 3).unwrap(),
            Admission::Stored
        );
    }
    assert_eq!(
        s.put_admitted(&mine("c", "s1"), 2, 3).unwrap(),
        Admission::CreatorFull(2)
    );
    assert_eq!(s.get("c").unwrap(), None, "a refused job is not stored");
    assert_eq!(
        s.put_admitted(&mine("d", "s2"), 2, 3).unwrap(),
        Admission::Stored
    );
    assert_eq!(
        s.put_admitted(&mine("e", "s3"), 2, 3).unwrap(),
        Admission::AgentFull(3)
    );
    assert_eq!(s.count_for_agent("alpha").unwrap(), 3);
    assert_eq!(
        s.put_admitted(&job("f", "beta", None), 2, 3).unwrap(),
        Admission::Stored,
        "another agent's count is its own"
    );
}

pub(crate) fn an_edit_from_a_stale_read_does_not_undo_a_fire(e: &mut Engine) {
    let s = &mut e.store;
    let j = job("j", "main", Some(T0));
    s.put(&j).unwrap();
    // An editor reads the job, then the timer owner fires it.
    let read = s.get("j").unwrap().unwrap();
    assert!(
        s.begin_run(&claimed(j.clone(), T0), &run("r", "j", Some(T0), T0))
            .unwrap()
    );
    let mut renamed = read.clone();
    renamed.name = "renamed".into();
    assert!(
        !s.put_if_unchanged(
            &renamed,
            read.state.running_at_ms,
            read.state.next_run_at_ms
        )
        .unwrap(),
        "the stale edit is refused"
    );
    let now = s.get("j").unwrap().unwrap();
    assert_eq!(now.state.running_at_ms, Some(T0), "the fire stands");
    assert_eq!(now.name, "j");
    // Re-read and re-applied, it goes through.
    let mut renamed = now.clone();
    renamed.name = "renamed".into();
    assert!(
        s.put_if_unchanged(&renamed, now.state.running_at_ms, now.state.next_run_at_ms)
            .unwrap()
    );
    assert_eq!(s.get("j").unwrap().unwrap(), renamed);
    assert!(
        !s.put_if_unchanged(&job("gone", "main", None), None, None)
            .unwrap()
    );
}

pub(crate) fn jobs_and_runs_survive_reopen(e: &mut Engine) {
    let j = job("keep", "main", Some(T0 + 9));
    e.store.put(&j).unwrap();
    assert!(
        e.store
            .begin_run(&claimed(j.clone(), T0), &run("r", "keep", None, T0))
            .unwrap()
    );
    let again = e.reopen();
    assert_eq!(again.get("keep").unwrap().unwrap(), claimed(j, T0));
    assert_eq!(again.runs("keep", 0).unwrap().len(), 1);
}

pub(crate) fn a_newer_schema_is_refused(e: &mut Engine) {
    e.bump_schema(99);
    match e.try_reopen() {
        Err(CronError::SchemaNewer { found, .. }) => assert_eq!(found, 99),
        #[cfg(feature = "postgres")]
        Err(CronError::State {
            source: talon_state::StateError::SchemaNewer { found, .. },
            ..
        }) => assert_eq!(found, 99),
        other => panic!("expected a schema-newer refusal, got {other:?}"),
    }
}

macro_rules! store_tests {
    ($($name:ident),* $(,)?) => {
        mod sqlite {
            $(
                #[test]
                fn $name() {
                    super::$name(&mut super::super::engines::Engine::sqlite());
                }
            )*
        }
        #[cfg(feature = "postgres")]
        mod postgres {
            $(
                #[test]
                fn $name() {
                    super::$name(&mut super::super::engines::Engine::postgres());
                }
            )*
        }
    };
}

store_tests!(
    jobs_round_trip_and_list_in_next_run_order,
    delete_keeps_the_history,
    due_selects_enabled_idle_jobs_earliest_first,
    counts_per_agent_and_creator,
    a_job_runs_once_at_a_time_and_its_outcome_is_recorded,
    a_slot_runs_at_most_once,
    interrupted_runs_are_marked_and_never_finished_later,
    an_edit_from_a_stale_read_does_not_undo_a_fire,
    jobs_and_runs_survive_reopen,
    admission_counts_and_stores_in_one_step,
    a_newer_schema_is_refused,
);
