//! Errors of policy compilation.

/// Why an empty allow list is refused and how to fix it (shared by the
/// engine's error and the config loader's finding).
pub const EMPTY_ALLOW_REASON: &str = "an empty allow list is refused, because OpenClaw reads it as \"allow every tool\". Remove the key to allow every tool not denied, or write `deny: [\"*\"]` to allow none";

/// Why a policy configuration could not be compiled.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PolicyError {
    /// A `profile` value is not a built-in profile.
    #[error(
        "{key}: unknown tool profile `{value}` (expected one of: minimal, coding, messaging, full)"
    )]
    UnknownProfile {
        /// The config key.
        key: String,
        /// The value as written.
        value: String,
    },
    /// An `allow` list is explicitly empty. OpenClaw reads that as "allow
    /// every tool"; Talon refuses it rather than let a restriction mean its
    /// opposite.
    #[error("{key}: {reason}", reason = EMPTY_ALLOW_REASON)]
    EmptyAllow {
        /// The config key holding the empty list.
        key: String,
    },
    /// A `toolsBySender` key names no sender (`id:` with nothing after
    /// it, an empty key, `channel:` without `<provider>:<id>`).
    #[error("{key}: {reason}")]
    BadSenderKey {
        /// The config key.
        key: String,
        /// What is wrong and how to write it.
        reason: String,
    },
    /// Two `toolsBySender` keys of one map name the same sender once
    /// normalised (case, a leading `@`, an unprefixed id and `id:`); one of
    /// them would be ignored.
    #[error(
        "{key}: names the same sender as {other} (keys are compared ignoring case and a leading `@`); merge the two entries"
    )]
    DuplicateSenderKey {
        /// The config key.
        key: String,
        /// The other key naming that sender.
        other: String,
    },
}

impl PolicyError {
    /// A stable code for the error.
    pub fn code(&self) -> &'static str {
        match self {
            PolicyError::UnknownProfile { .. } => "policy.unknown_profile",
            PolicyError::EmptyAllow { .. } => "policy.empty_allow",
            PolicyError::BadSenderKey { .. } => "policy.bad_sender_key",
            PolicyError::DuplicateSenderKey { .. } => "policy.duplicate_sender_key",
        }
    }
}

/// Result alias of this crate.
pub type Result<T, E = PolicyError> = std::result::Result<T, E>;
