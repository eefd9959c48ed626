use pretty_assertions::assert_eq;

use super::util::{fixture, talon};

#[test]
fn example_config_is_valid_with_notices() {
    let r = talon(&[
        "--config",
        &fixture("example/talon.json"),
        "config",
        "validate",
        "--json",
    ]);
    assert_eq!(r.code, 0, "{}", r.stdout);
    let v = r.json();
    assert_eq!(v["valid"], true);
    assert!(
        v["notices"]
            .as_array()
            .unwrap()
            .iter()
            .any(|n| n["keyPath"] == "channels.telegram"),
        "{v}"
    );
}

#[test]
fn every_error_is_listed_with_path_and_line() {
    let r = talon(&[
        "--config",
        &fixture("configs/many-errors.json5"),
        "config",
        "validate",
        "--json",
    ]);
    assert_eq!(r.code, 1);
    let v = r.json();
    assert_eq!(v["valid"], false);
    let paths: Vec<(&str, u64)> = v["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| (e["keyPath"].as_str().unwrap(), e["line"].as_u64().unwrap()))
        .collect();
    assert_eq!(
        paths,
        [
            ("tools.profile", 3),
            ("tools.deny", 4),
            ("tools.allow[1]", 5),
            ("agents.list[1].id", 7)
        ]
    );
    let human = talon(&[
        "--config",
        &fixture("configs/many-errors.json5"),
        "config",
        "validate",
    ]);
    assert_eq!(human.code, 1);
    assert!(
        human.stdout.contains("invalid (4 errors)"),
        "{}",
        human.stdout
    );
}

#[test]
fn schema_is_json_with_the_sections() {
    let r = talon(&["config", "schema"]);
    assert_eq!(r.code, 0);
    let v = r.json();
    assert!(v.to_string().contains("\"tools\"") && v.to_string().contains("\"agents\""));
}

#[test]
fn usage_errors_exit_2() {
    assert_eq!(talon(&["policy"]).code, 2);
    assert_eq!(talon(&["policy", "check"]).code, 2);
    assert_eq!(talon(&["--leaf", "policy", "explain"]).code, 2);
}

/// A hook that cannot run is a validation error naming the hook, its
/// code and its key, in text and JSON, with exit 1: one whose program is
/// missing and one whose program is not executable.
#[test]
fn hooks_that_cannot_run_are_errors_naming_each_hook() {
    use std::os::unix::fs::PermissionsExt as _;
    let dir = tempfile::tempdir().unwrap();
    let plain = dir.path().join("hooks/plain.sh");
    std::fs::create_dir_all(plain.parent().unwrap()).unwrap();
    std::fs::write(&plain, "#!/bin/sh\necho '{}'\n").unwrap();
    std::fs::set_permissions(&plain, std::fs::Permissions::from_mode(0o644)).unwrap();
    let config = dir.path().join("talon.json");
    std::fs::write(
        &config,
        r#"{
  tools: {
    hooks: {
      beforeToolCall: [{ id: "guard", command: ["./hooks/missing-guard.sh"] }],
      resolveExecEnv: [{ id: "creds", command: ["./hooks/plain.sh"] }],
    },
  },
}"#,
    )
    .unwrap();
    let config = config.to_string_lossy().into_owned();
    let r = talon(&["--config", &config, "config", "validate", "--json"]);
    assert_eq!(r.code, 1, "{r:?}");
    let v = r.json();
    assert_eq!(v["valid"], false);
    let found: Vec<(&str, &str, &str, &str)> = v["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["hookId"].as_str().unwrap(),
                e["event"].as_str().unwrap(),
                e["code"].as_str().unwrap(),
                e["keyPath"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        found,
        [
            (
                "guard",
                "before_tool_call",
                "hook.missing_program",
                "tools.hooks.beforeToolCall[0].command"
            ),
            (
                "creds",
                "resolve_exec_env",
                "hook.not_executable",
                "tools.hooks.resolveExecEnv[0].command"
            ),
        ]
    );
    let missing = dir.path().join("hooks/missing-guard.sh");
    assert!(
        v["errors"][0]["message"]
            .as_str()
            .unwrap()
            .contains(&format!("program `{}` does not exist", missing.display())),
        "{v}"
    );

    let human = talon(&["--config", &config, "config", "validate"]);
    assert_eq!(human.code, 1, "{human:?}");
    assert!(
        human.stdout.contains(&format!(
            "{config}: tools.hooks.beforeToolCall[0].command: hook `guard` (before_tool_call) cannot run [hook.missing_program]: program `{}` does not exist;",
            missing.display()
        )),
        "{}",
        human.stdout
    );
    assert!(
        human.stdout.contains(
            "tools.hooks.resolveExecEnv[0].command: hook `creds` (resolve_exec_env) cannot run [hook.not_executable]"
        ),
        "{}",
        human.stdout
    );
    assert!(
        human.stdout.contains("invalid (2 errors)"),
        "{}",
        human.stdout
    );

    // Fixed (the program made executable, the missing one removed from
    // the config): valid again.
    std::fs::set_permissions(&plain, std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::write(
        &config,
        r#"{ tools: { hooks: { resolveExecEnv: [{ id: "creds", command: ["./hooks/plain.sh"] }] } } }"#,
    )
    .unwrap();
    let r = talon(&["--config", &config, "config", "validate"]);
    assert_eq!(r.code, 0, "{r:?}");
}
