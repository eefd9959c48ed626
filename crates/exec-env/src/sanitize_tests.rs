use std::collections::BTreeMap;

use pretty_assertions::assert_eq;

use super::*;

fn map(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect()
}

fn strings(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| (*s).to_owned()).collect()
}

#[test]
fn splits_accepted_blocked_and_invalid() {
    let overrides = map(&[
        ("FOO", "1"),
        ("  BAR ", "2"),
        ("PATH", "/evil"),
        ("ld_preload", "/tmp/x.so"),
        ("http_proxy", "http://attacker"),
        ("NODE_OPTIONS", "--require /tmp/x.js"),
        ("GIT_CONFIG_KEY_0", "core.sshCommand"),
        ("BAD=KEY", "x"),
        ("1ABC", "x"),
        ("WITH SPACE", "x"),
        ("NUL\0KEY", "x"),
        ("   ", "x"),
        ("NULVAL", "a\0b"),
    ]);
    let out = sanitize_env_overrides(&overrides, true);
    assert_eq!(
        out,
        SanitizedEnv {
            accepted: map(&[("BAR", "2"), ("FOO", "1")]),
            rejected_blocked: strings(&[
                "GIT_CONFIG_KEY_0",
                "HTTP_PROXY",
                "LD_PRELOAD",
                "NODE_OPTIONS",
                "PATH"
            ]),
            rejected_invalid: strings(&[
                "   ",
                "1ABC",
                "BAD=KEY",
                "NUL\0KEY",
                "NULVAL",
                "WITH SPACE"
            ]),
        }
    );
    assert!(out.has_rejections());
}

#[test]
fn path_is_accepted_when_not_blocked() {
    let overrides = map(&[("PATH", "/usr/bin"), ("LD_PRELOAD", "x")]);
    let out = sanitize_env_overrides(&overrides, false);
    assert_eq!(out.accepted, map(&[("PATH", "/usr/bin")]));
    assert_eq!(out.rejected_blocked, strings(&["LD_PRELOAD"]));
}

#[test]
fn blocked_keys_are_uppercased_and_deduplicated() {
    let overrides = map(&[("HOME", "/a"), ("home", "/b"), (" Home", "/c")]);
    let out = sanitize_env_overrides(&overrides, true);
    assert_eq!(out.accepted, BTreeMap::new());
    assert_eq!(out.rejected_blocked, strings(&["HOME"]));
    assert!(out.rejected_invalid.is_empty());
}

#[test]
fn empty_overrides_reject_nothing() {
    let out = sanitize_env_overrides(&BTreeMap::new(), true);
    assert_eq!(out, SanitizedEnv::default());
    assert!(!out.has_rejections());
}

#[test]
fn plugin_env_overrides_the_call_env() {
    let call = sanitize_env_overrides(&map(&[("MODE", "call"), ("ONLY_CALL", "1")]), true);
    let plugin = map(&[("MODE", "plugin"), ("ONLY_PLUGIN", "2")]);
    assert_eq!(
        merge_exec_env(&call.accepted, &plugin),
        map(&[("MODE", "plugin"), ("ONLY_CALL", "1"), ("ONLY_PLUGIN", "2")])
    );
}

#[test]
fn merge_refilters_the_plugin_env() {
    let call = sanitize_env_overrides(&map(&[("MODE", "call")]), true);
    let plugin = map(&[
        ("LD_PRELOAD", "x.so"),
        ("PATH", "/evil"),
        ("HTTPS_PROXY", "p"),
    ]);
    assert_eq!(
        merge_exec_env(&call.accepted, &plugin),
        map(&[("MODE", "call")])
    );
}

#[test]
fn host_namespaces_are_reserved() {
    let overrides = map(&[
        ("TALON_GATEWAY_TOKEN", "t"),
        ("talon_state_dir", "/tmp/evil"),
        (" OpenClaw_Git_Dir ", "/tmp/evil"),
        ("OPENCLAW_CLI", "1"),
        ("TALONX", "kept"),
        ("MY_TALON_SETTING", "kept"),
    ]);
    let out = sanitize_env_overrides(&overrides, true);
    assert_eq!(
        out.accepted,
        map(&[("MY_TALON_SETTING", "kept"), ("TALONX", "kept")])
    );
    assert_eq!(
        out.rejected_blocked,
        strings(&[
            "OPENCLAW_CLI",
            "OPENCLAW_GIT_DIR",
            "TALON_GATEWAY_TOKEN",
            "TALON_STATE_DIR"
        ])
    );
    assert!(out.rejected_invalid.is_empty());
    // Merging cannot bring them back through the call's own overrides.
    assert_eq!(
        merge_exec_env(&out.accepted, &BTreeMap::new()),
        map(&[("MY_TALON_SETTING", "kept"), ("TALONX", "kept")])
    );
}
