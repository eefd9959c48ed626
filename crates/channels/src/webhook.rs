//! The webhook channel: each action is one HTTP POST of a JSON body to
//! the configured URL, through `talon-egress`'s guard (the same SSRF rules
//! as `web_fetch`), signed with HMAC-SHA256 when a secret is configured.
//!
//! Headers: `Content-Type: application/json`,
//! `X-Talon-Signature: sha256=<hex HMAC-SHA256(secret, body)>` (with a
//! secret), `X-Talon-Idempotency-Key: <key>` (a receiver can drop a
//! repeat). The body is canonical JSON (sorted keys), so what was signed
//! is byte for byte what was sent.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Map, Value, json};
use talon_config::WebhookChannelConfig;
use talon_config::channel_connections::{
    DEFAULT_WEBHOOK_MAX_MESSAGE_BYTES, DEFAULT_WEBHOOK_TIMEOUT_MS,
};
use talon_egress::{EgressGuard, GuardedClient, HttpOptions, SsrfPolicy, SystemResolver};
use talon_tool_catalog::CancellationToken;

use crate::action::MessageAction;
use crate::channel::{ActionRequest, Channel, ChannelCapabilities};
use crate::error::{ChannelError, Result};
use crate::hmac::signature_header;

/// The signature header.
pub const SIGNATURE_HEADER: &str = "x-talon-signature";
/// The idempotency key header.
pub const IDEMPOTENCY_HEADER: &str = "x-talon-idempotency-key";
/// The id of the webhook channel.
pub const WEBHOOK_CHANNEL_ID: &str = "webhook";

/// The actions a webhook offers: it delivers, it cannot read back.
const WEBHOOK_ACTIONS: &[MessageAction] = &[
    MessageAction::Send,
    MessageAction::Reply,
    MessageAction::React,
    MessageAction::ThreadReply,
];

/// The most of a refusal's body quoted in the error.
const QUOTED_BODY: usize = 300;

/// The webhook channel.
pub struct WebhookChannel {
    url: url::Url,
    secret: Option<Vec<u8>>,
    timeout: Duration,
    client: GuardedClient,
    caps: ChannelCapabilities,
}

impl std::fmt::Debug for WebhookChannel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the secret.
        f.debug_struct("WebhookChannel")
            .field("url", &self.url.as_str())
            .field("signed", &self.secret.is_some())
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

impl WebhookChannel {
    /// The channel for `config`; `secret` is the signing key already
    /// looked up (`${secret:NAME}` expanded by the caller, see
    /// [`crate::ChannelSet::from_config`]).
    pub fn new(config: &WebhookChannelConfig, secret: Option<String>) -> Result<Self> {
        Self::with_resolver(config, secret, Arc::new(SystemResolver))
    }

    /// [`Self::new`] with a given name resolver (tests).
    pub fn with_resolver(
        config: &WebhookChannelConfig,
        secret: Option<String>,
        resolver: Arc<dyn talon_egress::HostResolver>,
    ) -> Result<Self> {
        let bad = |key: &str, message: String| ChannelError::Config {
            key: format!("channels.webhook.{key}"),
            message,
        };
        let url = url::Url::parse(&config.url)
            .map_err(|e| bad("url", format!("`{}` is not a URL: {e}", config.url)))?;
        if !matches!(url.scheme(), "http" | "https") {
            return Err(bad(
                "url",
                format!("`{}` must be an http or https URL", config.url),
            ));
        }
        let policy = match &config.ssrf_allowlist {
            Some(allow) => SsrfPolicy::from_config_at(allow, "channels.webhook.ssrfAllowlist")
                .map_err(|e| bad("ssrfAllowlist", e.message))?,
            None => SsrfPolicy::strict(),
        };
        let guard = EgressGuard::new(Arc::new(policy), resolver)
            .with_opt_in("add the host or its CIDR to channels.webhook.ssrfAllowlist");
        // Refused before anything connects (an IP-literal URL too).
        guard.check_url(&url).map_err(ChannelError::Blocked)?;
        let client = guard
            .http_client(HttpOptions {
                user_agent: Some(format!("talon/{}", env!("CARGO_PKG_VERSION"))),
                ..HttpOptions::default()
            })
            .map_err(|e| bad("url", format!("the HTTP client cannot be built: {e}")))?;
        if secret.as_deref().is_some_and(str::is_empty) {
            return Err(bad(
                "secret",
                "is empty; remove it to send unsigned, or name a secret".to_owned(),
            ));
        }
        let timeout_ms = config.timeout_ms.unwrap_or(DEFAULT_WEBHOOK_TIMEOUT_MS);
        if timeout_ms == 0 {
            return Err(bad("timeoutMs", "must be at least 1".to_owned()));
        }
        Ok(WebhookChannel {
            url,
            secret: secret.map(String::into_bytes),
            timeout: Duration::from_millis(timeout_ms),
            client,
            caps: ChannelCapabilities::new(
                WEBHOOK_ACTIONS,
                config
                    .max_message_bytes
                    .unwrap_or(DEFAULT_WEBHOOK_MAX_MESSAGE_BYTES),
            ),
        })
    }

