//! Pruning never removes a sandbox under a running call: a real
//! long-running exec in a real Docker container (the engine and test image
//! from `cargo xtask docker-up`) holds its sandbox's lease, so a prune
//! pass that finds the sandbox idle by its recorded times skips it; once
//! the process is killed the same pass removes it, and the next call
//! creates a fresh container instead of using the removed one.

use std::time::Duration;
use talon_test_support::docker::RemoveMatching;

use serde_json::json;
use talon_runtime::{InvokeOutcome, ModelToolCall, RunSpec, RuntimeBuilder};
use talon_sandbox_core::{
    OwnedSandbox, PruneOptions, PruneScope, PruneSettings, PruneSkip, SandboxActivity, SandboxKey,
    UsageStore, now_ms, prune_sandboxes,
};
use talon_tool_policy::RunContext;

fn completed(out: &InvokeOutcome) -> &talon_tool_catalog::ToolResult {
    match out {
        InvokeOutcome::Completed { result, .. } => result,
        other => panic!(
            "the sandboxed call failed — is the engine up (`cargo xtask docker-up`)? {other:?}"
        ),
    }
}

#[tokio::test]
async fn a_sandbox_with_a_running_exec_is_never_pruned() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    let agent = format!("rt-prune-{}", std::process::id());
    let scope_key = format!("agent:{agent}");
    let config = format!(
        r#"{{ agents: {{ defaults: {{ workspace: "./ws", sandbox: {{ mode: "all", workspaceAccess: "rw",
            prune: {{ idleHours: 1 }},
            docker: {{ image: "talon-sandbox-test:busybox" }} }} }},
            list: [{{ id: "{agent}" }}] }} }}"#,
    );
    std::fs::create_dir_all(dir.path().join("ws")).unwrap();
    let _cleanup = RemoveMatching(format!("label=talon.sessionKey={scope_key}"));
    let loaded = talon_config::load_str(&config, "talon.json").unwrap();
    let rt = RuntimeBuilder::from_config_in(&loaded.config, dir.path(), state.clone())
        .unwrap()
        .build()
        .unwrap();
    assert_eq!(rt.sandbox_state_dir(), Some(state.as_path()));
    let mut ctx = RunContext::new(agent.clone());
    ctx.sandboxed = true;
    let table = rt.assemble(RunSpec::new(ctx));

    // A long-running command, moved to the background at once.
    let out = table
        .invoke(ModelToolCall::new(
            "c1",
            "exec",
            json!({ "command": "echo started; sleep 300", "background": true }),
        ))
        .await;
    let session = completed(&out).details["sessionId"]
        .as_str()
        .unwrap_or_else(|| panic!("no session id: {out:?}"))
        .to_owned();

    let backends = rt.sandbox_backends().unwrap();
    let docker = backends.get("docker").unwrap();
    let mine = |list: Vec<OwnedSandbox>| -> Vec<OwnedSandbox> {
        list.into_iter()
            .filter(|s| s.scope_key.as_deref() == Some(scope_key.as_str()))
            .collect()
    };
    let owned = mine(docker.list_owned().await.unwrap());
    assert_eq!(owned.len(), 1, "{owned:?}");
    let name = owned[0].name.clone();
    let key = SandboxKey::new("docker", &name);
    let activity = SandboxActivity::process();
    assert_eq!(
        activity.in_flight(&key),
        1,
        "the running exec holds a lease"
    );

    // The use was recorded on disk, under the runtime's state dir.
    let store = UsageStore::new(&state);
    let recorded = store.read().unwrap()[&key];
    assert!(recorded.busy_at(now_ms()), "{recorded:?}");

    // Five hours from now (the injected clock) the sandbox is idle by its
    // recorded times and its busy heartbeat on disk is stale: only the
    // in-process lease protects it.
    let later = now_ms() + 5 * 3_600_000;
    assert!(!recorded.busy_at(later));
    let settings = loaded.config.clone();
    let settings_for =
        move |s: &OwnedSandbox| settings.sandbox_prune_settings(s.scope_key.as_deref());
    let wanted = scope_key.clone();
    let select = move |s: &OwnedSandbox| s.scope_key.as_deref() == Some(wanted.as_str());
    let scope = PruneScope {
        settings_for: &settings_for,
        select: &select,
    };
    assert_eq!(
        loaded.config.sandbox_prune_settings(Some(&scope_key)),
        PruneSettings {
            idle_hours: 1,
            max_age_days: 7
        }
    );
    let report = prune_sandboxes(
        backends,
        &store,
        &activity,
        &scope,
        PruneOptions {
            now_ms: later,
            dry_run: false,
        },
    )
    .await
    .unwrap();
    assert_eq!(report.outcomes.len(), 1, "{report:?}");
    assert_eq!(report.outcomes[0].name, name);
    assert_eq!(report.outcomes[0].idle_hours, 5);
    assert!(!report.outcomes[0].removed);
    assert_eq!(report.outcomes[0].skipped, Some(PruneSkip::Busy));
    assert_eq!(mine(docker.list_owned().await.unwrap()).len(), 1);
    let out = table
        .invoke(ModelToolCall::new(
            "c2",
            "process",
            json!({ "action": "poll", "sessionId": session }),
        ))
        .await;
    let polled = completed(&out).text();
    assert!(polled.contains("still running"), "{polled}");

    // Kill it: the lease is released once the process has ended.
    let out = table
        .invoke(ModelToolCall::new(
            "c3",
            "process",
            json!({ "action": "kill", "sessionId": session }),
        ))
        .await;
    completed(&out);
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    while activity.in_flight(&key) > 0 {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the lease outlived the killed process"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let report = prune_sandboxes(
        backends,
        &store,
        &activity,
        &scope,
        PruneOptions {
            now_ms: later,
            dry_run: false,
        },
    )
    .await
    .unwrap();
    assert_eq!(report.outcomes.len(), 1, "{report:?}");
    assert!(report.outcomes[0].removed, "{report:?}");
    assert!(mine(docker.list_owned().await.unwrap()).is_empty());
    assert!(
        !store.read().unwrap().contains_key(&key),
        "the record of a removed sandbox is dropped"
    );

    // The run's cached handle is not used again: the next call makes a
    // fresh container.
    let out = table
        .invoke(ModelToolCall::new(
            "c4",
            "exec",
            json!({ "command": "echo again" }),
        ))
        .await;
    assert!(completed(&out).text().contains("again"), "{out:?}");
    assert_eq!(mine(docker.list_owned().await.unwrap()).len(), 1);
    assert_eq!(activity.in_flight(&key), 0);
}
