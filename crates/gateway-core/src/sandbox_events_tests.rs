#![allow(clippy::unwrap_used, clippy::expect_used)]

use talon_sandbox_core::{RecycleReason, SandboxRecycled};

use super::*;

#[tokio::test]
async fn a_recycled_sandbox_becomes_one_journal_record_naming_the_container() {
    let dir = tempfile::tempdir().unwrap();
    let (journal, _) = CallJournal::open(&dir.path().join("j.sqlite")).unwrap();
    let sink = JournalSandboxEvents::new(journal.clone());
    sink.event(&SandboxEvent::Recycled(SandboxRecycled {
        backend_id: "docker".to_owned(),
        name: "talon-sbx-agent-ops-1a2b3c4d".to_owned(),
        container_id: "f00dcafe".to_owned(),
        scope_key: "agent:ops".to_owned(),
        reason: RecycleReason::OomKilled,
        exit_code: 137,
        at_ms: 1_700_000_000_000,
        removed: true,
    }));
    journal.flush().await.unwrap();
    let rows = journal.history("agent:ops", 10).unwrap();
    assert_eq!(rows.len(), 1);
    let row = &rows[0];
    assert_eq!(row.tool, SANDBOX_RECYCLE_TOOL);
    assert_eq!(row.agent_id, "ops");
    let end = row.end.as_ref().unwrap();
    assert_eq!(end.outcome, Outcome::Error);
    assert!(
        end.summary.contains("talon-sbx-agent-ops-1a2b3c4d") && end.summary.contains("oom_killed"),
        "{}",
        end.summary
    );
}
