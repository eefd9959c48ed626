//! The IRC channel against a real ngircd on loopback, with a raw client
//! as the second user.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use talon_channels::{ActionRequest, Channel, ChannelSet, IrcChannel, MessageAction, MessageTool};
use talon_config::{ChannelConnections, IrcChannelConfig};
use talon_egress::SsrfAllowlistConfig;
use talon_test_support::ngircd::{Ngircd, RawIrcClient};
use talon_tool_catalog::{CancellationToken, Tool, ToolCall, ToolContext, ToolErrorCode};

fn server() -> Ngircd {
    Ngircd::start_in(Path::new(env!("CARGO_TARGET_TMPDIR"))).expect("ngircd")
}

fn config(port: u16) -> IrcChannelConfig {
    IrcChannelConfig {
        host: "127.0.0.1".into(),
        port: Some(port),
        nick: "talon".into(),
        channels: Some(vec!["#talon".into()]),
        timeout_ms: Some(5000),
        ssrf_allowlist: Some(SsrfAllowlistConfig {
            hosts: Vec::new(),
            cidrs: vec!["127.0.0.1/32".into()],
        }),
        ..IrcChannelConfig::default()
    }
}

async fn perform(
    channel: &IrcChannel,
    request: ActionRequest,
) -> Result<Value, talon_channels::ChannelError> {
    channel.perform(&request, &CancellationToken::new()).await
}

