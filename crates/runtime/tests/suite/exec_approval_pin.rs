//! An exec approval is bound to what runs: the canonical working
//! directory and the files the command runs are pinned when the approver
//! is asked, and checked again right before the real process starts. The
//! approver here changes the world while it "thinks" (between the request
//! and its answer), exactly as an attacker racing the approval would.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::json;
use talon_hooks::DeniedReason;
use talon_hooks::approval::{
    ApprovalBroker, ApprovalDecision, ApprovalEvent, ApprovalRequest, MemoryApprovalBroker,
};
use talon_hooks::exec_approvals::ExecApprovalsStore;
use talon_runtime::{InvokeOutcome, ModelToolCall, RunSpec, Runtime, RuntimeBuilder};
use talon_tool_policy::RunContext;
use tokio::sync::mpsc;

/// What the approver does before it answers.
type Meddle = Arc<dyn Fn(&Path) + Send + Sync>;

struct Fixture {
    dir: tempfile::TempDir,
}

impl Fixture {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("ws")).unwrap();
        std::fs::create_dir_all(dir.path().join("state")).unwrap();
        Fixture { dir }
    }

    fn ws(&self) -> PathBuf {
        self.dir.path().join("ws")
    }

    /// A runtime asking before every command, whose approver calls
    /// `meddle(workspace)` and then answers `decision`.
    fn runtime(
        &self,
        decision: ApprovalDecision,
        meddle: Meddle,
    ) -> (Runtime, mpsc::UnboundedReceiver<ApprovalRequest>) {
        let text = r#"{ tools: { profile: "coding", exec: { security: "full", ask: "always" } },
               agents: { defaults: { workspace: "./ws" }, list: [{ id: "main", default: true }] } }"#;
        let loaded = talon_config::load_str(text, "talon.json").unwrap();
        let builder = RuntimeBuilder::from_config_in(
            &loaded.config,
            self.dir.path(),
            self.dir.path().join("state"),
        )
        .unwrap();
        let (tx, rx) = mpsc::unbounded_channel();
        let broker = Arc::new(MemoryApprovalBroker::in_memory());
        let mut events = broker.subscribe();
        let b2 = Arc::clone(&broker);
        let ws = self.ws();
        tokio::spawn(async move {
            while let Ok(event) = events.recv().await {
                if let ApprovalEvent::Requested(req) = event {
                    meddle(&ws);
                    let _ = tx.send(req.clone());
                    b2.resolve(&req.id, decision, Some(&req.binding()));
                }
            }
        });
        let rt = builder
            .broker(broker as Arc<dyn ApprovalBroker>)
            .build()
            .unwrap();
        (rt, rx)
    }
}

async fn exec(runtime: &Runtime, params: serde_json::Value) -> InvokeOutcome {
    let table = runtime.assemble(RunSpec::new(RunContext::new("main")));
    table.invoke(ModelToolCall::new("c1", "exec", params)).await
}

fn failed_with(out: &InvokeOutcome, code: &str) -> bool {
    matches!(out, InvokeOutcome::Failed(e) if e.code().as_str() == code)
}

fn nothing() -> Meddle {
    Arc::new(|_: &Path| {})
}

#[tokio::test]
async fn an_unchanged_script_runs_after_approval() {
    let f = Fixture::new();
    std::fs::write(f.ws().join("run.sh"), "touch approved-ran\n").unwrap();
    let (rt, mut rx) = f.runtime(ApprovalDecision::AllowOnce, nothing());
    let out = exec(&rt, json!({"command": "sh run.sh"})).await;
    assert!(matches!(out, InvokeOutcome::Completed { .. }), "{out:?}");
    assert!(f.ws().join("approved-ran").exists());
    let req = rx.recv().await.unwrap();
    assert!(req.description.contains("run.sh"), "{}", req.description);
    assert!(req.description.contains("sha256"), "{}", req.description);
}

#[tokio::test]
async fn a_shell_script_edited_after_approval_is_refused() {
    let f = Fixture::new();
    std::fs::write(f.ws().join("run.sh"), "touch approved-ran\n").unwrap();
    let (rt, _rx) = f.runtime(
        ApprovalDecision::AllowOnce,
        Arc::new(|ws: &Path| std::fs::write(ws.join("run.sh"), "touch evil-ran\n").unwrap()),
    );
    let out = exec(&rt, json!({"command": "FOO=1 sh run.sh"})).await;
    assert!(failed_with(&out, "approval.operand_changed"), "{out:?}");
    let InvokeOutcome::Failed(e) = &out else {
        unreachable!()
    };
    assert!(e.to_string().contains("run.sh"), "{e}");
    assert!(!f.ws().join("evil-ran").exists());
    assert!(!f.ws().join("approved-ran").exists());
}

