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
