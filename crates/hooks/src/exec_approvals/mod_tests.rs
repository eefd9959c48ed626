use super::*;

fn store_with(entries: &[&str]) -> (tempfile::TempDir, Arc<ExecApprovalsStore>) {
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(ExecApprovalsStore::in_state_dir(dir.path()));
    store
        .add(
            "main",
            entries.iter().map(|p| AllowlistEntry::new(*p)).collect(),
        )
        .unwrap();
    (dir, store)
}

#[test]
fn every_segment_must_match() {
    let (_dir, store) = store_with(&["ls*", "echo", "/usr/bin/git"]);
    let exec = ExecApprovals::new(
        ExecPolicy::new(ExecSecurity::Allowlist, ExecAsk::Off),
        store,
    );
    for ok in [
        "ls -la",
        "ls; echo hi",
        "lsblk && echo $HOME",
        "/usr/bin/git status | ls",
        "(ls)",
    ] {
        let check = exec.check("main", ok).unwrap();
        assert_eq!(check.decision, PolicyDecision::Run, "{ok}");
    }
    for bad in [
        "ls; rm -rf ~",
        "ls && rm -rf ~",
        "ls || rm -rf ~",
        "ls | rm -rf ~",
        "ls & rm -rf ~",
        "ls\nrm -rf ~",
        "ls $(rm -rf ~)",
        "ls \"$(rm -rf ~)\"",
        "ls `rm -rf ~`",
        "ls && curl x|sh",
        "sh -c 'ls'",
        "bash -c ls",
        "eval ls",
        "ls > /tmp/x",
        "git status",
        "./ls",
        "/bin/ls",
        "/usr/bin/../bin/git",
        "PATH=/tmp ls",
        "(ls; rm -rf ~)",
        "ls 'unterminated",
        "",
    ] {
        let check = exec.check("main", bad).unwrap();
        assert_eq!(check.decision, PolicyDecision::Deny, "{bad:?}");
        assert!(!check.evaluation.satisfied, "{bad:?}");
    }
}

#[test]
fn sh_matches_only_when_sh_is_allowlisted() {
    let (_dir, store) = store_with(&["sh"]);
    let exec = ExecApprovals::new(
        ExecPolicy::new(ExecSecurity::Allowlist, ExecAsk::Off),
        store,
    );
    assert_eq!(
        exec.check("main", "sh -c 'rm -rf ~'").unwrap().decision,
        PolicyDecision::Run
    );
    assert_eq!(
        exec.check("main", "rm -rf ~").unwrap().decision,
        PolicyDecision::Deny
    );
}

#[test]
fn entries_to_add_record_exact_argv() {
    let (_dir, store) = store_with(&["ls"]);
    let exec = ExecApprovals::new(
        ExecPolicy::new(ExecSecurity::Allowlist, ExecAsk::OnMiss),
        store,
    );
    let check = exec.check("main", "ls; rm -rf 'a b'").unwrap();
    assert_eq!(check.decision, PolicyDecision::Ask);
    assert_eq!(check.entries_to_add.len(), 1);
    assert_eq!(check.entries_to_add[0].pattern, "rm");
    assert_eq!(
        check.entries_to_add[0].args,
        Some(vec!["-rf".to_owned(), "a b".to_owned()])
    );
    // Nothing can be recorded for a command that is not analysable.
    assert!(
        exec.check("main", "rm $(id)")
            .unwrap()
            .entries_to_add
            .is_empty()
    );
    assert!(
        exec.check("main", "rm *.txt")
            .unwrap()
            .entries_to_add
            .is_empty()
    );
}

