//! The `message` tool over a webhook channel: the vocabulary, the
//! capability and owner checks, the size limit, secrets and the ledger.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::{Map, Value, json};
use talon_channels::{ChannelSet, MessageTool, SIGNATURE_HEADER, SendLedger, verify_signature};
use talon_config::ChannelConnections;
use talon_config::secrets::SecretStore;
use talon_test_support::http_receiver::HttpReceiver;
use talon_tool_catalog::{
    CancellationToken, Tool, ToolCall, ToolContext, ToolError, ToolErrorCode,
};

use super::webhook::loopback_config;

struct Setup {
    receiver: HttpReceiver,
    tool: MessageTool,
    ledger: Arc<SendLedger>,
    _dir: tempfile::TempDir,
}

fn setup(max_bytes: Option<usize>) -> Setup {
    let receiver = HttpReceiver::start().unwrap();
    let mut webhook = loopback_config(receiver.url("/hook"));
    webhook.secret = Some("${secret:HOOK_KEY}".into());
    webhook.max_message_bytes = max_bytes;
    let config = ChannelConnections {
        webhook: Some(webhook),
        irc: None,
    };
    let secrets = SecretStore::from_map(BTreeMap::from([(
        "HOOK_KEY".to_owned(),
        "from-the-store".to_owned(),
    )]));
    let dir = tempfile::tempdir().unwrap();
    let ledger = Arc::new(SendLedger::open(&dir.path().join("sends.sqlite")).unwrap());
    let tool = MessageTool::new(
        Arc::new(ChannelSet::from_config(&config, &secrets)),
        Some(Arc::clone(&ledger)),
    );
    Setup {
        receiver,
        tool,
        ledger,
        _dir: dir,
    }
}

async fn call(
    tool: &MessageTool,
    id: &str,
    params: Value,
    owner: Option<bool>,
) -> Result<Value, ToolError> {
    let params: Map<String, Value> = serde_json::from_value(params).unwrap();
    let call = ToolCall {
        id: id.to_owned(),
        name: "message".to_owned(),
        params,
    };
    let ctx = ToolContext::new("main", "agent:main:main").with_sender_is_owner(owner);
    tool.execute(&call, &ctx, &CancellationToken::new())
        .await
        .map(|r| r.details)
}

#[tokio::test]
async fn a_send_is_signed_with_the_stored_secret_and_never_repeated() {
    let s = setup(None);
    let first = call(
        &s.tool,
        "call-1",
        json!({"action": "send", "target": "ops", "message": "hi"}),
        Some(true),
    )
    .await
    .unwrap();
    assert_eq!(first["channel"], json!("webhook"));
    let key = first["idempotencyKey"].as_str().unwrap().to_owned();
    let req = &s.receiver.requests()[0];
    assert!(verify_signature(
        b"from-the-store",
        &req.body,
        req.header(SIGNATURE_HEADER).unwrap()
    ));
    // The same call again (a retry after a lost answer): not sent again.
    let again = call(
        &s.tool,
        "call-1",
        json!({"action": "send", "target": "ops", "message": "hi"}),
        Some(true),
    )
    .await
    .unwrap();
    assert_eq!(again["deduplicated"], json!(true));
    assert_eq!(again["messageId"], first["messageId"]);
    assert_eq!(s.receiver.count(), 1);
    assert_eq!(s.ledger.state(&key).unwrap().as_deref(), Some("sent"));
    // Another call id is another message.
    call(
        &s.tool,
        "call-2",
        json!({"action": "send", "message": "again"}),
        None,
    )
    .await
    .unwrap();
    assert_eq!(s.receiver.count(), 2);
}

#[tokio::test]
async fn a_send_started_before_a_crash_is_interrupted_not_repeated() {
    let s = setup(None);
    let key = MessageTool::idempotency_key("main", "agent:main:main", "call-crash");
    // What a process killed between the write-ahead and the send leaves.
    assert_eq!(
        s.ledger.begin(&key, "webhook", "send").unwrap(),
        talon_channels::Begin::Proceed
    );
    let err = call(
        &s.tool,
        "call-crash",
        json!({"action": "send", "message": "hi"}),
        Some(true),
    )
    .await
    .unwrap_err();
    assert_eq!(err.code(), ToolErrorCode::MessageInterrupted);
    assert!(err.message().contains("not sent again"), "{err}");
    assert_eq!(s.receiver.count(), 0);
}

