//! Sandboxed runs through the whole runtime and the real Docker engine
//! (`cargo xtask docker-up`): a container whose command is OOM-killed is
//! recycled by the backend (reported to the runtime's sandbox event sink),
//! and the run's next command works by itself in a fresh one; a filled
//! `/tmp` is `ENOSPC`; and with `workspaceAccess: "ro"` the file tools
//! work from the very first call.

use std::sync::{Arc, Mutex};
use talon_test_support::docker::RemoveMatching;

use serde_json::json;
use talon_runtime::{InvokeOutcome, ModelToolCall, RunSpec, Runtime, RuntimeBuilder};
use talon_sandbox_core::{
    RecycleReason, SandboxEvent, SandboxEventSink, SandboxRecycled, SharedEventSink,
};
use talon_tool_catalog::ToolErrorCode;
use talon_tool_policy::RunContext;

/// Collects the runtime's sandbox events.
#[derive(Debug, Default)]
struct Events(Mutex<Vec<SandboxRecycled>>);

impl SandboxEventSink for Events {
    fn event(&self, event: &SandboxEvent) {
        if let SandboxEvent::Recycled(r) = event {
            self.0.lock().unwrap().push(r.clone());
        }
    }
}

fn runtime(text: &str, dir: &std::path::Path, events: &Arc<Events>) -> Runtime {
    let loaded = talon_config::load_str(text, "talon.json").unwrap();
    RuntimeBuilder::from_config(&loaded.config, dir)
        .unwrap()
        .sandbox_events(Arc::clone(events) as SharedEventSink)
        .build()
        .unwrap()
}

fn text(out: &InvokeOutcome) -> String {
    match out {
        InvokeOutcome::Completed { result, .. } => result.text(),
        other => {
            panic!("expected a result (is the engine up? `cargo xtask docker-up`), got {other:?}")
        }
    }
}

fn ids(label: &str) -> Vec<String> {
    let out = std::process::Command::new("docker")
        .args([
            "ps",
            "-aq",
            "--no-trunc",
            "--filter",
            &format!("label={label}"),
        ])
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .map(str::to_owned)
        .collect()
}

#[tokio::test]
async fn an_oom_killed_sandbox_is_recycled_and_the_next_exec_works_by_itself() {
    let dir = tempfile::tempdir().unwrap();
    let agent = format!("rt-oom-{}", std::process::id());
    // 32 MiB without swap: each tmpfs gets 8 MiB by default.
    let config = format!(
        r#"{{ agents: {{ defaults: {{ workspace: "./ws", sandbox: {{ mode: "all", workspaceAccess: "rw",
            workspaceRoot: "{root}", docker: {{ image: "talon-sandbox-test:busybox",
            memory: "32m", memorySwap: "32m" }} }} }},
            list: [{{ id: "{agent}" }}] }} }}"#,
        root = dir.path().join("sandboxes").display(),
    );
    std::fs::create_dir_all(dir.path().join("ws")).unwrap();
    let label = format!("talon.sessionKey=agent:{agent}");
    let _cleanup = RemoveMatching(format!("label={label}"));
    let events = Arc::new(Events::default());
    let rt = runtime(&config, dir.path(), &events);
    let table = rt.assemble(RunSpec::new(RunContext::new(agent.clone())));

    // Filling /tmp is ENOSPC (8 MiB), not a wedged container.
    let out = table
        .invoke(ModelToolCall::new(
            "c1",
            "exec",
            json!({ "command": "dd if=/dev/zero of=/tmp/fill bs=1048576 count=64; echo after-dd" }),
        ))
        .await;
    let printed = text(&out);
    assert!(printed.contains("No space left on device"), "{printed}");
    assert!(printed.contains("after-dd"), "{printed}");
    let first = ids(&label);
    assert_eq!(first.len(), 1, "{first:?}");
    assert!(events.0.lock().unwrap().is_empty());

    // A command that needs more memory than the container has is killed
    // (the shell runs it as itself: the exec's own process is killed).
    let out = table
        .invoke(ModelToolCall::new(
            "c2",
            "exec",
            json!({ "command": "dd if=/dev/zero of=/dev/null bs=67108864 count=1" }),
        ))
        .await;
    let details = match &out {
        InvokeOutcome::Completed { result, .. } => result.details.clone(),
        other => panic!("expected the exec's result, got {other:?}"),
    };
    assert_eq!(details["exitCode"], json!(137), "{out:?}");
    let seen = events.0.lock().unwrap().clone();
    assert_eq!(seen.len(), 1, "{seen:?}");
    assert_eq!(seen[0].reason, RecycleReason::OomKilled);
    assert_eq!(seen[0].container_id, first[0]);
    assert!(seen[0].name.starts_with("talon-sbx-"), "{}", seen[0].name);
    assert_eq!(seen[0].scope_key, format!("agent:{agent}"));
    assert!(
        ids(&label).is_empty(),
        "the OOM-killed container is removed"
    );

    // The next command needs nothing from anyone: a fresh container.
    let out = table
        .invoke(ModelToolCall::new(
            "c3",
            "exec",
            json!({ "command": "ls /tmp | wc -l; echo alive" }),
        ))
        .await;
    let printed = text(&out);
    assert!(printed.contains("alive"), "{printed}");
    let now = ids(&label);
    assert_eq!(now.len(), 1, "{now:?}");
    assert_ne!(now[0], first[0]);
}

