#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use serde_json::json;
use talon_gateway_protocol::{MethodName, Request};

use super::*;
use crate::gateway::GatewayOptions;
use crate::rpc::{INVALID_PARAMS, NOT_FOUND, UNAVAILABLE};

fn open(dir: &tempfile::TempDir) -> Gateway {
    let config = dir.path().join("talon.json");
    std::fs::write(&config, "{}").unwrap();
    Gateway::open(GatewayOptions {
        config_path: Some(config),
        state_dir: dir.path().join("state"),
        bind: None,
        turn_runner: None,
    })
    .unwrap()
}

async fn call(gw: &Gateway, method: &str, params: Value) -> Result<Value, RpcError> {
    let request = Request::parse(method, params)?;
    gw.dispatch(
        request,
        &Caller {
            out: None,
            identity: crate::auth::Identity::new("test-operator", crate::scope::Scope::Operator),
        },
    )
    .await
}

const JOB: &str = r#"{"name": "ping", "schedule": {"kind": "every", "everyMs": 3600000}, "payload": {"kind": "agentTurn", "message": "hi", "toolsAllow": ["read", "exec"]}}"#;

/// `cron.*` goes to the cron service, as the default agent's main session
/// (its tools cap the job's), and every change is journalled like a
/// side-effecting call: a `started` record, then one terminal record.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cron_methods_use_the_service_and_are_journalled() {
    let dir = tempfile::tempdir().unwrap();
    let gw = open(&dir);
    let job: Value = serde_json::from_str(JOB).unwrap();
    let added = call(&gw, "cron.add", json!({ "job": job })).await.unwrap();
    assert_eq!(added["ok"], json!(true));
    let id = added["job"]["id"].as_str().unwrap().to_owned();
    assert_eq!(added["job"]["agentId"], json!("main"));
    let listed = call(&gw, "cron.list", json!({})).await.unwrap();
    assert_eq!(listed["jobs"].as_array().unwrap().len(), 1);
    let got = call(&gw, "cron.get", json!({ "id": id })).await.unwrap();
    assert_eq!(got["job"]["name"], json!("ping"));
    let status = call(&gw, "cron.status", json!({})).await.unwrap();
    assert_eq!(status["jobs"], json!(1));

    // Bad input names the field; an unknown job is "not found".
    let bad = call(
        &gw,
        "cron.add",
        json!({"job": {"name": "x", "schedule": {"kind": "every", "everyMs": -5}, "payload": {"kind": "systemEvent", "text": "t"}}}),
    )
    .await
    .unwrap_err();
    assert_eq!(bad.code, INVALID_PARAMS, "{bad:?}");
    assert!(
        bad.data.as_ref().unwrap()["param"]
            .as_str()
            .unwrap()
            .starts_with("job.schedule"),
        "{bad:?}"
    );
    let missing = call(&gw, "cron.remove", json!({"jobId": "job-nope"}))
        .await
        .unwrap_err();
    assert_eq!(missing.code, NOT_FOUND, "{missing:?}");

    let removed = call(&gw, "cron.remove", json!({ "jobId": id }))
        .await
        .unwrap();
    assert_eq!(removed["removed"], json!(id));

    // add, add (refused), remove (unknown), remove: four journalled calls
    // in the main session; reads are not journalled.
    let history = gw.journal().history("agent:main:main", 20).unwrap();
    let mut calls: Vec<String> = history
        .iter()
        .map(|r| format!("{} {:?} write-ahead={}", r.tool, r.outcome(), r.write_ahead))
        .collect();
    calls.sort();
    assert_eq!(
        calls,
        [
            "cron.add Some(Error) write-ahead=true",
            "cron.add Some(Ok) write-ahead=true",
            "cron.remove Some(Error) write-ahead=true",
            "cron.remove Some(Ok) write-ahead=true",
        ]
    );
    gw.shutdown(Duration::from_secs(5)).await;
}

/// A change refused while draining runs nothing and records nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_draining_gateway_refuses_cron_changes() {
    let dir = tempfile::tempdir().unwrap();
    let gw = open(&dir);
    gw.inner.calls.begin_drain();
    let job: Value = serde_json::from_str(JOB).unwrap();
    let e = call(&gw, "cron.add", json!({ "job": job }))
        .await
        .unwrap_err();
    assert_eq!(e.code, UNAVAILABLE, "{e:?}");
    let jobs = call(&gw, "cron.list", json!({"includeDisabled": true}))
        .await
        .unwrap();
    assert_eq!(jobs["jobs"], json!([]));
    assert!(
        gw.journal()
            .history("agent:main:main", 20)
            .unwrap()
            .is_empty()
    );
    gw.shutdown(Duration::from_secs(5)).await;
}

