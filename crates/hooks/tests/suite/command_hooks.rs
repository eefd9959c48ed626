//! Command hooks: real programs answering on stdout.

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use talon_hooks::{CommandHookConfig, DeniedReason, Gate, GateOutcome, Hooks, HooksConfig};

use super::support::{ctx, event, params};

fn script(dir: &Path, name: &str, body: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    path.to_string_lossy().into_owned()
}

fn hook(id: &str, program: String) -> CommandHookConfig {
    CommandHookConfig {
        id: id.into(),
        command: vec![program],
        ..CommandHookConfig::default()
    }
}

async fn outcome(config: HooksConfig, dir: &Path, tool: &str, p: Value) -> GateOutcome {
    assert_eq!(config.validate(), vec![]);
    let mut hooks = Hooks::new();
    hooks.add_command_hooks(&config, dir);
    Gate::new(Arc::new(hooks))
        .before_tool_call(event(tool, p), &ctx())
        .await
}

#[tokio::test]
async fn a_program_sees_the_event_and_can_block() {
    let dir = tempfile::tempdir().unwrap();
    let seen = dir.path().join("seen.json");
    let body = format!(
        "cat > '{}'\nprintf '%s' \"$TALON_HOOK\" > '{}.hook'\necho '{{\"block\": true, \"blockReason\": \"scripts say no\"}}'",
        seen.display(),
        seen.display()
    );
    let config = HooksConfig {
        before_tool_call: vec![hook("guard", script(dir.path(), "guard.sh", &body))],
        ..HooksConfig::default()
    };
    match outcome(config, dir.path(), "exec", json!({"command": "ls"})).await {
        GateOutcome::Blocked(b) => {
            assert_eq!(b.denied_reason, DeniedReason::PluginBeforeToolCall);
            assert_eq!(b.reason, "scripts say no");
            assert_eq!(b.source.as_deref(), Some("guard"));
        }
        other => panic!("{other:?}"),
    }
    let input: Value = serde_json::from_str(&std::fs::read_to_string(&seen).unwrap()).unwrap();
    assert_eq!(input["hook"], "before_tool_call");
    assert_eq!(input["event"]["toolName"], "exec");
    assert_eq!(input["event"]["params"], json!({"command": "ls"}));
    assert_eq!(input["event"]["toolCallId"], "call-1");
    assert_eq!(input["context"]["sessionKey"], "agent:main:main");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("seen.json.hook")).unwrap(),
        "before_tool_call"
    );
}

#[tokio::test]
async fn empty_output_is_no_decision_and_params_rewrite() {
    let dir = tempfile::tempdir().unwrap();
    let quiet = script(dir.path(), "quiet.sh", "cat >/dev/null");
    let config = HooksConfig {
        before_tool_call: vec![hook("quiet", quiet)],
        ..HooksConfig::default()
    };
    assert!(matches!(
        outcome(config, dir.path(), "read", json!({"path": "a"})).await,
        GateOutcome::Allow { .. }
    ));

    let rewrite = script(
        dir.path(),
        "rw.sh",
        "cat >/dev/null\necho '{\"params\": {\"path\": \"safe.txt\"}}'",
    );
    let config = HooksConfig {
        before_tool_call: vec![hook("rw", rewrite)],
        ..HooksConfig::default()
    };
    assert_eq!(
        outcome(config, dir.path(), "read", json!({"path": "/etc/shadow"})).await,
        GateOutcome::AllowRewritten {
            params: params(json!({"path": "safe.txt"}))
        }
    );
}