    /// The body POSTed for `request`, as sent (canonical JSON).
    pub fn body(request: &ActionRequest, sent_at_ms: u64) -> Vec<u8> {
        let mut body = Map::new();
        body.insert("action".into(), json!(request.action.as_str()));
        body.insert("idempotencyKey".into(), json!(request.idempotency_key));
        body.insert("agentId".into(), json!(request.agent_id));
        body.insert("sessionKey".into(), json!(request.session_key));
        body.insert("sentAt".into(), json!(sent_at_ms));
        let optional = [
            ("target", &request.target),
            ("message", &request.message),
            ("replyTo", &request.reply_to),
            ("messageId", &request.message_id),
            ("emoji", &request.emoji),
        ];
        for (key, value) in optional {
            if let Some(v) = value {
                body.insert(key.into(), json!(v));
            }
        }
        talon_canonical_json::canonical_json(&Value::Object(body)).into_bytes()
    }

    fn unavailable(&self, message: String) -> ChannelError {
        ChannelError::Unavailable {
            channel: WEBHOOK_CHANNEL_ID.to_owned(),
            message,
        }
    }

    fn classify(&self, e: &reqwest::Error) -> ChannelError {
        if let Some(blocked) = talon_egress::blocked_in(e) {
            return ChannelError::Blocked(blocked);
        }
        if e.is_timeout() {
            return ChannelError::Timeout {
                channel: WEBHOOK_CHANNEL_ID.to_owned(),
                ms: u64::try_from(self.timeout.as_millis()).unwrap_or(u64::MAX),
                what: "the receiver's answer",
            };
        }
        let mut why = e.to_string();
        let mut source = std::error::Error::source(e);
        while let Some(s) = source {
            why = format!("{why}: {s}");
            source = s.source();
        }
        if e.is_connect() {
            // Nothing was sent: the connection never opened.
            return self.unavailable(format!("POST {}: {why}", self.url));
        }
        ChannelError::LostAfterSend {
            channel: WEBHOOK_CHANNEL_ID.to_owned(),
            message: format!("POST {}: {why}", self.url),
        }
    }

    async fn post(&self, body: Vec<u8>, key: &str) -> Result<Value> {
        let mut req = self
            .client
            .post(self.url.clone())
            .map_err(ChannelError::Blocked)?
            .timeout(self.timeout)
            .header("content-type", "application/json")
            .header(IDEMPOTENCY_HEADER, key);
        if let Some(secret) = &self.secret {
            req = req.header(SIGNATURE_HEADER, signature_header(secret, &body));
        }
        let resp = req.body(body).send().await.map_err(|e| self.classify(&e))?;
        let status = resp.status();
        let bytes = resp.bytes().await.map_err(|e| self.classify(&e))?;
        if !status.is_success() {
            let quoted = String::from_utf8_lossy(&bytes[..bytes.len().min(QUOTED_BODY)]);
            return Err(ChannelError::Rejected {
                channel: WEBHOOK_CHANNEL_ID.to_owned(),
                message: format!("POST {} answered HTTP {status}: {quoted}", self.url),
            });
        }
        // A receiver may answer its own id; anything else is fine too.
        let answered: Option<Value> = serde_json::from_slice(&bytes).ok();
        let id = answered
            .as_ref()
            .and_then(|v| v.get("messageId").or_else(|| v.get("id")))
            .and_then(|v| match v {
                Value::String(s) => Some(s.clone()),
                Value::Number(n) => Some(n.to_string()),
                _ => None,
            })
            .unwrap_or_else(|| key.to_owned());
        Ok(json!({ "status": status.as_u16(), "messageId": id }))
    }
}

#[async_trait::async_trait]
impl Channel for WebhookChannel {
    fn id(&self) -> &str {
        WEBHOOK_CHANNEL_ID
    }

    fn capabilities(&self) -> &ChannelCapabilities {
        &self.caps
    }

    async fn perform(&self, request: &ActionRequest, abort: &CancellationToken) -> Result<Value> {
        let body = Self::body(request, now_ms());
        let answer = tokio::select! {
            r = self.post(body, &request.idempotency_key) => r?,
            () = abort.cancelled() => return Err(ChannelError::Aborted),
        };
        let mut details = json!({
            "ok": true,
            "channel": WEBHOOK_CHANNEL_ID,
            "action": request.action.as_str(),
        });
        if let (Value::Object(d), Value::Object(a)) = (&mut details, answer) {
            d.extend(a);
            if let Some(t) = &request.target {
                d.insert("target".into(), json!(t));
            }
        }
        Ok(details)
    }
}

/// Milliseconds since the Unix epoch.
pub(crate) fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
        .unwrap_or(0)
}
