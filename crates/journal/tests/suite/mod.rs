use std::path::{Path, PathBuf};

use talon_journal::{CallEnd, CallStart, Outcome, params_digest};

mod concurrency;
mod disk_full;
mod lifecycle;
mod reader;
mod recovery;
mod refusals;
mod retention;

pub(crate) fn journal_path(dir: &Path) -> PathBuf {
    dir.join("state").join("journal.sqlite")
}

/// A minute ago, in Unix ms: well inside the default retention (30 days),
/// so reopening a journal in a test keeps its records.
pub(crate) fn recent_ms() -> u64 {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap();
    u64::try_from(now.as_millis()).unwrap() - 60_000
}

pub(crate) fn start(call_id: &str, session: &str, tool: &str) -> CallStart {
    CallStart {
        call_id: call_id.into(),
        session_key: session.into(),
        agent_id: "main".into(),
        tool: tool.into(),
        params_digest: params_digest(&serde_json::json!({ "marker": call_id })),
        at_ms: recent_ms(),
        tool_call_id: Some(format!("tc-{call_id}")),
    }
}

pub(crate) fn end(outcome: Outcome, summary: &str) -> CallEnd {
    CallEnd {
        outcome,
        summary: summary.into(),
        at_ms: recent_ms() + 500,
        duration_us: 500_000,
    }
}

/// A second, independent connection: what it sees is committed.
pub(crate) fn raw(path: &Path) -> rusqlite::Connection {
    rusqlite::Connection::open(path).unwrap()
}

pub(crate) fn count_rows(path: &Path) -> i64 {
    raw(path)
        .query_row("SELECT COUNT(*) FROM calls", [], |r| r.get(0))
        .unwrap()
}
