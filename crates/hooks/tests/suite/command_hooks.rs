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

fn failure_detail(outcome: GateOutcome) -> String {
    match outcome {
        GateOutcome::Failed(b) => {
            assert_eq!(b.denied_reason, DeniedReason::HookFailure, "{b:?}");
            b.detail.unwrap_or_default()
        }
        other => panic!("expected a hook failure, got {other:?}"),
    }
}

#[tokio::test]
async fn an_answer_with_an_unknown_key_blocks_instead_of_passing() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        (
            "capital",
            r#"{"requireApproval": {"title": "t", "description": "d"}, "Block": true}"#,
            "unknown field `Block`",
        ),
        (
            "nested",
            r#"{"requireApproval": {"title": "t", "description": "d", "onTimeout": "allow"}}"#,
            "unknown field `onTimeout`",
        ),
        ("stringly", r#"{"block": "yes"}"#, "unparseable answer"),
    ];
    for (id, answer, expect) in cases {
        let program = script(
            dir.path(),
            &format!("{id}.sh"),
            &format!("cat >/dev/null\necho '{answer}'"),
        );
        let config = HooksConfig {
            before_tool_call: vec![hook(id, program)],
            ..HooksConfig::default()
        };
        let detail = failure_detail(outcome(config, dir.path(), "exec", json!({})).await);
        assert!(detail.contains("unparseable answer"), "{id}: {detail}");
        assert!(detail.contains(expect), "{id}: {detail}");
    }
}

