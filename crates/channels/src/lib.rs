//! Talon's chat channels and the `message` tool.
//!
//! - [`Channel`]: what an embedder implements to add a channel: an id,
//!   [`ChannelCapabilities`] (which [`MessageAction`]s of OpenClaw's closed
//!   vocabulary, [`CHANNEL_MESSAGE_ACTION_NAMES`], it offers, and the
//!   largest message it takes) and one [`Channel::perform`] call.
//! - [`WebhookChannel`]: a JSON POST to `channels.webhook.url` through
//!   `talon-egress`'s guard (the SSRF rules of `web_fetch`), signed with
//!   HMAC-SHA256 ([`signature_header`]) under `channels.webhook.secret`.
//! - [`IrcChannel`]: one IRC client connection (`channels.irc`): send,
//!   reply, read recent, react (a CTCP ACTION). Server lines are parsed by
//!   [`irc::line::parse_line`], bounded and fuzzed.
//! - [`SendLedger`]: each send-like action is written ahead under its
//!   idempotency key and marked when it ends, so a crash or a retry never
//!   sends twice (a send that may have gone out is `message.interrupted`).
//! - [`MessageTool`] over a [`ChannelSet`]: unknown action
//!   (`message.unknown_action`), action the channel does not offer
//!   (`message.unsupported_action`), owner-only action for a caller known
//!   not to be the owner (`message.owner_required`), text over the limit
//!   (`message.too_large`), channel down or slow
//!   (`message.channel_unavailable`, `message.timeout`): each a typed
//!   [`ChannelError`] with its tool error code.
//!
//! ```
//! use talon_channels::{MessageAction, NON_OWNER_ACTIONS};
//!
//! assert_eq!(MessageAction::from_name("thread-reply"), Some(MessageAction::ThreadReply));
//! assert!(MessageAction::from_name("teleport").is_none());
//! assert!(NON_OWNER_ACTIONS.contains(&MessageAction::Reply));
//! let err = MessageAction::parse("teleport", &[MessageAction::Send]).unwrap_err();
//! assert_eq!(err.code().as_str(), "message.unknown_action");
//! ```
#![deny(missing_docs)]

pub use crate::action::{CHANNEL_MESSAGE_ACTION_NAMES, MessageAction, NON_OWNER_ACTIONS};
pub use crate::channel::{ActionRequest, Channel, ChannelCapabilities};
pub use crate::error::{ChannelError, Result};
pub use crate::hmac::{hmac_sha256, signature_header, verify_signature};
pub use crate::irc::{IRC_CHANNEL_ID, IrcChannel, IrcEntry};
pub use crate::ledger::{Begin, LEDGER_FILE, SendEnd, SendLedger};
pub use crate::tool::{ChannelSet, MessageTool, TEST_PAUSE_ENV, message_spec};
pub use crate::webhook::{
    IDEMPOTENCY_HEADER, SIGNATURE_HEADER, WEBHOOK_CHANNEL_ID, WebhookChannel,
};

mod action;
mod channel;
mod error;
mod hmac;
pub mod irc;
mod ledger;
mod tool;
mod webhook;