/// Every method decodes `{}`-like params or refuses them with invalid
/// params, and every read-only method answers on a fresh gateway (the
/// dispatcher covers the whole table).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_read_only_method_answers() {
    let dir = tempfile::tempdir().unwrap();
    let gw = open(&dir);
    for method in MethodName::ALL {
        let params = match method {
            MethodName::ToolsList | MethodName::SandboxExplain => json!({"sessionKey": "main"}),
            MethodName::CronGet | MethodName::CronRuns => json!({"jobId": "job-nope"}),
            MethodName::TasksGet => json!({"taskId": "task-nope"}),
            MethodName::ConfigSchemaLookup => json!({"path": "tools"}),
            MethodName::ToolsLookup => json!({"sessionKey": "main", "toolCallId": "c-1"}),
            _ => json!({}),
        };
        if method.scope() != talon_gateway_protocol::Scope::ReadOnly {
            continue;
        }
        let r = call(&gw, method.as_str(), params).await;
        match method {
            MethodName::CronGet | MethodName::CronRuns | MethodName::TasksGet => {
                if let Err(e) = &r {
                    assert_eq!(e.code, NOT_FOUND, "{method}: {e:?}");
                }
            }
            _ => assert!(r.is_ok(), "{method}: {r:?}"),
        }
    }
    gw.shutdown(Duration::from_secs(5)).await;
}

/// A call's `toolCallId` is journalled in its own column, so a client that
/// lost its reply can find the call; an id the journal could not store is
/// refused before anything runs.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tools_invoke_journals_the_callers_tool_call_id() {
    let dir = tempfile::tempdir().unwrap();
    let gw = open(&dir);
    let reply = call(
        &gw,
        "tools.invoke",
        json!({"sessionKey": "main", "toolName": "read", "toolCallId": "client-7", "params": {"path": "no-such-file.txt"}}),
    )
    .await
    .unwrap();
    assert_eq!(reply["toolCallId"], json!("client-7"), "{reply}");
    gw.journal().flush().await.unwrap();
    let found = gw
        .journal()
        .find_tool_call("agent:main:main", "client-7")
        .unwrap();
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].tool, "read");
    assert_eq!(found[0].tool_call_id.as_deref(), Some("client-7"));
    assert!(found[0].end.is_some());

    let bad = call(
        &gw,
        "tools.invoke",
        json!({"sessionKey": "main", "toolName": "read", "toolCallId": "a\u{1b}b", "params": {"path": "x"}}),
    )
    .await
    .unwrap_err();
    assert_eq!(bad.code, INVALID_PARAMS, "{bad:?}");
    assert_eq!(bad.data.unwrap()["param"], json!("toolCallId"));
}

/// A client that lost its reply finds its call by the `toolCallId` it
/// gave: ended calls with their status, a call the gateway was killed in
/// the middle of as `interrupted` after the restart.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tools_lookup_finds_a_call_by_its_tool_call_id() {
    let dir = tempfile::tempdir().unwrap();
    let gw = open(&dir);
    let done = call(
        &gw,
        "tools.invoke",
        json!({"sessionKey": "main", "toolName": "session_status", "toolCallId": "c-1"}),
    )
    .await
    .unwrap();
    assert_eq!(done["status"], json!("ok"), "{done}");
    for key in ["main", "agent:main:main"] {
        let found = call(
            &gw,
            "tools.lookup",
            json!({"sessionKey": key, "toolCallId": "c-1"}),
        )
        .await
        .unwrap();
        assert_eq!(found["sessionKey"], json!("agent:main:main"));
        let calls = found["calls"].as_array().unwrap();
        assert_eq!(calls.len(), 1, "{found}");
        assert_eq!(calls[0]["status"], json!("ok"));
        assert_eq!(calls[0]["tool"], json!("session_status"));
        assert_eq!(calls[0]["toolCallId"], json!("c-1"));
    }
    let none = call(
        &gw,
        "tools.lookup",
        json!({"sessionKey": "main", "toolCallId": "never-sent"}),
    )
    .await
    .unwrap();
    assert_eq!(none["calls"], json!([]));
    let bad = call(
        &gw,
        "tools.lookup",
        json!({"sessionKey": "main", "toolCallId": ""}),
    )
    .await
    .unwrap_err();
    assert_eq!(bad.code, INVALID_PARAMS, "{bad:?}");

    // A call in flight when the gateway stops is `interrupted` after the
    // restart, with the caller's id intact.
    gw.journal()
        .started(talon_journal::CallStart {
            call_id: "call-in-flight".into(),
            session_key: "agent:main:main".into(),
            agent_id: "main".into(),
            tool: "exec".into(),
            params_digest: "0".repeat(64),
            at_ms: 1,
            tool_call_id: Some("c-2".into()),
        })
        .await
        .unwrap();
    gw.shutdown(Duration::from_secs(5)).await;
    drop(gw);
    let gw = open(&dir);
    let found = call(
        &gw,
        "tools.lookup",
        json!({"sessionKey": "main", "toolCallId": "c-2"}),
    )
    .await
    .unwrap();
    assert_eq!(found["calls"][0]["status"], json!("interrupted"), "{found}");
    assert_eq!(found["calls"][0]["callId"], json!("call-in-flight"));
    gw.shutdown(Duration::from_secs(5)).await;
}
