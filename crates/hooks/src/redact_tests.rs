use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use super::*;

const SECRET_COMMAND: &str = "curl -H 'Authorization: Bearer sk-SECRET123' https://api.example.com";

fn command_summary(sha256: &str, chars: usize, kind: &str) -> Value {
    json!({
        "omitted": true,
        "reason": "exec command may contain credentials",
        "type": kind,
        "chars": chars,
        "sha256": sha256,
    })
}

#[test]
fn exec_params_have_the_exact_openclaw_shape() {
    let params = json!({
        "command": SECRET_COMMAND,
        "workdir": "/tmp/w",
        "env": {"ZED": "z-secret", "ALPHA": "a-secret", "GITHUB_TOKEN": "ghp_x"},
        "timeoutSeconds": 30,
    });
    let out = sanitize_exec_failure_params(&params);
    assert_eq!(
        out,
        json!({
            "command": command_summary("b9db4868ced4950f", 68, "string"),
            "workdir": "/tmp/w",
            "env": {
                "ALPHA": "[omitted exec env value]",
                "GITHUB_TOKEN": "[omitted exec env value]",
                "ZED": "[omitted exec env value]",
            },
            "timeoutSeconds": 30,
        })
    );
    // The env keys come out sorted, and the summary keys in OpenClaw's order.
    assert_eq!(
        out.to_string(),
        concat!(
            r#"{"command":{"omitted":true,"reason":"exec command may contain credentials","#,
            r#""type":"string","chars":68,"sha256":"b9db4868ced4950f"},"workdir":"/tmp/w","#,
            r#""env":{"ALPHA":"[omitted exec env value]","GITHUB_TOKEN":"[omitted exec env value]","#,
            r#""ZED":"[omitted exec env value]"},"timeoutSeconds":30}"#
        )
    );
    let text = out.to_string();
    for secret in ["sk-SECRET123", "z-secret", "a-secret", "ghp_x"] {
        assert!(!text.contains(secret), "{secret} leaked: {text}");
    }
}

#[test]
fn cmd_arrays_nulls_and_utf16_lengths() {
    let params = json!({
        "cmd": ["bash", "-lc", "echo sk-SECRET123"],
        "command": null,
    });
    assert_eq!(
        sanitize_exec_failure_params(&params),
        json!({
            "cmd": command_summary("b6e33aa7f5636b7d", 34, "array"),
            "command": command_summary("74234e98afe7498f", 4, "null"),
        })
    );
    // An astral character counts as two UTF-16 code units, as in JavaScript.
    assert_eq!(
        sanitize_exec_failure_params(&json!({"command": "echo 😀"})),
        json!({"command": command_summary("73acba228936f3e6", 7, "string")})
    );
}

#[test]
fn non_object_env_is_omitted_whole() {
    for env in [json!("A=1 B=2"), json!(["A=1"]), json!(null), json!(7)] {
        assert_eq!(
            sanitize_exec_failure_params(&json!({"env": env})),
            json!({"env": "[omitted exec env]"})
        );
    }
}

#[test]
fn non_object_params_are_summarised() {
    let summary = |sha256: &str, chars: usize, kind: &str| {
        json!({
            "omitted": true,
            "reason": "exec params may contain command credentials",
            "type": kind,
            "chars": chars,
            "sha256": sha256,
        })
    };
    assert_eq!(
        sanitize_exec_failure_params(&json!("rm -rf / --token=abc")),
        summary("bad230ebac8f20cf", 20, "string")
    );
    assert_eq!(
        sanitize_exec_failure_params(&json!(42)),
        summary("73475cb40a568e8d", 2, "number")
    );
    assert_eq!(
        sanitize_exec_failure_params(&json!([1, 2])),
        summary("49a64717d5d4cb19", 5, "array")
    );
    assert_eq!(
        sanitize_exec_failure_params(&json!(null)),
        summary("74234e98afe7498f", 4, "null")
    );
}

#[test]
fn a_json_string_holding_an_object_is_parsed_first() {
    let params = Value::String(json!({"command": SECRET_COMMAND, "yieldMs": 10}).to_string());
    assert_eq!(
        sanitize_exec_failure_params(&params),
        json!({"command": command_summary("b9db4868ced4950f", 68, "string"), "yieldMs": 10})
    );
}

#[test]
fn bash_is_redacted_like_exec() {
    let params = json!({"command": SECRET_COMMAND});
    let expected = json!({"command": command_summary("b9db4868ced4950f", 68, "string")});
    assert_eq!(redact_params_for_log("bash", &params), expected);
    assert_eq!(redact_params_for_log(" Exec ", &params), expected);
    // Other tools keep a `command` key verbatim.
    assert_eq!(redact_params_for_log("process", &params), params);
}

