//! `RuntimeBuilder::from_config`: loop detection overlays and command hooks
//! from a real config file.

use std::path::Path;

use pretty_assertions::assert_eq;
use serde_json::json;
use talon_hooks::DeniedReason;
use talon_runtime::{InvokeOutcome, ModelToolCall, RunSpec, RuntimeBuilder};
use talon_tool_policy::RunContext;

fn write_script(dir: &Path, name: &str, body: &str) {
    let path = dir.join(name);
    std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

#[tokio::test]
async fn command_hooks_and_loop_overlays_come_from_the_file() {
    let dir = tempfile::tempdir().unwrap();
    write_script(
        dir.path(),
        "deny-status.sh",
        "cat >/dev/null\necho '{\"block\": true, \"blockReason\": \"status is private\"}'",
    );
    let text = r#"{
      tools: {
        loopDetection: { enabled: false },
        hooks: { beforeToolCall: [{ id: "private", command: ["./deny-status.sh"], matcher: ["session_status"], timeoutMs: 5000 }] },
      },
      agents: { list: [
        { id: "main", default: true },
        { id: "looper", tools: { loopDetection: { enabled: true, unknownToolThreshold: 3 } } },
      ] },
    }"#;
    let loaded = talon_config::load_str(text, "talon.json").unwrap();
    let runtime = RuntimeBuilder::from_config(&loaded.config, dir.path())
        .unwrap()
        .build()
        .unwrap();

    let table = runtime.assemble(RunSpec::new(RunContext::new("main")));
    let out = table
        .invoke(ModelToolCall::new("c1", "session_status", json!({})))
        .await;
    assert!(
        matches!(&out, InvokeOutcome::Blocked(b) if b.reason == "status is private" && b.source.as_deref() == Some("private")),
        "{out:?}"
    );

    // `main` has loop detection off: guessing never gets blocked.
    for i in 0..5 {
        let out = table
            .invoke(ModelToolCall::new(format!("m{i}"), "nope", json!({})))
            .await;
        assert!(matches!(out, InvokeOutcome::Failed(_)));
    }
    // `looper`'s overlay turns it on with a low unknown-tool threshold.
    let table = runtime.assemble(RunSpec::new(RunContext::new("looper")));
    let mut results = Vec::new();
    for i in 0..4 {
        results.push(
            table
                .invoke(ModelToolCall::new(format!("l{i}"), "nope", json!({})))
                .await,
        );
    }
    assert!(
        matches!(&results[3], InvokeOutcome::Blocked(b) if b.denied_reason == DeniedReason::ToolLoop),
        "{:?}",
        results[3]
    );
}

#[test]
fn bad_sections_are_refused_with_their_key_path() {
    let err = talon_config::load_str(
        r#"{ tools: { loopDetection: { enabled: true, historySize: "big" } } }"#,
        "talon.json",
    )
    .unwrap_err();
    assert!(
        err.to_string().contains("tools.loopDetection.historySize"),
        "{err}"
    );
    let err = talon_config::load_str(
        r#"{ tools: { hooks: { beforeToolCall: [{ id: "x", command: [], colour: 1 }] } } }"#,
        "talon.json",
    )
    .unwrap_err();
    assert!(
        err.to_string().contains("tools.hooks.beforeToolCall[0]"),
        "{err}"
    );
    let err = talon_config::load_str(
        r#"{ tools: { hooks: { beforeToolCall: [{ id: "x", command: [] }] } } }"#,
        "talon.json",
    )
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "talon.json:1:58: tools.hooks.beforeToolCall[0].command: must name a program: [\"/path/to/program\", \"arg\", …]"
    );
}

/// A hook whose program is on `tools.exec.env.set.PATH` is runnable (the
/// check looks it up where it will run), one whose program is missing is
/// a problem on the built runtime and from `check_hooks` alike, and the
/// broken hook is still registered: the call it matches is blocked.
#[tokio::test]
async fn hook_problems_are_found_with_the_paths_the_hooks_run_with() {
    let dir = tempfile::tempdir().unwrap();
    let bin = dir.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    write_script(&bin, "allow-all", "cat >/dev/null\necho '{}'");
    let text = format!(
        r#"{{
      tools: {{
        exec: {{ env: {{ set: {{ PATH: "{}" }} }} }},
        hooks: {{
          beforeToolCall: [
            {{ id: "on-path", command: ["allow-all"] }},
            {{ id: "gone", command: ["./gone.sh"], matcher: ["session_status"] }},
          ],
        }},
      }},
    }}"#,
        bin.display()
    );
    let loaded = talon_config::load_str(&text, "talon.json").unwrap();
    let expected = talon_runtime::check_hooks(&loaded.config, dir.path()).unwrap();
    let found: Vec<(&str, &str, &str)> = expected
        .iter()
        .map(|p| (p.hook_id.as_str(), p.code(), p.key_path.as_str()))
        .collect();
    assert_eq!(
        found,
        [(
            "gone",
            "hook.missing_program",
            "tools.hooks.beforeToolCall[1].command"
        )]
    );
    let runtime = RuntimeBuilder::from_config(&loaded.config, dir.path())
        .unwrap()
        .build()
        .unwrap();
    assert_eq!(runtime.hook_problems(), expected.as_slice());
    let table = runtime.assemble(RunSpec::new(RunContext::new("main")));
    let out = table
        .invoke(ModelToolCall::new("c1", "session_status", json!({})))
        .await;
    assert!(
        matches!(&out, InvokeOutcome::Blocked(b) if b.denied_reason == DeniedReason::HookFailure && b.source.as_deref() == Some("gone")),
        "{out:?}"
    );
}

