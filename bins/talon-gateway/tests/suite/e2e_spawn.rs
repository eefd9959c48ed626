//! Sub-agents on the real daemon with a real runner process: the runner is
//! this test binary started again as a separate process
//! ([`scripted_runner_process`]), connected over WebSocket with
//! `runner.subscribe`. It plays each turn's message as a script: the tool
//! calls to make in the turn's session, then the reply to report.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use futures::{SinkExt as _, StreamExt as _};
use serde_json::{Value, json};
use tokio_tungstenite::tungstenite::Message;

use super::support::{Gw, GwExt as _, Ws};

const ADDR_ENV: &str = "TALON_E2E_RUNNER_ADDR";
const TOKEN_ENV: &str = "TALON_E2E_RUNNER_TOKEN";
const LOG_ENV: &str = "TALON_E2E_RUNNER_LOG";

/// The scripted runner process, killed on drop.
struct Runner {
    child: std::process::Child,
    log: PathBuf,
}

impl Drop for Runner {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Runner {
    /// Start the runner against `gw` and wait until it has subscribed.
    async fn start(gw: &Gw, ws: &mut Ws) -> Runner {
        let log = gw.dir.path().join(format!(
            "runner-{}.jsonl",
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_nanos()
        ));
        let child = std::process::Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "suite::e2e_spawn::scripted_runner_process",
                "--nocapture",
                "--test-threads=1",
            ])
            .env(ADDR_ENV, gw.addr.to_string())
            .env(TOKEN_ENV, &gw.token)
            .env(LOG_ENV, &log)
            .stdout(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let runner = Runner { child, log };
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let health = ws.ok("health", json!({})).await;
            if health["runners"].as_u64().unwrap_or(0) >= 1 {
                break;
            }
            assert!(Instant::now() < deadline, "the runner never subscribed");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        runner
    }

    /// Every line the runner logged.
    fn events(&self) -> Vec<Value> {
        std::fs::read_to_string(&self.log)
            .unwrap_or_default()
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect()
    }

