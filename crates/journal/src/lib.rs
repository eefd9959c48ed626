//! The call journal: a durable record of every tool call the gateway
//! accepts, with crash recovery, on one storage seam with two engines:
//! an embedded SQLite file (the default, [`CallJournal::open`]) or, with
//! the `postgres` cargo feature, a PostgreSQL database shared by a fleet of
//! gateways (`CallJournal::open_postgres`).
//!
//! - [`CallJournal::started`] writes a `started` record *before* a
//!   non-idempotent tool runs (exec, write, cron add) and returns once it is
//!   committed (synced to the device by default, see [`Durability`]), so a
//!   crash never leaves a side effect with no record (security notes I2).
//! - [`CallJournal::finish`] queues the call's terminal record:
//!   [`Outcome`] `ok | error | blocked | timeout | cancelled | interrupted`.
//!   Exactly one terminal record is kept per call id; a second one is
//!   ignored and reported ([`FinishAck::AlreadyFinished`]) (I1).
//! - [`CallJournal::record`] queues a whole record for a call journalled
//!   only at its end (idempotent tools, calls the gate blocked), so cheap
//!   calls never wait for the disk.
//! - [`CallJournal::open`] marks every call left in flight by a previous
//!   process `interrupted` and reports them ([`RecoveryReport`]); nothing is
//!   ever re-run.
//! - [`CallJournal::history`] / [`CallJournal::get`] read committed records;
//!   [`CallJournal::find_tool_call`] finds a session's calls by the caller's
//!   own id ([`CallStart::tool_call_id`], its own column, kept through
//!   recovery);
//!   [`CallJournal::flush`] waits until everything queued is committed.
//!
//! A queued terminal record is normally committed within one batch (well
//! under a millisecond after a lone call), but a `SIGKILL` inside that window
//! loses it: a call with a `started` record then reads `interrupted` after
//! restart, and a whole record is gone. Where a terminal record must be on
//! disk before the result leaves the process, `flush().await` first.
//!
//! One writer thread per handle commits whatever has queued up as one
//! transaction (group commit), so a burst of calls costs one sync (and on
//! PostgreSQL a few round trips, whatever the batch's size). Batching,
//! retry, the in-flight map and retention live above the engines, once;
//! an engine (a crate-private `JournalBackend`) only applies a batch in one
//! transaction, recovers, answers reads, and enforces the invariants in its
//! own SQL: one row per call id (unique key, `ON CONFLICT DO NOTHING`),
//! first terminal wins (`UPDATE … WHERE outcome IS NULL`, and a trigger
//! refusing any update of a terminal row).
//! Parameters are never stored: only [`params_digest`], the SHA-256 of their
//! canonical JSON.
//!
//! ## On PostgreSQL (a fleet)
//!
//! Several gateways write one `journal_calls` table, each as its fleet
//! member id (`talon_state::members`; every row carries it). A call id is
//! unique across the fleet. Recovery (at open, then every
//! `LIVE_WINDOW` on a thread of its own, or [`CallJournal::recover_departed`])
//! marks `interrupted` only the calls of members that are not live, never
//! this member's or a live one's. A database that cannot be reached is
//! [`JournalError::Unavailable`] (code `unavailable`): a `started` fails
//! with it and its call must not run, terminal records are kept and
//! retried, and writes resume once the pool has reconnected. Every
//! transaction commits with `synchronous_commit` from [`Durability`]
//! (`on`, every pooled connection's own setting, or `off` set for the
//! transaction), so a `started` survives a database crash whatever the
//! server's default.
//! Migrations are versioned (`talon_schema` store `journal`); a newer
//! schema is refused ([`JournalError::code`] `schema_newer`).
//!
//! ```
//! use talon_journal::{CallEnd, CallJournal, CallStart, FinishAck, Outcome, params_digest};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let dir = tempfile::tempdir()?;
//! let (journal, report) = CallJournal::open(&dir.path().join("journal.sqlite"))?;
//! assert!(report.interrupted.is_empty());
//!
//! let params = serde_json::json!({"command": "make test"});
//! journal
//!     .started(CallStart {
//!         call_id: "call-1".into(),
//!         session_key: "agent:main:main".into(),
//!         agent_id: "main".into(),
//!         tool: "exec".into(),
//!         params_digest: params_digest(&params),
//!         at_ms: 1_000,
//!         tool_call_id: Some("toolu_01".into()),
//!     })
//!     .await?;
//! // ... the tool runs only now ...
//! let end = CallEnd { outcome: Outcome::Ok, summary: "exit 0".into(), at_ms: 1_250, duration_us: 250_000 };
//! assert_eq!(journal.finish("call-1", end.clone())?, FinishAck::Queued);
//! // A second terminal record for the same call is ignored.
//! let late = CallEnd { outcome: Outcome::Cancelled, ..end };
//! assert_eq!(journal.finish("call-1", late)?, FinishAck::AlreadyFinished(Outcome::Ok));
//!
//! journal.flush().await?;
//! let history = journal.history("agent:main:main", 10)?;
//! assert_eq!(history[0].outcome(), Some(Outcome::Ok));
//! # Ok(())
//! # }
//! ```
//!
//! What it does NOT do: it runs nothing and decides nothing (the runtime's
//! gate decides, the gateway calls the journal); it never re-executes an
//! interrupted call; it stores no parameters, outputs or secrets (the
//! caller passes an already-redacted summary, cut at
//! [`MAX_SUMMARY_BYTES`]). It keeps a bounded history: [`Retention`]
//! (by default 30 days and 256 MiB) is enforced by the writer thread, which
//! deletes only terminal records and shrinks the file; [`CallJournal::prune`]
//! deletes by age on demand. Pending approvals
//! and cron `running` markers are recovered by their own stores.
#![deny(missing_docs)]

pub use crate::digest::params_digest;
pub use crate::error::{JournalError, Result};
pub use crate::journal::{CallJournal, JournalStats, QUEUE_CAPACITY};
pub use crate::reader::JournalReader;

/// The journal's file name in a state dir (the gateway's, and where the
/// CLI reads it).
pub const FILE_NAME: &str = "gateway-journal.sqlite";
pub use crate::options::{
    DEFAULT_MAX_BYTES, DEFAULT_RETENTION_CHECK, DEFAULT_RETENTION_DAYS, Durability, JournalOptions,
    Retention,
};
pub use crate::record::{
    CallEnd, CallRecord, CallStart, FinishAck, InterruptedCall, Outcome, RecoveryReport,
    UnknownOutcome,
};
pub use crate::validate::{
    MAX_CALL_ID_BYTES, MAX_HISTORY_LIMIT, MAX_NAME_BYTES, MAX_SESSION_KEY_BYTES, check_tool_call_id,
};

/// Longest stored summary, in bytes; longer summaries are cut at a character
/// boundary and end with `…`.
pub const MAX_SUMMARY_BYTES: usize = 1024;

mod backend;
mod digest;
mod error;
mod inflight;
mod journal;
mod options;
#[cfg(feature = "postgres")]
mod postgres;
mod reader;
mod record;
mod sqlite;
mod validate;
mod writer;
