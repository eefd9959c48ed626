use std::os::unix::fs::PermissionsExt as _;

use super::*;

#[test]
fn missing_file_is_empty_and_writes_are_0600() {
    let dir = tempfile::tempdir().unwrap();
    let store = ExecApprovalsStore::in_state_dir(dir.path());
    assert_eq!(store.load().unwrap(), ExecApprovalsFile::default());
    assert_eq!(
        store.add("Main", vec![AllowlistEntry::new("ls")]).unwrap(),
        1
    );
    assert_eq!(
        store.add("main", vec![AllowlistEntry::new("ls")]).unwrap(),
        0
    );
    let mode = std::fs::metadata(store.path())
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600);
    let file = store.load().unwrap();
    let entry = &file.agents["main"].allowlist[0];
    assert_eq!(entry.pattern, "ls");
    assert!(entry.id.is_some() && entry.added_at.is_some());
    assert_eq!(store.remove("main", "ls").unwrap(), 1);
    assert!(store.load().unwrap().agents["main"].allowlist.is_empty());
}

#[test]
fn corrupt_file_names_the_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let store = ExecApprovalsStore::in_state_dir(dir.path());
    std::fs::write(store.path(), "{\n  \"version\": 1,\n  \"agents\": {\n    \"main\": {\"allowlist\": [\n      {\"pattern\": \"ls\",}\n").unwrap();
    let err = store.load().unwrap_err();
    let ExecApprovalsError::Parse { line, .. } = &err else {
        panic!("{err:?}");
    };
    assert_eq!(*line, 5);
    let text = err.to_string();
    assert!(text.contains("exec-approvals.json:5:"), "{text}");
    assert!(text.contains("until then no command runs"), "{text}");
    // Adding to a corrupt file is refused too, and leaves it untouched.
    let before = std::fs::read(store.path()).unwrap();
    assert!(store.add("main", vec![AllowlistEntry::new("ls")]).is_err());
    assert_eq!(std::fs::read(store.path()).unwrap(), before);
}

#[test]
fn invalid_values_name_the_key() {
    let dir = tempfile::tempdir().unwrap();
    let store = ExecApprovalsStore::in_state_dir(dir.path());
    for (text, key) in [
        (
            r#"{"version":1,"agents":{"main":{"allowlist":[{"pattern":"ls"},{"pattern":"~/bin/x"}]}}}"#,
            "agents.main.allowlist[1]",
        ),
        (
            r#"{"version":1,"agents":{"main":{"allowlist":[{"pattern":"l?"}]}}}"#,
            "agents.main.allowlist[0]",
        ),
        (
            r#"{"version":1,"agents":{"main":{"allowlist":[{"pattern":"git","argPattern":"("}]}}}"#,
            "agents.main.allowlist[0]",
        ),
        (r#"{"version":2}"#, "version"),
    ] {
        std::fs::write(store.path(), text).unwrap();
        match store.load() {
            Err(ExecApprovalsError::Invalid { key: k, .. }) => assert_eq!(k, key, "{text}"),
            other => panic!("{text}: {other:?}"),
        }
    }
    std::fs::write(
        store.path(),
        r#"{"version":1,"agents":{"main":{"security":"sometimes"}}}"#,
    )
    .unwrap();
    assert!(matches!(
        store.load(),
        Err(ExecApprovalsError::Parse { .. })
    ));
}

#[test]
fn openclaw_files_load() {
    let dir = tempfile::tempdir().unwrap();
    let store = ExecApprovalsStore::in_state_dir(dir.path());
    std::fs::write(
        store.path(),
        r#"{"version":1,"socket":{"path":"/x.sock","token":"t"},
            "defaults":{"security":"deny","ask":"on-miss","askFallback":"deny","autoAllowSkills":false},
            "agents":{"*":{"allowlist":[{"pattern":"rg"}]},
                      "main":{"security":"allowlist","askFallback":"allowlist","allowlist":[
                        {"id":"B0C8","pattern":"/opt/**/bin/rg","lastUsedAt":1737150000000,"lastResolvedPath":"/opt/x/bin/rg"}]}}}"#,
    )
    .unwrap();
    let view = store.agent_view("main").unwrap();
    let patterns: Vec<&str> = view.entries().map(|e| e.pattern.as_str()).collect();
    assert_eq!(patterns, vec!["rg", "/opt/**/bin/rg"]);
    assert_eq!(view.overrides.security, ExecSecurity::Deny);
    assert_eq!(view.ask_fallback, Some(ExecSecurity::Allowlist));
}
