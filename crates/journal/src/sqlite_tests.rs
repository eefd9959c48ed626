#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::*;

fn sync_level(durability: Durability) -> i64 {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("j.sqlite");
    prepare_file(&path).unwrap();
    let conn = open_writer(&path, durability).unwrap();
    conn.pragma_query_value(None, "synchronous", |r| r.get(0))
        .unwrap()
}

#[test]
fn durability_sets_the_sync_level() {
    // SQLite: 1 = NORMAL, 2 = FULL.
    assert_eq!(sync_level(Durability::Full), 2);
    assert_eq!(sync_level(Durability::ProcessCrash), 1);
}

#[test]
fn lock_file_sits_next_to_the_journal() {
    assert_eq!(
        lock_path(Path::new("/state/journal.sqlite")),
        Path::new("/state/journal.sqlite.lock")
    );
}

#[test]
fn recovery_computes_a_duration_from_the_start() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("j.sqlite");
    prepare_file(&path).unwrap();
    let mut conn = open_writer(&path, Durability::Full).unwrap();
    let start = CallStart {
        call_id: "c".into(),
        session_key: "s".into(),
        agent_id: "a".into(),
        tool: "exec".into(),
        params_digest: "0".repeat(64),
        at_ms: 10_000,
        tool_call_id: Some("toolu_1".into()),
    };
    assert!(insert_started(&conn, &start).unwrap());
    let found = recover(&mut conn, 12_500).unwrap();
    assert_eq!(found.len(), 1);
    let record = get(&conn, "c").unwrap().unwrap();
    let end = record.end.unwrap();
    assert_eq!(
        (end.outcome, end.at_ms, end.duration_us),
        (Outcome::Interrupted, 12_500, 2_500_000)
    );
    assert_eq!(end.summary, INTERRUPTED_SUMMARY);
    assert_eq!(record.tool_call_id.as_deref(), Some("toolu_1"));
    assert_eq!(found[0].tool_call_id.as_deref(), Some("toolu_1"));
}
