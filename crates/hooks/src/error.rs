//! The crate's error type.

use std::path::PathBuf;

/// What can go wrong in the hooks crate (registration, approvals storage,
/// command hooks). Gate decisions are not errors: a handler failure is turned
/// into a block by the gate.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A plugin registered a trusted policy id it did not declare.
    #[error(
        "plugin `{plugin_id}` registered trusted tool policy `{policy_id}` without declaring it; add `{policy_id}` to the plugin's declared trusted policy ids"
    )]
    UndeclaredTrustedPolicy {
        /// The plugin.
        plugin_id: String,
        /// The policy id it tried to register.
        policy_id: String,
    },
    /// A registration was refused for another reason (duplicate id, bad
    /// matcher, …).
    #[error("{0}")]
    Registration(String),
    /// A handler failed (returned an error, panicked or timed out).
    #[error("hook `{hook}` failed: {message}")]
    Handler {
        /// The handler's id (plugin id or command hook id).
        hook: String,
        /// What happened.
        message: String,
    },
    /// The approvals database could not be opened or used.
    #[error("approval store {path}: {message}")]
    Store {
        /// The database file.
        path: PathBuf,
        /// What went wrong.
        message: String,
    },
    /// A command hook could not be configured or spawned.
    #[error("command hook `{id}`: {message}")]
    CommandHook {
        /// The hook id.
        id: String,
        /// What went wrong.
        message: String,
    },
    /// The exec approvals file cannot be read, parsed or written (every
    /// exec call is refused until it is fixed).
    #[error(transparent)]
    ExecApprovals(#[from] crate::exec_approvals::ExecApprovalsError),
}

/// `Result` with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
