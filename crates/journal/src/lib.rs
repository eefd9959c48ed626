//! The call journal: a durable record of every tool call the gateway
//! accepts (SQLite), with crash recovery.
//!
//! (API first; the implementation follows.)
#![deny(missing_docs)]

pub use crate::digest::params_digest;
pub use crate::error::{JournalError, Result};
pub use crate::journal::CallJournal;
pub use crate::record::{
    CallEnd, CallRecord, CallStart, FinishAck, InterruptedCall, Outcome, RecoveryReport,
    UnknownOutcome,
};

/// Longest stored summary, in bytes; longer summaries are cut at a character
/// boundary and end with `…`.
pub const MAX_SUMMARY_BYTES: usize = 1024;

mod digest;
mod error;
mod journal;
mod record;
