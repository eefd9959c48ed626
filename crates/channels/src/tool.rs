//! The `message` tool over a [`ChannelSet`]: checks the action against
//! the closed vocabulary and the channel's capabilities, the caller
//! against the owner-only actions, the text against the channel's limit,
//! writes a send ahead in the [`SendLedger`], then performs it.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use talon_config::ChannelConnections;
use talon_config::secrets::SecretStore;
use talon_tool_catalog::params::{
    Bounds, StringOpts, read_bool, read_positive_integer, read_string, refuse_unknown_keys,
};
use talon_tool_catalog::{
    CancellationToken, Tool, ToolCall, ToolContext, ToolError, ToolResult, ToolSpec, json_result,
};

use crate::action::MessageAction;
use crate::channel::{ActionRequest, Channel};
use crate::error::{ChannelError, Result};
use crate::irc::IrcChannel;
use crate::ledger::{Begin, SendEnd, SendLedger};
use crate::webhook::WebhookChannel;

/// Test-only: milliseconds the tool waits between writing a send ahead
/// in the ledger and sending it, so a test can kill the process in that
/// window. Read once, when the tool is built; never set it in production.
pub const TEST_PAUSE_ENV: &str = "TALON_TEST_MESSAGE_PAUSE_MS";

/// The keys the tool reads; any other key is refused (an attachment, a
/// poll or a broadcast list silently ignored would make a different
/// message than the model meant).
const KNOWN_KEYS: &[&str] = &[
    "action",
    "channel",
    "target",
    "message",
    "replyTo",
    "messageId",
    "emoji",
    "limit",
    "dryRun",
];

/// A channel, or why it could not be built.
type Built = std::result::Result<Arc<dyn Channel>, Arc<ChannelError>>;

/// The configured channels: each built, or why it could not be (a call
/// to it fails with that error).
#[derive(Debug, Default)]
pub struct ChannelSet {
    channels: Vec<(String, Built)>,
}

impl ChannelSet {
    /// An empty set.
    pub fn new() -> Self {
        ChannelSet::default()
    }

    /// Builder: add a channel (an embedder's own, or a built-in one).
    pub fn with(mut self, channel: Arc<dyn Channel>) -> Self {
        let id = channel.id().to_owned();
        self.channels.retain(|(c, _)| *c != id);
        self.channels.push((id, Ok(channel)));
        self
    }

    /// The channels `config` enables (`channels.webhook`, `channels.irc`),
    /// with `${secret:NAME}` / `${VAR}` in `secret` / `password` looked up
    /// in `secrets` and the environment. A channel whose settings cannot be
    /// used is kept as its error.
    pub fn from_config(config: &ChannelConnections, secrets: &SecretStore) -> Self {
        let mut set = ChannelSet::new();
        let expand = |key: &str, v: &Option<String>| -> Result<Option<String>> {
            v.as_deref()
                .map(|raw| {
                    talon_config::sections::mcp::expand_env_refs(
                        raw,
                        secrets.lookup(|n| std::env::var(n).ok()),
                    )
                    .map_err(|e| ChannelError::Config {
                        key: key.to_owned(),
                        message: format!("{e} (secrets live in <state dir>/secrets.json)"),
                    })
                })
                .transpose()
        };
        if let Some(w) = config.webhook.as_ref().filter(|w| w.enabled != Some(false)) {
            let built = expand("channels.webhook.secret", &w.secret)
                .and_then(|s| WebhookChannel::new(w, s))
                .map(|c| Arc::new(c) as Arc<dyn Channel>);
            set.channels
                .push(("webhook".to_owned(), built.map_err(Arc::new)));
        }
        if let Some(i) = config.irc.as_ref().filter(|i| i.enabled != Some(false)) {
            let built = expand("channels.irc.password", &i.password)
                .and_then(|p| IrcChannel::new(i, p))
                .map(|c| Arc::new(c) as Arc<dyn Channel>);
            set.channels
                .push(("irc".to_owned(), built.map_err(Arc::new)));
        }
        set
    }

    /// The configured ids, in order.
    pub fn ids(&self) -> Vec<String> {
        self.channels.iter().map(|(id, _)| id.clone()).collect()
    }

    /// Whether no channel is configured.
    pub fn is_empty(&self) -> bool {
        self.channels.is_empty()
    }

