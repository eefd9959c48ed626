use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt as _;

use pretty_assertions::assert_eq;
use talon_exec_env::{EnvPolicy, ExecEnvConfig, InheritMode, process_env};

use super::*;

/// The child's whole environment, as `NAME=value` lines.
fn child_env(env: ChildEnv) -> BTreeMap<String, String> {
    let out = ChildCommand::new("/usr/bin/env", env, ProcessGroup::Own)
        .output()
        .expect("env runs");
    assert!(out.status.success(), "env failed: {out:?}");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect()
}

#[test]
fn a_missing_program_is_a_typed_not_found_error_naming_it() {
    let err = ChildCommand::new(
        "/nonexistent/talon-no-such-program",
        ChildEnv::empty(),
        ProcessGroup::Own,
    )
    .spawn()
    .expect_err("no such program");
    assert_eq!(err.kind(), SpawnErrorKind::NotFound);
    assert_eq!(err.kind().code(), "spawn.not_found");
    assert_eq!(err.program(), "/nonexistent/talon-no-such-program");
    assert_eq!(err.io_error().kind(), std::io::ErrorKind::NotFound);
    let text = err.to_string();
    assert!(
        text.starts_with("cannot start `/nonexistent/talon-no-such-program`: it was not found"),
        "{text}"
    );
    // A bare name found on no PATH, through `status`.
    let err = ChildCommand::new(
        "talon-no-such-program",
        ChildEnv::exact([("PATH", "/usr/bin:/bin")]),
        ProcessGroup::Own,
    )
    .status()
    .expect_err("not on PATH");
    assert_eq!(err.kind(), SpawnErrorKind::NotFound);
    assert_eq!(err.program(), "talon-no-such-program");
}

#[test]
fn a_file_without_execute_permission_is_not_executable() {
    let dir = tempfile::tempdir().expect("tempdir");
    let script = dir.path().join("script");
    std::fs::write(&script, "#!/bin/sh\nexit 0\n").expect("write");
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o644)).expect("chmod");
    let err = ChildCommand::new(&script, ChildEnv::empty(), ProcessGroup::Own)
        .spawn()
        .expect_err("not executable");
    assert_eq!(err.kind(), SpawnErrorKind::NotExecutable);
    assert_eq!(err.program(), script.to_string_lossy());
    assert!(err.to_string().contains("it is not executable"), "{err}");
    // The exec path gives the same typed error.
    let err = ChildCommand::new(&script, ChildEnv::empty(), ProcessGroup::Own).exec();
    assert_eq!(err.kind(), SpawnErrorKind::NotExecutable);
}

#[test]
fn a_child_sees_a_parent_variable_only_when_the_policy_passes_it() {
    let parent = process_env();
    assert!(
        parent.iter().any(|(k, _)| k == "PATH"),
        "the test needs PATH"
    );
    // A variable of this process that the default (`core`) policy does not
    // inherit but that `inherit: all` would (cargo's and the test
    // harness's own variables are such).
    let all = EnvPolicy::from_config(
        &ExecEnvConfig {
            inherit: InheritMode::All,
            ..ExecEnvConfig::default()
        },
        None,
    )
    .expect("valid policy");
    let core = EnvPolicy::default();
    let (name, value) = parent
        .iter()
        .find(|(k, v)| {
            core.withheld(k).is_some()
                && all.withheld(k).is_none()
                && all.inherited([(k.clone(), v.clone())]).contains_key(k)
        })
        .cloned()
        .expect("this process has a variable only `inherit: all` passes (CARGO_*)");

    // Nothing passed: the child starts empty, not with this process's
    // environment.
    assert_eq!(child_env(ChildEnv::empty()), BTreeMap::new());

    // The default policy passes PATH but not the variable.
    let seen = child_env(ChildEnv::exact(core.host_env(parent.clone())));
    assert_eq!(seen.get("PATH"), std::env::var("PATH").ok().as_ref());
    assert_eq!(seen.get(&name), None, "{name} leaked");

    // A policy that passes it: the child sees it, with its value.
    let seen = child_env(ChildEnv::exact(all.host_env(parent)));
    assert_eq!(seen.get(&name), Some(&value));
}

#[test]
fn stdin_is_null_unless_asked_and_the_group_is_explicit() {
    let path = || ChildEnv::exact([("PATH", "/usr/bin:/bin")]);
    let script = "readlink /proc/$$/fd/0; echo \"$$ $(cut -d' ' -f5 /proc/$$/stat)\"";
    let out = ChildCommand::new("/bin/sh", path(), ProcessGroup::Own)
        .args(["-c", script])
        .output()
        .expect("sh runs");
    assert!(out.status.success(), "{out:?}");
    let text = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.first(), Some(&"/dev/null"), "{text}");
    let ids: Vec<&str> = lines[1].split_whitespace().collect();
    assert_eq!(ids[0], ids[1], "the child leads its own group: {text}");

    let out = ChildCommand::new("/bin/sh", path(), ProcessGroup::Parent)
        .args(["-c", script])
        .stdin(Stdio::piped())
        .output()
        .expect("sh runs");
    let text = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines[0].starts_with("pipe:"), "stdin as asked: {text}");
    let pgid: Vec<&str> = lines[1].split_whitespace().collect();
    assert_eq!(pgid[1], nix::unistd::getpgrp().to_string());
}
