//! `talon cron …` and `talon tasks …` on a real state directory.

use std::path::Path;

use pretty_assertions::assert_eq;
use serde_json::json;

use super::util::{Run, cli};

fn talon(state: &Path, args: &[&str]) -> Run {
    cli()
        .home(state)
        .state_dir(state.join("state"))
        .args(args)
        .run()
}

#[test]
fn cron_next_is_strictly_after_from_in_the_zone() {
    let dir = tempfile::tempdir().unwrap();
    let r = talon(
        dir.path(),
        &[
            "cron",
            "next",
            "0 9 * * 1-5",
            "--tz",
            "America/New_York",
            "--from",
            "2026-03-06T14:00:00Z",
            "--count",
            "3",
            "--json",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    // Friday 09:00 EST is exactly --from: excluded. Monday is after the
    // DST switch (EDT).
    assert_eq!(
        r.json(),
        json!([
            "2026-03-09T13:00:00Z",
            "2026-03-10T13:00:00Z",
            "2026-03-11T13:00:00Z"
        ])
    );
    let r = talon(
        dir.path(),
        &[
            "cron",
            "next",
            "0 9 * * *",
            "--tz",
            "UTC",
            "--from",
            "2026-01-01T00:00:00Z",
            "--count",
            "1",
        ],
    );
    assert_eq!(r.code, 0);
    assert!(r.stdout.starts_with("2026-01-01T09:00:00Z"), "{}", r.stdout);
}

#[test]
fn cron_next_bad_input_exits_1_naming_the_field() {
    let dir = tempfile::tempdir().unwrap();
    for (args, field) in [
        (vec!["cron", "next", "0 9 * *", "--json"], "cron.expr"),
        (
            vec![
                "cron",
                "next",
                "0 9 * * *",
                "--tz",
                "Atlantis/Deep",
                "--json",
            ],
            "cron.tz",
        ),
        (
            vec!["cron", "next", "0 9 * * *", "--from", "yesterday", "--json"],
            "--from",
        ),
        (
            vec!["cron", "next", "0 9 * * *", "--count", "0", "--json"],
            "--count",
        ),
    ] {
        let r = talon(dir.path(), &args);
        assert_eq!(r.code, 1, "{args:?}: {}", r.stdout);
        assert_eq!(r.json()["error"]["field"], json!(field), "{args:?}");
    }
    // Usage errors are 2.
    assert_eq!(talon(dir.path(), &["cron", "next"]).code, 2);
}

#[test]
fn cron_add_list_runs_remove_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let r = talon(
        d,
        &[
            "cron",
            "add",
            "--name",
            "digest",
            "--cron",
            "30 7 * * *",
            "--tz",
            "Europe/Berlin",
            "--message",
            "summarise",
            "--tools",
            "read,web_fetch",
            "--json",
        ],
    );
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let job = r.json();
    let id = job["id"].as_str().unwrap().to_owned();
    assert_eq!(job["toolsAllow"], json!(["read", "web_fetch"]));
    assert!(job["state"]["nextRunAtMs"].is_i64());

    let bad = talon(
        d,
        &[
            "cron",
            "add",
            "--name",
            "x",
            "--every",
            "0",
            "--message",
            "m",
            "--json",
        ],
    );
    assert_eq!(bad.code, 1);
    assert_eq!(bad.json()["error"]["field"], json!("job.schedule.everyMs"));
    let past = talon(
        d,
        &[
            "cron",
            "add",
            "--name",
            "x",
            "--at",
            "2020-01-01T00:00:00Z",
            "--system-event",
            "t",
            "--json",
        ],
    );
    assert_eq!(past.code, 1);
    assert_eq!(past.json()["error"]["field"], json!("job.schedule.at"));

    let list = talon(d, &["cron", "list", "--json"]);
    assert_eq!(list.code, 0);
    let jobs = list.json();
    assert_eq!(
        jobs.as_array().unwrap().len(),
        1,
        "failed adds changed nothing"
    );
    assert_eq!(jobs[0]["id"], json!(id));
    let human = talon(d, &["cron", "list"]);
    assert!(
        human.stdout.contains("digest") && human.stdout.contains("Europe/Berlin"),
        "{}",
        human.stdout
    );

    let runs = talon(d, &["cron", "runs", &id, "--json"]);
    assert_eq!((runs.code, runs.json()), (0, json!([])));
    assert_eq!(talon(d, &["cron", "runs", "job_missing", "--json"]).code, 1);

    let rm = talon(d, &["cron", "remove", &id, "--json"]);
    assert_eq!((rm.code, rm.json()["removed"].clone()), (0, json!(true)));
    assert_eq!(talon(d, &["cron", "remove", &id]).code, 1);
    assert_eq!(talon(d, &["cron", "list", "--json"]).json(), json!([]));
}

#[test]
fn tasks_list_show_cancel() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let ledger =
        talon_tasks::TaskLedger::open(&d.join("state").join(talon_tasks::DB_FILE_NAME)).unwrap();
    let new = |run: &str| talon_tasks::NewTask {
        runtime: Some(talon_tasks::TaskRuntime::Subagent),
        requester_session_key: "agent:main:main".into(),
        run_id: Some(run.into()),
        task: format!("task {run}"),
        ..talon_tasks::NewTask::default()
    };
    let a = ledger.create(new("r1")).unwrap();
    let b = ledger.create(new("r2")).unwrap();
    ledger
        .finish(
            &b.task_id,
            talon_tasks::TaskStatus::Succeeded,
            talon_tasks::TaskOutcome::default(),
        )
        .unwrap();

    let list = talon(d, &["tasks", "list", "--json"]);
    assert_eq!(list.code, 0, "{}", list.stderr);
    assert_eq!(list.json().as_array().unwrap().len(), 2);
    let queued = talon(d, &["tasks", "list", "--status", "queued", "--json"]).json();
    assert_eq!(queued[0]["taskId"], json!(a.task_id));
    assert_eq!(talon(d, &["tasks", "list", "--status", "zombie"]).code, 1);

    let show = talon(d, &["tasks", "show", &a.task_id, "--json"]);
    assert_eq!(
        (show.code, show.json()["status"].clone()),
        (0, json!("queued"))
    );
    assert_eq!(talon(d, &["tasks", "show", "task_nope"]).code, 1);

    let c = talon(
        d,
        &[
            "tasks",
            "cancel",
            &a.task_id,
            "--reason",
            "no longer needed",
            "--json",
        ],
    );
    assert_eq!(c.code, 0, "{}", c.stdout);
    assert_eq!(c.json()["status"], json!("cancelled"));
    assert_eq!(
        ledger.get(&a.task_id).unwrap().unwrap().status,
        talon_tasks::TaskStatus::Cancelled
    );
    // A finished task cannot be cancelled.
    let refused = talon(d, &["tasks", "cancel", &b.task_id]);
    assert_eq!(refused.code, 1);
    assert!(refused.stdout.contains("succeeded"), "{}", refused.stdout);
}