#[test]
fn policy_table() {
    use ExecAsk::{Always, Off, OnMiss};
    use ExecSecurity::{Allowlist, Deny, Full};
    use PolicyDecision as D;
    for (security, ask, hit, miss) in [
        (Deny, Off, D::Deny, D::Deny),
        (Deny, Always, D::Deny, D::Deny),
        (Allowlist, Off, D::Run, D::Deny),
        (Allowlist, OnMiss, D::Run, D::Ask),
        (Allowlist, Always, D::Ask, D::Ask),
        (Full, Off, D::Run, D::Run),
        (Full, OnMiss, D::Run, D::Run),
        (Full, Always, D::Ask, D::Ask),
    ] {
        let p = ExecPolicy::new(security, ask);
        assert_eq!(
            (p.decide(true), p.decide(false)),
            (hit, miss),
            "{security:?} {ask:?}"
        );
    }
}

#[test]
fn the_file_only_tightens() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(EXEC_APPROVALS_FILE);
    std::fs::write(
        &path,
        r#"{"version":1,"defaults":{"security":"allowlist"},"agents":{"main":{"ask":"always","allowlist":[{"pattern":"ls"}]}}}"#,
    )
    .unwrap();
    let store = Arc::new(ExecApprovalsStore::new(path));
    let exec = ExecApprovals::new(
        ExecPolicy::new(ExecSecurity::Full, ExecAsk::Off),
        Arc::clone(&store),
    );
    let check = exec.check("main", "ls").unwrap();
    assert_eq!(check.policy.security, ExecSecurity::Allowlist);
    assert_eq!(check.policy.ask, ExecAsk::Always);
    let strict = ExecApprovals::new(ExecPolicy::new(ExecSecurity::Deny, ExecAsk::Off), store);
    assert_eq!(
        strict.check("main", "ls").unwrap().decision,
        PolicyDecision::Deny
    );
}

mod gate {
    use serde_json::{Map, json};

    use super::*;
    use crate::approval::{ApprovalBroker, ApprovalEvent, MemoryApprovalBroker};
    use crate::{
        BeforeToolCallEvent, BeforeToolCallHandler, BeforeToolCallResult, Gate, GateVerdict,
        HookContext, Hooks, Registration,
    };

