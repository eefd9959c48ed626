use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt as _;

use pretty_assertions::assert_eq;

use super::*;

/// A file at `dir/name` with `body` and permission `mode`.
fn file(dir: &Path, name: &str, body: &str, mode: u32) -> PathBuf {
    let path = dir.join(name);
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).unwrap();
    }
    std::fs::write(&path, body).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).unwrap();
    path
}

fn hook(id: &str, command: &[&str]) -> CommandHookConfig {
    CommandHookConfig {
        id: id.into(),
        command: command.iter().map(|s| (*s).to_owned()).collect(),
        ..CommandHookConfig::default()
    }
}

/// The policy of `tools.exec.env.set.PATH = path` (a hook's own `env`
/// may not set `PATH`).
fn path_policy(path: &str) -> EnvPolicy {
    let config = talon_exec_env::ExecEnvConfig {
        set: BTreeMap::from([("PATH".to_owned(), path.to_owned())]),
        ..talon_exec_env::ExecEnvConfig::default()
    };
    EnvPolicy::from_config(&config, None).unwrap()
}

fn before(hooks: Vec<CommandHookConfig>) -> HooksConfig {
    HooksConfig {
        before_tool_call: hooks,
        ..HooksConfig::default()
    }
}

fn check(config: &HooksConfig, base: &Path) -> Vec<HookProblem> {
    config.check(base, &EnvPolicy::default())
}

/// `(hook id, event, code, key path)` of each problem.
fn summary(problems: &[HookProblem]) -> Vec<(String, &'static str, &'static str, String)> {
    problems
        .iter()
        .map(|p| {
            (
                p.hook_id.clone(),
                p.event.as_str(),
                p.code(),
                p.key_path.clone(),
            )
        })
        .collect()
}

fn row(
    id: &str,
    event: &'static str,
    code: &'static str,
    key: &str,
) -> (String, &'static str, &'static str, String) {
    (id.to_owned(), event, code, key.to_owned())
}

#[test]
fn runnable_hooks_have_no_problem() {
    let dir = tempfile::tempdir().unwrap();
    file(
        dir.path(),
        "hooks/guard.sh",
        "#!/bin/sh\necho '{}'\n",
        0o755,
    );
    let bin = dir.path().join("bin");
    file(&bin, "audit", "#!/bin/sh\n", 0o700);
    let config = HooksConfig {
        before_tool_call: vec![hook("guard", &["./hooks/guard.sh"])],
        after_tool_call: vec![hook("audit", &["audit"])],
        resolve_exec_env: vec![hook("sh", &["/bin/sh", "-c", "echo {}"])],
    };
    let policy = path_policy(&bin.to_string_lossy());
    assert_eq!(summary(&config.check(dir.path(), &policy)), vec![]);
}

#[test]
fn a_missing_program_and_a_non_executable_file_are_named_with_their_hooks() {
    let dir = tempfile::tempdir().unwrap();
    let plain = file(dir.path(), "plain.sh", "#!/bin/sh\n", 0o644);
    let missing = dir.path().join("gone/guard.sh");
    let config = HooksConfig {
        before_tool_call: vec![
            hook("gone", &[&missing.to_string_lossy()]),
            hook("plain", &["plain.sh/"]),
            hook("rel", &["./plain.sh", "--flag"]),
        ],
        resolve_exec_env: vec![hook("creds", &[&plain.to_string_lossy()])],
        ..HooksConfig::default()
    };
    let problems = check(&config, dir.path());
    assert_eq!(
        summary(&problems),
        vec![
            row(
                "gone",
                "before_tool_call",
                "hook.missing_program",
                "tools.hooks.beforeToolCall[0].command"
            ),
            row(
                "plain",
                "before_tool_call",
                "hook.not_executable",
                "tools.hooks.beforeToolCall[1].command"
            ),
            row(
                "rel",
                "before_tool_call",
                "hook.not_executable",
                "tools.hooks.beforeToolCall[2].command"
            ),
            row(
                "creds",
                "resolve_exec_env",
                "hook.not_executable",
                "tools.hooks.resolveExecEnv[0].command"
            ),
        ]
    );
    assert_eq!(
        problems[0].message,
        format!(
            "program `{}` does not exist; every tool call it matches is blocked until this is fixed; install it there or fix `command[0]` (a relative path is taken from the config file's directory)",
            missing.display()
        )
    );
    // A relative path is resolved against the config directory, and the
    // fix names the resolved file (without its `./`).
    let resolved = dir.path().join("plain.sh");
    assert!(
        problems[2].message.starts_with(&format!(
            "program `{}` is not executable by this process (",
            resolved.display()
        )),
        "{}",
        problems[2].message
    );
    assert!(
        problems[2]
            .message
            .contains(&format!("`chmod +x {}`", resolved.display())),
        "{}",
        problems[2].message
    );
    assert!(
        problems[3]
            .message
            .contains("exec runs without the variables it would add"),
        "{}",
        problems[3].message
    );
}

