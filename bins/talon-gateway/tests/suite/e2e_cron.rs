//! End-to-end: cron keeps its promises against a real gateway and a real
//! runner client. A run's session is capped by its job's tools whatever
//! the runner asks; a run past its timeout is cancelled (`runner.cancel`,
//! its exec process ends), recorded `timeout`, and its late result is
//! refused; the quotas refuse the job past the limit and a too-short
//! interval.

use super::support;

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use support::{Gw, GwExt as _, Ws};

/// Sessions in group `limited` lack `exec`; the agent itself allows it.
const LIMITED_GROUP: &str = r#"{"tools": {"groups": {"limited": {"deny": ["exec"]}}}}"#;

fn tool_names(v: &Value) -> Vec<String> {
    serde_json::from_value(v.clone()).unwrap_or_else(|e| panic!("{e}: {v}"))
}

/// Whether any process's command line mentions `needle`.
fn process_mentioning(needle: &str) -> bool {
    let me = std::process::id().to_string();
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            name.chars().all(|c| c.is_ascii_digit()) && name != me
        })
        .any(|e| {
            std::fs::read(e.path().join("cmdline"))
                .is_ok_and(|c| String::from_utf8_lossy(&c).contains(needle))
        })
}

async fn runs_of(op: &mut Ws, job_id: &str, until: impl Fn(&Value) -> bool) -> Value {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let runs = op.ok("cron.runs", json!({"jobId": job_id})).await;
        if until(&runs) {
            return runs;
        }
        assert!(Instant::now() < deadline, "cron.runs never matched: {runs}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// A job created from a session that lacks `exec` never runs `exec`: the
/// session the runner opens for its run lacks it too (the table, `tools.list`
/// and `tools.invoke` all say so), although the agent allows `exec`, and
/// whatever the runner asks (another trigger, another agent, a session
/// opened on first use, a session after the run ended).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cron_runs_session_lacks_the_tool_its_creator_lacked() {
    let gw = Gw::start(LIMITED_GROUP);
    let mut op = gw.ws().await;
    let mut runner = gw.ws().await;
    runner.ok("runner.subscribe", json!({})).await;

    // The agent allows exec: its main session runs it.
    let marker = gw.dir.path().join("main-ran");
    let ran = op
        .ok("tools.invoke", json!({"sessionKey": "main", "toolName": "exec", "params": {"command": format!("touch {}", marker.display())}}))
        .await;
    assert_eq!(ran["status"], json!("ok"), "{ran}");
    assert!(marker.exists());

    // The creator: a session of the same agent in group `limited`.
    let creator = op
        .ok(
            "sessions.create",
            json!({"sessionKey": "agent:main:gw:limited", "group": "limited"}),
        )
        .await;
    let creator_tools = tool_names(&creator["tools"]);
    assert!(!creator_tools.contains(&"exec".to_owned()), "{creator}");
    assert!(creator_tools.contains(&"cron".to_owned()), "{creator}");
    // It asks for exec by name; the cap drops it.
    let added = op
        .ok("tools.invoke", json!({"sessionKey": "agent:main:gw:limited", "toolName": "cron", "params": {
            "action": "add",
            "job": {"name": "sneaky", "schedule": {"kind": "every", "everyMs": 3600000},
                    "payload": {"kind": "agentTurn", "message": "run exec", "toolsAllow": ["exec", "read", "session_status"]}}
        }}))
        .await;
    assert_eq!(added["status"], json!("ok"), "{added}");
    let job_id = added["details"]["job"]["id"].as_str().unwrap().to_owned();
    assert_eq!(added["details"]["droppedTools"], json!(["exec"]), "{added}");

    op.ok("cron.run", json!({"jobId": job_id, "runMode": "force"}))
        .await;
    let run = runner.notification("runner.run").await;
    let run_id = run["params"]["runId"].as_str().unwrap().to_owned();
    let key = run["params"]["sessionKey"].as_str().unwrap().to_owned();
    assert!(!tool_names(&run["params"]["tools"]).contains(&"exec".to_owned()));

    // Asking for another trigger or agent is refused, not obeyed.
    let wrong = runner
        .call(
            "sessions.create",
            json!({"sessionKey": key, "trigger": "user"}),
        )
        .await;
    assert_eq!(wrong["error"]["data"]["param"], json!("trigger"), "{wrong}");
    let wrong = runner
        .call(
            "sessions.create",
            json!({"sessionKey": key, "agentId": "other"}),
        )
        .await;
    assert_eq!(wrong["error"]["data"]["param"], json!("agentId"), "{wrong}");

    // The run's session, opened on first use by tools.invoke: exec is
    // refused by the cap, and nothing ran.
    let marker = gw.dir.path().join("cron-ran");
    let cmd = format!("touch {}", marker.display());
    let blocked = runner
        .ok(
            "tools.invoke",
            json!({"sessionKey": key, "toolName": "exec", "params": {"command": cmd}}),
        )
        .await;
    assert_eq!(blocked["status"], json!("blocked"), "{blocked}");
    assert_eq!(blocked["deniedReason"], json!("tool-policy"), "{blocked}");
    assert_eq!(blocked["layer"], json!("inherited"), "{blocked}");
    assert!(!marker.exists(), "exec ran in the cron run's session");
    // …and sessions.create on the same key gives the same capped session.
    let opened = runner
        .ok(
            "sessions.create",
            json!({"sessionKey": key, "trigger": "cron", "agentId": "main"}),
        )
        .await;
    let tools = tool_names(&opened["tools"]);
    assert!(!tools.contains(&"exec".to_owned()), "{opened}");
    assert!(tools.contains(&"read".to_owned()), "{opened}");
    assert_eq!(opened["session"]["params"]["trigger"], json!("cron"));
    let listed = runner.ok("tools.list", json!({"sessionKey": key})).await;
    assert!(
        !listed["tools"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["name"] == "exec"),
        "{listed}"
    );
    let ok = runner
        .ok(
            "tools.invoke",
            json!({"sessionKey": key, "toolName": "session_status", "params": {}}),
        )
        .await;
    assert_eq!(ok["status"], json!("ok"), "{ok}");

    runner
        .ok(
            "runner.complete",
            json!({"runId": run_id, "status": "ok", "summary": "no exec"}),
        )
        .await;
    runs_of(&mut op, &job_id, |r| r.to_string().contains("no exec")).await;

    // After the run the key opens nothing: not the capped session, and not
    // an uncapped one either.
    let after = runner
        .call(
            "tools.invoke",
            json!({"sessionKey": key, "toolName": "exec", "params": {"command": cmd}}),
        )
        .await;
    assert!(after.get("error").is_some(), "{after}");
    let recreate = runner
        .call("sessions.create", json!({"sessionKey": key}))
        .await;
    assert_eq!(
        recreate["error"]["data"]["errorCode"],
        json!("session.cron_run_not_in_flight"),
        "{recreate}"
    );
    assert!(!marker.exists());
    // A second result for the same run is refused too.
    let again = runner
        .call("runner.complete", json!({"runId": run_id, "status": "ok"}))
        .await;
    assert_eq!(
        again["error"]["data"]["errorCode"],
        json!("runner.run_already_completed"),
        "{again}"
    );
}

/// A run past its `timeoutSeconds` is cancelled: the runner gets
/// `runner.cancel` with reason `timeout`, the exec call in flight in the
/// run's session ends with its process, the run is recorded `timeout`, and
/// the runner's late `runner.complete` is refused with a typed error.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_past_its_timeout_is_cancelled_recorded_timeout_and_its_late_result_refused() {
    let gw = Gw::start("{}");
    let mut op = gw.ws().await;
    let mut runner = gw.ws().await;
    runner.ok("runner.subscribe", json!({})).await;
    let added = op
        .ok(
            "cron.add",
            json!({"job": {"name": "slow", "schedule": {"kind": "every", "everyMs": 3600000},
            "payload": {"kind": "agentTurn", "message": "take long", "timeoutSeconds": 3}}}),
        )
        .await;
    let job_id = added["job"]["id"].as_str().unwrap().to_owned();
    op.ok("cron.run", json!({"jobId": job_id, "runMode": "force"}))
        .await;
    let run = runner.notification("runner.run").await;
    let run_id = run["params"]["runId"].as_str().unwrap().to_owned();
    let key = run["params"]["sessionKey"].as_str().unwrap().to_owned();
    assert_eq!(run["params"]["timeoutMs"], json!(3000));

    // The run starts a long command in its session (on its own
    // connection, as a runner's tool loop would).
    let marker = gw.dir.path().join("finished-after-timeout");
    let cmd = format!("sleep 30 && touch {}", marker.display());
    let (addr, token) = (gw.addr, gw.token.clone());
    let started = Instant::now();
    let call = tokio::spawn(async move {
        let mut ws = Ws::connect(addr, Some(&token)).await.unwrap();
        let r = ws
            .call("tools.invoke", json!({"sessionKey": key, "toolName": "exec", "params": {"command": cmd, "yieldMs": 60000}}))
            .await;
        (r, started.elapsed())
    });
    let needle = marker.display().to_string();
    let deadline = Instant::now() + Duration::from_secs(10);
    while !process_mentioning(&needle) {
        assert!(Instant::now() < deadline, "the exec never started");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }

    let cancel = runner.notification("runner.cancel").await;
    assert_eq!(cancel["params"]["runId"], json!(run_id), "{cancel}");
    assert_eq!(cancel["params"]["reason"], json!("timeout"), "{cancel}");
    assert!(started.elapsed() < Duration::from_secs(15));

    // The call in flight ended with the run, and so did its process.
    let (result, took) = tokio::time::timeout(Duration::from_secs(15), call)
        .await
        .expect("the exec call outlived its run")
        .unwrap();
    assert!(took < Duration::from_secs(20), "took {took:?}: {result}");
    assert_ne!(result["result"]["status"], json!("ok"), "{result}");
    let gone = Instant::now() + Duration::from_secs(10);
    while process_mentioning(&needle) {
        assert!(Instant::now() < gone, "the run's exec process outlived it");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(!marker.exists());

    let runs = runs_of(&mut op, &job_id, |r| r["runs"][0]["status"] == "timeout").await;
    assert!(
        runs["runs"][0]["error"]
            .as_str()
            .unwrap()
            .contains("timed out after 3 s"),
        "{runs}"
    );
    let job = op.ok("cron.get", json!({"jobId": job_id})).await;
    assert_eq!(job["job"]["state"]["lastStatus"], json!("timeout"), "{job}");

    // The runner's late result is refused, saying why.
    let late = runner
        .call(
            "runner.complete",
            json!({"runId": run_id, "status": "ok", "summary": "done at last"}),
        )
        .await;
    assert_eq!(
        late["error"]["data"]["errorCode"],
        json!("runner.run_timed_out"),
        "{late}"
    );
    assert_eq!(late["error"]["data"]["runId"], json!(run_id), "{late}");
    let runs = op.ok("cron.runs", json!({"jobId": job_id})).await;
    assert!(!runs.to_string().contains("done at last"), "{runs}");
}

/// The quotas over the gateway: the N+1th job of one creator and a
/// too-short interval are refused, with the limit's code and config key,
/// and nothing is stored.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_quotas_refuse_the_job_past_the_limit_and_a_too_short_interval() {
    let gw = Gw::start(r#"{"cron": {"quotas": {"maxJobsPerCreator": 3}}}"#);
    let mut op = gw.ws().await;
    let job = |name: &str, every_ms: u64| {
        json!({"job": {"name": name, "schedule": {"kind": "every", "everyMs": every_ms},
            "payload": {"kind": "systemEvent", "text": "tick"}}})
    };
    let fast = op.call("cron.add", job("fast", 10_000)).await;
    assert_eq!(fast["error"]["code"], json!(-32001), "{fast}");
    assert_eq!(
        fast["error"]["data"]["errorCode"],
        json!("cron.quota.min_interval"),
        "{fast}"
    );
    assert_eq!(
        fast["error"]["data"]["configKey"],
        json!("cron.quotas.minIntervalSeconds")
    );
    assert!(
        fast["error"]["message"]
            .as_str()
            .unwrap()
            .contains("job.schedule.everyMs"),
        "{fast}"
    );
    for i in 0..3 {
        op.ok("cron.add", job(&format!("j{i}"), 60_000)).await;
    }
    let over = op.call("cron.add", job("j3", 60_000)).await;
    assert_eq!(
        over["error"]["data"]["errorCode"],
        json!("cron.quota.jobs_per_creator"),
        "{over}"
    );
    assert_eq!(
        over["error"]["data"]["configKey"],
        json!("cron.quotas.maxJobsPerCreator")
    );
    assert_eq!(over["error"]["data"]["limit"], json!(3));
    let listed = op.ok("cron.list", json!({"includeDisabled": true})).await;
    assert_eq!(listed["jobs"].as_array().unwrap().len(), 3, "{listed}");
}
