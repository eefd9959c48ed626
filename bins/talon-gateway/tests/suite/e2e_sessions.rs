//! Sessions on the real daemon: they persist in the state database and
//! reopen after a restart, and the session tools see exactly what
//! `tools.sessions.visibility` allows.

use std::time::Duration;

use serde_json::{Value, json};

use super::support::{Gw, GwExt as _, Ws};

const PARENT: &str = "agent:main:gw:parent";
const CHILD: &str = "agent:main:gw:child";
const SIBLING: &str = "agent:main:gw:sibling";

/// A parent, its child and an unrelated sibling of the same agent, and one
/// call in the child (`sessions_list`: sub-agents never get
/// `session_status`).
async fn three_sessions(ws: &mut Ws) {
    for params in [
        json!({"sessionKey": PARENT, "agentId": "main"}),
        json!({"sessionKey": CHILD, "agentId": "main", "parentSessionKey": PARENT}),
        json!({"sessionKey": SIBLING, "agentId": "main", "channel": "telegram"}),
    ] {
        ws.ok("sessions.create", params).await;
    }
    let r = ws
        .ok(
            "tools.invoke",
            json!({"sessionKey": CHILD, "toolName": "sessions_list", "toolCallId": "in-child"}),
        )
        .await;
    assert_eq!(r["status"], json!("ok"), "{r}");
}

async fn invoke(ws: &mut Ws, session: &str, tool: &str, params: Value) -> Value {
    ws.ok(
        "tools.invoke",
        json!({"sessionKey": session, "toolName": tool, "params": params}),
    )
    .await
}

