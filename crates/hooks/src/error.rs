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
    /// The fleet's approval store on PostgreSQL could not be used. A lost
    /// database is [`Error::is_unavailable`]; nothing was decided, and
    /// nothing is ever approved because of it.
    #[cfg(feature = "postgres")]
    #[error("approval store on PostgreSQL ({target}): cannot {what}: {source}")]
    State {
        /// Where the store is (`user@host:port/db`, never a password).
        target: String,
        /// What the store was doing.
        what: &'static str,
        /// The shared-state error, with its stable code
        /// ([`talon_state::StateError::code`]).
        #[source]
        source: talon_state::StateError,
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

impl Error {
    /// Whether the approval store's database could not be reached (a
    /// fleet's PostgreSQL is down or the connection was lost): retry later.
    pub fn is_unavailable(&self) -> bool {
        match self {
            #[cfg(feature = "postgres")]
            Error::State { source, .. } => source.is_unavailable(),
            _ => false,
        }
    }
}

/// `Result` with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// What kind of failure a [`HookError`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum HookErrorKind {
    /// A plugin handler or trusted policy reported a failure of its own.
    Handler,
    /// The hook's input could not be encoded for its program.
    Input,
    /// A command hook's program could not be started.
    Start,
    /// A command hook's program ran past its timeout (its process group
    /// was killed).
    TimedOut,
    /// The call was aborted while the program ran.
    Aborted,
    /// Reading a command hook's output or waiting for it failed.
    Io,
    /// A command hook's program exited non-zero or was killed by a signal.
    Exit,
    /// A command hook's program answered something that is not a valid
    /// answer (too long, not UTF-8, not the expected JSON).
    Answer,
}

impl HookErrorKind {
    /// A stable machine code (`hook.handler`, `hook.exit`, ...).
    pub fn code(self) -> &'static str {
        match self {
            HookErrorKind::Handler => "hook.handler",
            HookErrorKind::Input => "hook.input",
            HookErrorKind::Start => "hook.start",
            HookErrorKind::TimedOut => "hook.timed_out",
            HookErrorKind::Aborted => "hook.aborted",
            HookErrorKind::Io => "hook.io",
            HookErrorKind::Exit => "hook.exit",
            HookErrorKind::Answer => "hook.answer",
        }
    }
}

/// Why one hook handler (a plugin's `before_tool_call`, `after_tool_call`
/// or `resolve_exec_env` handler, a trusted policy, a command hook) did not
/// produce a value. The gate turns it into a block (or skips the handler
/// where failure is harmless); the message goes to the operator, never
/// into the model-facing result.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct HookError {
    kind: HookErrorKind,
    message: String,
}

impl HookError {
    /// An error of `kind` saying `message` (what went wrong and, where the
    /// hook's author can act, how to fix it).
    pub fn new(kind: HookErrorKind, message: impl Into<String>) -> Self {
        HookError {
            kind,
            message: message.into(),
        }
    }

    /// A handler's own failure ([`HookErrorKind::Handler`]).
    pub fn handler(message: impl Into<String>) -> Self {
        Self::new(HookErrorKind::Handler, message)
    }

    /// What kind of failure this is.
    pub fn kind(&self) -> HookErrorKind {
        self.kind
    }

    /// The message (also the `Display` text).
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl From<crate::process::RunError> for HookError {
    fn from(e: crate::process::RunError) -> Self {
        use crate::process::RunError;
        let kind = match &e {
            RunError::Spawn { .. } => HookErrorKind::Start,
            RunError::TimedOut(_) => HookErrorKind::TimedOut,
            RunError::Aborted => HookErrorKind::Aborted,
            RunError::Io(_) => HookErrorKind::Io,
        };
        HookError::new(kind, e.to_string())
    }
}
