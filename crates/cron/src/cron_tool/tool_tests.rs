#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::{Arc, Mutex};

use crate::{
    AgentRunner, CronOptions, CronService, IsolatedRun, ManualClock, RunFailure, RunReport,
    SystemEventRequest,
};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use talon_tool_catalog::{CancellationToken, Tool, ToolCall, ToolContext, ToolError};

use super::*;

const NOW: i64 = 1_767_225_600_000; // 2026-01-01T00:00:00Z

#[derive(Debug, Default)]
struct Runner {
    events: Mutex<Vec<SystemEventRequest>>,
}

#[async_trait::async_trait]
impl AgentRunner for Runner {
    async fn run_isolated(&self, _run: IsolatedRun) -> Result<RunReport, RunFailure> {
        Ok(RunReport::ok("ok"))
    }
    async fn system_event(&self, event: SystemEventRequest) -> Result<(), RunFailure> {
        self.events.lock().unwrap().push(event);
        Ok(())
    }
}

#[derive(Debug)]
struct History(Vec<HistoryMessage>);

#[async_trait::async_trait]
impl ChatHistory for History {
    async fn recent(
        &self,
        _session_key: &str,
        limit: usize,
    ) -> Result<Vec<HistoryMessage>, ToolError> {
        let start = self.0.len().saturating_sub(limit);
        Ok(self.0[start..].to_vec())
    }
}

fn service(dir: &std::path::Path) -> (CronService, Arc<Runner>) {
    let runner = Arc::new(Runner::default());
    let opts = CronOptions {
        clock: Arc::new(ManualClock::new(NOW)),
        ..CronOptions::default()
    };
    (
        CronService::open(&dir.join("talon.db"), runner.clone(), opts).unwrap(),
        runner,
    )
}

fn restricted_scope() -> CronToolScope {
    CronToolScope::new(
        "main",
        "agent:main:main",
        vec!["read".into(), "cron".into(), "session_status".into()],
    )
}

async fn call(tool: &CronTool, params: Value) -> Result<Value, ToolError> {
    let call = ToolCall {
        id: "c1".into(),
        name: "cron".into(),
        params: params.as_object().unwrap().clone(),
    };
    let r = tool
        .execute(
            &call,
            &ToolContext::new("main", "agent:main:main"),
            &CancellationToken::new(),
        )
        .await?;
    Ok(r.details)
}

fn job(name: &str, extra: Value) -> Value {
    let mut j = json!({
        "name": name,
        "schedule": { "kind": "every", "everyMs": 60000 },
        "payload": { "kind": "agentTurn", "message": "check the logs" }
    });
    if let (Value::Object(a), Value::Object(b)) = (&mut j, extra) {
        for (k, v) in b {
            a.insert(k, v);
        }
    }
    j
}

#[tokio::test]
async fn a_restricted_run_cannot_create_a_job_with_more_tools_than_it_has() {
    let dir = tempfile::tempdir().unwrap();
    let (svc, _) = service(dir.path());
    let tool = CronTool::new(svc.clone(), restricted_scope());
    let out = call(
        &tool,
        json!({ "action": "add", "job": job("wide", json!({
            "payload": { "kind": "agentTurn", "message": "m", "toolsAllow": ["exec", "read", "group:web", "browser"] }
        })) }),
    )
    .await
    .unwrap();
    assert_eq!(out["job"]["toolsAllow"], json!(["read"]));
    let dropped: Vec<String> = serde_json::from_value(out["droppedTools"].clone()).unwrap();
    assert!(dropped.contains(&"exec".to_string()) && dropped.contains(&"browser".to_string()));
    // No request, or "*": exactly the creating run's tools, never more.
    for extra in [json!({}), json!({ "toolsAllow": ["*"] })] {
        let out = call(
            &tool,
            json!({ "action": "add", "job": job("default", extra) }),
        )
        .await
        .unwrap();
        assert_eq!(
            out["job"]["toolsAllow"],
            json!(["read", "cron", "session_status"])
        );
        assert_eq!(
            out["job"]["creatorTools"],
            json!(["read", "cron", "session_status"])
        );
    }
    // An update cannot widen it.
    let id = svc.list(true).unwrap()[0].id.clone();
    let out = call(
        &tool,
        json!({ "action": "update", "jobId": id, "patch": { "toolsAllow": ["exec"] } }),
    )
    .await
    .unwrap();
    assert_eq!(out["job"]["toolsAllow"], json!([]));
    assert_eq!(out["droppedTools"], json!(["exec"]));
    // The stored run-time allowlist of every job stays within the creator's tools.
    for j in svc.list(true).unwrap() {
        for t in j.effective_run_tools().unwrap() {
            assert!(
                ["read", "cron", "session_status"].contains(&t.as_str()),
                "{t}"
            );
        }
    }
    // A job for another agent is refused.
    let err = call(
        &tool,
        json!({ "action": "add", "job": job("other", json!({ "agentId": "ops" })) }),
    )
    .await
    .unwrap_err();
    assert_eq!(err.status(), 403);
}