    /// Wait for a logged event matching `pred`.
    async fn wait_for(&self, what: &str, pred: impl Fn(&Value) -> bool) -> Value {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            if let Some(e) = self.events().into_iter().find(|e| pred(e)) {
                return e;
            }
            assert!(
                Instant::now() < deadline,
                "runner never logged {what}: {:?}",
                self.events()
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

/// A turn's script: tool calls to make, then the reply.
fn script(calls: Value, reply: &str) -> String {
    json!({"calls": calls, "reply": reply}).to_string()
}

async fn invoke(ws: &mut Ws, session: &str, tool: &str, params: Value) -> Value {
    ws.ok(
        "tools.invoke",
        json!({"sessionKey": session, "toolName": tool, "params": params}),
    )
    .await
}

/// The ledger task of `run_id`, once terminal.
async fn terminal_task(ws: &mut Ws, run_id: &str) -> Value {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let list = ws.ok("tasks.list", json!({"limit": 1000})).await;
        if let Some(t) = list["tasks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["runId"] == json!(run_id))
            && !["queued", "running"].contains(&t["status"].as_str().unwrap())
        {
            return t.clone();
        }
        assert!(
            Instant::now() < deadline,
            "task of {run_id} never ended: {list}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// The ledger task of `run_id` once its delivery is recorded (the
/// announce-back comes after the terminal state).
async fn delivered_task(ws: &mut Ws, run_id: &str) -> Value {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let t = terminal_task(ws, run_id).await;
        if t["deliveryStatus"] != json!("pending") {
            return t;
        }
        assert!(
            Instant::now() < deadline,
            "the delivery of {run_id} was never recorded: {t}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// The messages of `session` as read by `viewer` through sessions_history.
async fn history(ws: &mut Ws, viewer: &str, session: &str) -> Vec<Value> {
    let h = invoke(
        ws,
        viewer,
        "sessions_history",
        json!({"sessionKey": session, "limit": 100}),
    )
    .await;
    assert_eq!(h["status"], json!("ok"), "{h}");
    h["details"]["messages"].as_array().unwrap().clone()
}

const CONFIG: &str = r#"{
  "agents": {
    "defaults": {"subagents": {"maxSpawnDepth": 2, "maxChildrenPerAgent": 2, "runTimeoutSeconds": 20}},
    "list": [
      {"id": "main", "default": true, "tools": {"deny": ["write"]}, "subagents": {"allowAgents": ["worker"]}},
      {"id": "worker"},
      {"id": "loner"}
    ]
  },
  "tools": {"agentToAgent": {"enabled": true, "allow": ["main", "worker"]}, "sessions": {"visibility": "all"}}
}"#;

const PARENT: &str = "agent:main:main";

/// A child of another agent tries `write`, which its own agent allows but
/// its parent lacks: refused by the inherited layer. The child's reply is
/// announced back to the parent (recorded there, delivered to the runner),
/// and the spawn is a ledger task that succeeded. After a restart every
/// session and its history are still listed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_child_never_gets_a_tool_its_parent_lacks_and_its_result_comes_back() {
    let mut gw = Gw::start(CONFIG);
    let mut ws = gw.ws().await;
    let runner = Runner::start(&gw, &mut ws).await;
    let marker = gw.dir.path().join("child-wrote");
    let task = script(
        json!([{"tool": "write", "params": {"path": marker.display().to_string(), "content": "x"}}]),
        "child says hello",
    );
    let spawned = invoke(
        &mut ws,
        PARENT,
        "sessions_spawn",
        json!({"task": task, "agentId": "worker", "label": "writer"}),
    )
    .await;
    assert_eq!(spawned["status"], json!("ok"), "{spawned}");
    let d = &spawned["details"];
    assert_eq!(d["status"], json!("accepted"), "{d}");
    assert_eq!(d["role"], json!("orchestrator"));
    let child = d["childSessionKey"].as_str().unwrap().to_owned();
    assert!(child.starts_with("agent:worker:subagent:"), "{child}");
    let run_id = d["runId"].as_str().unwrap().to_owned();

    let done = runner
        .wait_for("the child's run", |e| {
            e["event"] == "completed" && e["runId"] == json!(run_id)
        })
        .await;
    let write = &done["results"][0];
    assert_eq!(write["status"], json!("blocked"), "{done}");
    assert_eq!(write["layer"], json!("inherited"), "{done}");
    assert!(
        write["reason"]
            .as_str()
            .unwrap()
            .contains("`inherited` policy layer"),
        "{done}"
    );
    assert!(
        !marker.exists(),
        "the child wrote a file its parent could not"
    );

    let task = terminal_task(&mut ws, &run_id).await;
    assert_eq!(task["status"], json!("succeeded"), "{task}");
    assert_eq!(task["runtime"], json!("subagent"));
    assert_eq!(task["childSessionKey"], json!(child));

    // Announce-back: in the parent's history and delivered to the runner.
    let announce = runner
        .wait_for("the announce-back", |e| {
            e["event"] == "systemEvent" && e["sessionKey"] == json!(PARENT)
        })
        .await;
    assert!(
        announce["text"]
            .as_str()
            .unwrap()
            .contains("child says hello"),
        "{announce}"
    );
    let task = delivered_task(&mut ws, &run_id).await;
    assert_eq!(task["deliveryStatus"], json!("delivered"), "{task}");
    let parent_msgs = history(&mut ws, PARENT, PARENT).await;
    assert!(
        parent_msgs
            .iter()
            .any(|m| m["source"] == json!(format!("subagent:{child}"))
                && m["text"].as_str().unwrap().contains("succeeded")),
        "{parent_msgs:?}"
    );

    // The gateway restarts: the child and its history are still there.
    drop(ws);
    drop(runner);
    gw.signal(15);
    assert_eq!(
        gw.wait_exit(Duration::from_secs(15)),
        Some(0),
        "{}",
        gw.log_text()
    );
    gw.spawn();
    let mut ws = gw.ws().await;
    let listed = invoke(&mut ws, PARENT, "sessions_list", json!({})).await;
    let rows = listed["details"]["sessions"].as_array().unwrap();
    let row = rows
        .iter()
        .find(|r| r["key"] == json!(child))
        .unwrap_or_else(|| panic!("{listed}"));
    assert_eq!(row["parentSessionKey"], json!(PARENT));
    assert_eq!(row["spawnDepth"], json!(1));
    assert_eq!(row["label"], json!("writer"));
    let msgs = history(&mut ws, PARENT, &child).await;
    let texts: Vec<&str> = msgs.iter().map(|m| m["text"].as_str().unwrap()).collect();
    assert!(texts.contains(&"child says hello"), "{texts:?}");
    assert!(texts.iter().any(|t| t.contains("child-wrote")), "{texts:?}");
    let calls = invoke(
        &mut ws,
        PARENT,
        "sessions_history",
        json!({"sessionKey": child}),
    )
    .await;
    assert!(
        calls["details"]["calls"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["tool"] == json!("write")),
        "{calls}"
    );
    // The subagents list still knows the finished run.
    let list = invoke(&mut ws, PARENT, "subagents", json!({"action": "list"})).await;
    assert_eq!(list["details"]["runs"][0]["runId"], json!(run_id), "{list}");
    assert_eq!(list["details"]["runs"][0]["status"], json!("succeeded"));
}

/// An orchestrator (depth 1 of 2) spawns a grandchild; the grandchild is a
/// leaf and its own spawn is refused by the sub-agent layer.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_orchestrator_spawns_to_depth_two_and_a_leaf_cannot_spawn() {
    let gw = Gw::start(CONFIG);
    let mut ws = gw.ws().await;
    let runner = Runner::start(&gw, &mut ws).await;
    let grandchild_task = script(
        json!([{"tool": "sessions_spawn", "params": {"task": "too deep"}}]),
        "grandchild done",
    );
    let child_task = script(
        json!([{"tool": "sessions_spawn", "params": {"task": grandchild_task, "label": "deep"}}]),
        "child done",
    );
    let spawned = invoke(
        &mut ws,
        PARENT,
        "sessions_spawn",
        json!({"task": child_task}),
    )
    .await;
    let child = spawned["details"]["childSessionKey"]
        .as_str()
        .unwrap_or_else(|| panic!("{spawned}"))
        .to_owned();
    let child_run = runner
        .wait_for("the child's run", |e| {
            e["event"] == "completed" && e["sessionKey"] == json!(child)
        })
        .await;
    let inner = &child_run["results"][0];
    assert_eq!(inner["status"], json!("ok"), "{child_run}");
    assert_eq!(inner["details"]["spawnDepth"], json!(2), "{child_run}");
    assert_eq!(inner["details"]["role"], json!("leaf"), "{child_run}");
    let grandchild = inner["details"]["childSessionKey"]
        .as_str()
        .unwrap()
        .to_owned();
    let leaf_run = runner
        .wait_for("the grandchild's run", |e| {
            e["event"] == "completed" && e["sessionKey"] == json!(grandchild)
        })
        .await;
    let refused = &leaf_run["results"][0];
    assert_eq!(refused["status"], json!("blocked"), "{leaf_run}");
    assert_eq!(refused["layer"], json!("subagent"), "{leaf_run}");
    // The grandchild's result is announced to the child, not the parent.
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let msgs = history(&mut ws, PARENT, &child).await;
        if msgs
            .iter()
            .any(|m| m["text"].as_str().unwrap().contains("grandchild done"))
        {
            break;
        }
        assert!(Instant::now() < deadline, "{msgs:?}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let listed = invoke(&mut ws, PARENT, "sessions_list", json!({})).await;
    let row = listed["details"]["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["key"] == json!(grandchild))
        .unwrap_or_else(|| panic!("{listed}"))
        .clone();
    assert_eq!(row["spawnDepth"], json!(2));
    assert_eq!(row["parentSessionKey"], json!(child));
}

/// `sessions_send` round-trips a reply from another agent's session when
/// `tools.agentToAgent` allows both agents, and is refused otherwise.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sessions_send_round_trips_a_reply_only_between_allowed_agents() {
    let gw = Gw::start(CONFIG);
    let mut ws = gw.ws().await;
    let runner = Runner::start(&gw, &mut ws).await;
    let sent = invoke(
        &mut ws,
        PARENT,
        "sessions_send",
        json!({"sessionKey": "agent:worker:main", "message": "ping", "timeoutSeconds": 20}),
    )
    .await;
    assert_eq!(sent["status"], json!("ok"), "{sent}");
    assert_eq!(sent["details"]["status"], json!("ok"));
    assert_eq!(sent["details"]["reply"], json!("echo: ping"), "{sent}");
    let run = runner
        .wait_for("the send's run", |e| {
            e["event"] == "run" && e["trigger"] == "send"
        })
        .await;
    assert_eq!(run["requesterSessionKey"], json!(PARENT), "{run}");
    let task = delivered_task(&mut ws, sent["details"]["runId"].as_str().unwrap()).await;
    assert_eq!(task["status"], json!("succeeded"));
    // The reply went back in the call's own result.
    assert_eq!(task["deliveryStatus"], json!("delivered"), "{task}");
    // `loner` is not in tools.agentToAgent.allow.
    let refused = invoke(
        &mut ws,
        PARENT,
        "sessions_send",
        json!({"sessionKey": "agent:loner:main", "message": "ping"}),
    )
    .await;
    assert_eq!(refused["status"], json!("error"), "{refused}");
    assert_eq!(
        refused["errorCode"],
        json!("session.agent_to_agent_denied"),
        "{refused}"
    );
    assert!(
        refused["error"]
            .as_str()
            .unwrap()
            .contains("tools.agentToAgent.allow"),
        "{refused}"
    );
    // An unknown session answers like an invisible one.
    let unknown = invoke(
        &mut ws,
        PARENT,
        "sessions_send",
        json!({"sessionKey": "agent:main:nope", "message": "ping"}),
    )
    .await;
    assert_eq!(
        unknown["errorCode"],
        json!("session.not_visible"),
        "{unknown}"
    );
}

/// `subagents cancel` ends a child in the middle of an `exec`: the command
/// is gone, the task is `cancelled`, and the parent hears of it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn subagents_cancel_ends_a_child_mid_exec_and_kills_its_command() {
    let gw = Gw::start(CONFIG);
    let mut ws = gw.ws().await;
    let runner = Runner::start(&gw, &mut ws).await;
    let pid_file = gw.dir.path().join("child.pid");
    let command = format!("echo $$ > {}; exec sleep 60", pid_file.display());
    let task = script(
        json!([{"tool": "exec", "params": {"command": command, "yieldMs": 60000}}]),
        "never",
    );
    let spawned = invoke(
        &mut ws,
        PARENT,
        "sessions_spawn",
        json!({"task": task, "label": "sleeper"}),
    )
    .await;
    let run_id = spawned["details"]["runId"]
        .as_str()
        .unwrap_or_else(|| panic!("{spawned}"))
        .to_owned();
    let task_id = spawned["details"]["taskId"].as_str().unwrap().to_owned();
    let pid = wait_for_pid(&pid_file).await;
    assert!(alive(pid), "the child's command is not running");
    let listed = invoke(&mut ws, PARENT, "subagents", json!({})).await;
    assert_eq!(listed["details"]["active"], json!(1), "{listed}");
    let cancelled = invoke(
        &mut ws,
        PARENT,
        "subagents",
        json!({"action": "cancel", "taskId": task_id}),
    )
    .await;
    assert_eq!(cancelled["status"], json!("ok"), "{cancelled}");
    assert_eq!(cancelled["details"]["cancelled"][0]["runId"], json!(run_id));
    let deadline = Instant::now() + Duration::from_secs(10);
    while alive(pid) {
        assert!(Instant::now() < deadline, "pid {pid} survived the cancel");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let task = terminal_task(&mut ws, &run_id).await;
    assert_eq!(task["status"], json!("cancelled"), "{task}");
    let exec = runner
        .wait_for("the exec's end", |e| {
            e["event"] == "call" && e["tool"] == "exec"
        })
        .await;
    assert_ne!(exec["status"], json!("ok"), "{exec}");
    // The stopped child is history: not open, listed with includeClosed.
    let child = spawned["details"]["childSessionKey"].as_str().unwrap();
    let open = ws.ok("sessions.list", json!({})).await;
    assert!(
        !open["sessions"]
            .as_array()
            .unwrap()
            .iter()
            .any(|s| s["sessionKey"] == json!(child)),
        "{open}"
    );
    let all = ws.ok("sessions.list", json!({"includeClosed": true})).await;
    let row = all["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["sessionKey"] == json!(child))
        .unwrap_or_else(|| panic!("{all}"));
    assert_eq!(row["status"], json!("closed"), "{row}");
    assert_eq!(row["params"]["parentSessionKey"], json!(PARENT), "{row}");
    // Cancelling it again (by label): nothing in flight by that name.
    let again = invoke(
        &mut ws,
        PARENT,
        "subagents",
        json!({"action": "cancel", "target": "sleeper"}),
    )
    .await;
    assert_eq!(again["status"], json!("error"), "{again}");
}

/// A fire-and-forget `sessions_send` (`timeoutSeconds: 0`) runs in the
/// background; `tasks.cancel` of its ledger task ends that run: the runner
/// hears `runner.cancel`, the call in flight in the target session is
/// aborted and its command killed, the task is `cancelled` with its
/// delivery recorded, and the target session stays open.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tasks_cancel_ends_a_background_send_mid_exec() {
    let gw = Gw::start(CONFIG);
    let mut ws = gw.ws().await;
    let runner = Runner::start(&gw, &mut ws).await;
    let pid_file = gw.dir.path().join("send.pid");
    let command = format!("echo $$ > {}; exec sleep 60", pid_file.display());
    let message = script(
        json!([{"tool": "exec", "params": {"command": command, "yieldMs": 60000}}]),
        "never",
    );
    let target = "agent:worker:main";
    let sent = invoke(
        &mut ws,
        PARENT,
        "sessions_send",
        json!({"sessionKey": target, "message": message, "timeoutSeconds": 0}),
    )
    .await;
    assert_eq!(sent["details"]["status"], json!("accepted"), "{sent}");
    let run_id = sent["details"]["runId"].as_str().unwrap().to_owned();
    let task_id = sent["details"]["taskId"]
        .as_str()
        .unwrap_or_else(|| panic!("{sent}"))
        .to_owned();
    let pid = wait_for_pid(&pid_file).await;
    assert!(alive(pid), "the send's command is not running");
    let cancelled = ws
        .ok(
            "tasks.cancel",
            json!({"taskId": task_id, "reason": "changed my mind"}),
        )
        .await;
    assert_eq!(
        cancelled["task"]["status"],
        json!("cancelled"),
        "{cancelled}"
    );
    let deadline = Instant::now() + Duration::from_secs(10);
    while alive(pid) {
        assert!(
            Instant::now() < deadline,
            "pid {pid} survived the task's cancel"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    runner
        .wait_for("the send's runner.cancel", |e| {
            e["event"] == "cancel" && e["runId"] == json!(run_id)
        })
        .await;
    let exec = runner
        .wait_for("the exec's end", |e| {
            e["event"] == "call" && e["tool"] == "exec"
        })
        .await;
    assert_ne!(exec["status"], json!("ok"), "{exec}");
    let task = delivered_task(&mut ws, &run_id).await;
    assert_eq!(task["status"], json!("cancelled"), "{task}");
    // Recorded in the target's history only: nobody waited for it.
    assert_eq!(task["deliveryStatus"], json!("session_queued"), "{task}");
    // The target session is not the send's: it stays open and usable.
    let open = ws.ok("sessions.list", json!({})).await;
    assert!(
        open["sessions"]
            .as_array()
            .unwrap()
            .iter()
            .any(|s| s["sessionKey"] == json!(target)),
        "{open}"
    );
    let again = invoke(
        &mut ws,
        PARENT,
        "sessions_send",
        json!({"sessionKey": target, "message": "still there?", "timeoutSeconds": 20}),
    )
    .await;
    assert_eq!(
        again["details"]["reply"],
        json!("echo: still there?"),
        "{again}"
    );
}

/// Bad input and limits: a leaf's parent at the default depth cannot go
/// deeper, fan-out past maxChildrenPerAgent, an agent not in allowAgents,
/// a runner that never answers (timed out, terminal task), no runner at
/// all (a clear error, not a hang).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn limits_and_silent_runners_give_clear_errors_and_terminal_tasks() {
    let gw = Gw::start(CONFIG);
    let mut ws = gw.ws().await;
    let runner = Runner::start(&gw, &mut ws).await;
    let hang = json!({"hang": true}).to_string();
    let mut runs = Vec::new();
    for _ in 0..2 {
        let s = invoke(
            &mut ws,
            PARENT,
            "sessions_spawn",
            json!({"task": hang, "runTimeoutSeconds": 2}),
        )
        .await;
        assert_eq!(s["status"], json!("ok"), "{s}");
        runs.push(s["details"]["runId"].as_str().unwrap().to_owned());
    }
    let third = invoke(
        &mut ws,
        PARENT,
        "sessions_spawn",
        json!({"task": "one more"}),
    )
    .await;
    assert_eq!(third["errorCode"], json!("subagent.limit"), "{third}");
    assert!(
        third["error"]
            .as_str()
            .unwrap()
            .contains("maxChildrenPerAgent"),
        "{third}"
    );
    let other = invoke(
        &mut ws,
        PARENT,
        "sessions_spawn",
        json!({"task": "x", "agentId": "loner"}),
    )
    .await;
    assert_eq!(
        other["errorCode"],
        json!("subagent.agent_not_allowed"),
        "{other}"
    );
    let bad = invoke(
        &mut ws,
        PARENT,
        "sessions_spawn",
        json!({"task": "x", "cleanup": "shred"}),
    )
    .await;
    assert_eq!(bad["errorCode"], json!("input.invalid"), "{bad}");
    // The silent runs end at their deadline, as timed_out tasks.
    for run in &runs {
        let t = terminal_task(&mut ws, run).await;
        assert_eq!(t["status"], json!("timed_out"), "{t}");
    }
    runner
        .wait_for("a runner.cancel", |e| e["event"] == "cancel")
        .await;
    drop(runner);
    // No runner at all: sessions_send fails within its wait, clearly.
    let started = Instant::now();
    let none = invoke(
        &mut ws,
        PARENT,
        "sessions_send",
        json!({"sessionKey": "agent:worker:main", "message": "anyone?", "timeoutSeconds": 2}),
    )
    .await;
    assert_ne!(none["status"], json!("ok"), "{none}");
    assert!(
        ["runner.timed_out", "runner.unavailable"].contains(&none["errorCode"].as_str().unwrap()),
        "{none}"
    );
    assert!(started.elapsed() < Duration::from_secs(10));
    // A spawn with no runner: it fails, and its announce-back is only
    // recorded in the parent's history (nobody to deliver it to).
    let lone = invoke(
        &mut ws,
        PARENT,
        "sessions_spawn",
        json!({"task": "nobody runs this", "runTimeoutSeconds": 2}),
    )
    .await;
    assert_eq!(lone["status"], json!("ok"), "{lone}");
    let t = delivered_task(&mut ws, lone["details"]["runId"].as_str().unwrap()).await;
    assert_ne!(t["status"], json!("succeeded"), "{t}");
    assert_eq!(t["deliveryStatus"], json!("session_queued"), "{t}");
}

/// At the default `maxSpawnDepth` (1) a child is a leaf: its own spawn is
/// refused by the fixed leaf deny, and `agents_list` from the parent shows
/// only the agents it may target.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn at_the_default_depth_a_child_is_a_leaf() {
    let gw = Gw::start("{}");
    let mut ws = gw.ws().await;
    let runner = Runner::start(&gw, &mut ws).await;
    let task = script(
        json!([{"tool": "sessions_spawn", "params": {"task": "x"}}]),
        "ok",
    );
    let s = invoke(&mut ws, PARENT, "sessions_spawn", json!({"task": task})).await;
    assert_eq!(s["details"]["role"], json!("leaf"), "{s}");
    let child = s["details"]["childSessionKey"].as_str().unwrap().to_owned();
    let run = runner
        .wait_for("the leaf's run", |e| {
            e["event"] == "completed" && e["sessionKey"] == json!(child)
        })
        .await;
    assert_eq!(run["results"][0]["status"], json!("blocked"), "{run}");
    assert!(
        run["results"][0]["reason"]
            .as_str()
            .unwrap_or_default()
            .contains("leaf sub-agent deny (fixed)"),
        "{run}"
    );
    let agents = invoke(&mut ws, PARENT, "agents_list", json!({})).await;
    assert_eq!(
        agents["details"]["agents"][0]["id"],
        json!("main"),
        "{agents}"
    );
    assert_eq!(agents["details"]["agents"][0]["spawn"], json!(true));
}

/// `sessions.spawn`, `sessions.history` and `sessions.send` are the tools'
/// calls over the protocol: same gate, same results.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_sessions_methods_are_the_tools_calls() {
    let gw = Gw::start(CONFIG);
    let mut ws = gw.ws().await;
    let _runner = Runner::start(&gw, &mut ws).await;
    let spawned = ws
        .ok(
            "sessions.spawn",
            json!({"sessionKey": PARENT, "task": "hi", "label": "rpc", "toolCallId": "spawn-1"}),
        )
        .await;
    assert_eq!(spawned["status"], json!("ok"), "{spawned}");
    assert_eq!(spawned["toolCallId"], json!("spawn-1"));
    let child = spawned["details"]["childSessionKey"]
        .as_str()
        .unwrap()
        .to_owned();
    let run_id = spawned["details"]["runId"].as_str().unwrap().to_owned();
    assert_eq!(
        terminal_task(&mut ws, &run_id).await["status"],
        json!("succeeded")
    );
    // session_status reports the session's tasks and origin beside the run.
    let status = invoke(&mut ws, PARENT, "session_status", json!({})).await;
    let d = &status["details"];
    assert_eq!(d["ok"], json!(true), "{status}");
    assert_eq!(
        d["tasks"]["latest"]["runtime"],
        json!("subagent"),
        "{status}"
    );
    assert_eq!(
        d["tasks"]["latest"]["childSessionKey"],
        json!(child),
        "{status}"
    );
    assert_eq!(d["kind"], json!("main"), "{status}");
    assert!(
        d["statusText"].as_str().unwrap().contains("agentId: main"),
        "{status}"
    );
    let hist = ws
        .ok(
            "sessions.history",
            json!({"sessionKey": PARENT, "targetSessionKey": child, "includeTools": false}),
        )
        .await;
    let texts: Vec<&str> = hist["details"]["messages"]
        .as_array()
        .unwrap_or_else(|| panic!("{hist}"))
        .iter()
        .map(|m| m["text"].as_str().unwrap())
        .collect();
    assert_eq!(texts, ["hi", "echo: hi"], "{hist}");
    let sent = ws
        .ok(
            "sessions.send",
            json!({"sessionKey": PARENT, "targetSessionKey": child, "message": "again"}),
        )
        .await;
    assert_eq!(sent["details"]["reply"], json!("echo: again"), "{sent}");
    // The child (an orchestrator at depth 1 of 2) spawns a leaf; the leaf
    // cannot spawn through the method either: the gate decides.
    let leaf = ws
        .ok(
            "sessions.spawn",
            json!({"sessionKey": child, "task": "deeper"}),
        )
        .await;
    assert_eq!(leaf["details"]["role"], json!("leaf"), "{leaf}");
    let leaf_key = leaf["details"]["childSessionKey"].as_str().unwrap();
    let refused = ws
        .ok(
            "sessions.spawn",
            json!({"sessionKey": leaf_key, "task": "deepest"}),
        )
        .await;
    assert_eq!(refused["status"], json!("blocked"), "{refused}");
    assert_eq!(refused["layer"], json!("subagent"), "{refused}");
    let bad = ws
        .call(
            "sessions.spawn",
            json!({"sessionKey": PARENT, "tsak": "typo"}),
        )
        .await;
    assert!(
        bad["error"]["message"].as_str().unwrap().contains("tsak"),
        "{bad}"
    );
}

async fn wait_for_pid(path: &Path) -> u32 {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        if let Ok(t) = std::fs::read_to_string(path)
            && let Ok(pid) = t.trim().parse()
        {
            return pid;
        }
        assert!(
            Instant::now() < deadline,
            "{} never appeared",
            path.display()
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Whether `pid` is a live (not zombie) process.
fn alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => stat
            .rsplit_once(") ")
            .is_some_and(|(_, rest)| !rest.starts_with('Z')),
        Err(_) => false,
    }
}

/// The runner process's entry point: does nothing unless started by
/// [`Runner::start`] (the environment names the gateway).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scripted_runner_process() {
    let (Ok(addr), Ok(token), Ok(log)) = (
        std::env::var(ADDR_ENV),
        std::env::var(TOKEN_ENV),
        std::env::var(LOG_ENV),
    ) else {
        return;
    };
    let addr: std::net::SocketAddr = addr.parse().unwrap();
    let mut main = Ws::connect(addr, Some(&token)).await.unwrap();
    main.ok("runner.subscribe", json!({})).await;
    let log = std::sync::Arc::new(std::sync::Mutex::new(
        std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(log)
            .unwrap(),
    ));
    let write = {
        let log = log.clone();
        move |v: Value| {
            use std::io::Write as _;
            let mut f = log.lock().unwrap();
            writeln!(f, "{v}").unwrap();
        }
    };
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<String>();
    let mut next_id = 1_000_000u64;
    loop {
        tokio::select! {
            frame = main.stream.next() => {
                let Some(Ok(Message::Text(t))) = frame else { return };
                let Ok(v) = serde_json::from_str::<Value>(t.as_str()) else { continue };
                let params = v["params"].clone();
                match v["method"].as_str() {
                    Some("runner.run") => {
                        let mut ev = params.clone();
                        ev["event"] = json!("run");
                        write(ev);
                        let tx = tx.clone();
                        let write = write.clone();
                        tokio::spawn(async move {
                            play(addr, &token_of(), params, tx, write).await;
                        });
                    }
                    Some("runner.cancel") => {
                        let mut ev = params.clone();
                        ev["event"] = json!("cancel");
                        write(ev);
                    }
                    Some("runner.systemEvent") => {
                        let mut ev = params.clone();
                        ev["event"] = json!("systemEvent");
                        write(ev);
                    }
                    _ => {}
                }
            }
            Some(frame) = rx.recv() => {
                next_id += 1;
                let mut v: Value = serde_json::from_str(&frame).unwrap();
                v["id"] = json!(next_id);
                let _ = main.stream.send(Message::Text(v.to_string().into())).await;
            }
        }
    }
}

fn token_of() -> String {
    std::env::var(TOKEN_ENV).unwrap()
}

/// Play one turn: its tool calls on a connection of its own, then
/// `runner.complete` through the subscribed connection.
async fn play(
    addr: std::net::SocketAddr,
    token: &str,
    run: Value,
    complete: tokio::sync::mpsc::UnboundedSender<String>,
    write: impl Fn(Value),
) {
    let run_id = run["runId"].clone();
    let session = run["sessionKey"].as_str().unwrap_or_default().to_owned();
    let message = run["message"].as_str().unwrap_or_default().to_owned();
    let script: Value = serde_json::from_str(&message).unwrap_or(Value::Null);
    if script["hang"] == json!(true) {
        return;
    }
    let reply = match script["reply"].as_str() {
        Some(r) => r.to_owned(),
        None => format!("echo: {message}"),
    };
    let mut ws = Ws::connect(addr, Some(token)).await.unwrap();
    let mut results = Vec::new();
    for call in script["calls"].as_array().cloned().unwrap_or_default() {
        let r = ws
            .call(
                "tools.invoke",
                json!({"sessionKey": session, "toolName": call["tool"], "params": call["params"]}),
            )
            .await;
        let r = if r.get("result").is_some() {
            r["result"].clone()
        } else {
            r["error"].clone()
        };
        write(
            json!({"event": "call", "tool": call["tool"], "status": r["status"], "runId": run_id}),
        );
        results.push(r);
    }
    write(json!({
        "event": "completed",
        "runId": run_id,
        "sessionKey": session,
        "results": results,
    }));
    let frame = json!({
        "jsonrpc": "2.0",
        "method": "runner.complete",
        "params": {"runId": run_id, "status": "ok", "summary": reply},
    });
    let _ = complete.send(frame.to_string());
}
