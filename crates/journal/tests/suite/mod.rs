use std::path::{Path, PathBuf};

use talon_journal::{CallEnd, CallStart, Outcome, params_digest};

mod concurrency;
mod disk_full;
mod lifecycle;
mod recovery;
mod refusals;

pub(crate) fn journal_path(dir: &Path) -> PathBuf {
    dir.join("state").join("journal.sqlite")
}

pub(crate) fn start(call_id: &str, session: &str, tool: &str) -> CallStart {
    CallStart {
        call_id: call_id.into(),
        session_key: session.into(),
        agent_id: "main".into(),
        tool: tool.into(),
        params_digest: params_digest(&serde_json::json!({ "marker": call_id })),
        at_ms: 1_700_000_000_000,
        tool_call_id: Some(format!("tc-{call_id}")),
    }
}

pub(crate) fn end(outcome: Outcome, summary: &str) -> CallEnd {
    CallEnd {
        outcome,
        summary: summary.into(),
        at_ms: 1_700_000_000_500,
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
