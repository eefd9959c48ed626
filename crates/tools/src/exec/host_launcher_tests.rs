#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::*;
use talon_sandbox_core::SandboxErrorKind;

#[test]
fn workdir_is_resolved_inside_the_root_and_refused_outside() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("sub")).unwrap();
    let launcher = HostLauncher::new(dir.path()).unwrap();
    let root = launcher.workspace_root().to_path_buf();
    assert_eq!(launcher.resolve_workdir(None).unwrap(), root);
    assert_eq!(
        launcher.resolve_workdir(Some("sub")).unwrap(),
        root.join("sub")
    );
    let abs = root.join("sub");
    assert_eq!(launcher.resolve_workdir(abs.to_str()).unwrap(), abs);
    for bad in ["..", "/", "sub/../..", "missing"] {
        let err = launcher.resolve_workdir(Some(bad)).unwrap_err();
        assert!(err.kind() == SandboxErrorKind::Config, "{bad}: {err}");
    }
}

#[test]
fn request_path_is_prepended_and_other_keys_set() {
    let dir = tempfile::tempdir().unwrap();
    let launcher = HostLauncher::new(dir.path()).unwrap().with_host_env([
        ("PATH".to_owned(), "/usr/bin".to_owned()),
        ("LD_PRELOAD".to_owned(), "/evil.so".to_owned()),
        ("LANG".to_owned(), "C".to_owned()),
        ("KEEP".to_owned(), "1".to_owned()),
        ("OPENAI_API_KEY".to_owned(), "sk-fake".to_owned()),
        ("TALON_GATEWAY_TOKEN".to_owned(), "gw".to_owned()),
    ]);
    let mut request = LaunchRequest {
        command: "true".into(),
        ..LaunchRequest::default()
    };
    request.env.insert("PATH".into(), "/opt/tools".into());
    request.env.insert("MINE".into(), "x".into());
    let env = launcher.environment(&request);
    assert_eq!(
        env.get("PATH").map(String::as_str),
        Some("/opt/tools:/usr/bin")
    );
    assert_eq!(env.get("MINE").map(String::as_str), Some("x"));
    assert_eq!(env.get("LANG").map(String::as_str), Some("C"));
    // Under the default `inherit: core` only core names are inherited.
    for withheld in [
        "KEEP",
        "LD_PRELOAD",
        "OPENAI_API_KEY",
        "TALON_GATEWAY_TOKEN",
    ] {
        assert!(!env.contains_key(withheld), "{withheld} was inherited");
    }
}

#[test]
fn a_missing_root_is_a_config_error() {
    let err = HostLauncher::new("/definitely/not/here").unwrap_err();
    assert!(err.to_string().contains("/definitely/not/here"), "{err}");
}