#[tokio::test]
async fn bad_calls_get_clear_errors_and_send_nothing() {
    let s = setup(Some(10));
    let cases = [
        (
            json!({"action": "teleport", "message": "x"}),
            ToolErrorCode::MessageUnknownAction,
            Some("action"),
        ),
        (
            json!({"action": "read"}),
            ToolErrorCode::MessageUnsupportedAction,
            Some("action"),
        ),
        (
            json!({"action": "send", "message": "eleven byte"}),
            ToolErrorCode::MessageTooLarge,
            Some("message"),
        ),
        (
            json!({"action": "send", "channel": "telegram", "message": "x"}),
            ToolErrorCode::MessageUnknownChannel,
            Some("channel"),
        ),
        (
            json!({"action": "send", "message": "x", "media": "/etc/passwd"}),
            ToolErrorCode::InputUnknownParam,
            Some("media"),
        ),
        (
            json!({"action": "send", "target": "ops"}),
            ToolErrorCode::InputInvalid,
            Some("message"),
        ),
        (
            json!({"action": "react", "messageId": "m1"}),
            ToolErrorCode::InputInvalid,
            Some("emoji"),
        ),
    ];
    for (params, code, param) in cases {
        let err = call(&s.tool, "c", params.clone(), Some(true))
            .await
            .unwrap_err();
        assert_eq!(err.code(), code, "{params}: {err}");
        assert_eq!(err.param(), param, "{params}");
    }
    let err = call(&s.tool, "c", json!({"action": "teleport"}), None)
        .await
        .unwrap_err();
    assert!(
        err.message().contains("send, react, reply, thread-reply"),
        "{err}"
    );
    // Exactly ten bytes is within the limit.
    call(
        &s.tool,
        "ok",
        json!({"action": "send", "message": "ten bytes!"}),
        None,
    )
    .await
    .unwrap();
    assert_eq!(s.receiver.count(), 1);
}

#[tokio::test]
async fn a_caller_known_not_to_be_the_owner_gets_only_conversational_actions() {
    let s = setup(None);
    let err = call(
        &s.tool,
        "c1",
        json!({"action": "send", "message": "x"}),
        Some(false),
    )
    .await
    .unwrap_err();
    assert_eq!(err.code(), ToolErrorCode::MessageOwnerRequired);
    assert_eq!(err.message(), "Owner required for message.send.");
    assert_eq!(s.receiver.count(), 0);
    // `reply` is conversational: allowed.
    call(
        &s.tool,
        "c2",
        json!({"action": "reply", "replyTo": "m1", "message": "x"}),
        Some(false),
    )
    .await
    .unwrap();
    assert_eq!(s.receiver.count(), 1);
}

#[tokio::test]
async fn a_missing_secret_is_a_config_error_naming_the_key() {
    let mut webhook = loopback_config("http://127.0.0.1:9/hook".into());
    webhook.secret = Some("${secret:NOPE}".into());
    let set = ChannelSet::from_config(
        &ChannelConnections {
            webhook: Some(webhook),
            irc: None,
        },
        &SecretStore::default(),
    );
    let tool = MessageTool::new(Arc::new(set), None);
    let err = call(&tool, "c", json!({"action": "send", "message": "x"}), None)
        .await
        .unwrap_err();
    assert_eq!(err.code(), ToolErrorCode::MessageChannelConfig);
    assert!(
        err.message().starts_with("channels.webhook.secret:"),
        "{err}"
    );
    assert!(err.message().contains("NOPE"), "{err}");
    // And no channel at all says how to configure one.
    let tool = MessageTool::new(Arc::new(ChannelSet::new()), None);
    let err = call(&tool, "c", json!({"action": "send", "message": "x"}), None)
        .await
        .unwrap_err();
    assert_eq!(err.code(), ToolErrorCode::MessageUnknownChannel);
    assert!(
        err.message()
            .contains("set channels.webhook or channels.irc"),
        "{err}"
    );
    let spec = tool.spec();
    assert_eq!(
        spec.parameters["properties"]["action"]["enum"],
        json!(["send"])
    );
}