#[tokio::test]
async fn a_python_script_edited_after_approval_is_refused() {
    let python = std::env::var("TALON_TEST_PYTHON").unwrap_or_else(|_| "python3".to_owned());
    let f = Fixture::new();
    std::fs::write(f.ws().join("run.py"), "open('approved-ran', 'w').close()\n").unwrap();
    let (rt, _rx) = f.runtime(
        ApprovalDecision::AllowOnce,
        Arc::new(|ws: &Path| {
            std::fs::write(ws.join("run.py"), "open('evil-ran', 'w').close()\n").unwrap();
        }),
    );
    let command = format!("{python} -u run.py");
    let out = exec(&rt, json!({ "command": command })).await;
    assert!(failed_with(&out, "approval.operand_changed"), "{out:?}");
    assert!(!f.ws().join("evil-ran").exists());

    // Unedited, the same command really runs the script.
    let (rt, _rx) = f.runtime(ApprovalDecision::AllowOnce, nothing());
    let out = exec(&rt, json!({ "command": command })).await;
    assert!(matches!(out, InvokeOutcome::Completed { .. }), "{out:?}");
    assert!(f.ws().join("evil-ran").exists());
}

#[tokio::test]
async fn a_program_created_after_approval_is_refused() {
    let f = Fixture::new();
    let (rt, _rx) = f.runtime(
        ApprovalDecision::AllowOnce,
        Arc::new(|ws: &Path| {
            use std::os::unix::fs::PermissionsExt;
            let p = ws.join("build");
            std::fs::write(&p, "#!/bin/sh\ntouch evil-ran\n").unwrap();
            std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
        }),
    );
    let out = exec(&rt, json!({"command": "./build"})).await;
    assert!(failed_with(&out, "approval.operand_changed"), "{out:?}");
    assert!(!f.ws().join("evil-ran").exists());
}

#[tokio::test]
async fn a_cwd_whose_parent_symlink_is_rebound_after_approval_is_refused() {
    let f = Fixture::new();
    for d in ["real1/sub", "real2/sub"] {
        std::fs::create_dir_all(f.ws().join(d)).unwrap();
    }
    std::os::unix::fs::symlink("real1", f.ws().join("p")).unwrap();
    let (rt, _rx) = f.runtime(
        ApprovalDecision::AllowOnce,
        Arc::new(|ws: &Path| {
            std::fs::remove_file(ws.join("p")).unwrap();
            std::os::unix::fs::symlink("real2", ws.join("p")).unwrap();
        }),
    );
    let out = exec(&rt, json!({"command": "touch ran", "workdir": "p/sub"})).await;
    assert!(failed_with(&out, "approval.cwd_changed"), "{out:?}");
    let InvokeOutcome::Failed(e) = &out else {
        unreachable!()
    };
    assert!(e.to_string().contains("real1"), "{e}");
    assert!(!f.ws().join("real1/sub/ran").exists());
    assert!(!f.ws().join("real2/sub/ran").exists());

    // Left alone, the same call runs in the approved directory.
    let (rt, _rx) = f.runtime(ApprovalDecision::AllowOnce, nothing());
    let out = exec(&rt, json!({"command": "touch ran", "workdir": "p/sub"})).await;
    assert!(matches!(out, InvokeOutcome::Completed { .. }), "{out:?}");
    assert!(f.ws().join("real2/sub/ran").exists());
}

#[tokio::test]
async fn a_command_whose_script_is_named_at_run_time_is_refused_before_asking() {
    let f = Fixture::new();
    let (rt, mut rx) = f.runtime(ApprovalDecision::AllowOnce, nothing());
    let out = exec(
        &rt,
        json!({"command": "sh \"$SCRIPT\"", "env": {"SCRIPT": "x.sh"}}),
    )
    .await;
    assert!(
        matches!(&out, InvokeOutcome::Blocked(b) if b.denied_reason == DeniedReason::ExecApproval
            && b.reason.contains("$SCRIPT")),
        "{out:?}"
    );
    assert!(rx.try_recv().is_err(), "the approver was asked");
}

#[tokio::test]
async fn allow_always_never_records_a_command_that_runs_a_file() {
    let f = Fixture::new();
    std::fs::write(f.ws().join("run.sh"), "touch ran\n").unwrap();
    let (rt, mut rx) = f.runtime(ApprovalDecision::AllowAlways, nothing());
    let out = exec(&rt, json!({"command": "sh run.sh"})).await;
    assert!(matches!(out, InvokeOutcome::Completed { .. }), "{out:?}");
    let req = rx.recv().await.unwrap();
    assert!(
        req.description.contains("would run once"),
        "{}",
        req.description
    );
    let store = ExecApprovalsStore::in_state_dir(&f.dir.path().join("state"));
    assert_eq!(store.agent_view("main").unwrap().entries().count(), 0);
}
