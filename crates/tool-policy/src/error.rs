//! Errors of policy compilation.

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
}

/// Result alias of this crate.
pub type Result<T, E = PolicyError> = std::result::Result<T, E>;