#[tokio::test]
async fn a_cron_triggered_run_only_reads_and_removes_its_own_job() {
    let dir = tempfile::tempdir().unwrap();
    let (svc, _) = service(dir.path());
    let user = CronTool::new(svc.clone(), restricted_scope());
    let own = call(
        &user,
        json!({ "action": "add", "job": job("own", json!({})) }),
    )
    .await
    .unwrap()["job"]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let other = call(
        &user,
        json!({ "action": "add", "job": job("other", json!({})) }),
    )
    .await
    .unwrap()["job"]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let scoped = CronTool::new(
        svc.clone(),
        restricted_scope().cron_triggered(Some(own.clone())),
    );

    let list = call(&scoped, json!({ "action": "list" })).await.unwrap();
    let ids: Vec<&str> = list["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| j["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, vec![own.as_str()]);
    call(&scoped, json!({ "action": "status" })).await.unwrap();
    call(&scoped, json!({ "action": "get", "jobId": own }))
        .await
        .unwrap();
    call(&scoped, json!({ "action": "runs", "jobId": own }))
        .await
        .unwrap();
    for params in [
        json!({ "action": "get", "jobId": other }),
        json!({ "action": "remove", "jobId": other }),
        json!({ "action": "runs", "id": other }),
        json!({ "action": "get" }),
        json!({ "action": "add", "job": job("x", json!({})) }),
        json!({ "action": "update", "jobId": own, "patch": { "name": "y" } }),
        json!({ "action": "run", "jobId": own }),
        json!({ "action": "wake", "text": "hi" }),
    ] {
        let err = call(&scoped, params.clone()).await.unwrap_err();
        assert!(err.is_unauthorized() || err.is_input(), "{params}: {err:?}");
    }
    assert!(
        svc.get(&other).unwrap().is_some(),
        "the other job is untouched"
    );
    assert_eq!(svc.list(true).unwrap().len(), 2, "nothing was added");
    call(&scoped, json!({ "action": "remove", "jobId": own }))
        .await
        .unwrap();
    assert!(svc.get(&own).unwrap().is_none());

    // A cron-triggered run that does not know its job gets nothing.
    let blind = CronTool::new(svc, restricted_scope().cron_triggered(None));
    assert_eq!(
        call(&blind, json!({ "action": "list" }))
            .await
            .unwrap_err()
            .status(),
        403
    );
}