fn keys(listed: &Value) -> Vec<String> {
    let mut k: Vec<String> = listed["details"]["sessions"]
        .as_array()
        .unwrap_or_else(|| panic!("{listed}"))
        .iter()
        .map(|s| s["key"].as_str().unwrap().to_owned())
        .collect();
    k.sort();
    k
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sessions_reopen_after_a_restart_with_their_tree_and_history() {
    let mut gw = Gw::start("{}");
    let mut ws = gw.ws().await;
    three_sessions(&mut ws).await;
    let before = ws.ok("sessions.list", json!({})).await;
    let created = |list: &Value, key: &str| -> u64 {
        list["sessions"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["sessionKey"] == key)
            .unwrap_or_else(|| panic!("{key} missing from {list}"))["createdAtMs"]
            .as_u64()
            .unwrap()
    };
    let child_created = created(&before, CHILD);
    ws.ok("sessions.close", json!({"sessionKey": SIBLING}))
        .await;
    drop(ws);
    gw.signal(15);
    assert_eq!(
        gw.wait_exit(Duration::from_secs(15)),
        Some(0),
        "{}",
        gw.log_text()
    );
    gw.spawn();
    let mut ws = gw.ws().await;
    let after = ws.ok("sessions.list", json!({})).await;
    assert_eq!(
        created(&after, CHILD),
        child_created,
        "the creation time survives"
    );
    assert_eq!(created(&after, PARENT), created(&before, PARENT));
    let open: Vec<&str> = after["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["sessionKey"].as_str().unwrap())
        .collect();
    assert!(
        !open.contains(&SIBLING),
        "a closed session stays closed: {open:?}"
    );
    // The reopened child is still a sub-agent of its parent: its tools are
    // still capped (it works, and it reports its parent).
    let listed = invoke(&mut ws, PARENT, "sessions_list", json!({})).await;
    assert_eq!(keys(&listed), [CHILD, PARENT], "{listed}");
    let child_row = listed["details"]["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["key"] == CHILD)
        .unwrap()
        .clone();
    assert_eq!(child_row["parentSessionKey"], json!(PARENT));
    assert_eq!(child_row["spawnDepth"], json!(1));
    assert_eq!(child_row["kind"], json!("other"));
    // The call made before the restart is in the child's history, read
    // from the parent.
    let hist = invoke(
        &mut ws,
        PARENT,
        "sessions_history",
        json!({"sessionKey": CHILD}),
    )
    .await;
    assert_eq!(hist["status"], json!("ok"), "{hist}");
    let calls = hist["details"]["calls"].as_array().unwrap();
    assert!(
        calls.iter().any(|c| c["toolCallId"] == "in-child"),
        "{hist}"
    );
    let no_tools = invoke(
        &mut ws,
        PARENT,
        "sessions_history",
        json!({"sessionKey": CHILD, "includeTools": false}),
    )
    .await;
    assert!(no_tools["details"].get("calls").is_none(), "{no_tools}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_default_tree_visibility_hides_siblings_and_parents() {
    let gw = Gw::start("{}");
    let mut ws = gw.ws().await;
    three_sessions(&mut ws).await;
    let refused = invoke(
        &mut ws,
        PARENT,
        "sessions_history",
        json!({"sessionKey": SIBLING}),
    )
    .await;
    assert_eq!(refused["status"], json!("error"), "{refused}");
    assert!(
        refused["error"].as_str().unwrap().contains("not visible"),
        "{refused}"
    );
    // Upwards is not in the child's tree either.
    let up = invoke(
        &mut ws,
        CHILD,
        "sessions_history",
        json!({"sessionKey": PARENT}),
    )
    .await;
    assert_eq!(up["status"], json!("error"), "{up}");
    // An unknown key is refused the same way (nothing tells it apart).
    let unknown = invoke(
        &mut ws,
        PARENT,
        "sessions_history",
        json!({"sessionKey": "agent:main:nope"}),
    )
    .await;
    assert_eq!(unknown["status"], json!("error"));
    assert_eq!(
        unknown["error"]
            .as_str()
            .unwrap()
            .replace("agent:main:nope", "X"),
        refused["error"].as_str().unwrap().replace(SIBLING, "X"),
    );
    let from_child = invoke(&mut ws, CHILD, "sessions_list", json!({})).await;
    assert_eq!(keys(&from_child), [CHILD]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_configured_visibility_is_enforced_by_the_session_tools() {
    for (visibility, parent_sees) in [
        ("self", vec![PARENT]),
        ("tree", vec![CHILD, PARENT]),
        ("agent", vec![CHILD, PARENT, SIBLING]),
    ] {
        let gw = Gw::start(&format!(
            r#"{{"tools": {{"sessions": {{"visibility": "{visibility}"}}}}}}"#
        ));
        let mut ws = gw.ws().await;
        three_sessions(&mut ws).await;
        let listed = invoke(&mut ws, PARENT, "sessions_list", json!({})).await;
        assert_eq!(keys(&listed), parent_sees, "{visibility}: {listed}");
        let child = invoke(
            &mut ws,
            PARENT,
            "sessions_history",
            json!({"sessionKey": CHILD}),
        )
        .await;
        assert_eq!(
            child["status"] == json!("ok"),
            parent_sees.contains(&CHILD),
            "{visibility}: {child}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sessions_list_filters_by_kind_and_validates_its_parameters() {
    let gw = Gw::start(r#"{"tools": {"sessions": {"visibility": "agent"}}}"#);
    let mut ws = gw.ws().await;
    three_sessions(&mut ws).await;
    ws.ok(
        "tools.invoke",
        json!({"sessionKey": "main", "toolName": "session_status"}),
    )
    .await;
    let mains = invoke(&mut ws, PARENT, "sessions_list", json!({"kinds": ["main"]})).await;
    assert_eq!(keys(&mains), ["agent:main:main"], "{mains}");
    let bad = invoke(
        &mut ws,
        PARENT,
        "sessions_list",
        json!({"kinds": ["subagent"]}),
    )
    .await;
    assert_eq!(bad["status"], json!("error"), "{bad}");
    let limited = invoke(&mut ws, PARENT, "sessions_list", json!({"limit": 1})).await;
    assert_eq!(keys(&limited).len(), 1);
}

/// A cron run in flight, as its runner heard of it.
struct Fired {
    job_id: String,
    run_id: String,
    run_key: String,
}

/// An operator connection, a subscribed runner, and a forced run of a new
/// job whose message is `message`.
async fn fire_cron_run(gw: &Gw, message: &str) -> (Ws, Ws, Fired) {
    let mut op = gw.ws().await;
    let mut runner = gw.ws().await;
    runner.ok("runner.subscribe", json!({})).await;
    let job = json!({"name": "zoo", "schedule": {"kind": "every", "everyMs": 3600000},
        "payload": {"kind": "agentTurn", "message": message}});
    let added = op.ok("cron.add", json!({ "job": job })).await;
    let job_id = added["job"]["id"].as_str().unwrap().to_owned();
    op.ok("cron.run", json!({"jobId": job_id, "runMode": "force"}))
        .await;
    let run = runner.notification("runner.run").await;
    let fired = Fired {
        job_id,
        run_id: run["params"]["runId"].as_str().unwrap().to_owned(),
        run_key: run["params"]["sessionKey"].as_str().unwrap().to_owned(),
    };
    (op, runner, fired)
}

/// A cron run's message and its result are recorded in the run's session
/// and found by `sessions_search`, only where the searcher may see them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cron_runs_messages_are_kept_and_searched_within_visibility() {
    let mut gw = Gw::start(r#"{"tools": {"sessions": {"visibility": "agent"}}}"#);
    let (mut op, mut runner, fired) = fire_cron_run(&gw, "count the zebras at dawn").await;
    let Fired {
        job_id,
        run_id,
        run_key,
    } = fired;
    runner
        .ok(
            "runner.complete",
            json!({"runId": run_id, "status": "ok", "summary": "Zebras counted: 3"}),
        )
        .await;
    // The result is recorded once the run has ended; wait for it.
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    let hits = loop {
        let found = invoke(
            &mut op,
            "main",
            "sessions_search",
            json!({"query": "ZEBRAS"}),
        )
        .await;
        assert_eq!(found["status"], json!("ok"), "{found}");
        let hits = found["details"]["hits"].as_array().unwrap().clone();
        if hits.len() == 2 {
            break hits;
        }
        assert!(std::time::Instant::now() < deadline, "{found}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert!(
        hits.iter().all(|h| h["sessionKey"] == json!(run_key)),
        "{hits:?}"
    );
    let roles: Vec<&str> = hits.iter().map(|h| h["role"].as_str().unwrap()).collect();
    assert_eq!(roles, ["assistant", "user"], "newest first");
    assert_eq!(hits[1]["source"], json!(format!("cron:{job_id}")));
    assert!(
        hits[0]["snippet"]
            .as_str()
            .unwrap()
            .contains("Zebras counted")
    );
    // The run's session is history after a restart, still searchable and
    // readable.
    drop((op, runner));
    gw.signal(15);
    assert_eq!(
        gw.wait_exit(Duration::from_secs(15)),
        Some(0),
        "{}",
        gw.log_text()
    );
    gw.spawn();
    let mut op = gw.ws().await;
    let hist = invoke(
        &mut op,
        "main",
        "sessions_history",
        json!({"sessionKey": run_key}),
    )
    .await;
    let texts: Vec<&str> = hist["details"]["messages"]
        .as_array()
        .unwrap_or_else(|| panic!("{hist}"))
        .iter()
        .map(|m| m["text"].as_str().unwrap())
        .collect();
    assert_eq!(texts, ["count the zebras at dawn", "Zebras counted: 3"]);
    let listed = invoke(&mut op, "main", "sessions_list", json!({"kinds": ["cron"]})).await;
    let rows = listed["details"]["sessions"].as_array().unwrap();
    assert_eq!(rows.len(), 1, "{listed}");
    assert_eq!(rows[0]["status"], json!("closed"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn search_sees_nothing_outside_the_default_tree() {
    let gw = Gw::start("{}");
    let (mut op, _runner, fired) = fire_cron_run(&gw, "secret giraffe plans").await;
    let run_key = fired.run_key;
    let found = invoke(
        &mut op,
        "main",
        "sessions_search",
        json!({"query": "giraffe"}),
    )
    .await;
    assert_eq!(found["details"]["count"], json!(0), "{found}");
    let named = invoke(
        &mut op,
        "main",
        "sessions_search",
        json!({"query": "giraffe", "sessionKey": run_key}),
    )
    .await;
    assert_eq!(named["details"]["count"], json!(0), "{named}");
    let empty = invoke(&mut op, "main", "sessions_search", json!({"query": "  "})).await;
    assert_eq!(empty["status"], json!("error"), "{empty}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_label_is_kept_listed_and_filtered_on_and_a_bad_one_refused() {
    let mut gw = Gw::start("{}");
    let mut ws = gw.ws().await;
    ws.ok(
        "sessions.create",
        json!({"sessionKey": PARENT, "agentId": "main"}),
    )
    .await;
    ws.ok(
        "sessions.create",
        json!({"sessionKey": CHILD, "agentId": "main", "parentSessionKey": PARENT, "label": "nightly build"}),
    )
    .await;
    let bad = ws
        .call(
            "sessions.create",
            json!({"sessionKey": SIBLING, "label": "two\nlines"}),
        )
        .await;
    assert_eq!(bad["error"]["data"]["param"], json!("label"), "{bad}");
    drop(ws);
    gw.signal(15);
    assert_eq!(gw.wait_exit(Duration::from_secs(15)), Some(0));
    gw.spawn();
    let mut ws = gw.ws().await;
    let labelled = invoke(
        &mut ws,
        PARENT,
        "sessions_list",
        json!({"label": "nightly build"}),
    )
    .await;
    assert_eq!(keys(&labelled), [CHILD], "{labelled}");
    assert_eq!(
        labelled["details"]["sessions"][0]["label"],
        json!("nightly build")
    );
    let searched = invoke(
        &mut ws,
        PARENT,
        "sessions_list",
        json!({"search": "NIGHTLY"}),
    )
    .await;
    assert_eq!(keys(&searched), [CHILD], "{searched}");
}