#[tokio::test]
async fn a_snake_case_approval_is_accepted_and_stamped_with_the_hook_id() {
    let dir = tempfile::tempdir().unwrap();
    let ask = script(
        dir.path(),
        "ask.sh",
        "cat >/dev/null\necho '{\"require_approval\": {\"title\": \"Run it\", \"description\": \"ok?\", \"timeout_ms\": 60000, \"allowed_decisions\": [\"allow-once\", \"deny\"], \"plugin_id\": \"forged\", \"timeout_behavior\": \"allow\"}}'",
    );
    let config = HooksConfig {
        before_tool_call: vec![hook("asker", ask)],
        ..HooksConfig::default()
    };
    match outcome(config, dir.path(), "exec", json!({})).await {
        GateOutcome::NeedsApproval { approvals, .. } => {
            let approval = &approvals[0];
            assert_eq!(approval.title, "Run it");
            assert_eq!(approval.description, "ok?");
            assert_eq!(approval.timeout_ms, Some(60_000));
            assert_eq!(approval.plugin_id.as_deref(), Some("asker"));
        }
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn a_background_child_holding_stdout_does_not_cost_the_timeout() {
    let dir = tempfile::tempdir().unwrap();
    let pid_file = dir.path().join("bg.pid");
    let body = format!(
        "cat >/dev/null\necho '{{\"block\": true, \"blockReason\": \"said before exiting\"}}'\nsleep 20 &\necho $! > '{}'\nexit 0",
        pid_file.display()
    );
    let mut cfg = hook("leaver", script(dir.path(), "leaver.sh", &body));
    cfg.timeout_ms = Some(5_000);
    let config = HooksConfig {
        before_tool_call: vec![cfg],
        ..HooksConfig::default()
    };
    let started = Instant::now();
    let result = outcome(config, dir.path(), "exec", json!({})).await;
    let took = started.elapsed();
    assert!(took < Duration::from_secs(2), "took {took:?}");
    match result {
        GateOutcome::Blocked(b) => assert_eq!(b.reason, "said before exiting"),
        other => panic!("{other:?}"),
    }
    let pid: i32 = std::fs::read_to_string(&pid_file)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let mut alive = true;
    for _ in 0..100 {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        let state = stat
            .rsplit(')')
            .next()
            .and_then(|s| s.split_whitespace().next());
        if stat.is_empty() || state == Some("Z") {
            alive = false;
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(!alive, "the leftover child {pid} survived");
}

#[tokio::test]
async fn hook_programs_do_not_inherit_host_secrets() {
    let dir = tempfile::tempdir().unwrap();
    let dump = dir.path().join("env.txt");
    let body = format!("cat >/dev/null\nenv > '{}'", dump.display());
    let mut cfg = hook("envdump", script(dir.path(), "env.sh", &body));
    cfg.env = Some(
        [("HOOK_SERVICE_TOKEN".to_owned(), "configured".to_owned())]
            .into_iter()
            .collect(),
    );
    let config = HooksConfig {
        before_tool_call: vec![cfg],
        ..HooksConfig::default()
    };
    assert!(matches!(
        outcome(config, dir.path(), "exec", json!({})).await,
        GateOutcome::Allow { .. }
    ));
    let text = std::fs::read_to_string(&dump).unwrap();
    let keys: Vec<&str> = text.lines().filter_map(|l| l.split('=').next()).collect();
    assert!(keys.contains(&"TALON_HOOK"), "{keys:?}");
    // The hook's own configured env still applies.
    assert!(text.lines().any(|l| l == "HOOK_SERVICE_TOKEN=configured"));
    for key in keys {
        let upper = key.to_uppercase();
        if key == "TALON_HOOK" || key == "HOOK_SERVICE_TOKEN" {
            continue;
        }
        assert!(
            !upper.starts_with("TALON_") && !upper.starts_with("OPENCLAW_"),
            "{key} reached the hook"
        );
        assert!(
            !["_API_KEY", "_TOKEN", "_SECRET", "_PASSWORD"]
                .iter()
                .any(|s| upper.ends_with(s)),
            "{key} reached the hook"
        );
    }
}

#[test]
fn bad_matchers_are_reported_with_key_paths() {
    let config = HooksConfig {
        before_tool_call: vec![CommandHookConfig {
            id: "m".into(),
            command: vec!["x".into()],
            matcher: Some(vec![
                "exec".into(),
                "web search".into(),
                "group:nope".into(),
                "exec*".into(),
                "".into(),
            ]),
            ..CommandHookConfig::default()
        }],
        after_tool_call: vec![CommandHookConfig {
            id: "e".into(),
            command: vec!["x".into()],
            matcher: Some(vec![]),
            ..CommandHookConfig::default()
        }],
        ..HooksConfig::default()
    };
    let problems = config.validate();
    let keys: Vec<&str> = problems.iter().map(|(k, _)| k.as_str()).collect();
    assert_eq!(
        keys,
        vec![
            "beforeToolCall[0].matcher[1]",
            "beforeToolCall[0].matcher[2]",
            "beforeToolCall[0].matcher[3]",
            "beforeToolCall[0].matcher[4]",
            "afterToolCall[0].matcher",
        ]
    );
    assert!(problems[0].1.contains("`web search`"), "{problems:?}");
    assert!(problems[1].1.contains("`group:nope`"), "{problems:?}");
    assert!(problems[2].1.contains("`exec*`"), "{problems:?}");
    assert_eq!(
        problems[4].1,
        "an empty matcher matches no tool; omit it to match every tool"
    );
}

#[tokio::test]
async fn a_group_matcher_is_expanded_to_its_members() {
    let dir = tempfile::tempdir().unwrap();
    let program = script(
        dir.path(),
        "fs.sh",
        "cat >/dev/null\necho '{\"block\": true, \"blockReason\": \"no files\"}'",
    );
    let mut cfg = hook("fs-guard", program);
    cfg.matcher = Some(vec!["group:fs".into()]);
    let config = HooksConfig {
        before_tool_call: vec![cfg],
        ..HooksConfig::default()
    };
    for tool in ["read", "write", "edit", "apply_patch"] {
        match outcome(config.clone(), dir.path(), tool, json!({"path": "a"})).await {
            GateOutcome::Blocked(b) => assert_eq!(b.reason, "no files", "{tool}"),
            other => panic!("{tool}: {other:?}"),
        }
    }
    for tool in ["exec", "web_fetch"] {
        assert!(
            matches!(
                outcome(config.clone(), dir.path(), tool, json!({})).await,
                GateOutcome::Allow { .. }
            ),
            "{tool}"
        );
    }
}

#[tokio::test]
async fn a_hook_the_load_check_reports_still_blocks_at_call_time() {
    use std::os::unix::fs::PermissionsExt as _;
    let dir = tempfile::tempdir().unwrap();
    let plain = dir.path().join("plain.sh");
    std::fs::write(&plain, "#!/bin/sh\necho '{}'\n").unwrap();
    std::fs::set_permissions(&plain, std::fs::Permissions::from_mode(0o644)).unwrap();
    let missing = dir.path().join("missing.sh");
    for (id, program, code) in [
        (
            "plain",
            plain.to_string_lossy().into_owned(),
            "hook.not_executable",
        ),
        (
            "missing",
            missing.to_string_lossy().into_owned(),
            "hook.missing_program",
        ),
    ] {
        let config = HooksConfig {
            before_tool_call: vec![hook(id, program)],
            ..HooksConfig::default()
        };
        let problems = config.check(dir.path(), &talon_exec_env::EnvPolicy::default());
        let codes: Vec<(&str, &str)> = problems
            .iter()
            .map(|p| (p.hook_id.as_str(), p.code()))
            .collect();
        assert_eq!(codes, vec![(id, code)]);
        // Reported at load, and still never skipped: the call is blocked.
        match outcome(config, dir.path(), "exec", json!({})).await {
            GateOutcome::Failed(b) => {
                assert_eq!(b.denied_reason, DeniedReason::HookFailure, "{id}");
                assert_eq!(b.source.as_deref(), Some(id));
            }
            other => panic!("{id}: {other:?}"),
        }
    }
}

#[tokio::test]
async fn what_the_load_check_passes_runs_by_the_same_path_lookup() {
    // A bare name on `tools.exec.env.set.PATH`, and `sh` with no PATH at
    // all (`inherit: none`: execvp's default search path): the check
    // finds both, and both run.
    let dir = tempfile::tempdir().unwrap();
    let bin = dir.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    script(
        &bin,
        "say-block",
        "cat >/dev/null\necho '{\"block\": true, \"blockReason\": \"found on PATH\"}'",
    );
    let cases = [
        (
            talon_exec_env::ExecEnvConfig {
                set: [("PATH".to_owned(), bin.to_string_lossy().into_owned())].into(),
                ..talon_exec_env::ExecEnvConfig::default()
            },
            vec!["say-block".to_owned()],
            "found on PATH",
        ),
        (
            talon_exec_env::ExecEnvConfig {
                inherit: talon_exec_env::InheritMode::None,
                ..talon_exec_env::ExecEnvConfig::default()
            },
            vec![
                "sh".to_owned(),
                "-c".to_owned(),
                "cat >/dev/null; echo '{\"block\": true, \"blockReason\": \"default path\"}'"
                    .to_owned(),
            ],
            "default path",
        ),
    ];
    for (env, command, reason) in cases {
        let policy = talon_exec_env::EnvPolicy::from_config(&env, None).unwrap();
        let config = HooksConfig {
            before_tool_call: vec![CommandHookConfig {
                id: "h".into(),
                command,
                ..CommandHookConfig::default()
            }],
            ..HooksConfig::default()
        };
        assert_eq!(config.check(dir.path(), &policy), vec![], "{reason}");
        let mut hooks = Hooks::new();
        hooks.add_command_hooks_with_env(&config, dir.path(), &policy);
        match Gate::new(Arc::new(hooks))
            .before_tool_call(event("exec", json!({})), &ctx())
            .await
        {
            GateOutcome::Blocked(b) => assert_eq!(b.reason, reason),
            other => panic!("{reason}: {other:?}"),
        }
    }
}

/// What a command hook reads as `context`: the run's agent, session,
/// message provider and channel, and the requester with its account
/// (for the gateway, the token id) and scope; unknown fields are left out,
/// never filled with a guess.
#[test]
fn the_context_carries_the_requester_identity_and_channel() {
    let mut c = ctx();
    c.message_provider = Some("telegram".into());
    c.channel_id = Some("group-1".into());
    c.requester = Some(talon_hooks::Requester {
        channel: Some("telegram".into()),
        account_id: Some("bot".into()),
        scope: Some("runner".into()),
        sender_id: Some("telegram:42".into()),
        sender_is_owner: Some(true),
        role_ids: None,
    });
    let v = c.to_json();
    assert_eq!(v["agentId"], json!("main"));
    assert_eq!(v["sessionKey"], json!("agent:main:main"));
    assert_eq!(v["messageProvider"], json!("telegram"));
    assert_eq!(v["channelId"], json!("group-1"));
    assert_eq!(
        v["requester"],
        json!({"channel": "telegram", "accountId": "bot", "scope": "runner", "senderId": "telegram:42", "senderIsOwner": true})
    );
    let bare = ctx().to_json();
    assert!(bare.get("messageProvider").is_none() && bare.get("requester").is_none());
}
