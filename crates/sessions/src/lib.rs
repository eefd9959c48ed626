//! Talon's sessions: records that survive a restart, and the two rules
//! every session tool asks.
//!
//! - [`SessionStore`] keeps each session (key, agent, parent, spawn depth,
//!   label, status, created/updated times and the parameters it was created
//!   with) and the messages seen in it. Tool calls are not copied: the call
//!   journal holds them, by session. It stores through one seam,
//!   [`SessionBackend`], with two engines: SQLite ([`SqliteSessions`], the
//!   shared state database `talon.db`, beside the task ledger and the cron
//!   store) and PostgreSQL (`postgres` feature: `SessionStore::open_postgres`
//!   on a `talon_state::PgPool`; tables migrated as store `sessions`, a
//!   newer schema refused), where a session saved by one gateway is read,
//!   appended to and closed by another. Validation, message cutting, search
//!   words and the tree walk sit above the seam once; search means the same
//!   on both (every word literally, ASCII letters folded, no others). A
//!   database that cannot be reached is `StoreError::State` with
//!   [`StoreError::is_unavailable`] (code `session.unavailable`).
//! - [`SessionKind::of`] classifies a key in OpenClaw's grammar (`main`,
//!   `group`, `cron`, `hook`, `node`, `other`) under the configured main key.
//! - [`VisibilityPolicy::check`] decides whether one session may see
//!   another: `tools.sessions.visibility` (`self`, `tree`, `agent`, `all`;
//!   default `tree`), clamped to the session's own tree when it is sandboxed
//!   (`agents.defaults.sandbox.sessionToolsVisibility`, default `spawned`),
//!   and another agent's sessions only through `tools.agentToAgent`.
//!
//! ```
//! use talon_sessions::{Target, Viewer, VisibilityPolicy};
//!
//! let policy = VisibilityPolicy::default(); // tree, sandbox-clamped
//! let me = Viewer { session_key: "agent:ops:main", agent_id: "ops", sandboxed: false };
//! let child = Target { session_key: "agent:ops:subagent:1", agent_id: "ops", in_viewer_tree: true };
//! let sibling = Target { session_key: "agent:ops:gw:2", agent_id: "ops", in_viewer_tree: false };
//! assert!(policy.check(me, child).is_ok());
//! assert_eq!(policy.check(me, sibling).unwrap_err().code(), "session.not_visible");
//! ```
//!
//! No async runtime: callers on one run blocking calls off their executor
//! (the PostgreSQL pool runs each statement on a worker thread of its own,
//! so a blocking call from inside tokio is safe there too). The `store`
//! feature (default) brings the SQLite store; without it the crate is the
//! kinds and the visibility rule, for configuration types. The `postgres`
//! feature adds the PostgreSQL engine.

#[cfg(feature = "store")]
mod backend;
#[cfg(feature = "store")]
mod error;
mod kind;
#[cfg(feature = "store")]
mod record;
#[cfg(feature = "store")]
mod sqlite;
#[cfg(feature = "store")]
mod store;
mod visibility;

#[cfg(feature = "postgres")]
pub mod postgres;
#[cfg(feature = "postgres")]
pub use crate::postgres::PgSessions;

#[cfg(feature = "store")]
pub use crate::backend::{NewMessage, SessionBackend};
#[cfg(feature = "store")]
pub use crate::error::{Result, StoreError};
pub use crate::kind::{SessionKind, channel_of, display_key, group_conversation, split_agent_key};
#[cfg(feature = "store")]
pub use crate::record::{
    MAX_KEY_BYTES, MAX_LABEL_CHARS, MAX_MESSAGE_BYTES, MessageRecord, Role, SessionRecord,
    SessionStatus,
};
#[cfg(feature = "store")]
pub use crate::sqlite::SqliteSessions;
#[cfg(feature = "store")]
pub use crate::store::{ListQuery, SessionStore};
pub use crate::visibility::{
    AgentToAgent, Refusal, SandboxVisibility, Target, Viewer, Visibility, VisibilityPolicy,
};