#[tokio::test]
async fn reminder_context_is_bounded() {
    let dir = tempfile::tempdir().unwrap();
    let (svc, _) = service(dir.path());
    let messages: Vec<HistoryMessage> = (0..14)
        .map(|i| HistoryMessage {
            role: if i % 2 == 0 {
                "user".into()
            } else {
                "assistant".into()
            },
            text: format!("message {i} ") + &"x".repeat(300),
        })
        .collect();
    let block = build_reminder_context(&messages, 12);
    assert!(block.starts_with(CONTEXT_MARKER));
    let lines: Vec<&str> = block[CONTEXT_MARKER.len()..].lines().collect();
    assert!(!lines.is_empty() && lines.len() <= MAX_CONTEXT_MESSAGES);
    assert!(
        lines
            .iter()
            .all(|l| l.chars().count() <= MAX_CONTEXT_LINE_CHARS)
    );
    assert!(block[CONTEXT_MARKER.len()..].chars().count() <= MAX_CONTEXT_TOTAL_CHARS);
    // Only the most recent ten are considered: message 4 is the oldest.
    assert!(lines[0].contains("message 4"), "{}", lines[0]);

    let tool =
        CronTool::new(svc.clone(), restricted_scope()).with_history(Arc::new(History(messages)));
    let out = call(
        &tool,
        json!({ "action": "add", "contextMessages": 3, "job": job("remind", json!({
            "payload": { "kind": "systemEvent", "text": "Call Bob" }
        })) }),
    )
    .await
    .unwrap();
    let text = out["job"]["payload"]["text"].as_str().unwrap();
    assert!(
        text.starts_with("Call Bob\n\nRecent context:\n- assistant: message 11"),
        "{text}"
    );
    assert!(
        call(
            &tool,
            json!({ "action": "add", "contextMessages": 11, "job": job("r", json!({})) })
        )
        .await
        .is_err()
    );
    // Without a history source, asking for context is a clear input error.
    let bare = CronTool::new(svc, restricted_scope());
    let err = call(
        &bare,
        json!({ "action": "add", "contextMessages": 2, "job": job("r", json!({})) }),
    )
    .await
    .unwrap_err();
    assert_eq!(err.param(), Some("contextMessages"));
}

#[tokio::test]
async fn bad_input_names_the_parameter_and_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let (svc, runner) = service(dir.path());
    let tool = CronTool::new(svc.clone(), restricted_scope());
    let cases = [
        (json!({ "action": "explode" }), "action"),
        (json!({}), "action"),
        (json!({ "action": "add" }), "job"),
        (
            json!({ "action": "add", "job": job("x", json!({ "schedule": { "kind": "cron", "expr": "99 * * * *" } })) }),
            "job.schedule.expr",
        ),
        (
            json!({ "action": "add", "job": job("x", json!({ "schedule": { "kind": "cron", "expr": "0 9 * * *", "tz": "Nowhere/City" } })) }),
            "job.schedule.tz",
        ),
        (
            json!({ "action": "add", "job": job("x", json!({ "schedule": { "kind": "every", "everyMs": -1 } })) }),
            "job.schedule.everyMs",
        ),
        (
            json!({ "action": "add", "job": job("x", json!({ "schedule": { "kind": "at", "at": "2020-01-01T00:00:00Z" } })) }),
            "job.schedule.at",
        ),
        (
            json!({ "action": "add", "job": job("x", json!({ "schedule": { "kind": "weekly" } })) }),
            "job.schedule.kind",
        ),
        (
            json!({ "action": "add", "job": job("x", json!({ "payload": { "kind": "agentTurn" } })) }),
            "job.payload.message",
        ),
        (
            json!({ "action": "add", "job": job("", json!({})) }),
            "job.name",
        ),
        (json!({ "action": "get" }), "jobId"),
        (json!({ "action": "get", "jobId": "nope" }), "jobId"),
        (
            json!({ "action": "run", "jobId": "nope", "runMode": "sometimes" }),
            "runMode",
        ),
        (json!({ "action": "wake" }), "text"),
    ];
    for (params, field) in cases {
        let err = call(&tool, params.clone()).await.unwrap_err();
        assert_eq!(err.param(), Some(field), "{params}: {err}");
        assert_eq!(err.status(), 400);
    }
    assert!(svc.list(true).unwrap().is_empty());
    // Wake: own sessions only.
    let err = call(
        &tool,
        json!({ "action": "wake", "text": "hi", "sessionKey": "agent:ops:main" }),
    )
    .await
    .unwrap_err();
    assert_eq!(err.status(), 403);
    call(
        &tool,
        json!({ "action": "wake", "text": "hi", "mode": "next-heartbeat" }),
    )
    .await
    .unwrap();
    let events = runner.events.lock().unwrap().clone();
    assert_eq!(events.len(), 1);
    assert_eq!(events[0].session_key.as_deref(), Some("agent:main:main"));
}