#[tokio::test]
async fn with_ro_access_the_file_tools_work_from_the_first_call() {
    let dir = tempfile::tempdir().unwrap();
    let agent = format!("rt-ro-{}", std::process::id());
    let ws = dir.path().join("ws");
    std::fs::create_dir_all(&ws).unwrap();
    std::fs::write(ws.join("AGENTS.md"), "be brief\n").unwrap();
    std::fs::write(ws.join("notes.txt"), "agent notes\n").unwrap();
    let config = format!(
        r#"{{ agents: {{ defaults: {{ workspace: "./ws", sandbox: {{ mode: "all", workspaceAccess: "ro",
            workspaceRoot: "{root}", docker: {{ image: "talon-sandbox-test:busybox" }} }} }},
            list: [{{ id: "{agent}" }}] }} }}"#,
        root = dir.path().join("sandboxes").display(),
    );
    let _cleanup = RemoveMatching(format!("label=talon.sessionKey=agent:{agent}"));
    let events = Arc::new(Events::default());
    let rt = runtime(&config, dir.path(), &events);
    let table = rt.assemble(RunSpec::new(RunContext::new(agent.clone())));

    // The very first call of the run is a read of the agent's own files.
    let out = table
        .invoke(ModelToolCall::new(
            "c1",
            "read",
            json!({ "path": "/agent/notes.txt" }),
        ))
        .await;
    assert_eq!(text(&out).trim_end(), "agent notes");
    // The seeded scratch workspace reads, relative paths included.
    let out = table
        .invoke(ModelToolCall::new(
            "c2",
            "read",
            json!({ "path": "AGENTS.md" }),
        ))
        .await;
    assert_eq!(text(&out).trim_end(), "be brief");
    // Writing the agent's files is refused with the read-only code, and
    // the host file is untouched.
    let out = table
        .invoke(ModelToolCall::new(
            "c3",
            "write",
            json!({ "path": "/agent/notes.txt", "content": "rewritten" }),
        ))
        .await;
    match &out {
        InvokeOutcome::Failed(e) => assert_eq!(e.code(), ToolErrorCode::FsReadOnly, "{e}"),
        other => panic!("writing /agent must fail, got {other:?}"),
    }
    assert_eq!(
        std::fs::read_to_string(ws.join("notes.txt")).unwrap(),
        "agent notes\n"
    );
    // Scratch is writable, and never reaches the agent workspace.
    let out = table
        .invoke(ModelToolCall::new(
            "c4",
            "write",
            json!({ "path": "/workspace/scratch.txt", "content": "mine" }),
        ))
        .await;
    text(&out);
    assert!(!ws.join("scratch.txt").exists());
}