/// Poll `read` until a message from `from` shows up.
async fn read_until(channel: &IrcChannel, target: &str, from: &str) -> Value {
    for _ in 0..100 {
        let got = perform(
            channel,
            ActionRequest::new(MessageAction::Read, "r").with_target(target),
        )
        .await
        .unwrap();
        if let Some(m) = got["messages"]
            .as_array()
            .and_then(|a| a.iter().find(|m| m["from"] == json!(from)))
        {
            return m.clone();
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("no message from {from} in {target}");
}

#[tokio::test(flavor = "multi_thread")]
async fn messages_round_trip_through_ngircd() {
    let server = server();
    let mut bob = RawIrcClient::connect(server.port, "bob", &["#talon"]).unwrap();
    let channel = IrcChannel::new(&config(server.port), None).unwrap();

    // Talon → bob, through the server.
    let sent = perform(
        &channel,
        ActionRequest::new(MessageAction::Send, "k1")
            .with_target("#talon")
            .with_message("hello from talon"),
    )
    .await
    .unwrap();
    assert_eq!(sent["ok"], json!(true));
    let line = bob.wait_for(|l| l.contains("PRIVMSG #talon")).unwrap();
    assert!(line.starts_with(":talon!"), "{line}");
    assert!(line.ends_with(":hello from talon"), "{line}");

    // bob → Talon: `read` shows it, with an id to reply and react to.
    bob.send("PRIVMSG #talon :hi talon, status?").unwrap();
    let seen = read_until(&channel, "#talon", "bob").await;
    assert_eq!(seen["text"], json!("hi talon, status?"));
    let id = seen["id"].as_str().unwrap().to_owned();

    perform(
        &channel,
        ActionRequest::new(MessageAction::Reply, "k2")
            .with_reply_to(&id)
            .with_message("all green"),
    )
    .await
    .unwrap();
    let line = bob.wait_for(|l| l.contains("all green")).unwrap();
    assert!(line.ends_with("PRIVMSG #talon :bob: all green"), "{line}");

    // IRC has no reactions: a CTCP ACTION says it.
    let reacted = perform(
        &channel,
        ActionRequest::new(MessageAction::React, "k3")
            .with_message_id(&id)
            .with_emoji("👍"),
    )
    .await
    .unwrap();
    assert_eq!(reacted["as"], json!("ctcp-action"));
    let line = bob.wait_for(|l| l.contains("ACTION")).unwrap();
    assert!(
        line.ends_with(":\u{1}ACTION reacted 👍 to bob: \"hi talon, status?\"\u{1}"),
        "{line:?}"
    );

    // A private message is kept under the sender's nick.
    bob.send("PRIVMSG talon :psst").unwrap();
    let private = read_until(&channel, "bob", "bob").await;
    assert_eq!(private["text"], json!("psst"));

    // Multi-line text is one PRIVMSG per line; CR is refused.
    perform(
        &channel,
        ActionRequest::new(MessageAction::Send, "k4")
            .with_target("bob")
            .with_message("one\ntwo"),
    )
    .await
    .unwrap();
    bob.wait_for(|l| l.ends_with("PRIVMSG bob :one")).unwrap();
    bob.wait_for(|l| l.ends_with("PRIVMSG bob :two")).unwrap();
    let err = perform(
        &channel,
        ActionRequest::new(MessageAction::Send, "k5")
            .with_target("bob")
            .with_message("x\r\nQUIT :bye"),
    )
    .await
    .unwrap_err();
    assert_eq!(err.code(), ToolErrorCode::InputInvalid);
}

#[tokio::test(flavor = "multi_thread")]
async fn the_server_refusing_a_send_is_a_clear_error() {
    let server = server();
    let channel = IrcChannel::new(&config(server.port), None).unwrap();
    let err = perform(
        &channel,
        ActionRequest::new(MessageAction::Send, "k")
            .with_target("nobody-here")
            .with_message("x"),
    )
    .await
    .unwrap_err();
    assert_eq!(err.code(), ToolErrorCode::MessageRejected, "{err}");
    assert!(err.to_string().contains("401"), "{err}");
    // An unknown id to reply to names the parameter.
    let err = perform(
        &channel,
        ActionRequest::new(MessageAction::Reply, "k")
            .with_reply_to("nope")
            .with_message("x"),
    )
    .await
    .unwrap_err();
    assert_eq!(err.code(), ToolErrorCode::InputInvalid);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_server_that_is_down_is_unavailable_and_tls_is_refused() {
    let mut server = server();
    let port = server.port;
    server.kill();
    let channel = IrcChannel::new(&config(port), None).unwrap();
    let err = perform(
        &channel,
        ActionRequest::new(MessageAction::Send, "k").with_message("x"),
    )
    .await
    .unwrap_err();
    assert_eq!(
        err.code(),
        ToolErrorCode::MessageChannelUnavailable,
        "{err}"
    );
    let mut tls = config(port);
    tls.tls = Some(true);
    let err = IrcChannel::new(&tls, None).unwrap_err();
    assert_eq!(err.code(), ToolErrorCode::MessageChannelConfig);
    assert!(err.to_string().starts_with("channels.irc.tls:"), "{err}");
    // Without the allowlist, loopback is refused before connecting.
    let mut strict = config(port);
    strict.ssrf_allowlist = None;
    let channel = IrcChannel::new(&strict, None).unwrap();
    let err = perform(
        &channel,
        ActionRequest::new(MessageAction::Send, "k").with_message("x"),
    )
    .await
    .unwrap_err();
    assert_eq!(err.code(), ToolErrorCode::WebSsrfBlocked, "{err}");
}

#[tokio::test(flavor = "multi_thread")]
async fn the_message_tool_sends_over_irc() {
    let server = server();
    let mut bob = RawIrcClient::connect(server.port, "bob", &["#talon"]).unwrap();
    let set = ChannelSet::from_config(
        &ChannelConnections {
            webhook: None,
            irc: Some(config(server.port)),
        },
        &talon_config::secrets::SecretStore::default(),
    );
    let tool = MessageTool::new(Arc::new(set), None);
    let call = ToolCall {
        id: "c1".into(),
        name: "message".into(),
        params: serde_json::from_value(json!({"action": "send", "message": "via the tool"}))
            .unwrap(),
    };
    let out = tool
        .execute(
            &call,
            &ToolContext::new("main", "s"),
            &CancellationToken::new(),
        )
        .await
        .unwrap();
    assert_eq!(out.details["target"], json!("#talon"));
    bob.wait_for(|l| l.ends_with("PRIVMSG #talon :via the tool"))
        .unwrap();
    // The schema offers what the channel declares, in vocabulary order.
    assert_eq!(
        tool.spec().parameters["properties"]["action"]["enum"],
        json!(["send", "react", "read", "reply"])
    );
}
