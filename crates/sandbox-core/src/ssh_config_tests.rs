#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::*;

fn parse(json: serde_json::Value) -> SshConfig {
    serde_json::from_value(json).unwrap()
}

#[test]
fn defaults_are_strict_and_bounded() {
    let s = SshSettings::default();
    assert_eq!(s.host, None);
    assert_eq!(s.port, 22);
    assert_eq!(s.host_key_policy, HostKeyPolicy::Strict);
    assert_eq!(s.workspace_root, DEFAULT_SSH_WORKSPACE_ROOT);
    assert_eq!(s.connect_timeout_seconds, DEFAULT_SSH_CONNECT_TIMEOUT_SECS);
    assert_eq!(s.keepalive_seconds, DEFAULT_SSH_KEEPALIVE_SECS);
    assert_eq!(
        s.remote_workdir("sbx"),
        "/tmp/talon-sandboxes/sbx/workspace"
    );
}

#[test]
fn agent_fields_override_defaults_field_by_field() {
    let defaults = parse(serde_json::json!({
        "host": "build.example", "port": 2222, "user": "ci", "workspaceRoot": "/srv/talon/",
        "strictHostKeyChecking": "accept-new"
    }));
    let agent = parse(serde_json::json!({ "user": "ops", "keepaliveSeconds": 0 }));
    let s = SshSettings::resolve(Some(&defaults), Some(&agent));
    assert_eq!(s.host.as_deref(), Some("build.example"));
    assert_eq!(s.port, 2222);
    assert_eq!(s.user.as_deref(), Some("ops"));
    assert_eq!(s.workspace_root, "/srv/talon");
    assert_eq!(s.host_key_policy, HostKeyPolicy::AcceptNew);
    assert_eq!(s.keepalive_seconds, 0);
    assert_eq!(s.target(), "ops@build.example:2222");
}

#[test]
fn unknown_keys_are_an_error() {
    let err = serde_json::from_value::<SshConfig>(serde_json::json!({ "hots": "x" })).unwrap_err();
    assert!(err.to_string().contains("hots"), "{err}");
}

#[test]
fn validation_names_each_bad_field() {
    let bad = parse(serde_json::json!({
        "host": "-oProxyCommand=evil", "port": 70000, "user": "a b",
        "strictHostKeyChecking": false, "workspaceRoot": "relative/dir",
        "connectTimeoutSeconds": 0, "commandTimeoutSeconds": 100000, "keepaliveSeconds": 4000
    }));
    let keys: Vec<String> = bad.validate().into_iter().map(|(k, _)| k).collect();
    assert_eq!(
        keys,
        [
            "host",
            "user",
            "port",
            "strictHostKeyChecking",
            "workspaceRoot",
            "connectTimeoutSeconds",
            "commandTimeoutSeconds",
            "keepaliveSeconds"
        ]
    );
    // Resolution stays on the safe side of every refused value.
    let s = SshSettings::resolve(Some(&bad), None);
    assert_eq!(s.host_key_policy, HostKeyPolicy::Strict);
    assert_eq!(s.port, DEFAULT_SSH_PORT);
    assert_eq!(s.workspace_root, DEFAULT_SSH_WORKSPACE_ROOT);
    assert!(
        parse(serde_json::json!({ "host": "h", "port": 22 }))
            .validate()
            .is_empty()
    );
}

#[test]
fn remote_roots_must_be_absolute_and_plain() {
    assert!(remote_root_problem("/srv/x").is_none());
    for bad in ["x", "/", "///", "/a/../b", "/a/./b", "/a\nb"] {
        assert!(remote_root_problem(bad).is_some(), "{bad:?}");
    }
}

#[test]
fn host_key_checking_cannot_be_disabled() {
    for off in [
        HostKeyCheckingValue::Flag(false),
        HostKeyCheckingValue::Text("no".into()),
        HostKeyCheckingValue::Text("off".into()),
    ] {
        assert_eq!(off.policy(), Err(HostKeyCheckingOff { value: off.clone() }));
    }
    assert_eq!(
        HostKeyCheckingValue::Flag(false)
            .policy()
            .unwrap_err()
            .to_string(),
        "host-key checking cannot be turned off (got false); use `true` (strict, the default) \
         or `\"accept-new\"` and add the host's key to the known-hosts file"
    );
    assert_eq!(
        HostKeyCheckingValue::Text("YES".into()).policy(),
        Ok(HostKeyPolicy::Strict)
    );
}
