//! Several gateways on one PostgreSQL database (`state.backend:
//! "postgres"`), against a real server: start faults, membership, and the
//! fleet in `health`.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use talon_test_support::postgres::{PgServer, shared_database};

use super::support::{BIN, Gw, GwExt as _};

/// The environment variable the configs read the password from.
const PASSWORD_VAR: &str = "TALON_E2E_PG_PASSWORD";

fn state_config(url: &str) -> String {
    state_config_with(url, json!({}))
}

/// `extra`'s top-level sections beside the shared `state` section.
fn state_config_with(url: &str, extra: Value) -> String {
    let mut config = json!({
        "state": {
            "backend": "postgres",
            "url": url,
            "password": format!("${{{PASSWORD_VAR}}}"),
            "pool": { "size": 4, "connectTimeoutSeconds": 2 }
        }
    });
    if let (Some(c), Value::Object(extra)) = (config.as_object_mut(), extra) {
        c.extend(extra);
    }
    config.to_string()
}

/// Run the daemon until it exits by itself (a start that must fail).
fn run_to_exit(config: &str, password: &str) -> (Option<i32>, String) {
    let dir = tempfile::tempdir().unwrap();
    let config_path = dir.path().join("talon.json");
    std::fs::write(&config_path, config).unwrap();
    let mut child = Command::new(BIN)
        .arg("--config")
        .arg(&config_path)
        .arg("--state-dir")
        .arg(dir.path().join("state"))
        .args(["--bind", "127.0.0.1:0"])
        .env("HOME", dir.path())
        .env("NO_COLOR", "1")
        .env(PASSWORD_VAR, password)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            let mut err = String::new();
            if let Some(mut e) = child.stderr.take() {
                std::io::Read::read_to_string(&mut e, &mut err).unwrap();
            }
            return (status.code(), err);
        }
        assert!(Instant::now() < deadline, "the gateway did not exit");
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn start_member(url: &str, password: &str) -> Gw {
    start_member_with(url, password, json!({}))
}

fn start_member_with(url: &str, password: &str, extra: Value) -> Gw {
    let dir = tempfile::tempdir().unwrap();
    Gw::launch_in_with_env(
        BIN,
        dir,
        &state_config_with(url, extra),
        vec![(PASSWORD_VAR.to_owned(), password.to_owned())],
    )
    .unwrap_or_else(|e| panic!("{e:#}"))
}

async fn health(gw: &Gw) -> Value {
    gw.ws().await.ok("health", json!({})).await
}

#[test]
fn a_database_down_at_start_stops_the_gateway_non_zero_and_names_it() {
    let mut server = PgServer::start().unwrap();
    let db = server.create_database().unwrap();
    let url = server.url(&db);
    let password = server.password().to_owned();
    server.stop().unwrap();
    let (code, err) = run_to_exit(&state_config(&url), &password);
    assert_ne!(code, Some(0), "{err}");
    assert!(code.is_some(), "killed by a signal: {err}");
    assert!(err.contains("state database"), "{err}");
    assert!(
        err.contains(&format!("talon@127.0.0.1:{}/{db}", server.port())),
        "{err}"
    );
    assert!(!err.contains(&password), "the password was printed: {err}");
}

#[test]
fn a_wrong_password_and_a_missing_password_variable_stop_the_start() {
    let db = shared_database().unwrap();
    let cfg = db.config();
    let (code, err) = run_to_exit(&state_config(&cfg.url), "not-the-password");
    assert_ne!(code, Some(0), "{err}");
    assert!(err.contains("state database"), "{err}");
    // The variable the config names is not set at all.
    let dir = tempfile::tempdir().unwrap();
    let config_path = dir.path().join("talon.json");
    std::fs::write(&config_path, state_config(&cfg.url)).unwrap();
    let out = Command::new(BIN)
        .arg("--config")
        .arg(&config_path)
        .arg("--state-dir")
        .arg(dir.path().join("state"))
        .args(["--bind", "127.0.0.1:0"])
        .env("HOME", dir.path())
        .env_remove(PASSWORD_VAR)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{err}");
    assert!(err.contains(PASSWORD_VAR), "{err}");
}

