use std::collections::BTreeMap;

use pretty_assertions::assert_eq;
use serde_json::json;

use super::*;

fn vars(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect()
}

fn parse(answer: &str) -> Result<BeforeToolCallResult, HookError> {
    CommandAnswer::parse(answer).map(|a| a.into_result("hook"))
}

#[test]
fn host_namespaces_and_credentials_are_not_inherited() {
    let env = EnvPolicy::default().host_env(vars(&[
        ("PATH", "/usr/bin"),
        ("HOME", "/home/u"),
        ("LANG", "C.UTF-8"),
        ("TOKENIZERS_PARALLELISM", "false"),
        ("KEYBOARD", "us"),
        ("MY_TOKEN_FILE", "/run/t"),
        ("TALONX", "kept"),
        ("ANTHROPIC_API_KEY", "sk-ant"),
        ("OPENAI_APIKEY", "sk"),
        ("TALON_GATEWAY_TOKEN", "gw"),
        ("talon_state_dir", "/var/lib/talon"),
        ("OPENCLAW_GIT_DIR", "/x"),
        ("github_token", "ghp"),
        ("AWS_SECRET", "s"),
        ("DB_PASSWORD", "p"),
        ("FTP_PASSWD", "p"),
        ("SSH_PRIVATE_KEY", "k"),
        ("ALGOLIA_ADMIN_KEY", "k"),
        ("GOOGLE_APPLICATION_CREDENTIALS", "/k.json"),
        ("API_KEY", "k"),
        ("TOKEN", "t"),
        ("Secret", "s"),
        ("PASSWORD", "p"),
        ("LD_PRELOAD", "/tmp/x.so"),
    ]));
    let keys: Vec<&str> = env.keys().map(String::as_str).collect();
    assert_eq!(keys, vec!["HOME", "LANG", "PATH"]);
}

#[test]
fn the_configured_env_still_applies_and_only_it_adds_secrets() {
    let config = CommandHookConfig {
        id: "h".into(),
        command: vec!["/bin/true".into()],
        env: Some(
            [("SERVICE_TOKEN".to_owned(), "mine".to_owned())]
                .into_iter()
                .collect(),
        ),
        ..CommandHookConfig::default()
    };
    let hook = CommandHook::from_config(&config, Path::new("/"));
    assert_eq!(
        hook.env.get("SERVICE_TOKEN").map(String::as_str),
        Some("mine")
    );
    // Whatever the process environment holds, nothing withheld is inherited.
    for key in hook.env.keys().filter(|k| *k != "SERVICE_TOKEN") {
        assert!(
            EnvPolicy::default().withheld(key).is_none(),
            "{key} was inherited"
        );
    }
}

#[test]
fn unknown_keys_make_an_answer_unparseable() {
    for (answer, field) in [
        (
            r#"{"requireApproval": {"title": "t", "description": "d"}, "Block": true}"#,
            "Block",
        ),
        (r#"{"blocked": true}"#, "blocked"),
        (r#"{"decision": "block"}"#, "decision"),
        (
            r#"{"requireApproval": {"title": "t", "description": "d", "onTimeout": "allow"}}"#,
            "onTimeout",
        ),
    ] {
        let err = parse(answer).expect_err(answer);
        assert_eq!(err.kind(), HookErrorKind::Answer);
        let err = err.to_string();
        assert!(err.starts_with("unparseable answer: "), "{err}");
        assert!(err.contains(&format!("unknown field `{field}`")), "{err}");
    }
}

#[test]
fn block_must_be_a_boolean_and_the_answer_an_object() {
    for answer in [
        r#"{"block": "yes"}"#,
        r#"{"block": 1}"#,
        r#"{"blockReason": 3}"#,
        r#"[true, "no"]"#,
        "null",
        "true",
        r#"{"requireApproval": true}"#,
        r#"{"requireApproval": {"title": "t"}}"#,
        r#"{"blockReason": "a", "block_reason": "b"}"#,
    ] {
        let err = parse(answer).expect_err(answer);
        assert_eq!(err.kind(), HookErrorKind::Answer);
        let err = err.to_string();
        assert!(err.starts_with("unparseable answer"), "{answer}: {err}");
    }
}

#[test]
fn camel_and_snake_case_answers_parse() {
    assert_eq!(
        parse(r#"{"block": true, "block_reason": "no"}"#),
        Ok(BeforeToolCallResult::block("no"))
    );
    assert_eq!(
        parse(r#"{"block": true, "blockReason": "no"}"#),
        Ok(BeforeToolCallResult::block("no"))
    );
    assert_eq!(parse("{}"), Ok(BeforeToolCallResult::default()));
    assert_eq!(
        parse(r#"{"params": {"path": "a"}}"#),
        Ok(BeforeToolCallResult::params(
            json!({"path": "a"})
                .as_object()
                .cloned()
                .unwrap_or_default()
        ))
    );
    let expected = BeforeToolCallResult::approval(ApprovalSpec {
        title: "t".into(),
        description: "d".into(),
        scope: Some(ApprovalScope::Session),
        severity: Some(ApprovalSeverity::Info),
        timeout_ms: Some(5000),
        allowed_decisions: Some(vec![ApprovalDecision::AllowOnce, ApprovalDecision::Deny]),
        plugin_id: None,
        on_resolution: None,
        exec_command: None,
        exec_env: None,
        exec_pin: None,
    });
    let snake = r#"{"require_approval": {"title": "t", "description": "d",
        "scope": "session", "severity": "info", "timeout_ms": 5000,
        "allowed_decisions": ["allow-once", "deny"], "plugin_id": "forged",
        "timeout_behavior": "allow"}}"#;
    let camel = r#"{"requireApproval": {"title": "t", "description": "d",
        "scope": "session", "severity": "info", "timeoutMs": 5000,
        "allowedDecisions": ["allow-once", "deny"], "pluginId": "forged",
        "timeoutBehavior": "allow"}}"#;
    assert_eq!(parse(snake), Ok(expected.clone()));
    assert_eq!(parse(camel), Ok(expected));
}

#[test]
fn env_answers_must_be_objects_of_strings() {
    assert_eq!(
        parse_env_answer(r#"{"A": "1", "b": ""}"#),
        Ok([("A", "1"), ("b", "")]
            .into_iter()
            .map(|(k, v)| (k.to_owned(), v.to_owned()))
            .collect::<BTreeMap<_, _>>())
    );
    assert_eq!(parse_env_answer("{}"), Ok(BTreeMap::new()));
    for answer in [
        r#"{"A": 1}"#,
        r#"{"A": "1", "B": null}"#,
        r#"{"A": ["x"]}"#,
        r#"{"A": {"x": "y"}}"#,
        r#"["A", "1"]"#,
        "null",
        "\"A=1\"",
        "not json",
    ] {
        let err = parse_env_answer(answer).expect_err(answer);
        assert_eq!(err.kind(), HookErrorKind::Answer);
        let err = err.to_string();
        assert!(err.starts_with("unparseable answer"), "{answer}: {err}");
    }
    let err = parse_env_answer(r#"{"A": "1", "SECRETISH": 42}"#)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("`SECRETISH`") && err.contains("a number"),
        "{err}"
    );
    assert!(!err.contains("42"), "values are never echoed: {err}");
}