    /// Every action some working channel offers, in vocabulary order.
    pub fn offered(&self) -> Vec<MessageAction> {
        let mut all: Vec<MessageAction> = self
            .channels
            .iter()
            .filter_map(|(_, c)| c.as_ref().ok())
            .flat_map(|c| c.capabilities().actions.clone())
            .collect();
        all.sort();
        all.dedup();
        all
    }

    fn get(&self, id: Option<&str>) -> Result<Arc<dyn Channel>> {
        let found = match id {
            Some(id) => self
                .channels
                .iter()
                .find(|(c, _)| c.eq_ignore_ascii_case(id)),
            None if self.channels.len() == 1 => self.channels.first(),
            None if self.channels.is_empty() => None,
            None => {
                return Err(ChannelError::Input {
                    param: "channel",
                    message: format!(
                        "channel required: more than one is configured ({})",
                        self.ids().join(", ")
                    ),
                });
            }
        };
        match found {
            Some((_, Ok(c))) => Ok(Arc::clone(c)),
            Some((_, Err(e))) => Err(ChannelError::Config {
                key: match e.as_ref() {
                    ChannelError::Config { key, .. } => key.clone(),
                    _ => "channels".to_owned(),
                },
                message: match e.as_ref() {
                    ChannelError::Config { message, .. } => message.clone(),
                    other => other.to_string(),
                },
            }),
            None => Err(ChannelError::UnknownChannel {
                channel: id.unwrap_or_default().to_owned(),
                configured: self.ids(),
            }),
        }
    }
}

/// The spec of `message`: the catalog row, with the `action` enum narrowed
/// to what `channels` offer (OpenClaw builds it from the channels'
/// capabilities too; `send` when none is configured).
pub fn message_spec(channels: &ChannelSet) -> ToolSpec {
    let mut spec = ToolSpec::core("message").unwrap_or_else(|| {
        ToolSpec::new(
            "message",
            talon_tool_catalog::ToolFamily::Core {
                section: talon_tool_catalog::Section::Messaging,
            },
        )
    });
    let mut offered: Vec<&str> = channels.offered().iter().map(|a| a.as_str()).collect();
    if offered.is_empty() {
        offered.push("send");
    }
    if let Some(props) = spec
        .parameters
        .get_mut("properties")
        .and_then(Value::as_object_mut)
    {
        props.retain(|k, _| KNOWN_KEYS.contains(&k.as_str()));
        if let Some(action) = props.get_mut("action") {
            action["enum"] = json!(offered);
        }
        if let Some(channel) = props.get_mut("channel") {
            channel["description"] = json!(format!(
                "Channel to use: {}",
                if channels.is_empty() {
                    "none is configured".to_owned()
                } else {
                    channels.ids().join(", ")
                }
            ));
        }
    }
    spec
}

/// The `message` tool.
#[derive(Debug, Clone)]
pub struct MessageTool {
    spec: ToolSpec,
    channels: Arc<ChannelSet>,
    ledger: Option<Arc<SendLedger>>,
    pause: Option<Duration>,
}

impl MessageTool {
    /// The tool over `channels`; with a `ledger`, send-like actions are
    /// written ahead and de-duplicated by idempotency key.
    pub fn new(channels: Arc<ChannelSet>, ledger: Option<Arc<SendLedger>>) -> Self {
        let pause = std::env::var(TEST_PAUSE_ENV)
            .ok()
            .and_then(|v| v.parse::<u64>().ok())
            .map(Duration::from_millis);
        MessageTool {
            spec: message_spec(&channels),
            channels,
            ledger,
            pause,
        }
    }

    /// The idempotency key of a call: agent, session and call id.
    pub fn idempotency_key(agent: &str, session: &str, call_id: &str) -> String {
        let digest = talon_canonical_json::hash_json(&json!([agent, session, call_id]));
        format!("msg-{}", digest.chars().take(32).collect::<String>())
    }