#[tokio::test]
async fn run_and_runs_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    let (svc, _) = service(dir.path());
    let tool = CronTool::new(svc.clone(), restricted_scope());
    let id = call(
        &tool,
        json!({ "action": "add", "job": job("now", json!({})) }),
    )
    .await
    .unwrap()["job"]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let out = call(&tool, json!({ "action": "run", "jobId": id }))
        .await
        .unwrap();
    assert_eq!(out["ran"], json!(false));
    assert_eq!(out["reason"], json!("not-due"));
    let out = call(
        &tool,
        json!({ "action": "run", "jobId": id, "runMode": "force" }),
    )
    .await
    .unwrap();
    assert_eq!(out["ran"], json!(true));
    for _ in 0..100 {
        if svc
            .runs(&id, 0)
            .unwrap()
            .first()
            .is_some_and(|r| r.ended_at_ms.is_some())
        {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    let runs = call(&tool, json!({ "action": "runs", "jobId": id }))
        .await
        .unwrap();
    assert_eq!(runs["runs"][0]["status"], json!("ok"));
    assert_eq!(runs["runs"][0]["reason"], json!("manual"));
}

/// Over a quota the model gets a typed `cron.quota` error naming the
/// config key, and nothing is stored.
#[tokio::test]
async fn a_job_over_a_quota_is_refused_with_the_quota_code() {
    let dir = tempfile::tempdir().unwrap();
    let opts = CronOptions {
        clock: Arc::new(ManualClock::new(NOW)),
        quotas: crate::CronQuotas {
            max_jobs_per_creator: 1,
            ..crate::CronQuotas::default()
        },
        ..CronOptions::default()
    };
    let svc = CronService::open(
        &dir.path().join("talon.db"),
        Arc::new(Runner::default()),
        opts,
    )
    .unwrap();
    let tool = CronTool::new(svc.clone(), restricted_scope());
    let fast = call(
        &tool,
        json!({ "action": "add", "job": job("fast", json!({ "schedule": { "kind": "every", "everyMs": 1000 } })) }),
    )
    .await
    .unwrap_err();
    assert_eq!(fast.code(), talon_tool_catalog::ToolErrorCode::CronQuota);
    assert!(
        fast.to_string().contains("cron.quotas.minIntervalSeconds"),
        "{fast}"
    );
    call(
        &tool,
        json!({ "action": "add", "job": job("one", json!({})) }),
    )
    .await
    .unwrap();
    let over = call(
        &tool,
        json!({ "action": "add", "job": job("two", json!({})) }),
    )
    .await
    .unwrap_err();
    assert_eq!(over.code(), talon_tool_catalog::ToolErrorCode::CronQuota);
    assert!(
        over.to_string().contains("cron.quotas.maxJobsPerCreator"),
        "{over}"
    );
    assert_eq!(svc.list(true).unwrap().len(), 1);
}

/// A model-created webhook job aimed at loopback or a cloud metadata
/// endpoint is refused with the egress guard's code, naming the field,
/// and nothing is stored.
#[tokio::test]
async fn a_webhook_to_a_private_or_metadata_address_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let opts = CronOptions {
        clock: Arc::new(ManualClock::new(NOW)),
        ..CronOptions::default()
    };
    let svc = CronService::open(
        &dir.path().join("talon.db"),
        Arc::new(Runner::default()),
        opts,
    )
    .unwrap();
    let tool = CronTool::new(svc.clone(), restricted_scope());
    for (to, code) in [
        (
            "http://127.0.0.1:8080/hook",
            talon_tool_catalog::ToolErrorCode::WebSsrfBlocked,
        ),
        (
            "http://169.254.169.254/latest/meta-data/",
            talon_tool_catalog::ToolErrorCode::WebMetadataBlocked,
        ),
    ] {
        let err = call(
            &tool,
            json!({ "action": "add", "job": job("hook", json!({ "delivery": { "mode": "webhook", "to": to } })) }),
        )
        .await
        .unwrap_err();
        assert_eq!(err.code(), code, "{to}: {err}");
        assert_eq!(err.param(), Some("delivery.to"), "{to}: {err}");
    }
    assert!(svc.list(true).unwrap().is_empty());
}