#[tokio::test]
async fn a_program_can_require_approval_stamped_with_its_id() {
    let dir = tempfile::tempdir().unwrap();
    let ask = script(
        dir.path(),
        "ask.sh",
        "cat >/dev/null\necho '{\"requireApproval\": {\"title\": \"Run command\", \"description\": \"ok?\", \"pluginId\": \"forged\"}}'",
    );
    let config = HooksConfig {
        before_tool_call: vec![hook("asker", ask)],
        ..HooksConfig::default()
    };
    match outcome(config, dir.path(), "exec", json!({})).await {
        GateOutcome::NeedsApproval { approvals, .. } => {
            let approval = &approvals[0];
            assert_eq!(approval.title, "Run command");
            assert_eq!(approval.plugin_id.as_deref(), Some("asker"));
        }
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn crash_nonzero_exit_garbage_and_missing_program_all_block() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        (
            "exit3",
            script(dir.path(), "exit3.sh", "cat >/dev/null\nexit 3"),
            "exited with status 3",
        ),
        (
            "garbage",
            script(dir.path(), "garbage.sh", "cat >/dev/null\necho 'not json'"),
            "unparseable answer",
        ),
        (
            "array",
            script(dir.path(), "array.sh", "cat >/dev/null\necho '[1,2]'"),
            "unparseable answer",
        ),
        (
            "killed",
            script(dir.path(), "killed.sh", "kill -9 $$"),
            "killed by a signal",
        ),
        (
            "missing",
            dir.path().join("nope.sh").to_string_lossy().into_owned(),
            "cannot start",
        ),
    ];
    for (id, program, expect) in cases {
        let config = HooksConfig {
            before_tool_call: vec![hook(id, program)],
            ..HooksConfig::default()
        };
        match outcome(config, dir.path(), "exec", json!({})).await {
            GateOutcome::Failed(b) => {
                assert_eq!(b.denied_reason, DeniedReason::HookFailure, "{id}");
                assert!(
                    b.detail.as_deref().unwrap_or("").contains(expect),
                    "{id}: {b:?}"
                );
            }
            other => panic!("{id}: {other:?}"),
        }
    }
}

#[tokio::test]
async fn a_hung_program_times_out_blocks_and_leaves_no_process_behind() {
    let dir = tempfile::tempdir().unwrap();
    let pid_file = dir.path().join("child.pid");
    let body = format!("sleep 300 &\necho $! > '{}'\nwait", pid_file.display());
    let mut cfg = hook("hung", script(dir.path(), "hung.sh", &body));
    cfg.timeout_ms = Some(300);
    let started = Instant::now();
    let config = HooksConfig {
        before_tool_call: vec![cfg],
        ..HooksConfig::default()
    };
    match outcome(config, dir.path(), "exec", json!({})).await {
        GateOutcome::Failed(b) => {
            assert!(
                b.detail
                    .as_deref()
                    .unwrap_or("")
                    .contains("timed out after 300ms"),
                "{b:?}"
            )
        }
        other => panic!("{other:?}"),
    }
    assert!(started.elapsed() < Duration::from_secs(5));
    let pid: i32 = std::fs::read_to_string(&pid_file)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    // The grandchild was in the hook's process group and was killed with it.
    let mut alive = true;
    for _ in 0..50 {
        let status = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        // A reaped process is gone; a killed but unreaped one is a zombie.
        if status.is_empty() || status.split_whitespace().nth(2) == Some("Z") {
            alive = false;
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(!alive, "the hook's child {pid} survived the timeout");
}

#[test]
fn bad_hook_config_is_reported_with_key_paths() {
    let config = HooksConfig {
        before_tool_call: vec![
            CommandHookConfig {
                id: "a".into(),
                command: vec![],
                ..CommandHookConfig::default()
            },
            CommandHookConfig {
                id: "a".into(),
                command: vec!["x".into()],
                timeout_ms: Some(0),
                env: Some(
                    [("LD_PRELOAD".to_owned(), "/tmp/x.so".to_owned())]
                        .into_iter()
                        .collect(),
                ),
                ..CommandHookConfig::default()
            },
        ],
        ..HooksConfig::default()
    };
    let keys: Vec<String> = config.validate().into_iter().map(|(k, _)| k).collect();
    assert_eq!(
        keys,
        vec![
            "beforeToolCall[0].command",
            "beforeToolCall[1].id",
            "beforeToolCall[1].timeoutMs",
            "beforeToolCall[1].env.LD_PRELOAD",
        ]
    );
}
