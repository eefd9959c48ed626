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
}

/// Result alias of this crate.
pub type Result<T, E = PolicyError> = std::result::Result<T, E>;
