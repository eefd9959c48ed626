//! `message` through `ToolTable::invoke` from a real config: the webhook
//! channel with a secret from the state dir's secrets file, the owner
//! check per run and per caller.

use std::os::unix::fs::PermissionsExt as _;

use serde_json::{Value, json};
use talon_runtime::{InvokeOutcome, ModelToolCall, RunSpec, RuntimeBuilder, provides_core_tool};
use talon_test_support::http_receiver::HttpReceiver;
use talon_tool_catalog::ToolErrorCode;
use talon_tool_policy::RunContext;

fn details(out: &InvokeOutcome) -> Value {
    match out {
        InvokeOutcome::Completed { result, .. } => result.details.clone(),
        other => panic!("{other:?}"),
    }
}

fn failure(out: &InvokeOutcome) -> ToolErrorCode {
    match out {
        InvokeOutcome::Failed(e) => e.code(),
        other => panic!("{other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn message_sends_through_the_pipeline_and_checks_the_caller() {
    assert!(provides_core_tool("message"));
    let receiver = HttpReceiver::start().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    std::fs::create_dir_all(&state).unwrap();
    let secrets = state.join("secrets.json");
    std::fs::write(&secrets, r#"{"HOOK_KEY": "k-from-file"}"#).unwrap();
    std::fs::set_permissions(&secrets, std::fs::Permissions::from_mode(0o600)).unwrap();
    let config = format!(
        r#"{{ channels: {{ webhook: {{ url: "{}", secret: "${{secret:HOOK_KEY}}", ssrfAllowlist: {{ cidrs: ["127.0.0.1/32"] }} }} }} }}"#,
        receiver.url("/hook")
    );
    let loaded = talon_config::load_str(&config, "talon.json").unwrap();
    let runtime = RuntimeBuilder::from_config_in(&loaded.config, dir.path(), state.clone())
        .unwrap()
        .build()
        .unwrap();

    let mut owner = RunContext::new("main");
    owner.sender_is_owner = Some(true);
    let table = runtime.assemble(RunSpec::new(owner));
    assert!(table.names().contains(&"message"));
    let out = table
        .invoke(ModelToolCall::new(
            "c1",
            "message",
            json!({"action": "send", "target": "ops", "message": "built"}),
        ))
        .await;
    let d = details(&out);
    assert_eq!(d["channel"], "webhook", "{d}");
    let req = &receiver.requests()[0];
    assert!(talon_channels::verify_signature(
        b"k-from-file",
        &req.body,
        req.header(talon_channels::SIGNATURE_HEADER).unwrap()
    ));
    // The send ledger lives in the state dir.
    assert!(state.join(talon_channels::LEDGER_FILE).is_file());

    // The same run, a caller known not to be the owner: `send` is refused
    // for that call, `reply` is not.
    let out = table
        .invoke_as(
            ModelToolCall::new("c2", "message", json!({"action": "send", "message": "x"})),
            talon_hooks::Requester {
                sender_is_owner: Some(false),
                ..talon_hooks::Requester::default()
            },
        )
        .await;
    assert_eq!(failure(&out), ToolErrorCode::MessageOwnerRequired);
    assert_eq!(receiver.count(), 1);

    let mut stranger = RunContext::new("main");
    stranger.sender_is_owner = Some(false);
    let table = runtime.assemble(RunSpec::new(stranger));
    let out = table
        .invoke(ModelToolCall::new(
            "c3",
            "message",
            json!({"action": "send", "message": "x"}),
        ))
        .await;
    assert_eq!(failure(&out), ToolErrorCode::MessageOwnerRequired);
    let out = table
        .invoke(ModelToolCall::new(
            "c4",
            "message",
            json!({"action": "reply", "replyTo": "r-1", "message": "on it"}),
        ))
        .await;
    details(&out);
    assert_eq!(receiver.count(), 2);
    let out = table
        .invoke(ModelToolCall::new(
            "c5",
            "message",
            json!({"action": "teleport"}),
        ))
        .await;
    assert_eq!(failure(&out), ToolErrorCode::MessageUnknownAction);
}

/// With no channel configured the tool is not offered: it could not send
/// anywhere, and a model should not see it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_channel_message_is_not_offered() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    std::fs::create_dir_all(&state).unwrap();
    let loaded = talon_config::load_str("{}", "talon.json").unwrap();
    let runtime = RuntimeBuilder::from_config_in(&loaded.config, dir.path(), state)
        .unwrap()
        .build()
        .unwrap();
    let table = runtime.assemble(RunSpec::new(RunContext::new("main")));
    assert!(!table.names().contains(&"message"), "{:?}", table.names());
    assert!(table.names().contains(&"read"), "{:?}", table.names());
}
