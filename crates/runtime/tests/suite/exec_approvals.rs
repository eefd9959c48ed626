//! Exec approvals through the real call path: a config file, the runtime's
//! gate, the approval broker, and a real `exec` on the host that creates a
//! file when (and only when) the command ran.

use std::sync::Arc;

use serde_json::json;
use talon_hooks::DeniedReason;
use talon_hooks::approval::{
    ApprovalBroker, ApprovalDecision, ApprovalEvent, ApprovalRequest, MemoryApprovalBroker,
};
use talon_hooks::exec_approvals::{AllowlistEntry, ExecApprovalsStore};
use talon_runtime::{InvokeOutcome, ModelToolCall, RunSpec, Runtime, RuntimeBuilder};
use talon_tool_policy::RunContext;
use tokio::sync::mpsc;

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

    fn state(&self) -> std::path::PathBuf {
        self.dir.path().join("state")
    }

    fn store(&self) -> ExecApprovalsStore {
        ExecApprovalsStore::in_state_dir(&self.state())
    }

    fn ran(&self, marker: &str) -> bool {
        self.dir.path().join("ws").join(marker).exists()
    }

    /// A runtime for `exec` (a JSON5 object body) and, when `answer` is
    /// given, a broker that answers every request with it and reports the
    /// request on the returned channel.
    fn runtime(
        &self,
        exec: &str,
        answer: Option<ApprovalDecision>,
    ) -> (Runtime, mpsc::UnboundedReceiver<ApprovalRequest>) {
        let text = format!(
            r#"{{ tools: {{ profile: "coding", exec: {exec} }},
               agents: {{ defaults: {{ workspace: "./ws" }}, list: [{{ id: "main", default: true }}] }} }}"#
        );
        let loaded = talon_config::load_str(&text, "talon.json").unwrap();
        let mut builder =
            RuntimeBuilder::from_config_in(&loaded.config, self.dir.path(), self.state()).unwrap();
        let (tx, rx) = mpsc::unbounded_channel();
        if let Some(decision) = answer {
            let broker = Arc::new(MemoryApprovalBroker::in_memory());
            let mut events = broker.subscribe();
            let b2 = Arc::clone(&broker);
            tokio::spawn(async move {
                while let Ok(event) = events.recv().await {
                    if let ApprovalEvent::Requested(req) = event {
                        let _ = tx.send(req.clone());
                        b2.resolve(&req.id, decision, Some(&req.binding()));
                    }
                }
            });
            builder = builder.broker(broker as Arc<dyn ApprovalBroker>);
        }
        (builder.build().unwrap(), rx)
    }
}

async fn exec(runtime: &Runtime, id: &str, command: &str) -> InvokeOutcome {
    let table = runtime.assemble(RunSpec::new(RunContext::new("main")));
    table
        .invoke(ModelToolCall::new(
            id,
            "exec",
            json!({ "command": command }),
        ))
        .await
}

fn blocked(out: &InvokeOutcome, reason: DeniedReason) -> bool {
    matches!(out, InvokeOutcome::Blocked(b) if b.denied_reason == reason)
}

fn completed(out: &InvokeOutcome) -> bool {
    matches!(out, InvokeOutcome::Completed { .. })
}

