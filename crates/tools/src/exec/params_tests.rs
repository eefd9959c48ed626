#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::json;

use super::*;

fn parse_json(value: Value) -> Result<ExecParams, ToolError> {
    let Value::Object(map) = value else {
        panic!("not an object")
    };
    parse(&map, &ExecConfig::default(), ExecHost::Gateway)
}

#[test]
fn defaults_come_from_the_config() {
    let p = parse_json(json!({"command": "ls -la"})).unwrap();
    assert_eq!(p.command, "ls -la");
    assert_eq!(p.timeout, Duration::from_secs(1800));
    assert_eq!(p.yield_window, Duration::from_millis(10_000));
    assert!(!p.background && !p.pty);
    assert!(p.env.is_empty());
}

#[test]
fn lenient_forms_are_accepted() {
    let p = parse_json(json!({
        "command": "x", "timeout": "2.5", "yield_ms": "250", "background": "true", "pty": true,
        "env": {"A": "1"}, "workdir": " sub ", "host": "auto"
    }))
    .unwrap();
    assert_eq!(p.timeout, Duration::from_millis(2500));
    assert_eq!(p.yield_window, Duration::from_millis(250));
    assert!(p.background && p.pty);
    assert_eq!(p.workdir.as_deref(), Some("sub"));
    assert_eq!(p.env.get("A").map(String::as_str), Some("1"));
}

#[test]
fn bad_values_name_the_parameter() {
    let cases = [
        (json!({}), "command"),
        (json!({"command": "   "}), "command"),
        (json!({"command": "a\u{0}b"}), "command"),
        (json!({"command": "x", "timeout": 0}), "timeout"),
        (json!({"command": "x", "timeout": 999_999}), "timeout"),
        (json!({"command": "x", "timeout": "soon"}), "timeout"),
        (json!({"command": "x", "yieldMs": 1}), "yieldMs"),
        (json!({"command": "x", "yieldMs": 500_000}), "yieldMs"),
        (json!({"command": "x", "env": "A=1"}), "env"),
        (json!({"command": "x", "env": {"A": 1}}), "env"),
        (json!({"command": "x", "background": "maybe"}), "background"),
        (json!({"command": "x", "elevated": true}), "elevated"),
        (json!({"command": "x", "host": "node"}), "host"),
    ];
    for (params, param) in cases {
        let err = parse_json(params.clone()).unwrap_err();
        assert_eq!(err.param(), Some(param), "{params}: {err}");
    }
}

#[test]
fn unknown_keys_are_refused_naming_the_key() {
    for (args, key) in [
        (json!({"command": "ls", "cwd": "/etc"}), "cwd"),
        (
            json!({"command": "ls", "workdir": "sub", "dir": "/"}),
            "dir",
        ),
        (
            json!({"command": "ls", "timeoutSeconds": 5}),
            "timeoutSeconds",
        ),
    ] {
        let err = parse_json(args.clone()).unwrap_err();
        assert_eq!(
            err.code(),
            talon_tool_catalog::ToolErrorCode::InputUnknownParam,
            "{args}"
        );
        assert_eq!(err.param(), Some(key), "{args}");
    }
    let err = parse_json(json!({"command": "ls", "cwd": "/etc"})).unwrap_err();
    assert!(err.message().contains("`workdir`"), "{err}");
    // Two spellings of one key that disagree.
    let err = parse_json(json!({"command": "ls", "yieldMs": 100, "yield_ms": 200})).unwrap_err();
    assert_eq!(
        err.code(),
        talon_tool_catalog::ToolErrorCode::InputUnknownParam
    );
}

#[test]
fn the_accepted_keys_are_the_schema_keys_plus_skill_dispatch() {
    let schema = talon_tool_catalog::ToolSpec::core("exec")
        .unwrap()
        .parameters;
    let mut props: Vec<&str> = schema["properties"]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    props.extend(["commandName", "skillName"]);
    props.sort_unstable();
    let mut keys: Vec<&str> = EXEC_KEYS.iter().map(String::as_str).collect();
    keys.sort_unstable();
    assert!(keys.contains(&"command") && keys.contains(&"workdir"));
    assert_eq!(keys, props);
}
