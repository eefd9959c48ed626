use std::collections::BTreeMap;

use pretty_assertions::assert_eq;

use super::*;

fn env(list: &[(&str, &str)]) -> BTreeMap<String, String> {
    list.iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect()
}

fn refused(check: &ModelEnvCheck) -> Vec<(&str, ModelEnvRefusal)> {
    check
        .refused
        .iter()
        .map(|r| (r.key.as_str(), r.reason))
        .collect()
}

#[test]
fn plain_names_pass_on_host_and_in_a_sandbox() {
    for place in [RunPlace::Host, RunPlace::Sandbox] {
        let check = check_model_env(&env(&[("FOO", "1"), ("GIT_AUTHOR_NAME", "x")]), place);
        assert!(!check.is_refused(), "{check:?}");
        assert_eq!(check.accepted.len(), 2);
    }
}

#[test]
fn tls_verification_switches_are_refused_in_any_case() {
    for key in [
        "PYTHONHTTPSVERIFY",
        "node_tls_reject_unauthorized",
        "Git_Ssl_No_Verify",
        "CURL_CA_BUNDLE",
        "REQUESTS_CA_BUNDLE",
        "ssl_cert_file",
        "NODE_EXTRA_CA_CERTS",
        "SSLKEYLOGFILE",
    ] {
        for place in [RunPlace::Host, RunPlace::Sandbox] {
            let check = check_model_env(&env(&[(key, "0")]), place);
            assert_eq!(refused(&check), [(key, ModelEnvRefusal::TlsVerification)]);
        }
    }
}

#[test]
fn credentials_are_refused_only_in_a_sandbox() {
    let asked = env(&[
        ("OPENAI_API_KEY", "x"),
        ("DEPLOY_TOKEN", "x"),
        ("db_password", "x"),
        ("MY_SERVICE_SECRET", "x"),
    ]);
    let sandbox = check_model_env(&asked, RunPlace::Sandbox);
    assert_eq!(
        refused(&sandbox),
        [
            ("DEPLOY_TOKEN", ModelEnvRefusal::Credential),
            ("MY_SERVICE_SECRET", ModelEnvRefusal::Credential),
            ("OPENAI_API_KEY", ModelEnvRefusal::Credential),
            ("db_password", ModelEnvRefusal::Credential),
        ]
    );
    assert!(!check_model_env(&asked, RunPlace::Host).is_refused());
    // OpenClaw's lists already refuse some credentials everywhere.
    let listed = env(&[("AWS_SECRET_ACCESS_KEY", "x"), ("GITHUB_TOKEN", "x")]);
    for place in [RunPlace::Host, RunPlace::Sandbox] {
        let check = check_model_env(&listed, place);
        assert_eq!(
            refused(&check),
            [
                ("AWS_SECRET_ACCESS_KEY", ModelEnvRefusal::Blocked),
                ("GITHUB_TOKEN", ModelEnvRefusal::Blocked),
            ]
        );
    }
}

#[test]
fn case_variants_of_blocked_names_are_refused() {
    let check = check_model_env(
        &env(&[
            ("ld_preload", "/x.so"),
            ("Bash_Env", "/x"),
            ("talon_gateway_token", "x"),
        ]),
        RunPlace::Host,
    );
    assert_eq!(
        refused(&check),
        [
            ("Bash_Env", ModelEnvRefusal::Blocked),
            ("ld_preload", ModelEnvRefusal::Blocked),
            ("talon_gateway_token", ModelEnvRefusal::Reserved),
        ]
    );
    let host = check_model_env(&env(&[("Path", "/x")]), RunPlace::Host);
    assert_eq!(refused(&host), [("Path", ModelEnvRefusal::Path)]);
    let sandbox = check_model_env(&env(&[("Path", "/x")]), RunPlace::Sandbox);
    assert_eq!(refused(&sandbox), [("Path", ModelEnvRefusal::CaseVariant)]);
    assert!(!check_model_env(&env(&[("PATH", "/x")]), RunPlace::Sandbox).is_refused());
}

#[test]
fn two_keys_differing_only_in_case_are_both_refused() {
    let check = check_model_env(
        &env(&[("FOO", "1"), ("foo", "2"), ("BAR", "3")]),
        RunPlace::Host,
    );
    assert_eq!(
        refused(&check),
        [
            ("FOO", ModelEnvRefusal::CaseVariant),
            ("foo", ModelEnvRefusal::CaseVariant)
        ]
    );
    assert_eq!(check.accepted, env(&[("BAR", "3")]));
}

#[test]
fn invalid_names_and_nul_values_are_refused() {
    let check = check_model_env(
        &env(&[("A=B", "1"), ("OK", "a\u{0}b"), ("", "x"), (" SPACED", "x")]),
        RunPlace::Host,
    );
    assert_eq!(
        refused(&check),
        [
            ("", ModelEnvRefusal::Invalid),
            ("A=B", ModelEnvRefusal::Invalid),
            ("OK", ModelEnvRefusal::Invalid),
            ("SPACED", ModelEnvRefusal::Invalid),
        ]
    );
}