    async fn run(
        &self,
        call: &ToolCall,
        ctx: &ToolContext,
        abort: &CancellationToken,
    ) -> std::result::Result<Value, ToolError> {
        let p = &call.params;
        refuse_unknown_keys(
            "message",
            p,
            KNOWN_KEYS,
            &[("message_id", "messageId"), ("reply_to", "replyTo")],
        )?;
        let offered = self.channels.offered();
        let name = read_string(p, "action", StringOpts::required())?.unwrap_or_default();
        let action = MessageAction::parse(&name, &offered)?;
        let channel_id = read_string(p, "channel", StringOpts::default())?;
        let channel = self.channels.get(channel_id.as_deref())?;
        let caps = channel.capabilities();
        if !caps.offers(action) {
            return Err(ChannelError::UnsupportedAction {
                channel: channel.id().to_owned(),
                action: action.as_str(),
                offered: caps.actions.iter().map(|a| a.as_str()).collect(),
            }
            .into());
        }
        if ctx.sender_is_owner == Some(false) && !action.non_owner_allowed() {
            return Err(ChannelError::OwnerRequired {
                action: action.as_str(),
            }
            .into());
        }
        let message = read_string(p, "message", StringOpts::default().untrimmed())?;
        if let Some(m) = &message
            && m.len() > caps.max_message_bytes
        {
            return Err(ChannelError::TooLarge {
                channel: channel.id().to_owned(),
                bytes: m.len(),
                limit: caps.max_message_bytes,
            }
            .into());
        }
        let needs_text = matches!(
            action,
            MessageAction::Send
                | MessageAction::Reply
                | MessageAction::ThreadReply
                | MessageAction::SendWithEffect
                | MessageAction::Edit
        );
        if needs_text && message.is_none() {
            return Err(ToolError::input(
                "message",
                format!("message required for {action} (the text to send)"),
            ));
        }
        let mut request = ActionRequest::new(
            action,
            Self::idempotency_key(&ctx.agent_id, &ctx.session_key, &call.id),
        )
        .from_session(&ctx.agent_id, &ctx.session_key);
        request.target = read_string(p, "target", StringOpts::default())?;
        request.message = message;
        request.reply_to = read_string(p, "replyTo", StringOpts::default())?;
        request.message_id = read_string(p, "messageId", StringOpts::default())?;
        request.emoji = read_string(p, "emoji", StringOpts::default())?;
        if action == MessageAction::React && request.emoji.is_none() {
            return Err(ToolError::input("emoji", "emoji required for react"));
        }
        request.limit = read_positive_integer(p, "limit", Bounds::default())?
            .map(|n| usize::try_from(n).unwrap_or(usize::MAX));
        if read_bool(p, "dryRun")? == Some(true) {
            return Ok(json!({
                "ok": true,
                "dryRun": true,
                "channel": channel.id(),
                "action": action.as_str(),
                "target": request.target,
            }));
        }
        let ledger = self.ledger.as_ref().filter(|_| action.is_send_like());
        if let Some(ledger) = ledger
            && let Begin::AlreadySent(mut receipt) =
                ledger.begin(&request.idempotency_key, channel.id(), action.as_str())?
        {
            if let Value::Object(r) = &mut receipt {
                r.insert("deduplicated".into(), json!(true));
            }
            return Ok(receipt);
        }
        if let Some(pause) = self.pause {
            tracing::warn!(target: "talon::channels", ms = pause.as_millis() as u64, "{TEST_PAUSE_ENV} is set: pausing between the ledger record and the send (test only)");
            tokio::time::sleep(pause).await;
        }
        let outcome = channel.perform(&request, abort).await;
        if let Some(ledger) = ledger {
            let end = match &outcome {
                Ok(receipt) => SendEnd::Sent(receipt.clone()),
                Err(
                    ChannelError::Timeout { .. }
                    | ChannelError::Aborted
                    | ChannelError::LostAfterSend { .. },
                ) => SendEnd::Unknown,
                Err(_) => SendEnd::Failed,
            };
            if let Err(e) = ledger.finish(&request.idempotency_key, &end) {
                tracing::error!(target: "talon::channels", error = %e, "the send ledger could not record how a send ended");
            }
        }
        let mut receipt = outcome?;
        if let Value::Object(r) = &mut receipt {
            r.insert("idempotencyKey".into(), json!(request.idempotency_key));
        }
        Ok(receipt)
    }
}

#[async_trait::async_trait]
impl Tool for MessageTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    async fn execute(
        &self,
        call: &ToolCall,
        ctx: &ToolContext,
        abort: &CancellationToken,
    ) -> std::result::Result<ToolResult, ToolError> {
        let details = self.run(call, ctx, abort).await.map_err(|e| {
            if e.is_aborted() {
                ToolError::aborted(talon_tool_catalog::ABORTED_REASON)
            } else {
                e
            }
        })?;
        Ok(json_result(details))
    }
}