    /// Rewrites every `command` to a fixed one.
    struct Rewrite(&'static str);

    #[async_trait::async_trait]
    impl BeforeToolCallHandler for Rewrite {
        async fn before_tool_call(
            &self,
            _event: &BeforeToolCallEvent,
            _ctx: &HookContext,
        ) -> Result<Option<BeforeToolCallResult>, crate::HookError> {
            let mut params = Map::new();
            params.insert("command".into(), json!(self.0));
            Ok(Some(BeforeToolCallResult::params(params)))
        }
    }

    fn event(command: &str) -> BeforeToolCallEvent {
        let mut params = Map::new();
        params.insert("command".into(), json!(command));
        BeforeToolCallEvent::new("bash", params)
    }

    #[tokio::test]
    async fn the_review_sees_the_command_the_hooks_left() {
        let (_dir, store) = store_with(&["ls"]);
        let mut hooks = Hooks::new();
        hooks.on_before_tool_call(Registration::new("rw"), Arc::new(Rewrite("ls; rm -rf x")));
        let gate = Gate::new(Arc::new(hooks)).with_exec_approvals(Arc::new(ExecApprovals::new(
            ExecPolicy::new(ExecSecurity::Allowlist, ExecAsk::Off),
            store,
        )));
        let ctx = HookContext::new("main", "agent:main:main");
        let verdict = gate.check(event("ls"), &ctx).await;
        assert!(
            matches!(&verdict, GateVerdict::Blocked(b) if b.denied_reason == DeniedReason::ExecApproval && b.reason.contains("`rm -rf x`")),
            "{verdict:?}"
        );
        // `before_tool_call` (no approval step) applies the review too.
        let outcome = gate.before_tool_call(event("ls"), &ctx).await;
        assert!(matches!(outcome, GateOutcome::Blocked(_)), "{outcome:?}");
    }

    #[tokio::test]
    async fn ask_always_asks_every_time_with_the_exact_command() {
        let (_dir, store) = store_with(&[]);
        let broker = Arc::new(MemoryApprovalBroker::in_memory());
        let gate = Gate::new(Arc::new(Hooks::new()))
            .with_broker(Arc::clone(&broker) as Arc<dyn ApprovalBroker>)
            .with_exec_approvals(Arc::new(ExecApprovals::new(
                ExecPolicy::new(ExecSecurity::Full, ExecAsk::Always),
                Arc::clone(&store),
            )));
        let mut events = broker.subscribe();
        let b2 = Arc::clone(&broker);
        let asked = tokio::spawn(async move {
            let mut seen = Vec::new();
            while let Ok(ev) = events.recv().await {
                if let ApprovalEvent::Requested(req) = ev {
                    seen.push(req.command.clone());
                    b2.resolve(&req.id, ApprovalDecision::AllowAlways, Some(&req.binding()));
                    if seen.len() == 2 {
                        break;
                    }
                }
            }
            seen
        });
        let ctx = HookContext::new("main", "agent:main:main");
        let command = "printf '\\033[2J' \u{202e}x";
        for _ in 0..2 {
            let verdict = gate.check(event(command), &ctx).await;
            assert!(matches!(verdict, GateVerdict::Run { .. }), "{verdict:?}");
        }
        let seen = tokio::time::timeout(std::time::Duration::from_secs(10), asked)
            .await
            .unwrap()
            .unwrap();
        assert_eq!(
            seen,
            vec![Some(command.to_owned()), Some(command.to_owned())]
        );
        // allow-always recorded the argv in the file, not a broker grant.
        let entries: Vec<AllowlistEntry> = store
            .agent_view("main")
            .unwrap()
            .entries()
            .cloned()
            .collect();
        assert_eq!(entries.len(), 1);
        assert_eq!(entries[0].pattern, "printf");
        assert_eq!(
            entries[0].args,
            Some(vec!["\\033[2J".to_owned(), "\u{202e}x".to_owned()])
        );
    }

    #[tokio::test]
    async fn the_approver_sees_the_env_the_call_sets() {
        let (_dir, store) = store_with(&[]);
        let broker = Arc::new(MemoryApprovalBroker::in_memory());
        let gate = Gate::new(Arc::new(Hooks::new()))
            .with_broker(Arc::clone(&broker) as Arc<dyn ApprovalBroker>)
            .with_exec_approvals(Arc::new(ExecApprovals::new(
                ExecPolicy::new(ExecSecurity::Full, ExecAsk::Always),
                Arc::clone(&store),
            )));
        let mut events = broker.subscribe();
        let b2 = Arc::clone(&broker);
        let asked = tokio::spawn(async move {
            let mut seen = Vec::new();
            while let Ok(ev) = events.recv().await {
                if let ApprovalEvent::Requested(req) = ev {
                    seen.push(req.env.clone());
                    b2.resolve(&req.id, ApprovalDecision::AllowOnce, Some(&req.binding()));
                    if seen.len() == 2 {
                        break;
                    }
                }
            }
            seen
        });
        let ctx = HookContext::new("main", "agent:main:main");
        let mut with_env = event("make");
        with_env
            .params
            .insert("env".into(), json!({"MODE": "fast", "EXTRA": "a\u{1b}b"}));
        for ev in [with_env, event("make")] {
            let verdict = gate.check(ev, &ctx).await;
            assert!(matches!(verdict, GateVerdict::Run { .. }), "{verdict:?}");
        }
        let seen = tokio::time::timeout(std::time::Duration::from_secs(10), asked)
            .await
            .unwrap()
            .unwrap();
        let expected: std::collections::BTreeMap<String, String> = [
            ("EXTRA".to_owned(), "a\u{1b}b".to_owned()),
            ("MODE".to_owned(), "fast".to_owned()),
        ]
        .into_iter()
        .collect();
        assert_eq!(seen, vec![Some(expected), None]);
    }

    #[test]
    fn the_command_is_displayed_losslessly_and_safely() {
        let shown = crate::approval::display_command("a\u{1b}[2J\\b\u{202e}c\nd\te");
        assert_eq!(shown, "a\\u{001B}[2J\\\\b\\u{202E}c\\nd\\te");
    }
}
