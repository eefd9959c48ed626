//! Talon's shared state on PostgreSQL: the foundation the stores (journal,
//! cron, task ledger, approvals, sessions) build their PostgreSQL
//! implementations on, so several gateways can share one database.
//!
//! - [`PgPool`]: pooled connections, each on a worker thread of its own,
//!   so blocking callers (inside tokio or not) never run the driver's
//!   runtime on their thread. A lost connection is reopened with backoff;
//!   meanwhile calls fail fast with [`StateError::Unavailable`].
//! - [`PgPool::migrate`]: versioned migrations per store under an advisory
//!   lock; a schema newer than the binary is refused and left alone.
//! - [`lease`]: one holder per name with a fencing token; writes under a
//!   lease start with [`lease::fence`], so a holder that lost the lease
//!   cannot write.
//! - [`members`]: the fleet's members and their heartbeats.
//!
//! Every pooled connection commits synchronously (`synchronous_commit =
//! on` for its session, whatever the server's default); a store that
//! accepts less sets it for its own transaction (`SET LOCAL`).
//!
//! Every time (lease expiry, heartbeat) is the database's clock, so the
//! members' clocks need not agree. The URL's password is never logged:
//! [`PgConfig`]'s `Debug` and [`PgPool::target`] show `user@host:port/db`.

pub use postgres;

pub use self::config::{
    DEFAULT_CONNECT_TIMEOUT, DEFAULT_POOL_SIZE, DEFAULT_STATEMENT_TIMEOUT, MAX_POOL_SIZE, PgConfig,
};
pub use self::error::StateError;
pub use self::pool::{Conn, PgPool};

mod config;
mod error;
pub mod lease;
pub mod members;
mod migrate;
mod pool;

/// The foundation's own tables: version 1.
pub(crate) const STATE_MIGRATIONS: &[&str] = &["
    CREATE TABLE talon_leases (
        name TEXT PRIMARY KEY,
        holder TEXT NOT NULL,
        token BIGINT NOT NULL,
        expires_at_ms BIGINT NOT NULL
    );
    CREATE TABLE talon_members (
        id TEXT PRIMARY KEY,
        host TEXT NOT NULL,
        pid BIGINT NOT NULL,
        listen TEXT NOT NULL,
        version TEXT NOT NULL,
        started_at_ms BIGINT NOT NULL,
        heartbeat_at_ms BIGINT NOT NULL
    );
"];
