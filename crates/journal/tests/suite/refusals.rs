use pretty_assertions::assert_eq;
use talon_journal::{CallJournal, CallStart, FinishAck, JournalError, Outcome};

use super::{Store, end, journal_path, raw, start};

on_each_engine!(a_second_terminal_record_is_ignored_before_and_after_commit);
async fn a_second_terminal_record_is_ignored_before_and_after_commit(store: Store) {
    let (journal, _) = store.open().unwrap();
    journal.started(start("c", "s", "exec")).await.unwrap();
    assert_eq!(
        journal.finish("c", end(Outcome::Ok, "done")).unwrap(),
        FinishAck::Queued
    );
    // Still queued (or just committed): the first outcome stands.
    assert_eq!(
        journal
            .finish("c", end(Outcome::Cancelled, "late cancel"))
            .unwrap(),
        FinishAck::AlreadyFinished(Outcome::Ok)
    );
    journal.flush().await.unwrap();
    // Committed: answered from the database.
    assert_eq!(
        journal
            .finish("c", end(Outcome::Timeout, "late timeout"))
            .unwrap(),
        FinishAck::AlreadyFinished(Outcome::Ok)
    );
    journal.flush().await.unwrap();
    let stored = journal.get("c").unwrap().unwrap().end.unwrap();
    assert_eq!(
        (stored.outcome, stored.summary.as_str()),
        (Outcome::Ok, "done")
    );
    assert_eq!(store.rows(), 1);
}

on_each_engine!(a_call_id_is_started_once);
async fn a_call_id_is_started_once(store: Store) {
    let (journal, _) = store.open().unwrap();
    journal.started(start("c", "s", "exec")).await.unwrap();
    // Open in this handle.
    let err = journal.started(start("c", "s", "exec")).await.unwrap_err();
    assert!(
        matches!(err, JournalError::DuplicateCall { ref call_id } if call_id == "c"),
        "{err}"
    );
    let _ = journal.finish("c", end(Outcome::Ok, "")).unwrap();
    journal.flush().await.unwrap();
    // Finished and forgotten in memory: the database refuses it.
    let err = journal
        .started(start("c", "s2", "write"))
        .await
        .unwrap_err();
    assert!(matches!(err, JournalError::DuplicateCall { .. }), "{err}");
    // A whole record cannot reuse an open started call's id either.
    journal.started(start("d", "s", "exec")).await.unwrap();
    let err = journal
        .record(start("d", "s", "read"), end(Outcome::Ok, ""))
        .unwrap_err();
    assert!(matches!(err, JournalError::DuplicateCall { .. }), "{err}");
    // The refused start left nothing in memory.
    assert_eq!(journal.stats().in_flight, 1);
}

on_each_engine!(a_repeated_whole_record_keeps_the_first);
async fn a_repeated_whole_record_keeps_the_first(store: Store) {
    let (journal, _) = store.open().unwrap();
    let _ = journal
        .record(start("r", "s", "read"), end(Outcome::Ok, "first"))
        .unwrap();
    let again = journal
        .record(start("r", "s", "read"), end(Outcome::Error, "second"))
        .unwrap();
    assert_eq!(again, FinishAck::AlreadyFinished(Outcome::Ok));
    journal.flush().await.unwrap();
    // Committed long ago: queued, then ignored by the writer and counted.
    let late = journal
        .record(start("r", "s", "read"), end(Outcome::Error, "third"))
        .unwrap();
    assert_eq!(late, FinishAck::Queued);
    journal.flush().await.unwrap();
    assert_eq!(
        journal.get("r").unwrap().unwrap().end.unwrap().summary,
        "first"
    );
    assert_eq!(journal.stats().ignored_terminals, 1);
    assert_eq!(store.rows(), 1);
}

on_each_engine!(finish_without_a_record_is_refused_and_writes_nothing);
async fn finish_without_a_record_is_refused_and_writes_nothing(store: Store) {
    let (journal, _) = store.open().unwrap();
    let err = journal.finish("ghost", end(Outcome::Ok, "")).unwrap_err();
    assert!(matches!(err, JournalError::NotStarted { ref call_id } if call_id == "ghost"));
    assert!(err.to_string().contains("record"), "{err}");
    journal.flush().await.unwrap();
    assert_eq!(store.rows(), 0);
}

