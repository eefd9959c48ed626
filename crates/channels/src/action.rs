//! OpenClaw's closed `message` action vocabulary
//! (`CHANNEL_MESSAGE_ACTION_NAMES`, `src/channels/plugins/message-action-names.ts`):
//! a channel declares which of these it offers and nothing else exists.
//! Adding a name is a change here, never a run-time registration.

use std::fmt;

use crate::error::ChannelError;

/// Declares the vocabulary once: variant and wire name, in OpenClaw's
/// order.
macro_rules! actions {
    ($( $variant:ident = $wire:literal, )*) => {
        /// One action of the `message` tool (OpenClaw's
        /// `ChannelMessageActionName`).
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[non_exhaustive]
        pub enum MessageAction {
            $(
                #[doc = concat!("`", $wire, "`")]
                $variant,
            )*
        }

        /// Every action name, in OpenClaw's order.
        pub const CHANNEL_MESSAGE_ACTION_NAMES: &[&str] = &[ $( $wire, )* ];

        impl MessageAction {
            /// Every action, in OpenClaw's order.
            pub const ALL: &'static [MessageAction] = &[ $( MessageAction::$variant, )* ];

            /// The wire name (`send`, `thread-reply`, ...).
            pub fn as_str(self) -> &'static str {
                match self {
                    $( MessageAction::$variant => $wire, )*
                }
            }

            /// The action named `name` exactly (names are case-sensitive,
            /// as in OpenClaw), or `None`.
            pub fn from_name(name: &str) -> Option<MessageAction> {
                match name {
                    $( $wire => Some(MessageAction::$variant), )*
                    _ => None,
                }
            }
        }
    };
}

actions! {
    Send = "send",
    Broadcast = "broadcast",
    Poll = "poll",
    PollVote = "poll-vote",
    React = "react",
    Reactions = "reactions",
    Read = "read",
    Edit = "edit",
    Unsend = "unsend",
    Reply = "reply",
    SendWithEffect = "sendWithEffect",
    RenameGroup = "renameGroup",
    SetGroupIcon = "setGroupIcon",
    AddParticipant = "addParticipant",
    RemoveParticipant = "removeParticipant",
    LeaveGroup = "leaveGroup",
    SendAttachment = "sendAttachment",
    Delete = "delete",
    Pin = "pin",
    Unpin = "unpin",
    ListPins = "list-pins",
    Permissions = "permissions",
    ThreadCreate = "thread-create",
    ThreadList = "thread-list",
    ThreadReply = "thread-reply",
    Search = "search",
    Sticker = "sticker",
    StickerSearch = "sticker-search",
    MemberInfo = "member-info",
    RoleInfo = "role-info",
    EmojiList = "emoji-list",
    EmojiUpload = "emoji-upload",
    StickerUpload = "sticker-upload",
    RoleAdd = "role-add",
    RoleRemove = "role-remove",
    ChannelInfo = "channel-info",
    ChannelList = "channel-list",
    ChannelCreate = "channel-create",
    ChannelEdit = "channel-edit",
    ChannelDelete = "channel-delete",
    ChannelMove = "channel-move",
    CategoryCreate = "category-create",
    CategoryEdit = "category-edit",
    CategoryDelete = "category-delete",
    TopicCreate = "topic-create",
    TopicEdit = "topic-edit",
    VoiceStatus = "voice-status",
    EventList = "event-list",
    EventCreate = "event-create",
    Timeout = "timeout",
    Kick = "kick",
    Ban = "ban",
    XFollow = "x-follow",
    XUnfollow = "x-unfollow",
    XDm = "x-dm",
    XLike = "x-like",
    XUnlike = "x-unlike",
    XRepost = "x-repost",
    XUnrepost = "x-unrepost",
    XReply = "x-reply",
    XPost = "x-post",
    XQuote = "x-quote",
    XTimeline = "x-timeline",
    XUserInfo = "x-user-info",
    XMe = "x-me",
    XSearch = "x-search",
    XTweetInfo = "x-tweet-info",
    SetProfile = "set-profile",
    SetPresence = "set-presence",
    DownloadFile = "download-file",
}

/// The actions a sender who is known not to be the owner may still use:
/// conversational ones in the conversation at hand (seed 001's
/// maintainer set: `react`, `reply`, `thread-create`, `thread-reply`).
/// Every other action (a `send` to any target, `broadcast`, moderation,
/// group and channel administration, ...) needs the owner.
pub const NON_OWNER_ACTIONS: &[MessageAction] = &[
    MessageAction::React,
    MessageAction::Reply,
    MessageAction::ThreadCreate,
    MessageAction::ThreadReply,
];

impl MessageAction {
    /// The action named `name`, or a `message.unknown_action` error that
    /// lists what the channel offers (`offered`).
    pub fn parse(name: &str, offered: &[MessageAction]) -> Result<MessageAction, ChannelError> {
        MessageAction::from_name(name).ok_or_else(|| ChannelError::UnknownAction {
            action: name.to_owned(),
            offered: offered.iter().map(|a| a.as_str()).collect(),
        })
    }

    /// Whether the action sends something to people (OpenClaw's send-like
    /// actions, whose results loop detection compares without volatile
    /// ids): such a call is non-idempotent and goes through the send
    /// ledger.
    pub fn is_send_like(self) -> bool {
        matches!(
            self,
            MessageAction::Send
                | MessageAction::Broadcast
                | MessageAction::Reply
                | MessageAction::ThreadReply
                | MessageAction::SendWithEffect
                | MessageAction::SendAttachment
                | MessageAction::Sticker
                | MessageAction::Poll
                | MessageAction::React
        )
    }

    /// Whether a sender known not to be the owner may use it
    /// ([`NON_OWNER_ACTIONS`]).
    pub fn non_owner_allowed(self) -> bool {
        NON_OWNER_ACTIONS.contains(&self)
    }
}

impl fmt::Display for MessageAction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_vocabulary_round_trips_and_is_closed() {
        assert_eq!(MessageAction::ALL.len(), CHANNEL_MESSAGE_ACTION_NAMES.len());
        assert_eq!(CHANNEL_MESSAGE_ACTION_NAMES.len(), 70);
        for (a, name) in MessageAction::ALL.iter().zip(CHANNEL_MESSAGE_ACTION_NAMES) {
            assert_eq!(a.as_str(), *name);
            assert_eq!(MessageAction::from_name(name), Some(*a));
        }
        // Case-sensitive, no aliases.
        assert_eq!(MessageAction::from_name("Send"), None);
        assert_eq!(MessageAction::from_name("sendwitheffect"), None);
        let err = MessageAction::parse("teleport", &[MessageAction::Send]).unwrap_err();
        assert_eq!(err.code().as_str(), "message.unknown_action");
        match err {
            crate::ChannelError::UnknownAction { action, offered } => {
                assert_eq!(action, "teleport");
                assert_eq!(offered, vec!["send"]);
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn owner_gating_follows_the_seed_set() {
        assert!(MessageAction::Reply.non_owner_allowed());
        assert!(MessageAction::React.non_owner_allowed());
        assert!(!MessageAction::Send.non_owner_allowed());
        assert!(!MessageAction::Ban.non_owner_allowed());
    }
}
