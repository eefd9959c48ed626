#![allow(clippy::unwrap_used, clippy::expect_used)]

use talon_sandbox_core::{RecycleReason, SandboxRecycled};
use talon_test_support::docker::RemoveMatching;

use super::*;

#[tokio::test]
async fn a_recycled_sandbox_becomes_one_journal_record_naming_the_container() {
    let dir = tempfile::tempdir().unwrap();
    let (journal, _) = CallJournal::open(&dir.path().join("j.sqlite")).unwrap();
    let sink = JournalSandboxEvents::new(journal.clone());
    sink.event(&SandboxEvent::Recycled(SandboxRecycled {
        backend_id: "docker".to_owned(),
        name: "talon-sbx-agent-ops-1a2b3c4d".to_owned(),
        container_id: "f00dcafe".to_owned(),
        scope_key: "agent:ops".to_owned(),
        reason: RecycleReason::OomKilled,
        exit_code: 137,
        at_ms: 1_700_000_000_000,
        removed: true,
    }));
    journal.flush().await.unwrap();
    let rows = journal.history("agent:ops", 10).unwrap();
    assert_eq!(rows.len(), 1);
    let row = &rows[0];
    assert_eq!(row.tool, SANDBOX_RECYCLE_TOOL);
    assert_eq!(row.agent_id, "ops");
    let end = row.end.as_ref().unwrap();
    assert_eq!(end.outcome, Outcome::Error);
    assert!(
        end.summary.contains("talon-sbx-agent-ops-1a2b3c4d") && end.summary.contains("oom_killed"),
        "{}",
        end.summary
    );
}

/// Through the gateway's own call path and the real Docker engine (`cargo
/// xtask docker-up`): an exec OOM-killed in a 32 MiB sandbox gets its
/// container recycled, the session's next exec works by itself, and the
/// journal holds a `sandbox.recycle` record naming the container.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_oom_killed_sandbox_is_journalled_and_the_next_call_works() {
    use serde_json::json;
    use talon_gateway_protocol::Request;

    use crate::dispatch::Caller;
    use crate::gateway::{Gateway, GatewayOptions};

    let dir = tempfile::tempdir().unwrap();
    let prefix = format!("talon-gwtest-{}-", std::process::id());
    let _cleanup = RemoveMatching(format!("name={prefix}"));
    std::fs::create_dir_all(dir.path().join("ws")).unwrap();
    let config = dir.path().join("talon.json");
    std::fs::write(
        &config,
        format!(
            r#"{{ "agents": {{ "defaults": {{ "workspace": "{ws}", "sandbox": {{ "mode": "all",
                "workspaceAccess": "rw", "workspaceRoot": "{root}", "docker": {{
                "image": "talon-sandbox-test:busybox", "containerPrefix": "{prefix}",
                "memory": "32m", "memorySwap": "32m" }} }} }} }} }}"#,
            ws = dir.path().join("ws").display(),
            root = dir.path().join("sandboxes").display(),
        ),
    )
    .unwrap();
    let gw = Gateway::open(GatewayOptions {
        config_path: Some(config),
        state_dir: dir.path().join("state"),
        bind: None,
        turn_runner: None,
    })
    .unwrap();
    let exec = |command: &str| {
        Request::parse(
            "tools.invoke",
            json!({"sessionKey": "main", "toolName": "exec", "params": {"command": command}}),
        )
        .unwrap()
    };
    let hog = gw
        .dispatch(
            exec("dd if=/dev/zero of=/dev/null bs=67108864 count=1"),
            &Caller {
                out: None,
                identity: crate::auth::Identity::new(
                    "test-operator",
                    crate::scope::Scope::Operator,
                ),
            },
        )
        .await;
    assert!(
        format!("{hog:?}").contains("137"),
        "the hog must be OOM-killed (is the engine up?): {hog:?}"
    );
    let next = gw
        .dispatch(
            exec("echo alive"),
            &Caller {
                out: None,
                identity: crate::auth::Identity::new(
                    "test-operator",
                    crate::scope::Scope::Operator,
                ),
            },
        )
        .await
        .unwrap();
    assert!(next.to_string().contains("alive"), "{next}");

    gw.journal().flush().await.unwrap();
    let rows = gw.journal().history("agent:main", 10).unwrap();
    let recycled: Vec<_> = rows
        .iter()
        .filter(|r| r.tool == SANDBOX_RECYCLE_TOOL)
        .collect();
    assert_eq!(recycled.len(), 1, "{rows:?}");
    let summary = &recycled[0].end.as_ref().unwrap().summary;
    assert!(
        summary.contains(&prefix) && summary.contains("oom_killed") && summary.contains("removed"),
        "{summary}"
    );
}