#[tokio::test]
async fn security_deny_refuses_every_command() {
    let f = Fixture::new();
    for ask in ["off", "on-miss", "always"] {
        let (rt, _rx) = f.runtime(
            &format!(r#"{{ security: "deny", ask: "{ask}" }}"#),
            Some(ApprovalDecision::AllowOnce),
        );
        let out = exec(&rt, "c", "touch ran").await;
        assert!(blocked(&out, DeniedReason::ExecApproval), "{ask}: {out:?}");
        assert!(!f.ran("ran"), "{ask}");
    }
}

#[tokio::test]
async fn allowlist_off_runs_matches_and_refuses_misses() {
    let f = Fixture::new();
    f.store()
        .add("main", vec![AllowlistEntry::new("touch")])
        .unwrap();
    let (rt, mut rx) = f.runtime(
        r#"{ security: "allowlist", ask: "off" }"#,
        Some(ApprovalDecision::AllowOnce),
    );
    assert!(completed(&exec(&rt, "c1", "touch a && touch b").await));
    assert!(f.ran("a") && f.ran("b"));
    for (i, command) in [
        "touch c; rm -rf a",
        "touch c && rm -rf a",
        "touch c || rm -rf a",
        "touch c | rm -rf a",
        "touch c\nrm -rf a",
        "touch c $(rm -rf a)",
        "touch c `rm -rf a`",
        "sh -c 'touch c'",
        "touch c > d",
    ]
    .iter()
    .enumerate()
    {
        let out = exec(&rt, &format!("m{i}"), command).await;
        assert!(
            blocked(&out, DeniedReason::ExecApproval),
            "{command:?}: {out:?}"
        );
        let InvokeOutcome::Blocked(b) = &out else {
            unreachable!()
        };
        assert!(
            b.reason.contains("talon approvals allowlist add"),
            "{}",
            b.reason
        );
        assert!(!f.ran("c") && f.ran("a"), "{command:?} ran");
    }
    assert!(rx.try_recv().is_err(), "ask: off never asks");
}

#[tokio::test]
async fn allowlist_on_miss_asks_and_the_answer_decides() {
    let f = Fixture::new();
    f.store()
        .add("main", vec![AllowlistEntry::new("true")])
        .unwrap();
    // A match runs without asking.
    let (rt, mut rx) = f.runtime(
        r#"{ security: "allowlist", ask: "on-miss" }"#,
        Some(ApprovalDecision::Deny),
    );
    assert!(completed(&exec(&rt, "c0", "true").await));
    assert!(rx.try_recv().is_err());
    // deny → nothing runs; the approver saw the exact command.
    let command = "true && touch denied";
    let out = exec(&rt, "c1", command).await;
    assert!(blocked(&out, DeniedReason::ApprovalDenied), "{out:?}");
    assert!(!f.ran("denied"));
    let req = rx.try_recv().unwrap();
    assert_eq!(req.command.as_deref(), Some(command));
    assert_eq!(req.tool_name, "exec");
    assert!(
        req.description.contains("`touch denied`"),
        "{}",
        req.description
    );
    // allow-once → runs, nothing is recorded.
    let (rt, _rx) = f.runtime(
        r#"{ security: "allowlist", ask: "on-miss" }"#,
        Some(ApprovalDecision::AllowOnce),
    );
    assert!(completed(&exec(&rt, "c2", "touch once").await));
    assert!(f.ran("once"));
    let patterns: Vec<String> = f
        .store()
        .agent_view("main")
        .unwrap()
        .entries()
        .map(|e| e.pattern.clone())
        .collect();
    assert_eq!(patterns, vec!["true"]);
    // No approver attached: askFallback (deny) refuses.
    let (rt, _rx) = f.runtime(r#"{ security: "allowlist", ask: "on-miss" }"#, None);
    let out = exec(&rt, "c3", "touch nobody").await;
    assert!(blocked(&out, DeniedReason::ExecApproval), "{out:?}");
    assert!(!f.ran("nobody"));
}

#[tokio::test]
async fn allow_always_persists_across_a_new_runtime() {
    let f = Fixture::new();
    let (rt, mut rx) = f.runtime(
        r#"{ security: "allowlist", ask: "on-miss" }"#,
        Some(ApprovalDecision::AllowAlways),
    );
    assert!(completed(&exec(&rt, "c1", "touch 'kept file'").await));
    assert!(f.ran("kept file"));
    assert!(rx.try_recv().is_ok());
    drop(rt);
    let entry = f
        .store()
        .agent_view("main")
        .unwrap()
        .entries()
        .next()
        .cloned()
        .unwrap();
    assert_eq!(entry.pattern, "touch");
    assert_eq!(entry.args, Some(vec!["kept file".to_owned()]));
    assert_eq!(entry.source.as_deref(), Some("allow-always"));
    std::fs::remove_file(f.dir.path().join("ws/kept file")).unwrap();
    // A new runtime with no approver: the same command is now allowlisted
    // and runs; another argument is still a miss.
    let (rt, _rx) = f.runtime(r#"{ security: "allowlist", ask: "off" }"#, None);
    assert!(completed(&exec(&rt, "c2", "touch 'kept file'").await));
    assert!(f.ran("kept file"));
    let out = exec(&rt, "c3", "touch other").await;
    assert!(blocked(&out, DeniedReason::ExecApproval), "{out:?}");
    assert!(!f.ran("other"));
}

#[tokio::test]
async fn full_runs_everything_unless_ask_always() {
    let f = Fixture::new();
    for (i, ask) in ["off", "on-miss"].iter().enumerate() {
        let (rt, mut rx) = f.runtime(
            &format!(r#"{{ security: "full", ask: "{ask}" }}"#),
            Some(ApprovalDecision::Deny),
        );
        assert!(completed(
            &exec(&rt, "c", &format!("touch full{i}; true")).await
        ));
        assert!(f.ran(&format!("full{i}")));
        assert!(rx.try_recv().is_err(), "{ask} never asks under full");
    }
    let (rt, mut rx) = f.runtime(
        r#"{ security: "full", ask: "always" }"#,
        Some(ApprovalDecision::Deny),
    );
    assert!(blocked(
        &exec(&rt, "c", "touch asked").await,
        DeniedReason::ApprovalDenied
    ));
    assert!(!f.ran("asked"));
    assert!(rx.try_recv().is_ok());
    let (rt, _rx) = f.runtime(
        r#"{ security: "full", ask: "always" }"#,
        Some(ApprovalDecision::AllowOnce),
    );
    assert!(completed(&exec(&rt, "c", "touch asked").await));
    assert!(f.ran("asked"));
    // ask: always keeps asking even for an allowlisted command.
    f.store()
        .add("main", vec![AllowlistEntry::new("touch")])
        .unwrap();
    let (rt, mut rx) = f.runtime(
        r#"{ security: "allowlist", ask: "always" }"#,
        Some(ApprovalDecision::Deny),
    );
    assert!(blocked(
        &exec(&rt, "c", "touch again").await,
        DeniedReason::ApprovalDenied
    ));
    assert!(rx.try_recv().is_ok());
    assert!(!f.ran("again"));
}

#[tokio::test]
async fn a_corrupt_allowlist_file_fails_closed() {
    let f = Fixture::new();
    std::fs::write(
        f.store().path(),
        "{ \"version\": 1,\n  \"agents\": { oops } }\n",
    )
    .unwrap();
    // Even `full` / `off` runs nothing while the file is unusable.
    for exec_cfg in [
        r#"{ security: "full", ask: "off" }"#,
        r#"{ security: "allowlist", ask: "on-miss" }"#,
    ] {
        let (rt, mut rx) = f.runtime(exec_cfg, Some(ApprovalDecision::AllowOnce));
        let out = exec(&rt, "c", "touch corrupt").await;
        let InvokeOutcome::Blocked(b) = &out else {
            panic!("{out:?}");
        };
        assert_eq!(b.denied_reason, DeniedReason::ExecApproval);
        let path = f.store().path().display().to_string();
        assert!(b.reason.contains(&format!("{path}:2:")), "{}", b.reason);
        assert!(b.reason.contains("no command runs"), "{}", b.reason);
        assert!(!f.ran("corrupt"));
        assert!(
            rx.try_recv().is_err(),
            "nobody is asked about an unusable file"
        );
    }
}
