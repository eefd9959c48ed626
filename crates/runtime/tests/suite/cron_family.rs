//! The `cron` tool through a runtime: the creating run's policy caps the
//! job, whatever the model asks for, and a cron-triggered run only sees its
//! own job.

use std::sync::Arc;

use serde_json::json;
use talon_runtime::{InvokeOutcome, ModelToolCall, RunSpec, RuntimeBuilder};
use talon_tool_policy::{RunContext, Trigger};

use super::support::Refuse;

fn details(out: &InvokeOutcome) -> serde_json::Value {
    match out {
        InvokeOutcome::Completed { result, .. } => result.details.clone(),
        other => panic!("expected a result, got {other:?}"),
    }
}

#[tokio::test]
async fn a_restricted_run_cannot_create_a_wider_job_and_cron_runs_see_only_their_own() {
    let dir = tempfile::tempdir().unwrap();
    let service = talon_cron::CronService::open(
        &dir.path().join("talon.db"),
        Arc::new(Refuse),
        talon_cron::CronOptions::default(),
    )
    .unwrap();
    let loaded = talon_config::load_str(
        r#"{ tools: { deny: ["exec", "process", "web_fetch"] } }"#,
        "talon.json",
    )
    .unwrap();
    let runtime = RuntimeBuilder::from_config(&loaded.config, dir.path())
        .unwrap()
        .cron_service(service)
        .build()
        .unwrap();
    let mut spec = RunSpec::new(RunContext::new("main"));
    spec.workspace = Some(dir.path().join("ws"));
    let table = runtime.assemble(spec);
    let add = |name: &str| {
        json!({ "action": "add", "job": {
            "name": name,
            "schedule": { "kind": "every", "everyMs": 3_600_000 },
            "payload": { "kind": "agentTurn", "message": "go" },
            "toolsAllow": ["exec", "read", "web_fetch"]
        }})
    };
    let out = table
        .invoke(ModelToolCall::new("c1", "cron", add("first")))
        .await;
    let job = details(&out)["job"].clone();
    let allowed: Vec<String> = serde_json::from_value(job["toolsAllow"].clone()).unwrap();
    assert_eq!(allowed, vec!["read".to_owned()], "{job}");
    let first = job["id"].as_str().unwrap().to_owned();
    let out = table
        .invoke(ModelToolCall::new("c2", "cron", add("second")))
        .await;
    let second = details(&out)["job"]["id"].as_str().unwrap().to_owned();

    // A run triggered by `first` lists only `first` and cannot touch `second`.
    let mut ctx = RunContext::new("main");
    ctx.trigger = Trigger::Cron;
    let mut spec = RunSpec::new(ctx);
    spec.cron_job_id = Some(first.clone());
    spec.workspace = Some(dir.path().join("ws"));
    let cron_run = runtime.assemble(spec);
    let out = cron_run
        .invoke(ModelToolCall::new(
            "c3",
            "cron",
            json!({ "action": "list" }),
        ))
        .await;
    let ids: Vec<String> = details(&out)["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| j["id"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(ids, vec![first.clone()]);
    let out = cron_run
        .invoke(ModelToolCall::new(
            "c4",
            "cron",
            json!({ "action": "remove", "jobId": second }),
        ))
        .await;
    assert!(
        !matches!(out, InvokeOutcome::Completed { .. }),
        "a cron run removed another job: {out:?}"
    );
}
