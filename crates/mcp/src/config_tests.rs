#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use serde_json::json;

use super::*;

#[test]
fn servers_keep_declaration_order_and_typed_fields() {
    let v = json!({"servers": {
        "zeta": {"command": "z", "args": ["-v"], "env": {"A": "1"}, "cwd": "/tmp", "timeoutMs": 500,
                 "supportsParallelToolCalls": true},
        "alpha": {"url": "http://127.0.0.1:1/mcp", "headers": {"Authorization": "Bearer ${TOKEN}"}, "enabled": false}
    }});
    let cfg = parse_config(&v, "mcp").unwrap();
    let names: Vec<&str> = cfg.servers.0.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["zeta", "alpha"]);
    let (_, zeta) = &cfg.servers.0[0];
    assert_eq!(zeta.transport(), Transport::Stdio);
    assert_eq!(zeta.timeout(), Duration::from_millis(500));
    assert_eq!(zeta.supports_parallel_tool_calls, Some(true));
    let (_, alpha) = &cfg.servers.0[1];
    assert_eq!(alpha.transport(), Transport::StreamableHttp);
    assert!(!alpha.is_enabled());
    assert_eq!(alpha.max_output_bytes(), DEFAULT_MAX_OUTPUT_BYTES);
}

#[test]
fn unknown_keys_name_their_path() {
    let v = json!({"servers": {"gh": {"command": "x", "comand": "y"}}});
    let err = parse_config(&v, "agents.list[0].mcp").unwrap_err();
    let McpError::Config { key, message } = err else {
        panic!()
    };
    assert_eq!(key, "agents.list[0].mcp.servers.gh.comand");
    assert!(message.contains("comand"), "{message}");
}

#[test]
fn ranges_and_shapes_are_checked() {
    let cases = [
        (
            json!({"command": "x", "timeoutMs": 0}),
            "mcp.servers.s.timeoutMs",
        ),
        (
            json!({"command": "x", "timeoutMs": 3_600_001u64}),
            "mcp.servers.s.timeoutMs",
        ),
        (
            json!({"command": "x", "maxOutputBytes": 10}),
            "mcp.servers.s.maxOutputBytes",
        ),
        (json!({"command": "x", "url": "http://h"}), "mcp.servers.s"),
        (json!({}), "mcp.servers.s"),
        (json!({"url": "file:///etc/passwd"}), "mcp.servers.s.url"),
        (json!({"command": " "}), "mcp.servers.s.command"),
        (
            json!({"url": "http://h", "env": {"A": "b"}}),
            "mcp.servers.s",
        ),
        (
            json!({"command": "x", "headers": {"A": "b"}}),
            "mcp.servers.s.headers",
        ),
        (
            json!({"command": "x", "env": {"A": "${}"}}),
            "mcp.servers.s.A",
        ),
        (
            json!({"command": "x", "env": {"A": "${OPEN"}}),
            "mcp.servers.s.A",
        ),
    ];
    for (server, want_key) in cases {
        let v = json!({"servers": {"s": server}});
        match parse_config(&v, "mcp") {
            Err(McpError::Config { key, .. }) => assert_eq!(key, want_key, "{v}"),
            other => panic!("{v}: {other:?}"),
        }
    }
}

#[test]
fn env_references_expand_and_unset_ones_fail() {
    let lookup = |n: &str| (n == "HOME_X").then(|| "/h".to_owned());
    assert_eq!(expand("a ${HOME_X}/b", lookup).unwrap(), "a /h/b");
    assert_eq!(expand("plain $HOME_X", lookup).unwrap(), "plain $HOME_X");
    let err = expand("${NOPE}", lookup).unwrap_err();
    assert_eq!(err, EnvRefError::Unset("NOPE".into()));
    assert_eq!(err.to_string(), "environment variable `NOPE` is not set");
    assert_eq!(expand("${A", lookup), Err(EnvRefError::Unterminated));
    let bad = expand("${1A}", lookup).unwrap_err();
    assert_eq!(bad.to_string(), "`${1A}` is not a valid variable reference");
}
