use pretty_assertions::assert_eq;

use super::*;

fn verdicts(keys: &[&str]) -> Vec<(String, EnvKeyVerdict)> {
    keys.iter()
        .map(|k| ((*k).to_owned(), classify_override_key(k)))
        .collect()
}

fn all(keys: &[&str], verdict: EnvKeyVerdict) -> Vec<(String, EnvKeyVerdict)> {
    keys.iter().map(|k| ((*k).to_owned(), verdict)).collect()
}

#[test]
fn valid_keys() {
    for key in [
        "FOO",
        "foo",
        "_",
        "_X1",
        "a_b_C_9",
        "ProgramFiles(x86)",
        "  LANG  ",
        "\u{FEFF}LANG",
    ] {
        assert!(is_valid_env_key(key), "{key:?} should be valid");
    }
}

#[test]
fn invalid_keys() {
    for key in [
        "", "   ", "1ABC", "9", "FOO=BAR", "=FOO", "FOO\0", "FO\0O", "FOO BAR", "FOO-BAR",
        "FOO.BAR", "(X)", "ÄPFEL", "FOO\nBAR", "$FOO",
    ] {
        assert!(!is_valid_env_key(key), "{key:?} should be invalid");
        assert_eq!(
            classify_override_key(key),
            EnvKeyVerdict::Invalid,
            "{key:?}"
        );
    }
}

#[test]
fn path_in_any_case() {
    let keys = ["PATH", "path", "Path", " PATH "];
    assert_eq!(verdicts(&keys), all(&keys, EnvKeyVerdict::Path));
}

#[test]
fn everywhere_prefixes_in_any_case() {
    let keys = [
        "DYLD_INSERT_LIBRARIES",
        "DYLD_LIBRARY_PATH",
        "dyld_anything",
        "LD_PRELOAD",
        "ld_preload",
        "LD_LIBRARY_PATH",
        "LD_AUDIT",
        "BASH_FUNC_echo%%",
        "BASH_FUNC_foo",
        "bash_func_x",
    ];
    let keys: Vec<&str> = keys.into_iter().filter(|k| is_valid_env_key(k)).collect();
    assert_eq!(keys.len(), 9);
    assert_eq!(
        verdicts(&keys),
        all(&keys, EnvKeyVerdict::BlockedEverywhere)
    );
}

#[test]
fn runtime_startup_hooks_are_blocked_everywhere() {
    let keys = [
        "NODE_OPTIONS",
        "node_options",
        "NODE_PATH",
        "PYTHONPATH",
        "PYTHONHOME",
        "PERL5OPT",
        "RUBYOPT",
        "BASH_ENV",
        "ENV",
        "SHELLOPTS",
        "PS4",
        "IFS",
        "JAVA_TOOL_OPTIONS",
        "_JAVA_OPTIONS",
        "DOTNET_STARTUP_HOOKS",
        "GLIBC_TUNABLES",
        "GIT_EXTERNAL_DIFF",
        "GIT_ALLOW_PROTOCOL",
        "RUSTC_WRAPPER",
        "CC",
        "SSLKEYLOGFILE",
    ];
    assert_eq!(
        verdicts(&keys),
        all(&keys, EnvKeyVerdict::BlockedEverywhere)
    );
}

#[test]
fn override_only_prefixes_in_any_case() {
    let keys = [
        "GIT_CONFIG_COUNT",
        "GIT_CONFIG_KEY_0",
        "git_config_value_0",
        "NPM_CONFIG_REGISTRY",
        "npm_config_registry",
        "CARGO_REGISTRIES_CRATES_IO_INDEX",
        "TF_VAR_region",
    ];
    assert_eq!(
        verdicts(&keys),
        all(&keys, EnvKeyVerdict::BlockedOverrideOnly)
    );
}

#[test]
fn cargo_target_linker_and_runner() {
    let blocked = [
        "CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_LINKER",
        "CARGO_TARGET_AARCH64_APPLE_DARWIN_RUNNER",
        "cargo_target_wasm32_unknown_unknown_runner",
        "CARGO_TARGET___LINKER",
    ];
    assert_eq!(
        verdicts(&blocked),
        all(&blocked, EnvKeyVerdict::BlockedOverrideOnly)
    );
    let allowed = [
        "CARGO_TARGET_DIR",
        "CARGO_TARGET__LINKER",
        "CARGO_TARGET_LINKER",
        "CARGO_TARGET_X_LINKER_FLAGS",
    ];
    assert_eq!(verdicts(&allowed), all(&allowed, EnvKeyVerdict::Allowed));
}

#[test]
fn proxy_vars_in_upper_and_lower_case() {
    let keys = [
        "HTTP_PROXY",
        "http_proxy",
        "HTTPS_PROXY",
        "https_proxy",
        "ALL_PROXY",
        "all_proxy",
        "NO_PROXY",
        "no_proxy",
    ];
    assert_eq!(
        verdicts(&keys),
        all(&keys, EnvKeyVerdict::BlockedOverrideOnly)
    );
}

#[test]
fn tls_override_vars() {
    let keys = [
        "NODE_TLS_REJECT_UNAUTHORIZED",
        "NODE_EXTRA_CA_CERTS",
        "SSL_CERT_FILE",
        "SSL_CERT_DIR",
        "REQUESTS_CA_BUNDLE",
        "CURL_CA_BUNDLE",
        "ssl_cert_file",
    ];
    assert_eq!(
        verdicts(&keys),
        all(&keys, EnvKeyVerdict::BlockedOverrideOnly)
    );
    // These two TLS knobs of Git are on the stricter list.
    let git = ["GIT_SSL_NO_VERIFY", "GIT_SSL_CAINFO"];
    assert_eq!(verdicts(&git), all(&git, EnvKeyVerdict::BlockedEverywhere));
}

#[test]
fn credentials_and_host_config_are_override_only() {
    let keys = [
        "AWS_ACCESS_KEY_ID",
        "AWS_SECRET_ACCESS_KEY",
        "AWS_SESSION_TOKEN",
        "GH_TOKEN",
        "GITHUB_TOKEN",
        "GITLAB_TOKEN",
        "NPM_TOKEN",
        "NODE_AUTH_TOKEN",
        "DATABASE_URL",
        "AZURE_CLIENT_SECRET",
        "GOOGLE_APPLICATION_CREDENTIALS",
        "HOME",
        "home",
        "SSH_AUTH_SOCK",
        "GIT_SSH_COMMAND",
        "KUBECONFIG",
        "DOCKER_HOST",
        "PIP_INDEX_URL",
        "GOPROXY",
        "XDG_CONFIG_HOME",
    ];
    assert_eq!(
        verdicts(&keys),
        all(&keys, EnvKeyVerdict::BlockedOverrideOnly)
    );
}

#[test]
fn ordinary_keys_are_allowed() {
    let keys = [
        "FOO",
        "LANG",
        "TERM",
        "MY_APP_MODE",
        "OPENAI_MODEL",
        "ProgramFiles(x86)",
        "LDX",
    ];
    assert_eq!(verdicts(&keys), all(&keys, EnvKeyVerdict::Allowed));
}

#[test]
fn verdict_names_are_stable() {
    assert_eq!(
        EnvKeyVerdict::BlockedOverrideOnly.as_str(),
        "blocked_override_only"
    );
    assert_eq!(
        serde_json::to_value(EnvKeyVerdict::BlockedEverywhere).ok(),
        Some(serde_json::json!("blocked_everywhere"))
    );
}
