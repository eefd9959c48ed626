//! Checks on everything a caller hands the journal. Each failure names the
//! field and says how to fix it; a refused record is never written.

use crate::MAX_SUMMARY_BYTES;
use crate::digest::is_digest;
use crate::error::{JournalError, Result};
use crate::record::{CallEnd, CallStart};

/// Longest call id, in bytes.
pub const MAX_CALL_ID_BYTES: usize = 256;
/// Longest session key, in bytes.
pub const MAX_SESSION_KEY_BYTES: usize = 512;
/// Longest agent id or tool name, in bytes.
pub const MAX_NAME_BYTES: usize = 256;
/// Largest `limit` accepted by [`CallJournal::history`](crate::CallJournal::history).
pub const MAX_HISTORY_LIMIT: usize = 1000;

/// The largest time or duration SQLite can store (`i64::MAX`).
const MAX_STORED: u64 = i64::MAX as u64;

fn invalid(field: &'static str, reason: String) -> JournalError {
    JournalError::Invalid { field, reason }
}

/// A non-empty identifier of at most `max` bytes with no control characters.
pub(crate) fn check_text(field: &'static str, value: &str, max: usize) -> Result<()> {
    if value.is_empty() {
        return Err(invalid(field, "is empty; pass a non-empty value".into()));
    }
    if value.len() > max {
        return Err(invalid(
            field,
            format!(
                "is {} bytes long; at most {max} bytes are accepted",
                value.len()
            ),
        ));
    }
    if let Some(pos) = value.find(char::is_control) {
        return Err(invalid(
            field,
            format!("contains a control character at byte {pos}; remove it"),
        ));
    }
    Ok(())
}

pub(crate) fn check_call_id(call_id: &str) -> Result<()> {
    check_text("callId", call_id, MAX_CALL_ID_BYTES)
}

/// Check a caller's `toolCallId` as the journal stores it: non-empty, at
/// most [`MAX_CALL_ID_BYTES`] bytes, no control characters. A front end
/// runs this before accepting a call, so the journal never refuses one for
/// its id.
pub fn check_tool_call_id(tool_call_id: &str) -> Result<()> {
    check_text("toolCallId", tool_call_id, MAX_CALL_ID_BYTES)
}

pub(crate) fn check_session_key(session_key: &str) -> Result<()> {
    check_text("sessionKey", session_key, MAX_SESSION_KEY_BYTES)
}

fn check_stored(field: &'static str, value: u64) -> Result<()> {
    if value > MAX_STORED {
        return Err(invalid(
            field,
            format!("{value} is larger than the storable maximum {MAX_STORED}"),
        ));
    }
    Ok(())
}

pub(crate) fn check_start(start: &CallStart) -> Result<()> {
    check_call_id(&start.call_id)?;
    check_session_key(&start.session_key)?;
    check_text("agentId", &start.agent_id, MAX_NAME_BYTES)?;
    check_text("tool", &start.tool, MAX_NAME_BYTES)?;
    if let Some(id) = &start.tool_call_id {
        check_tool_call_id(id)?;
    }
    if !is_digest(&start.params_digest) {
        return Err(invalid(
            "paramsDigest",
            "must be 64 lowercase hex digits (SHA-256 of the canonical parameters, see \
             talon_journal::params_digest); raw parameters are never journalled"
                .into(),
        ));
    }
    check_stored("atMs", start.at_ms)
}

/// Check `end` and cut its summary to [`MAX_SUMMARY_BYTES`].
pub(crate) fn normalise_end(mut end: CallEnd) -> Result<CallEnd> {
    check_stored("atMs", end.at_ms)?;
    check_stored("durationUs", end.duration_us)?;
    end.summary = cut_summary(end.summary);
    Ok(end)
}

/// Cut `summary` to at most [`MAX_SUMMARY_BYTES`] bytes at a character
/// boundary, ending with `…` when something was cut.
pub(crate) fn cut_summary(mut summary: String) -> String {
    if summary.len() <= MAX_SUMMARY_BYTES {
        return summary;
    }
    let ellipsis = '…';
    let mut cut = MAX_SUMMARY_BYTES - ellipsis.len_utf8();
    while !summary.is_char_boundary(cut) {
        cut -= 1;
    }
    summary.truncate(cut);
    summary.push(ellipsis);
    summary
}

pub(crate) fn check_history_limit(limit: usize) -> Result<()> {
    if limit > MAX_HISTORY_LIMIT {
        return Err(invalid(
            "limit",
            format!(
                "{limit} is too large; ask for at most {MAX_HISTORY_LIMIT} records and page by call time"
            ),
        ));
    }
    Ok(())
}

#[cfg(test)]
#[path = "validate_tests.rs"]
mod tests;