on_each_engine!(bad_input_is_named_and_changes_nothing);
async fn bad_input_is_named_and_changes_nothing(store: Store) {
    let (journal, _) = store.open().unwrap();
    let raw_params = CallStart {
        params_digest: r#"{"command":"cat ~/.ssh/id_ed25519"}"#.into(),
        ..start("p", "s", "exec")
    };
    let err = journal.started(raw_params.clone()).await.unwrap_err();
    assert!(
        matches!(
            err,
            JournalError::Invalid {
                field: "paramsDigest",
                ..
            }
        ),
        "{err}"
    );
    let err = journal
        .record(raw_params, end(Outcome::Ok, ""))
        .unwrap_err();
    assert!(
        matches!(
            err,
            JournalError::Invalid {
                field: "paramsDigest",
                ..
            }
        ),
        "{err}"
    );
    let err = journal.finish("", end(Outcome::Ok, "")).unwrap_err();
    assert!(
        matches!(
            err,
            JournalError::Invalid {
                field: "callId",
                ..
            }
        ),
        "{err}"
    );
    let err = journal
        .history("s", talon_journal::MAX_HISTORY_LIMIT + 1)
        .unwrap_err();
    assert!(
        matches!(err, JournalError::Invalid { field: "limit", .. }),
        "{err}"
    );
    let err = journal.get("a\u{1b}[31m").unwrap_err();
    assert!(
        matches!(
            err,
            JournalError::Invalid {
                field: "callId",
                ..
            }
        ),
        "{err}"
    );
    journal.flush().await.unwrap();
    assert_eq!(store.rows(), 0);
    assert_eq!(journal.stats().in_flight, 0);
}

/// SQLite only: on PostgreSQL several gateways share the database, each as
/// its own fleet member (see `fleet.rs`).
#[tokio::test]
async fn a_second_open_is_locked_out_until_the_first_closes() {
    let dir = tempfile::tempdir().unwrap();
    let path = journal_path(dir.path());
    let (journal, _) = CallJournal::open(&path).unwrap();
    journal.started(start("c", "s", "exec")).await.unwrap();
    let err = CallJournal::open(&path).unwrap_err();
    assert!(matches!(err, JournalError::Locked { .. }), "{err}");
    // The refused open did not "recover" the first handle's running call.
    assert_eq!(journal.get("c").unwrap().unwrap().end, None);
    let clone = journal.clone();
    drop(journal);
    // A clone keeps the journal open.
    assert!(matches!(
        CallJournal::open(&path).unwrap_err(),
        JournalError::Locked { .. }
    ));
    drop(clone);
    let (_again, report) = CallJournal::open(&path).unwrap();
    assert_eq!(report.interrupted.len(), 1);
}

/// SQLite's schema version; PostgreSQL's is in `fleet.rs`.
#[test]
fn a_newer_schema_is_refused_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let path = journal_path(dir.path());
    drop(CallJournal::open(&path).unwrap());
    raw(&path).pragma_update(None, "user_version", 99).unwrap();
    let before = std::fs::read(&path).unwrap();
    let err = CallJournal::open(&path).unwrap_err();
    assert!(
        matches!(
            err,
            JournalError::SchemaTooNew {
                found: 99,
                supported: 2,
                ..
            }
        ),
        "{err}"
    );
    assert!(err.to_string().contains("upgrade Talon"), "{err}");
    assert_eq!(std::fs::read(&path).unwrap(), before);
}

#[test]
fn a_file_that_is_not_a_database_is_refused_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("journal.sqlite");
    let garbage = b"this is not sqlite, it is someone's notes\n".repeat(200);
    std::fs::write(&path, &garbage).unwrap();
    let err = CallJournal::open(&path).unwrap_err();
    assert!(matches!(err, JournalError::Open { .. }), "{err}");
    let text = err.to_string();
    assert!(
        text.contains(&path.display().to_string()) && text.contains("call journal database"),
        "{text}"
    );
    assert_eq!(std::fs::read(&path).unwrap(), garbage);
}

#[test]
fn a_directory_or_symlink_path_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let err = CallJournal::open(dir.path()).unwrap_err();
    assert!(err.to_string().contains("directory"), "{err}");
    let target = dir.path().join("elsewhere.sqlite");
    std::fs::write(&target, b"").unwrap();
    let link = dir.path().join("journal.sqlite");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    let err = CallJournal::open(&link).unwrap_err();
    assert!(err.to_string().contains("symlink"), "{err}");
    assert_eq!(std::fs::read(&target).unwrap(), b"");
}