#[test]
fn secret_looking_keys_are_redacted_for_every_tool() {
    let params = json!({
        "url": "https://example.com",
        "headers": {"Authorization": "Bearer abc", "X-Api-Key": "k1", "Cookie": "s=1", "Accept": "*/*"},
        "api_key": "k2",
        "apiKey": "k3",
        "nested": [{"password": "p1"}, {"db_passwd": "p2", "user": "u"}],
        "clientSecret": {"value": "s1"},
        "refresh_token": "t1",
        "PRIVATE_KEY": "-----BEGIN",
        "max_tokens": 256,
        "token": null,
        "secret_enabled": true,
    });
    assert_eq!(
        redact_params_for_log("web_fetch", &params),
        json!({
            "url": "https://example.com",
            "headers": {"Authorization": "[redacted]", "X-Api-Key": "[redacted]", "Cookie": "[redacted]", "Accept": "*/*"},
            "api_key": "[redacted]",
            "apiKey": "[redacted]",
            "nested": [{"password": "[redacted]"}, {"db_passwd": "[redacted]", "user": "u"}],
            "clientSecret": "[redacted]",
            "refresh_token": "[redacted]",
            "PRIVATE_KEY": "[redacted]",
            "max_tokens": 256,
            "token": null,
            "secret_enabled": true,
        })
    );
}

#[test]
fn exec_keys_other_than_the_command_are_still_checked_for_secrets() {
    let params = json!({"command": "ls", "env": {"API_TOKEN": "t"}, "password": "hunter2"});
    let out = redact_params_for_log("exec", &params);
    assert_eq!(out["env"], json!({"API_TOKEN": "[omitted exec env value]"}));
    assert_eq!(out["password"], json!("[redacted]"));
    assert!(!out.to_string().contains("hunter2"));
}

#[test]
fn json_strings_are_redacted_only_when_needed() {
    let with_secret = Value::String(r#"{"q":"x","password":"hunter2"}"#.to_owned());
    assert_eq!(
        redact_params_for_log("web_search", &with_secret),
        json!({"q": "x", "password": "[redacted]"})
    );
    let plain = Value::String(r#"{"q":"x"}"#.to_owned());
    assert_eq!(redact_params_for_log("web_search", &plain), plain);
    let not_json = json!("password=hunter2");
    assert_eq!(redact_params_for_log("web_search", &not_json), not_json);
}

#[test]
fn preview_serialises_primitives_and_json() {
    assert_eq!(params_preview(&json!("plain text")), "plain text");
    assert_eq!(params_preview(&json!(42)), "42");
    assert_eq!(params_preview(&json!(true)), "true");
    assert_eq!(params_preview(&json!(null)), "null");
    assert_eq!(params_preview(&json!({"a": [1, "b"]})), r#"{"a":[1,"b"]}"#);
    assert_eq!(params_preview(&json!("")), "<empty>");
    assert_eq!(params_preview(&json!(" \n\t ")), "<empty>");
}

#[test]
fn preview_cleans_control_characters_and_whitespace() {
    assert_eq!(
        params_preview(&json!("  a\u{1b}[31mb\r\n\n c\td\u{7f}\u{9b}e\u{202e}f  ")),
        "a\u{FFFD}[31mb c d\u{FFFD}\u{FFFD}e\u{FFFD}f"
    );
}

#[test]
fn preview_is_capped_at_600_chars() {
    let exact = "a".repeat(600);
    assert_eq!(params_preview(&json!(exact)), exact);
    let long = "a".repeat(601);
    assert_eq!(
        params_preview(&json!(long)),
        format!("{}…", "a".repeat(600))
    );
    // Multi-byte characters are cut on a character boundary.
    let wide = "é😀".repeat(400);
    let preview = params_preview(&json!(wide));
    assert_eq!(preview.chars().count(), 601);
    assert_eq!(preview, format!("{}…", "é😀".repeat(300)));
}

#[test]
fn failure_line_without_a_changed_effective_param() {
    let raw = json!({"path": "/a.txt"});
    assert_eq!(
        failure_log_line("read", "ENOENT: no such file", &raw, Some(&raw.clone())),
        r#"[tools] read failed: ENOENT: no such file raw_params={"path":"/a.txt"}"#
    );
    assert_eq!(
        failure_log_line("read", "boom", &raw, None),
        r#"[tools] read failed: boom raw_params={"path":"/a.txt"}"#
    );
}

#[test]
fn failure_line_with_hook_adjusted_params() {
    let raw = json!({"path": "/a.txt"});
    let effective = json!({"path": "/w/a.txt"});
    assert_eq!(
        failure_log_line("read", "boom", &raw, Some(&effective)),
        r#"[tools] read failed: boom raw_params={"path":"/a.txt"} effective_params={"path":"/w/a.txt"}"#
    );
}

#[test]
fn failure_line_for_exec_never_shows_the_command() {
    let raw = json!({"command": "echo one"});
    let effective = json!({"command": "echo two"});
    let line = failure_log_line("bash", "exit 1\nsecond line", &raw, Some(&effective));
    let summary = |sha: &str| {
        format!(
            r#"{{"omitted":true,"reason":"exec command may contain credentials","type":"string","chars":8,"sha256":"{sha}"}}"#
        )
    };
    assert_eq!(
        line,
        format!(
            "[tools] exec failed: exit 1 second line raw_params={{\"command\":{}}} effective_params={{\"command\":{}}}",
            summary("5d103558eaead111"),
            summary("d70ea63d138edd72")
        )
    );
    assert!(!line.contains("echo"));
}

#[test]
fn failure_line_hides_a_secret_that_only_the_hook_changed() {
    let raw = json!({"url": "u", "token": "old-secret"});
    let effective = json!({"url": "u", "token": "new-secret"});
    let line = failure_log_line("web_fetch", "401", &raw, Some(&effective));
    assert_eq!(
        line,
        r#"[tools] web_fetch failed: 401 raw_params={"url":"u","token":"[redacted]"}"#
    );
}
