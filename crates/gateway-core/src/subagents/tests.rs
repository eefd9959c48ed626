#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use talon_gateway_protocol::Request;
use talon_runtime::{AgentTurn, TurnError, TurnReply, TurnRunner};
use talon_tasks::TaskStatus;

use super::*;
use crate::dispatch::Caller;
use crate::gateway::{Gateway, GatewayOptions};

/// An embedder's runner: answers each turn with its message reversed and
/// remembers what it was handed.
#[derive(Default)]
struct Reverse {
    turns: Mutex<Vec<AgentTurn>>,
}

#[async_trait::async_trait]
impl TurnRunner for Reverse {
    async fn run_turn(
        &self,
        turn: &AgentTurn,
        _cancel: &CancellationToken,
    ) -> Result<TurnReply, TurnError> {
        self.turns.lock().unwrap().push(turn.clone());
        Ok(TurnReply {
            reply: Some(turn.message.chars().rev().collect()),
        })
    }
}

fn open(dir: &tempfile::TempDir, runner: Arc<Reverse>) -> Gateway {
    let config = dir.path().join("talon.json");
    std::fs::write(&config, "{}").unwrap();
    Gateway::open(GatewayOptions {
        config_path: Some(config),
        state_dir: dir.path().join("state"),
        bind: None,
        turn_runner: Some(SharedTurnRunner(runner)),
    })
    .unwrap()
}

async fn invoke(gw: &Gateway, session: &str, tool: &str, params: Value) -> Value {
    let request = Request::parse(
        "tools.invoke",
        json!({"sessionKey": session, "toolName": tool, "params": params}),
    )
    .unwrap();
    gw.dispatch(
        request,
        &Caller {
            out: None,
            identity: crate::auth::Identity::new("test-operator", crate::scope::Scope::Operator),
        },
    )
    .await
    .unwrap()
}

/// An embedder's `TurnRunner` given in `GatewayOptions` runs the spawned
/// child's turn: it gets the child's key, its capped tool list and the
/// requester, and its reply is announced back to the parent session.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_embedders_runner_runs_spawned_turns() {
    let dir = tempfile::tempdir().unwrap();
    let runner = Arc::new(Reverse::default());
    let gw = open(&dir, Arc::clone(&runner));
    let spawned = invoke(&gw, "main", "sessions_spawn", json!({"task": "olleh"})).await;
    assert_eq!(spawned["status"], json!("ok"), "{spawned}");
    let child = spawned["details"]["childSessionKey"]
        .as_str()
        .unwrap()
        .to_owned();
    let deadline = Instant::now() + Duration::from_secs(10);
    let parent = "agent:main:main";
    let store = gw.inner.sessions.store().unwrap();
    loop {
        let msgs = store.messages(parent, 10, None).unwrap();
        if msgs.iter().any(|m| m.text.contains("hello")) {
            break;
        }
        assert!(Instant::now() < deadline, "no announce: {msgs:?}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let turns = runner.turns.lock().unwrap().clone();
    assert_eq!(turns.len(), 1);
    let turn = &turns[0];
    assert_eq!(turn.session_key, child);
    assert_eq!(turn.requester_session_key.as_deref(), Some(parent));
    assert_eq!(turn.trigger, TurnTrigger::Subagent);
    // A leaf at the default depth: no orchestration tools.
    assert!(
        !turn.tools.iter().any(|t| t == "sessions_spawn"),
        "{:?}",
        turn.tools
    );
    assert!(turn.tools.iter().any(|t| t == "read"), "{:?}", turn.tools);
    let task = gw
        .inner
        .tasks
        .ledger
        .as_ref()
        .unwrap()
        .get_by_run_id(turn.run_id.as_str())
        .unwrap()
        .unwrap();
    assert_eq!(task.status, TaskStatus::Succeeded);
    assert_eq!(task.terminal_summary.as_deref(), Some("hello"));
}

/// `spawn_task` records a queued suggestion; `dismiss_task` cancels only
/// this session's, and refuses unknown keys.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn suggested_tasks_are_queued_and_dismissed_on_the_ledger() {
    let dir = tempfile::tempdir().unwrap();
    let gw = open(&dir, Arc::new(Reverse::default()));
    let s = invoke(
        &gw,
        "main",
        "spawn_task",
        json!({"title": "Fix the flaky test", "prompt": "Look at x.rs", "tldr": "It fails weekly."}),
    )
    .await;
    assert_eq!(s["details"]["status"], json!("queued"), "{s}");
    let id = s["details"]["task_id"].as_str().unwrap().to_owned();
    let extra = invoke(
        &gw,
        "main",
        "spawn_task",
        json!({"title": "t", "prompt": "p", "tldr": "w", "priority": 1}),
    )
    .await;
    assert_eq!(extra["errorCode"], json!("input.unknown_param"), "{extra}");
    let other = invoke(
        &gw,
        "agent:ops:main",
        "dismiss_task",
        json!({"task_id": id}),
    )
    .await;
    assert_eq!(other["status"], json!("error"), "{other}");
    let d = invoke(
        &gw,
        "main",
        "dismiss_task",
        json!({"task_id": id, "reason": "done already"}),
    )
    .await;
    assert_eq!(d["details"]["status"], json!("dismissed"), "{d}");
    let t = gw
        .inner
        .tasks
        .ledger
        .as_ref()
        .unwrap()
        .get(&id)
        .unwrap()
        .unwrap();
    assert_eq!(t.status, TaskStatus::Cancelled);
    let again = invoke(&gw, "main", "dismiss_task", json!({"task_id": id})).await;
    assert_eq!(again["status"], json!("error"), "{again}");
}

/// A session reopened after a restart keeps the token that opened it as
/// its requester (hooks and approvals keep seeing that account).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restored_session_keeps_its_opener() {
    let dir = tempfile::tempdir().unwrap();
    let key = "agent:main:gw:opened-by-ci";
    {
        let gw = open(&dir, Arc::new(Reverse::default()));
        let request = Request::parse("sessions.create", json!({"sessionKey": key})).unwrap();
        gw.dispatch(
            request,
            &Caller {
                out: None,
                identity: crate::auth::Identity::new("ci-bot", crate::scope::Scope::Runner),
            },
        )
        .await
        .unwrap();
        let r = gw.inner.sessions.registry.get(key).unwrap();
        assert_eq!(r.requester().unwrap().account_id.as_deref(), Some("ci-bot"));
        gw.shutdown(Duration::from_secs(5)).await;
        drop(gw);
    }
    let gw = open(&dir, Arc::new(Reverse::default()));
    let s = gw.inner.sessions.registry.get(key).expect("reopened");
    let requester = s.requester().unwrap();
    assert_eq!(requester.account_id.as_deref(), Some("ci-bot"));
    assert_eq!(requester.scope.as_deref(), Some("runner"));
    // The stored parameters still read back as the session's own.
    assert_eq!(s.info.params.session_key.as_deref(), Some(key));
}
