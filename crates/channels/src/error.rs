//! `ChannelError`: why a channel action failed, with a stable
//! `message.*` tool error code.

use talon_tool_catalog::{ToolError, ToolErrorCode};

/// Why a `message` action failed. Each variant has one
/// [`ToolErrorCode`] ([`ChannelError::code`]); callers match on the
/// variant or the code, never on the text.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ChannelError {
    /// The action is not in OpenClaw's vocabulary.
    #[error(
        "unknown message action `{action}`; this channel offers: {}",
        offered.join(", ")
    )]
    UnknownAction {
        /// What the call said.
        action: String,
        /// What the channel offers.
        offered: Vec<&'static str>,
    },
    /// The action exists but the channel does not offer it.
    #[error(
        "channel `{channel}` does not offer `{action}`; it offers: {}",
        offered.join(", ")
    )]
    UnsupportedAction {
        /// The channel id.
        channel: String,
        /// The action.
        action: &'static str,
        /// What the channel offers.
        offered: Vec<&'static str>,
    },
    /// No channel of this id is configured.
    #[error("no channel `{channel}` is configured; configured: {}", if configured.is_empty() { "none (set channels.webhook or channels.irc)".to_owned() } else { configured.join(", ") })]
    UnknownChannel {
        /// The id asked for.
        channel: String,
        /// The configured ids.
        configured: Vec<String>,
    },
    /// The text is over the channel's limit.
    #[error(
        "the message is {bytes} bytes; channel `{channel}` takes at most {limit} (split it, or raise channels.{channel}.maxMessageBytes)"
    )]
    TooLarge {
        /// The channel id.
        channel: String,
        /// The text's size in bytes.
        bytes: usize,
        /// The limit.
        limit: usize,
    },
    /// A parameter is missing or wrong.
    #[error("{message}")]
    Input {
        /// The parameter.
        param: &'static str,
        /// What is wrong and how to fix it.
        message: String,
    },
    /// The caller is known not to be the owner and the action needs one.
    #[error("Owner required for message.{action}.")]
    OwnerRequired {
        /// The action.
        action: &'static str,
    },
    /// The channel's configuration cannot be used.
    #[error("{key}: {message}")]
    Config {
        /// The config key at fault.
        key: String,
        /// What is wrong and how to fix it.
        message: String,
    },
    /// The egress guard refused the destination.
    #[error("{0}")]
    Blocked(talon_egress::SsrfBlocked),
    /// The channel cannot be reached.
    #[error("channel `{channel}` is unavailable: {message}")]
    Unavailable {
        /// The channel id.
        channel: String,
        /// What happened (connection refused, closed, ...).
        message: String,
    },
    /// The connection failed after the message was handed over (a reset
    /// before the answer): it may have been delivered, so the send ledger
    /// treats it like a timeout and a repeat is refused.
    #[error(
        "channel `{channel}` failed after the message was sent, so it may have been delivered: {message}"
    )]
    LostAfterSend {
        /// The channel id.
        channel: String,
        /// What happened.
        message: String,
    },
    /// The channel did not answer in time.
    #[error("channel `{channel}` did not answer within {ms} ms ({what})")]
    Timeout {
        /// The channel id.
        channel: String,
        /// The limit.
        ms: u64,
        /// What was waited for.
        what: &'static str,
    },
    /// The channel refused the message.
    #[error("channel `{channel}` refused the message: {message}")]
    Rejected {
        /// The channel id.
        channel: String,
        /// The refusal (HTTP status and the start of the body, an IRC
        /// error numeric).
        message: String,
    },
    /// A send with this idempotency key was started before and not known
    /// to have finished.
    #[error(
        "a send with idempotency key `{key}` was started at {started_at_ms} (ms since the epoch) and the process stopped before it was known to finish; it is not sent again because it may have gone out (check the channel, then send with a new key if it did not)"
    )]
    Interrupted {
        /// The idempotency key.
        key: String,
        /// When the first attempt was recorded.
        started_at_ms: u64,
    },
    /// The send ledger failed; nothing was sent.
    #[error("the send ledger {path} failed, so nothing was sent: {message}")]
    Ledger {
        /// The ledger file.
        path: String,
        /// What failed.
        message: String,
    },
    /// The call was cancelled.
    #[error("the message action was cancelled")]
    Aborted,
}

impl ChannelError {
    /// The stable tool error code.
    pub fn code(&self) -> ToolErrorCode {
        match self {
            ChannelError::UnknownAction { .. } => ToolErrorCode::MessageUnknownAction,
            ChannelError::UnsupportedAction { .. } => ToolErrorCode::MessageUnsupportedAction,
            ChannelError::UnknownChannel { .. } => ToolErrorCode::MessageUnknownChannel,
            ChannelError::TooLarge { .. } => ToolErrorCode::MessageTooLarge,
            ChannelError::Input { .. } => ToolErrorCode::InputInvalid,
            ChannelError::OwnerRequired { .. } => ToolErrorCode::MessageOwnerRequired,
            ChannelError::Config { .. } => ToolErrorCode::MessageChannelConfig,
            ChannelError::Blocked(b) => match b.kind {
                talon_egress::BlockKind::Metadata => ToolErrorCode::WebMetadataBlocked,
                _ => ToolErrorCode::WebSsrfBlocked,
            },
            ChannelError::Unavailable { .. } | ChannelError::LostAfterSend { .. } => {
                ToolErrorCode::MessageChannelUnavailable
            }
            ChannelError::Timeout { .. } => ToolErrorCode::MessageTimeout,
            ChannelError::Rejected { .. } => ToolErrorCode::MessageRejected,
            ChannelError::Interrupted { .. } => ToolErrorCode::MessageInterrupted,
            ChannelError::Ledger { .. } => ToolErrorCode::MessageLedgerFailed,
            ChannelError::Aborted => ToolErrorCode::Aborted,
        }
    }

    /// The parameter at fault, for an input error.
    pub fn param(&self) -> Option<&'static str> {
        match self {
            ChannelError::UnknownAction { .. } | ChannelError::UnsupportedAction { .. } => {
                Some("action")
            }
            ChannelError::UnknownChannel { .. } => Some("channel"),
            ChannelError::TooLarge { .. } => Some("message"),
            ChannelError::Input { param, .. } => Some(param),
            _ => None,
        }
    }

    /// The tool error the model sees.
    pub fn into_tool_error(self) -> ToolError {
        let code = self.code();
        let param = self.param();
        let err = ToolError::new(code, self.to_string());
        match param {
            Some(p) => err.with_param(p),
            None => err,
        }
    }
}

impl From<ChannelError> for ToolError {
    fn from(e: ChannelError) -> Self {
        e.into_tool_error()
    }
}

/// `Result` with [`ChannelError`].
pub type Result<T, E = ChannelError> = std::result::Result<T, E>;
