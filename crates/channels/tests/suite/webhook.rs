//! The webhook channel against a loopback receiver.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use talon_channels::{
    ActionRequest, Channel, ChannelError, IDEMPOTENCY_HEADER, MessageAction, SIGNATURE_HEADER,
    WebhookChannel, verify_signature,
};
use talon_config::WebhookChannelConfig;
use talon_egress::SsrfAllowlistConfig;
use talon_test_support::http_receiver::{HttpReceiver, ReceiverMode};
use talon_tool_catalog::{CancellationToken, ToolErrorCode};

pub(crate) fn loopback_config(url: String) -> WebhookChannelConfig {
    WebhookChannelConfig {
        url,
        ssrf_allowlist: Some(SsrfAllowlistConfig {
            hosts: Vec::new(),
            cidrs: vec!["127.0.0.1/32".to_owned()],
        }),
        ..WebhookChannelConfig::default()
    }
}

fn send(text: &str, key: &str) -> ActionRequest {
    ActionRequest::new(MessageAction::Send, key)
        .with_target("ops")
        .with_message(text)
        .from_session("main", "agent:main:main")
}

#[tokio::test]
async fn a_signed_post_reaches_the_receiver_and_verifies() {
    let receiver = HttpReceiver::start().unwrap();
    let channel = WebhookChannel::new(
        &loopback_config(receiver.url("/hook")),
        Some("s3cret".into()),
    )
    .unwrap();
    let receipt = channel
        .perform(&send("deploy done ✓", "k-1"), &CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(receipt["ok"], json!(true));
    assert_eq!(receipt["messageId"], json!("r-1"));
    assert_eq!(receipt["status"], json!(200));
    let got = receiver.requests();
    assert_eq!(got.len(), 1);
    let req = &got[0];
    assert_eq!((req.method.as_str(), req.path.as_str()), ("POST", "/hook"));
    assert_eq!(req.header("content-type"), Some("application/json"));
    assert_eq!(req.header(IDEMPOTENCY_HEADER), Some("k-1"));
    let sig = req.header(SIGNATURE_HEADER).expect("signed");
    assert!(sig.starts_with("sha256="));
    assert!(verify_signature(b"s3cret", &req.body, sig));
    assert!(!verify_signature(b"wrong", &req.body, sig));
    let body: Value = serde_json::from_slice(&req.body).unwrap();
    assert_eq!(body["action"], json!("send"));
    assert_eq!(body["message"], json!("deploy done ✓"));
    assert_eq!(body["target"], json!("ops"));
    assert_eq!(body["idempotencyKey"], json!("k-1"));
    assert_eq!(body["agentId"], json!("main"));
}

#[tokio::test]
async fn without_an_allowlist_loopback_is_refused_before_connecting() {
    let receiver = HttpReceiver::start().unwrap();
    let mut config = loopback_config(receiver.url("/hook"));
    config.ssrf_allowlist = None;
    let err = WebhookChannel::new(&config, None).unwrap_err();
    assert_eq!(err.code(), ToolErrorCode::WebSsrfBlocked);
    assert!(
        err.to_string().contains("channels.webhook.ssrfAllowlist"),
        "{err}"
    );
    // A metadata address is refused whatever the allowlist says.
    let mut config = loopback_config("http://169.254.169.254/latest".into());
    config.ssrf_allowlist = Some(SsrfAllowlistConfig {
        hosts: Vec::new(),
        cidrs: vec!["169.254.0.0/16".into()],
    });
    let err = WebhookChannel::new(&config, None).unwrap_err();
    assert_eq!(err.code(), ToolErrorCode::WebMetadataBlocked);
    assert_eq!(receiver.count(), 0);
}

#[tokio::test]
async fn a_down_slow_or_refusing_receiver_is_a_clear_error() {
    // Down: nothing listens on the port any more.
    let gone = HttpReceiver::start().unwrap();
    let url = gone.url("/hook");
    drop(gone);
    std::thread::sleep(Duration::from_millis(50));
    let channel = WebhookChannel::new(&loopback_config(url), None).unwrap();
    let err = channel
        .perform(&send("x", "k-down"), &CancellationToken::new())
        .await
        .unwrap_err();
    assert_eq!(
        err.code(),
        ToolErrorCode::MessageChannelUnavailable,
        "{err}"
    );

    // Slow: the receiver stalls past the timeout.
    let slow = HttpReceiver::start().unwrap();
    slow.set_mode(ReceiverMode::Stall(Duration::from_secs(5)));
    let mut config = loopback_config(slow.url("/hook"));
    config.timeout_ms = Some(300);
    let channel = WebhookChannel::new(&config, None).unwrap();
    let started = std::time::Instant::now();
    let err = channel
        .perform(&send("x", "k-slow"), &CancellationToken::new())
        .await
        .unwrap_err();
    assert!(
        matches!(err, ChannelError::Timeout { ms: 300, .. }),
        "{err}"
    );
    assert_eq!(err.code(), ToolErrorCode::MessageTimeout);
    assert!(started.elapsed() < Duration::from_secs(3));

    // Refusing: an error status is quoted.
    let no = HttpReceiver::start().unwrap();
    no.set_mode(ReceiverMode::Status(503));
    let channel = WebhookChannel::new(&loopback_config(no.url("/hook")), None).unwrap();
    let err = channel
        .perform(&send("x", "k-503"), &CancellationToken::new())
        .await
        .unwrap_err();
    assert_eq!(err.code(), ToolErrorCode::MessageRejected);
    assert!(err.to_string().contains("503"), "{err}");
    assert!(err.to_string().contains("receiver says no"), "{err}");
}

#[tokio::test]
async fn an_unusable_config_names_its_key() {
    let err = WebhookChannel::new(&loopback_config("ftp://127.0.0.1/x".into()), None).unwrap_err();
    assert_eq!(err.code(), ToolErrorCode::MessageChannelConfig);
    assert!(
        err.to_string().starts_with("channels.webhook.url:"),
        "{err}"
    );
    let err = WebhookChannel::new(
        &loopback_config("http://127.0.0.1/x".into()),
        Some(String::new()),
    )
    .unwrap_err();
    assert!(
        err.to_string().starts_with("channels.webhook.secret:"),
        "{err}"
    );
    // Debug never shows the secret.
    let c = WebhookChannel::new(
        &loopback_config("http://127.0.0.1/x".into()),
        Some("hush".into()),
    )
    .unwrap();
    assert!(!format!("{c:?}").contains("hush"));
    let _ = Arc::new(c);
}
