use std::collections::BTreeMap;

use pretty_assertions::assert_eq;

use super::*;

fn vars(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect()
}

fn map(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    vars(pairs).into_iter().collect()
}

#[test]
fn drops_dangerous_and_keeps_allowed_inherited_keys() {
    let host = vars(&[
        ("PATH", "/usr/bin"),
        ("LANG", "C.UTF-8"),
        ("HOME", "/home/u"),
        ("HTTP_PROXY", "http://proxy"),
        ("https_proxy", "http://proxy"),
        ("NO_PROXY", "localhost"),
        ("NODE_EXTRA_CA_CERTS", "/ca.pem"),
        ("SSL_CERT_FILE", "/ca.pem"),
        ("SSH_AUTH_SOCK", "/tmp/agent"),
        ("KUBECONFIG", "/k"),
        ("XDG_CONFIG_HOME", "/x"),
        ("NODE_OPTIONS", "--require x"),
        ("LD_PRELOAD", "x.so"),
        ("DYLD_INSERT_LIBRARIES", "x.dylib"),
        ("BASH_FUNC_ls%%", "() { :; }"),
        ("SHELL", "/bin/bash"),
        ("GITHUB_TOKEN", "ghp_secret"),
        ("AWS_SECRET_ACCESS_KEY", "secret"),
        ("GIT_SSH_COMMAND", "ssh -o x"),
        ("EDITOR", "vim"),
        // The override-only prefixes are not dropped on inheritance.
        ("GIT_CONFIG_GLOBAL", "/g"),
        ("NPM_CONFIG_CACHE", "/c"),
        ("ProgramFiles(x86)", "C:\\p"),
        ("weird-name.x", "kept"),
    ]);
    assert_eq!(
        filter_inherited_env(host),
        map(&[
            ("GIT_CONFIG_GLOBAL", "/g"),
            ("HOME", "/home/u"),
            ("HTTP_PROXY", "http://proxy"),
            ("KUBECONFIG", "/k"),
            ("LANG", "C.UTF-8"),
            ("NODE_EXTRA_CA_CERTS", "/ca.pem"),
            ("NO_PROXY", "localhost"),
            ("NPM_CONFIG_CACHE", "/c"),
            ("PATH", "/usr/bin"),
            ("ProgramFiles(x86)", "C:\\p"),
            ("SSH_AUTH_SOCK", "/tmp/agent"),
            ("SSL_CERT_FILE", "/ca.pem"),
            ("XDG_CONFIG_HOME", "/x"),
            ("https_proxy", "http://proxy"),
            ("weird-name.x", "kept"),
        ])
    );
}

#[test]
fn trims_keys_and_drops_unusable_entries() {
    let host = vars(&[
        ("  FOO  ", "1"),
        ("   ", "x"),
        ("", "x"),
        ("A=B", "x"),
        ("NUL\0", "x"),
        ("NULVAL", "a\0b"),
    ]);
    assert_eq!(filter_inherited_env(host), map(&[("FOO", "1")]));
}

#[test]
fn git_allow_protocol_keeps_only_safe_segments() {
    let cases = [
        ("git:http:https:ssh", "git:http:https:ssh"),
        ("ext:fd:file:https", "https"),
        ("  ssh:ext  ", "ssh"),
        ("ext", ""),
        ("", ""),
        ("HTTPS", ""),
        ("https,ssh", ""),
    ];
    for (input, expected) in cases {
        let out = filter_inherited_env(vars(&[("GIT_ALLOW_PROTOCOL", input)]));
        assert_eq!(
            out,
            map(&[("GIT_ALLOW_PROTOCOL", expected)]),
            "input {input:?}"
        );
    }
    // The key keeps its own case.
    let out = filter_inherited_env(vars(&[("git_allow_protocol", "ext:ssh")]));
    assert_eq!(out, map(&[("git_allow_protocol", "ssh")]));
}

#[test]
fn permissive_git_protocol_from_user_is_forced_off() {
    let forced = ["1", "true", "TRUE", " yes ", "On", "2", "+7", "-1", "0010"];
    for input in forced {
        let out = filter_inherited_env(vars(&[("GIT_PROTOCOL_FROM_USER", input)]));
        assert_eq!(
            out,
            map(&[("GIT_PROTOCOL_FROM_USER", "0")]),
            "input {input:?}"
        );
    }
    let kept = ["0", "000", "-0", "false", "no", "off", "", "maybe", "1.5"];
    for input in kept {
        let out = filter_inherited_env(vars(&[("GIT_PROTOCOL_FROM_USER", input)]));
        assert_eq!(
            out,
            map(&[("GIT_PROTOCOL_FROM_USER", input)]),
            "input {input:?}"
        );
    }
}

#[test]
fn every_allowed_inherited_override_only_key_survives() {
    let Ok(file) = crate::lists::parse_policy_file(crate::lists::POLICY_JSON) else {
        panic!("embedded policy must parse");
    };
    let allowed = &file.raw.allowed_inherited_override_only_keys;
    let host: Vec<(String, String)> = allowed
        .iter()
        .map(|k| (k.clone(), "v".to_owned()))
        .collect();
    let out = filter_inherited_env(host);
    assert_eq!(out.len(), allowed.len());
    // And every other override-only key is dropped.
    let others: Vec<(String, String)> = file
        .raw
        .blocked_override_only_keys
        .iter()
        .filter(|k| !allowed.contains(k))
        .map(|k| (k.clone(), "v".to_owned()))
        .collect();
    assert!(!others.is_empty());
    assert_eq!(filter_inherited_env(others), BTreeMap::new());
}
