use std::collections::BTreeMap;

use pretty_assertions::assert_eq;

use super::*;

fn map(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect()
}

fn dropped(key: &str, reason: DropReason) -> DroppedKey {
    DroppedKey {
        key: key.to_owned(),
        reason,
    }
}

#[test]
fn drops_every_forbidden_family_and_keeps_the_rest() {
    let env = map(&[
        ("MY_TOKEN_SCOPE", "read"),
        (" TRIMMED ", "ok"),
        ("PATH", "/evil"),
        ("path", "/evil"),
        ("OPENCLAW_CLI", "1"),
        ("talon_cli", "1"),
        ("TALON_STATE_DIR", "/tmp/evil"),
        ("openclaw_gateway_token", "x"),
        ("NODE_OPTIONS", "--require x"),
        ("LD_PRELOAD", "x.so"),
        ("dyld_insert_libraries", "x"),
        ("BASH_FUNC_x", "y"),
        ("HTTP_PROXY", "http://p"),
        ("no_proxy", "*"),
        ("NODE_TLS_REJECT_UNAUTHORIZED", "0"),
        ("SSL_CERT_FILE", "/ca"),
        ("TF_VAR_x", "1"),
        ("CARGO_TARGET_X_RUNNER", "sh"),
        ("BAD KEY", "x"),
        ("A=B", "x"),
        ("NULVAL", "a\0b"),
    ]);
    let out = filter_plugin_env(env);
    assert_eq!(
        out.env,
        map(&[("MY_TOKEN_SCOPE", "read"), ("TRIMMED", "ok")])
    );
    assert_eq!(
        out.dropped,
        vec![
            dropped("A=B", DropReason::Invalid),
            dropped("BAD KEY", DropReason::Invalid),
            dropped("BASH_FUNC_x", DropReason::BlockedEverywhere),
            dropped("CARGO_TARGET_X_RUNNER", DropReason::BlockedOverrideOnly),
            dropped("HTTP_PROXY", DropReason::BlockedOverrideOnly),
            dropped("LD_PRELOAD", DropReason::BlockedEverywhere),
            dropped("NODE_OPTIONS", DropReason::BlockedEverywhere),
            dropped(
                "NODE_TLS_REJECT_UNAUTHORIZED",
                DropReason::BlockedOverrideOnly
            ),
            dropped("NULVAL", DropReason::NulInValue),
            dropped("OPENCLAW_CLI", DropReason::Reserved),
            dropped("PATH", DropReason::Path),
            dropped("SSL_CERT_FILE", DropReason::BlockedOverrideOnly),
            dropped("TALON_STATE_DIR", DropReason::Reserved),
            dropped("TF_VAR_x", DropReason::BlockedOverrideOnly),
            dropped("dyld_insert_libraries", DropReason::BlockedEverywhere),
            dropped("no_proxy", DropReason::BlockedOverrideOnly),
            dropped("openclaw_gateway_token", DropReason::Reserved),
            dropped("path", DropReason::Path),
            dropped("talon_cli", DropReason::Reserved),
        ]
    );
}

#[test]
fn empty_in_empty_out() {
    assert_eq!(filter_plugin_env(BTreeMap::new()), FilteredEnv::default());
}

#[test]
fn drop_reasons_serialise_in_snake_case() {
    assert_eq!(
        serde_json::to_value(dropped("X", DropReason::NulInValue)).ok(),
        Some(serde_json::json!({"key": "X", "reason": "nul_in_value"}))
    );
}