#[test]
fn a_directory_and_a_dangling_link_are_not_programs() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("adir")).unwrap();
    std::os::unix::fs::symlink(dir.path().join("nowhere"), dir.path().join("link")).unwrap();
    let config = before(vec![
        hook("d", &[&dir.path().join("adir").to_string_lossy()]),
        hook("l", &[&dir.path().join("link").to_string_lossy()]),
    ]);
    let problems = check(&config, dir.path());
    assert_eq!(
        summary(&problems),
        vec![
            row(
                "d",
                "before_tool_call",
                "hook.not_executable",
                "tools.hooks.beforeToolCall[0].command"
            ),
            row(
                "l",
                "before_tool_call",
                "hook.missing_program",
                "tools.hooks.beforeToolCall[1].command"
            ),
        ]
    );
    assert!(
        problems[0]
            .message
            .contains("is a directory, not a program")
    );
    assert!(
        problems[1]
            .message
            .contains("is a symbolic link to nothing")
    );
}

#[test]
fn a_bare_name_is_looked_up_on_the_path_hooks_run_with_and_its_value_is_never_shown() {
    let dir = tempfile::tempdir().unwrap();
    let secretish = dir.path().join("private-dir-7f3a");
    let bin = dir.path().join("bin");
    file(&bin, "notexec", "#!/bin/sh\n", 0o644);
    file(&secretish, "other", "#!/bin/sh\n", 0o755);
    let path = format!("{}:{}", secretish.display(), bin.display());
    let config = before(vec![
        hook("absent", &["no-such-hook-program"]),
        hook("refused", &["notexec"]),
        hook("found", &["other"]),
    ]);
    let problems = config.check(dir.path(), &path_policy(&path));
    assert_eq!(
        summary(&problems),
        vec![
            row(
                "absent",
                "before_tool_call",
                "hook.missing_program",
                "tools.hooks.beforeToolCall[0].command"
            ),
            row(
                "refused",
                "before_tool_call",
                "hook.not_executable",
                "tools.hooks.beforeToolCall[1].command"
            ),
        ]
    );
    assert!(
        problems[0]
            .message
            .starts_with("program `no-such-hook-program` is not found on the PATH the hook runs with (its PATH has 2 directories)"),
        "{}",
        problems[0].message
    );
    for p in &problems {
        assert!(
            !p.message.contains("private-dir-7f3a"),
            "the PATH value leaked: {}",
            p.message
        );
    }
    assert!(
        problems[1]
            .message
            .contains(&format!("at `{}`", bin.join("notexec").display())),
        "{}",
        problems[1].message
    );
}

#[test]
fn without_a_path_the_default_search_path_is_used() {
    let dir = tempfile::tempdir().unwrap();
    // The default policy drops nothing named PATH, but an `inherit: none`
    // policy gives the hook no PATH at all: execvp then searches
    // /bin:/usr/bin, where `sh` is.
    let none = talon_exec_env::ExecEnvConfig {
        inherit: talon_exec_env::InheritMode::None,
        ..talon_exec_env::ExecEnvConfig::default()
    };
    let policy = EnvPolicy::from_config(&none, None).unwrap();
    let config = before(vec![
        hook("sh", &["sh", "-c", "true"]),
        hook("nope", &["no-such-hook-program"]),
    ]);
    let problems = config.check(dir.path(), &policy);
    assert_eq!(
        summary(&problems),
        vec![row(
            "nope",
            "before_tool_call",
            "hook.missing_program",
            "tools.hooks.beforeToolCall[1].command"
        )]
    );
    assert!(
        problems[0].message.contains(
            "the hook's environment has no PATH, so the default search path (/bin:/usr/bin) is used"
        ),
        "{}",
        problems[0].message
    );
}

#[test]
fn a_script_whose_interpreter_is_missing_cannot_run() {
    let dir = tempfile::tempdir().unwrap();
    let script = file(
        dir.path(),
        "py.sh",
        "#!/opt/no-such-python/bin/python3 -u\nprint('{}')\n",
        0o755,
    );
    let binary_like = file(dir.path(), "blob", "\x7fELF not really", 0o755);
    let config = before(vec![
        hook("py", &[&script.to_string_lossy()]),
        hook("blob", &[&binary_like.to_string_lossy()]),
    ]);
    let problems = check(&config, dir.path());
    assert_eq!(
        summary(&problems),
        vec![row(
            "py",
            "before_tool_call",
            "hook.missing_program",
            "tools.hooks.beforeToolCall[0].command"
        )]
    );
    assert!(
        problems[0]
            .message
            .contains("names the interpreter `/opt/no-such-python/bin/python3` on its `#!` line, which does not exist"),
        "{}",
        problems[0].message
    );
}