/// The state directory's secrets file is read when the runtime is built
/// (for `${secret:NAME}` in MCP servers' env and headers): a file group or
/// others can read stops the build with the file and the fix, never a value.
#[cfg(feature = "mcp")]
#[test]
fn a_readable_secrets_file_stops_the_build() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    std::fs::create_dir(&state).unwrap();
    let file = state.join(talon_config::secrets::SECRETS_FILE);
    std::fs::write(&file, r#"{"svc": "VALUE-NOT-SHOWN"}"#).unwrap();
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
    let config = talon_config::load_str("{}", "talon.json").unwrap().config;
    let err = RuntimeBuilder::from_config_in(&config, dir.path(), state.clone())
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("secrets.json") && err.contains("0644"),
        "{err}"
    );
    assert!(!err.contains("VALUE-NOT-SHOWN"), "{err}");
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
    assert!(RuntimeBuilder::from_config_in(&config, dir.path(), state).is_ok());
}

/// `tools.exec.env.set` values may be `${secret:NAME}` (the state
/// directory's secrets file) or `${VAR}` (the process environment)
/// references: exec children get the value, the policy's `Debug` shows
/// only names, and a reference that does not resolve stops the build at
/// its key, naming the secret, never a value.
#[tokio::test]
async fn exec_env_set_references_are_expanded_from_the_secrets_file() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    std::fs::create_dir(&state).unwrap();
    std::fs::create_dir(dir.path().join("ws")).unwrap();
    let file = state.join(talon_config::secrets::SECRETS_FILE);
    std::fs::write(&file, r#"{"gh": "ghp-SECRET-VALUE"}"#).unwrap();
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
    // The test binary's own environment: HOME is always set.
    let home = std::env::var("HOME").unwrap();
    let text = r#"{
      agents: { defaults: { workspace: "./ws" } },
      tools: { exec: { env: { set: {
        GH_TOKEN: "${secret:gh}",
        WHERE: "home=${HOME}",
        PLAIN: "as-is",
      } } } },
    }"#;
    let config = talon_config::load_str(text, "talon.json").unwrap().config;
    let policy = config
        .exec_env_policy_expanded(
            None,
            &talon_config::secrets::SecretStore::load(&state).unwrap(),
        )
        .unwrap();
    assert!(
        !format!("{policy:?}").contains("ghp-SECRET-VALUE"),
        "{policy:?}"
    );
    let runtime = RuntimeBuilder::from_config_in(&config, dir.path(), state.clone())
        .unwrap()
        .build()
        .unwrap();
    let table = runtime.assemble(RunSpec::new(RunContext::new("main")));
    let out = table
        .invoke(ModelToolCall::new(
            "c1",
            "exec",
            json!({ "command": "printf '%s|%s|%s' \"$GH_TOKEN\" \"$WHERE\" \"$PLAIN\"" }),
        ))
        .await;
    match &out {
        InvokeOutcome::Completed { result, .. } => assert_eq!(
            result.text().trim(),
            format!("ghp-SECRET-VALUE|home={home}|as-is")
        ),
        other => panic!("expected a result, got {other:?}"),
    }
    // A secret the file does not hold: the build stops at the key.
    let text = r#"{ tools: { exec: { env: { set: { GH_TOKEN: "${secret:missing}" } } } } }"#;
    let config = talon_config::load_str(text, "talon.json").unwrap().config;
    let err = RuntimeBuilder::from_config_in(&config, dir.path(), state.clone())
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("set.GH_TOKEN") && err.contains("`missing`"),
        "{err}"
    );
    // So does an agent's own reference to an unset variable.
    let text = r#"{ agents: { list: [ { id: "ops", tools: { exec: { env: { set: {
        X: "${SURELY_UNSET_TEST_VAR_41}" } } } } } ] } }"#;
    let config = talon_config::load_str(text, "talon.json").unwrap().config;
    let err = RuntimeBuilder::from_config_in(&config, dir.path(), state)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("set.X") && err.contains("SURELY_UNSET_TEST_VAR_41"),
        "{err}"
    );
    // Talon's own variables are not reachable by a reference.
    let text = r#"{ tools: { exec: { env: { set: { T: "${TALON_GATEWAY_TOKEN}" } } } } }"#;
    let config = talon_config::load_str(text, "talon.json").unwrap().config;
    let err = RuntimeBuilder::from_config_in(&config, dir.path(), dir.path().join("state"))
        .unwrap_err()
        .to_string();
    assert!(err.contains("set.T") && err.contains("reserved"), "{err}");
}