#[test]
fn a_schema_newer_than_the_binary_is_refused_and_left_alone() {
    let db = shared_database().unwrap();
    let pool = db.pool().unwrap();
    pool.run(|c| {
        c.execute(
            "UPDATE talon_schema SET version = 999 WHERE store = 'state'",
            &[],
        )?;
        Ok(())
    })
    .unwrap();
    let cfg = db.config();
    let (code, err) = run_to_exit(&state_config(&cfg.url), cfg.password.as_deref().unwrap());
    assert_ne!(code, Some(0), "{err}");
    assert!(err.contains("999"), "{err}");
    let version: i32 = pool
        .run(|c| {
            Ok(c.query_one(
                "SELECT version FROM talon_schema WHERE store = 'state'",
                &[],
            )?
            .get(0))
        })
        .unwrap();
    assert_eq!(version, 999, "the refusal changed the schema row");
}

#[tokio::test]
async fn gateways_on_one_database_list_each_other_and_a_clean_stop_leaves() {
    let db = shared_database().unwrap();
    let cfg = db.config();
    let password = cfg.password.clone().unwrap();
    let a = start_member(&cfg.url, &password);
    let mut b = start_member(&cfg.url, &password);
    let ha = health(&a).await;
    let hb = health(&b).await;
    assert_eq!(ha["state"]["backend"], "postgres", "{ha}");
    let id_a = ha["state"]["memberId"].as_str().unwrap().to_owned();
    let id_b = hb["state"]["memberId"].as_str().unwrap().to_owned();
    assert_ne!(id_a, id_b);
    let members: Vec<&str> = ha["state"]["members"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["id"].as_str().unwrap())
        .collect();
    assert!(
        members.contains(&id_a.as_str()) && members.contains(&id_b.as_str()),
        "{ha}"
    );
    assert!(
        !ha.to_string().contains(&password),
        "health shows the password"
    );
    // Each member shows the address it actually listens on.
    let listens: Vec<&str> = ha["state"]["members"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["listen"].as_str().unwrap())
        .collect();
    assert!(listens.contains(&a.addr.to_string().as_str()), "{ha}");
    assert!(listens.contains(&b.addr.to_string().as_str()), "{ha}");
    // b stops cleanly: it leaves the member list.
    b.signal(15);
    assert_eq!(
        b.wait_exit(Duration::from_secs(20)),
        Some(0),
        "{}",
        b.log_text()
    );
    let ha = health(&a).await;
    let ids: Vec<&str> = ha["state"]["members"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, vec![id_a.as_str()], "{ha}");
}

#[tokio::test]
async fn a_sqlite_gateway_reports_its_backend() {
    let gw = Gw::start("{}");
    let h = health(&gw).await;
    assert_eq!(h["state"], json!({"backend": "sqlite"}), "{h}");
}

#[tokio::test]
async fn a_lost_database_refuses_side_effects_as_unavailable_and_they_resume_after_it_returns() {
    let mut server = PgServer::start().unwrap();
    let db = server.create_database().unwrap();
    let gw = start_member(&server.url(&db), server.password());
    let mut ws = gw.ws().await;
    let exec = |marker: &str| {
        json!({"sessionKey": "main", "toolName": "exec",
               "params": {"command": format!("touch {marker}")}})
    };
    let marker = gw.dir.path().join("ran-before");
    let r = ws
        .ok("tools.invoke", exec(&marker.display().to_string()))
        .await;
    assert_eq!(r["status"], "ok", "{r}");
    assert!(marker.exists());
    server.stop().unwrap();
    // No write-ahead record, no run: the call is refused as unavailable.
    let lost = gw.dir.path().join("ran-while-down");
    let v = ws
        .call("tools.invoke", exec(&lost.display().to_string()))
        .await;
    assert_eq!(
        v["error"]["code"],
        json!(talon_gateway_protocol::frame::UNAVAILABLE),
        "{v}"
    );
    assert!(
        !lost.exists(),
        "the command ran without its write-ahead record"
    );
    server.start_again().unwrap();
    let back = gw.dir.path().join("ran-after");
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let v = ws
            .call("tools.invoke", exec(&back.display().to_string()))
            .await;
        if v["result"]["status"] == "ok" {
            break;
        }
        assert_eq!(
            v["error"]["code"],
            json!(talon_gateway_protocol::frame::UNAVAILABLE),
            "{v}"
        );
        assert!(
            Instant::now() < deadline,
            "the gateway did not reconnect: {v}"
        );
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    assert!(back.exists());
}