/// `talon cron add` holds to `cron.quotas` like every other way in: a
/// too-short interval and the job past the agent's limit are refused with
/// the limit's code and config key, and nothing is stored.
#[test]
fn cron_add_is_refused_over_the_quotas() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let config = d.join("talon.json");
    std::fs::write(&config, r#"{"cron": {"quotas": {"maxJobsPerAgent": 1}}}"#).unwrap();
    let config = config.display().to_string();
    let add = |name: &str, expr: &str| {
        talon(
            d,
            &[
                "--config",
                &config,
                "cron",
                "add",
                "--name",
                name,
                "--cron",
                expr,
                "--tz",
                "UTC",
                "--message",
                "m",
                "--json",
            ],
        )
    };
    let fast = add("fast", "*/10 * * * * *");
    assert_eq!(fast.code, 1, "{}{}", fast.stdout, fast.stderr);
    assert_eq!(
        fast.json()["error"]["code"],
        json!("cron.quota.min_interval")
    );
    assert_eq!(
        fast.json()["error"]["configKey"],
        json!("cron.quotas.minIntervalSeconds")
    );
    let first = add("first", "0 9 * * *");
    assert_eq!(first.code, 0, "{}{}", first.stdout, first.stderr);
    let second = add("second", "0 10 * * *");
    assert_eq!(second.code, 1, "{}{}", second.stdout, second.stderr);
    assert_eq!(
        second.json()["error"]["code"],
        json!("cron.quota.jobs_per_agent")
    );
    let list = talon(d, &["cron", "list", "--json"]);
    assert_eq!(
        list.json().as_array().map(Vec::len),
        Some(1),
        "{}",
        list.stdout
    );
}

/// With the state in PostgreSQL (a fleet), the offline readers refuse
/// instead of showing the state directory's unrelated SQLite files; `cron
/// next` (no store) still works.
#[test]
fn the_offline_store_readers_refuse_a_config_whose_state_is_in_postgres() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    std::fs::create_dir_all(&state).unwrap();
    std::fs::write(
        state.join("talon.json"),
        r#"{"state": {"backend": "postgres", "url": "postgres://talon@127.0.0.1:1/talon"}}"#,
    )
    .unwrap();
    for (args, hint) in [
        (&["tasks", "list"][..], "--gateway"),
        (&["cron", "list"][..], "--gateway"),
        (&["sessions", "list"][..], "sessions.list"),
    ] {
        let r = talon(dir.path(), args);
        assert_ne!(r.code, 0, "{args:?}: {}", r.stdout);
        assert!(r.stderr.contains("state.backend"), "{args:?}: {}", r.stderr);
        assert!(r.stderr.contains(hint), "{args:?}: {}", r.stderr);
    }
    let r = talon(dir.path(), &["cron", "next", "0 9 * * *", "--count", "1"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    // Nothing was created in the state directory by the refusals.
    assert!(!state.join("talon.db").exists());
}