#[test]
fn an_env_shebang_looks_its_program_up_on_the_hooks_path() {
    let dir = tempfile::tempdir().unwrap();
    let bin = dir.path().join("bin");
    file(&bin, "myinterp", "#!/bin/sh\n", 0o755);
    let found = file(dir.path(), "ok.sh", "#!/usr/bin/env myinterp\n", 0o755);
    let missing = file(
        dir.path(),
        "nope.sh",
        "#!/usr/bin/env no-such-interp-8c1 -u\n",
        0o755,
    );
    let flagged = file(dir.path(), "flags.sh", "#!/usr/bin/env -S sh -e\n", 0o755);
    let config = before(vec![
        hook("ok", &[&found.to_string_lossy()]),
        hook("nope", &[&missing.to_string_lossy()]),
        hook("flags", &[&flagged.to_string_lossy()]),
    ]);
    let policy = path_policy(&bin.to_string_lossy());
    let problems = config.check(dir.path(), &policy);
    assert_eq!(
        summary(&problems),
        vec![row(
            "nope",
            "before_tool_call",
            "hook.missing_program",
            "tools.hooks.beforeToolCall[1].command"
        )]
    );
    assert!(
        problems[0].message.contains(
            "runs `no-such-interp-8c1` through `/usr/bin/env` on its `#!` line, and `no-such-interp-8c1` is not found on the PATH the hook runs with"
        ),
        "{}",
        problems[0].message
    );
}

#[test]
fn a_missing_working_directory_is_a_problem_of_its_own() {
    let dir = tempfile::tempdir().unwrap();
    file(dir.path(), "afile", "", 0o644);
    let config = before(vec![
        CommandHookConfig {
            cwd: Some("no-such-dir".into()),
            ..hook("a", &["/bin/sh"])
        },
        CommandHookConfig {
            cwd: Some("afile".into()),
            ..hook("b", &["/bin/sh"])
        },
    ]);
    let problems = check(&config, dir.path());
    assert_eq!(
        summary(&problems),
        vec![
            row(
                "a",
                "before_tool_call",
                "hook.bad_cwd",
                "tools.hooks.beforeToolCall[0].cwd"
            ),
            row(
                "b",
                "before_tool_call",
                "hook.bad_cwd",
                "tools.hooks.beforeToolCall[1].cwd"
            ),
        ]
    );
    assert!(
        problems[0]
            .message
            .contains(&dir.path().join("no-such-dir").display().to_string())
    );
}

#[test]
fn refused_settings_are_bad_config_naming_the_hook_and_key() {
    let dir = tempfile::tempdir().unwrap();
    let config = HooksConfig {
        before_tool_call: vec![CommandHookConfig {
            timeout_ms: Some(0),
            matcher: Some(vec!["group:nope".into()]),
            ..hook("t", &["/bin/sh"])
        }],
        after_tool_call: vec![hook("empty", &[]), hook("blank", &[" "])],
        ..HooksConfig::default()
    };
    let problems = check(&config, dir.path());
    assert_eq!(
        summary(&problems),
        vec![
            row(
                "t",
                "before_tool_call",
                "hook.bad_config",
                "tools.hooks.beforeToolCall[0].timeoutMs"
            ),
            row(
                "t",
                "before_tool_call",
                "hook.bad_config",
                "tools.hooks.beforeToolCall[0].matcher[0]"
            ),
            row(
                "empty",
                "after_tool_call",
                "hook.bad_config",
                "tools.hooks.afterToolCall[0].command"
            ),
            row(
                "blank",
                "after_tool_call",
                "hook.bad_config",
                "tools.hooks.afterToolCall[1].command"
            ),
        ]
    );
    assert_eq!(
        problems[0].message,
        "must be between 1 and 600000, got 0".to_owned()
    );
}

#[test]
fn kinds_serialize_as_their_codes() {
    for kind in [
        HookProblemKind::MissingProgram,
        HookProblemKind::NotExecutable,
        HookProblemKind::BadCwd,
        HookProblemKind::BadConfig,
    ] {
        assert_eq!(
            serde_json::to_value(kind).unwrap(),
            serde_json::json!(kind.code())
        );
    }
    assert_eq!(
        serde_json::to_value(HookEvent::ResolveExecEnv).unwrap(),
        serde_json::json!("resolve_exec_env")
    );
}

#[test]
fn locate_reads_validate_key_paths() {
    assert_eq!(
        locate("afterToolCall[12].matcher[0]"),
        Some((HookEvent::AfterToolCall, 12))
    );
    assert_eq!(locate("nope[1].id"), None);
    assert_eq!(locate("beforeToolCall.id"), None);
}
