#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;

use super::*;
use talon_sandbox_core::SandboxErrorKind;

#[test]
fn path_is_never_passed_directly_but_prepended_after_the_profile() {
    let env = BTreeMap::from([
        ("PATH".to_owned(), "/opt/tool/bin".to_owned()),
        ("FOO".to_owned(), "bar baz".to_owned()),
    ]);
    let (vars, command) = exec_env(&env, "tool --version").unwrap();
    assert!(vars.iter().all(|v| !v.starts_with("PATH=")), "{vars:?}");
    assert!(vars.contains(&"FOO=bar baz".to_owned()));
    assert!(vars.contains(&format!("{PREPEND_PATH_VAR}=/opt/tool/bin")));
    assert_eq!(
        command,
        format!(
            "export PATH=\"${{{PREPEND_PATH_VAR}}}:$PATH\"; unset {PREPEND_PATH_VAR}; tool --version"
        )
    );
}

#[test]
fn without_path_the_command_is_untouched() {
    let env = BTreeMap::from([("A".to_owned(), "1".to_owned())]);
    let (vars, command) = exec_env(&env, "echo $A").unwrap();
    assert_eq!(vars, vec!["A=1".to_owned()]);
    assert_eq!(command, "echo $A");
}

#[test]
fn bad_env_keys_and_the_reserved_prepend_key_are_refused() {
    for key in ["", "A=B", "NUL\0", PREPEND_PATH_VAR] {
        let env = BTreeMap::from([(key.to_owned(), "x".to_owned())]);
        let err = exec_env(&env, "true").unwrap_err();
        assert!(err.kind() == SandboxErrorKind::Exec, "{key:?}: {err}");
    }
}