#[tokio::test]
async fn a_session_created_on_one_gateway_is_used_on_another_with_its_own_policy() {
    let db = shared_database().unwrap();
    let cfg = db.config();
    let password = cfg.password.clone().unwrap();
    // Both members run the same config; the session's channel denies exec.
    let extra = json!({"channels": {"telegram": {"tools": {"deny": ["exec"]}}}});
    let a = start_member_with(&cfg.url, &password, extra.clone());
    let b = start_member_with(&cfg.url, &password, extra);
    let mut wa = a.ws().await;
    let mut wb = b.ws().await;
    const KEY: &str = "agent:main:fleet-shared";
    wa.ok(
        "sessions.create",
        json!({"sessionKey": KEY, "agentId": "main", "channel": "telegram"}),
    )
    .await;
    // b never saw sessions.create: it opens the session from the store.
    let r = wb
        .ok(
            "tools.invoke",
            json!({"sessionKey": KEY, "toolName": "session_status", "toolCallId": "on-b"}),
        )
        .await;
    assert_eq!(r["status"], "ok", "{r}");
    // The session's own restriction holds on b too.
    let r = wb
        .ok(
            "tools.invoke",
            json!({"sessionKey": KEY, "toolName": "exec", "params": {"command": "id"}}),
        )
        .await;
    assert_eq!(r["status"], "blocked", "{r}");
    // A key nobody created is still unknown on b.
    let v = wb
        .call(
            "tools.invoke",
            json!({"sessionKey": "agent:main:never-made", "toolName": "session_status"}),
        )
        .await;
    assert!(v.get("error").is_some(), "{v}");
    // Closed on a, it closes on b too, within a few of b's fleet ticks,
    // and is not reopened from the store.
    wa.ok("sessions.close", json!({"sessionKey": KEY})).await;
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let v = wb
            .call(
                "tools.invoke",
                json!({"sessionKey": KEY, "toolName": "session_status"}),
            )
            .await;
        if v.get("error").is_some() {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the session closed on a still runs calls on b: {v}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let listed = wb.ok("sessions.list", json!({})).await;
    let keys: Vec<&str> = listed["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|s| s["sessionKey"].as_str())
        .collect();
    assert!(!keys.contains(&KEY), "{listed}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_approval_raised_on_one_gateway_is_resolved_on_another() {
    let db = shared_database().unwrap();
    let cfg = db.config();
    let password = cfg.password.clone().unwrap();
    let hook = json!({"tools": {"hooks": {"beforeToolCall": [{
        "id": "ask-exec",
        "matcher": ["exec"],
        "command": ["/bin/sh", "-c", "cat >/dev/null; printf '%s' '{\"requireApproval\":{\"title\":\"Run a command?\",\"description\":\"exec wants to run\",\"timeoutMs\":20000}}'"]
    }]}}});
    let a = start_member_with(&cfg.url, &password, hook.clone());
    let b = start_member_with(&cfg.url, &password, hook);
    let mut approver_on_b = b.ws().await;
    let marker = a.dir.path().join("approved-on-b");
    let cmd = format!("echo ran > {}", marker.display());
    let (addr, token) = (a.addr, a.token.clone());
    let waiting = tokio::spawn(async move {
        let mut agent = super::support::Ws::connect(addr, Some(&token))
            .await
            .unwrap();
        agent
            .ok(
                "tools.invoke",
                json!({"sessionKey": "main", "toolName": "exec", "toolCallId": "ask-on-a",
                       "params": {"command": cmd}}),
            )
            .await
    });
    // b's clients hear of a's request and see it pending.
    let req = approver_on_b.notification("approval.requested").await;
    let id = req["params"]["id"].as_str().unwrap().to_owned();
    assert_eq!(req["params"]["callId"], "ask-on-a", "{req}");
    let pending = approver_on_b.ok("approvals.list", json!({})).await;
    let ids: Vec<&str> = pending["approvals"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|r| r["id"].as_str())
        .collect();
    assert_eq!(ids, vec![id.as_str()], "{pending}");
    assert!(!marker.exists(), "nothing runs before the approval");
    let r = approver_on_b
        .ok(
            "approvals.resolve",
            json!({"id": id, "decision": "allow-once"}),
        )
        .await;
    assert_eq!(r["outcome"], "applied", "{r}");
    let done = tokio::time::timeout(Duration::from_secs(10), waiting)
        .await
        .expect("a's call did not resume after b's decision")
        .unwrap();
    assert_eq!(done["status"], "ok", "{done}");
    assert_eq!(std::fs::read_to_string(&marker).unwrap().trim(), "ran");
    // A second decision, on either gateway, is ignored.
    let mut approver_on_a = a.ws().await;
    let dup = approver_on_a
        .ok("approvals.resolve", json!({"id": id, "decision": "deny"}))
        .await;
    assert_eq!(dup["applied"], false, "{dup}");
}

/// Runs of `job` as the fleet recorded them (read through `gw`).
async fn fleet_runs(gw: &Gw, job: &str) -> Vec<Value> {
    let runs = gw
        .ws()
        .await
        .ok("cron.runs", json!({"jobId": job, "limit": 200}))
        .await;
    runs["runs"].as_array().cloned().unwrap_or_default()
}

/// A runner on `gw` that completes every run it is handed at once (a
/// run goes to the runners of the member that fires it).
async fn answering_runner(gw: &Gw) -> tokio::task::JoinHandle<()> {
    let mut ws = gw.ws().await;
    ws.ok("runner.subscribe", json!({})).await;
    tokio::spawn(async move {
        loop {
            let run = ws.notification("runner.run").await;
            let id = run["params"]["runId"].clone();
            ws.call("runner.complete", json!({"runId": id, "status": "ok"}))
                .await;
        }
    })
}

/// Every recorded run has its own slot: no slot ran twice.
fn assert_each_slot_once(runs: &[Value]) {
    let mut slots: Vec<i64> = runs.iter().filter_map(|r| r["slotMs"].as_i64()).collect();
    let n = slots.len();
    slots.sort_unstable();
    slots.dedup();
    assert_eq!(slots.len(), n, "a slot ran twice: {runs:?}");
}

/// Three gateways on one database, a job every second: one timer owner
/// (the `cron` lease), each slot fired once across the fleet; the owner
/// SIGKILLed: another member holds the lease within its time, the job
/// keeps firing, still once per slot.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_gateways_fire_each_cron_slot_once_and_survive_the_owner_dying() {
    let db = shared_database().unwrap();
    let cfg = db.config();
    let password = cfg.password.clone().unwrap();
    let extra = json!({"cron": {"quotas": {"minIntervalSeconds": 1}}});
    let mut members: Vec<Gw> = (0..3)
        .map(|_| start_member_with(&cfg.url, &password, extra.clone()))
        .collect();
    let mut runners = Vec::new();
    for m in &members {
        runners.push(answering_runner(m).await);
    }
    let added = members[1]
        .ws()
        .await
        .ok(
            "cron.add",
            json!({"job": {"name": "tick", "schedule": {"kind": "every", "everyMs": 1000},
                   "payload": {"kind": "systemEvent", "text": "tick"}}}),
        )
        .await;
    let job = added["job"]["id"].as_str().unwrap().to_owned();
    tokio::time::sleep(Duration::from_secs(6)).await;
    let runs = fleet_runs(&members[0], &job).await;
    assert!(runs.len() >= 3, "the job hardly ran: {runs:?}");
    assert_each_slot_once(&runs);
    // Exactly one member holds the timer lease; find and kill it.
    let h = health(&members[0]).await;
    let holder = h["state"]["leases"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["name"] == "cron")
        .map(|l| l["holder"].as_str().unwrap().to_owned())
        .unwrap_or_else(|| panic!("nobody holds the cron lease: {h}"));
    let mut owner_index = None;
    for (i, m) in members.iter().enumerate() {
        if health(m).await["state"]["memberId"] == holder.as_str() {
            owner_index = Some(i);
        }
    }
    let owner_index = owner_index.expect("the holder is one of the members");
    let mut owner = members.remove(owner_index);
    owner.signal(9);
    owner.wait_exit(Duration::from_secs(10));
    let before = fleet_runs(&members[0], &job).await.len();
    // Lease time 5 s: another member holds it well within 10 s.
    let deadline = Instant::now() + Duration::from_secs(10);
    let new_holder = loop {
        let h = health(&members[0]).await;
        let held = h["state"]["leases"].as_array().and_then(|l| {
            l.iter()
                .find(|l| l["name"] == "cron" && l["holder"] != holder.as_str())
                .map(|l| l["holder"].as_str().unwrap_or_default().to_owned())
        });
        if let Some(h) = held {
            break h;
        }
        assert!(
            Instant::now() < deadline,
            "no member took the cron lease over: {h}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    assert_ne!(new_holder, holder);
    tokio::time::sleep(Duration::from_secs(4)).await;
    let after = fleet_runs(&members[1], &job).await;
    assert!(
        after.len() > before,
        "the job stopped after the takeover: {after:?}"
    );
    assert_each_slot_once(&after);
    // Runs end: at most the newest one is still running, and one the dead
    // owner had in flight is interrupted, never run again.
    let running = after.iter().filter(|r| r["status"] == "running").count();
    assert!(running <= 1, "runs left running: {after:?}");
    let ok = after.iter().filter(|r| r["status"] == "ok").count();
    assert!(ok + 2 >= after.len(), "runs did not complete: {after:?}");
    for r in runners {
        r.abort();
    }
}
