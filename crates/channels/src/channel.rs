//! The `Channel` trait: what a chat channel declares (its capabilities)
//! and the one call that performs an action on it.

use serde_json::{Map, Value};
use talon_tool_catalog::CancellationToken;

use crate::action::MessageAction;
use crate::error::Result;

/// What a channel offers: the actions it performs (a subset of the closed
/// vocabulary) and the largest message text it takes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChannelCapabilities {
    /// The actions offered, in vocabulary order.
    pub actions: Vec<MessageAction>,
    /// The largest `message` text, in bytes (UTF-8).
    pub max_message_bytes: usize,
}

impl ChannelCapabilities {
    /// Capabilities offering `actions` with a `max_message_bytes` limit.
    pub fn new(actions: &[MessageAction], max_message_bytes: usize) -> Self {
        let mut actions = actions.to_vec();
        actions.sort();
        actions.dedup();
        ChannelCapabilities {
            actions,
            max_message_bytes,
        }
    }

    /// Whether `action` is offered.
    pub fn offers(&self, action: MessageAction) -> bool {
        self.actions.contains(&action)
    }
}

/// One action for a channel, after the `message` tool checked it: the
/// action is offered, the text is within the limit and the caller may use
/// the action.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ActionRequest {
    /// The action.
    pub action: MessageAction,
    /// The recipient or conversation (`#channel`, a nick, a chat id);
    /// `None` when the channel has a default.
    pub target: Option<String>,
    /// The text (send, reply, thread-reply, edit).
    pub message: Option<String>,
    /// The message replied to (reply).
    pub reply_to: Option<String>,
    /// The message acted on (react, edit, delete, read).
    pub message_id: Option<String>,
    /// The reaction (react).
    pub emoji: Option<String>,
    /// The most results (read, search).
    pub limit: Option<usize>,
    /// The key that makes a send happen at most once (the tool call id,
    /// scoped to agent and session); a channel that can pass it on (an
    /// HTTP header) does, so a receiver can de-duplicate too.
    pub idempotency_key: String,
    /// The agent that asked.
    pub agent_id: String,
    /// The session that asked.
    pub session_key: String,
    /// Every other parameter the call gave, for channels that read more.
    pub extra: Map<String, Value>,
}

impl ActionRequest {
    /// A request for `action` with nothing else set.
    pub fn new(action: MessageAction, idempotency_key: impl Into<String>) -> Self {
        ActionRequest {
            action,
            target: None,
            message: None,
            reply_to: None,
            message_id: None,
            emoji: None,
            limit: None,
            idempotency_key: idempotency_key.into(),
            agent_id: String::new(),
            session_key: String::new(),
            extra: Map::new(),
        }
    }

    /// Builder: the target.
    #[must_use]
    pub fn with_target(mut self, target: impl Into<String>) -> Self {
        self.target = Some(target.into());
        self
    }

    /// Builder: the text.
    #[must_use]
    pub fn with_message(mut self, message: impl Into<String>) -> Self {
        self.message = Some(message.into());
        self
    }

    /// Builder: the message replied to.
    #[must_use]
    pub fn with_reply_to(mut self, id: impl Into<String>) -> Self {
        self.reply_to = Some(id.into());
        self
    }

    /// Builder: the message acted on.
    #[must_use]
    pub fn with_message_id(mut self, id: impl Into<String>) -> Self {
        self.message_id = Some(id.into());
        self
    }

    /// Builder: the reaction.
    #[must_use]
    pub fn with_emoji(mut self, emoji: impl Into<String>) -> Self {
        self.emoji = Some(emoji.into());
        self
    }

    /// Builder: the most results.
    #[must_use]
    pub fn with_limit(mut self, limit: usize) -> Self {
        self.limit = Some(limit);
        self
    }

    /// Builder: the agent and session that asked.
    #[must_use]
    pub fn from_session(mut self, agent: impl Into<String>, session: impl Into<String>) -> Self {
        self.agent_id = agent.into();
        self.session_key = session.into();
        self
    }
}

/// A chat channel the `message` tool can use. Implement it to add a
/// channel: declare what it offers ([`Channel::capabilities`]) and perform
/// the actions. The tool checks the action, the size limit and the
/// caller before [`Channel::perform`] is called, and records a send-like
/// action in the send ledger first, so `perform` is called at most once
/// per idempotency key.
#[async_trait::async_trait]
pub trait Channel: Send + Sync + std::fmt::Debug {
    /// The channel id (`webhook`, `irc`, ...): what the call's `channel`
    /// names.
    fn id(&self) -> &str;

    /// What it offers.
    fn capabilities(&self) -> &ChannelCapabilities;

    /// Perform one checked action. The answer is the result's `details`
    /// (a send's receipt: `messageId`, `target`, ...). Implementations
    /// return [`crate::ChannelError::Aborted`] once `abort` fires.
    async fn perform(&self, request: &ActionRequest, abort: &CancellationToken) -> Result<Value>;
}
