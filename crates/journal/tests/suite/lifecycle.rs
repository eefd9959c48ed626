use std::os::unix::fs::PermissionsExt;

use pretty_assertions::assert_eq;
use talon_journal::{CallEnd, CallJournal, CallRecord, FinishAck, Outcome};

use super::{Store, end, raw, start};

on_each_engine!(started_is_committed_before_it_returns);
async fn started_is_committed_before_it_returns(store: Store) {
    let (journal, report) = store.open().unwrap();
    assert!(report.created);
    journal.started(start("c1", "s1", "exec")).await.unwrap();
    // Another connection sees the row without any flush.
    assert_eq!(
        store.count("call_id = 'c1' AND outcome IS NULL AND write_ahead"),
        1
    );
    let in_flight = journal.get("c1").unwrap().unwrap();
    assert_eq!(in_flight.end, None);
    assert!(in_flight.write_ahead);
    assert_eq!(journal.stats().in_flight, 1);
}

on_each_engine!(finish_then_flush_stores_the_whole_record);
async fn finish_then_flush_stores_the_whole_record(store: Store) {
    let (journal, _) = store.open().unwrap();
    let s = start("c1", "s1", "exec");
    journal.started(s.clone()).await.unwrap();
    let e = end(Outcome::Error, "exit status 2");
    assert_eq!(journal.finish("c1", e.clone()).unwrap(), FinishAck::Queued);
    journal.flush().await.unwrap();
    let expected = CallRecord {
        call_id: s.call_id,
        session_key: s.session_key,
        agent_id: s.agent_id,
        tool: s.tool,
        params_digest: s.params_digest,
        started_at_ms: s.at_ms,
        write_ahead: true,
        tool_call_id: Some("tc-c1".into()),
        end: Some(e),
    };
    assert_eq!(journal.get("c1").unwrap(), Some(expected));
    // Nothing stays in memory once the terminal record is committed.
    assert_eq!(journal.stats().in_flight, 0);
}

on_each_engine!(record_writes_a_whole_call_without_write_ahead);
async fn record_writes_a_whole_call_without_write_ahead(store: Store) {
    let (journal, _) = store.open().unwrap();
    let ack = journal
        .record(start("r1", "s1", "session_status"), end(Outcome::Ok, "ok"))
        .unwrap();
    assert_eq!(ack, FinishAck::Queued);
    let blocked = journal
        .record(
            start("r2", "s1", "exec"),
            end(Outcome::Blocked, "blocked by tools.deny"),
        )
        .unwrap();
    assert_eq!(blocked, FinishAck::Queued);
    journal.flush().await.unwrap();
    let r1 = journal.get("r1").unwrap().unwrap();
    assert!(!r1.write_ahead);
    assert_eq!(r1.outcome(), Some(Outcome::Ok));
    assert_eq!(
        journal.get("r2").unwrap().unwrap().outcome(),
        Some(Outcome::Blocked)
    );
    assert_eq!(journal.get("nope").unwrap(), None);
}

on_each_engine!(history_is_per_session_newest_first_and_limited);
async fn history_is_per_session_newest_first_and_limited(store: Store) {
    let (journal, _) = store.open().unwrap();
    for i in 0..7 {
        let session = if i % 2 == 0 { "even" } else { "odd" };
        let _ = journal
            .record(
                start(&format!("h{i}"), session, "read"),
                end(Outcome::Ok, &format!("n{i}")),
            )
            .unwrap();
    }
    journal.started(start("h7", "even", "exec")).await.unwrap();
    journal.flush().await.unwrap();
    let ids = |records: Vec<CallRecord>| records.into_iter().map(|r| r.call_id).collect::<Vec<_>>();
    assert_eq!(
        ids(journal.history("even", 10).unwrap()),
        ["h7", "h6", "h4", "h2", "h0"]
    );
    assert_eq!(ids(journal.history("even", 2).unwrap()), ["h7", "h6"]);
    assert_eq!(ids(journal.history("odd", 10).unwrap()), ["h5", "h3", "h1"]);
    assert!(journal.history("nobody", 10).unwrap().is_empty());
    assert!(journal.history("even", 0).unwrap().is_empty());
    // The in-flight call shows as such.
    assert_eq!(journal.history("even", 1).unwrap()[0].end, None);
}

on_each_engine!(queued_records_are_invisible_until_flushed_then_visible);
async fn queued_records_are_invisible_until_flushed_then_visible(store: Store) {
    let (journal, _) = store.open().unwrap();
    for i in 0..200 {
        let _ = journal
            .record(start(&format!("q{i}"), "s", "read"), end(Outcome::Ok, ""))
            .unwrap();
    }
    journal.flush().await.unwrap();
    assert_eq!(store.rows(), 200);
    assert_eq!(journal.history("s", 1000).unwrap().len(), 200);
}

on_each_engine!(long_summaries_are_stored_cut);
async fn long_summaries_are_stored_cut(store: Store) {
    let (journal, _) = store.open().unwrap();
    let long = "x".repeat(10 * talon_journal::MAX_SUMMARY_BYTES);
    let _ = journal
        .record(start("long", "s", "exec"), end(Outcome::Error, &long))
        .unwrap();
    journal.flush().await.unwrap();
    let stored = journal.get("long").unwrap().unwrap().end.unwrap().summary;
    assert!(stored.len() <= talon_journal::MAX_SUMMARY_BYTES);
    assert!(stored.ends_with('…'));
}

on_each_engine!(prune_drops_old_terminal_records_and_keeps_calls_in_flight);
async fn prune_drops_old_terminal_records_and_keeps_calls_in_flight(store: Store) {
    let (journal, _) = store.open().unwrap();
    let old = CallEnd {
        at_ms: 1_000,
        ..end(Outcome::Ok, "")
    };
    let new = CallEnd {
        at_ms: 9_000,
        ..end(Outcome::Ok, "")
    };
    let _ = journal.record(start("old", "s", "read"), old).unwrap();
    let _ = journal.record(start("new", "s", "read"), new).unwrap();
    journal
        .started(start("running", "s", "exec"))
        .await
        .unwrap();
    assert_eq!(journal.prune(5_000).await.unwrap(), 1);
    assert_eq!(journal.get("old").unwrap(), None);
    assert!(journal.get("new").unwrap().is_some());
    assert_eq!(journal.prune(u64::from(u32::MAX)).await.unwrap(), 1);
    assert!(journal.get("running").unwrap().is_some());
}

/// SQLite only: the file's own properties.
#[tokio::test]
async fn files_are_private_and_wal() {
    let dir = tempfile::tempdir().unwrap();
    let path = super::journal_path(dir.path());
    let (journal, _) = CallJournal::open(&path).unwrap();
    journal.started(start("c", "s", "exec")).await.unwrap();
    for file in [path.clone(), path.with_extension("sqlite.lock")] {
        let mode = std::fs::metadata(&file).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600, "{}", file.display());
    }
    let mode: String = raw(&path)
        .query_row("PRAGMA journal_mode", [], |r| r.get(0))
        .unwrap();
    assert_eq!(mode, "wal");
}

on_each_engine!(a_terminal_record_cannot_be_rewritten_even_with_raw_sql);
async fn a_terminal_record_cannot_be_rewritten_even_with_raw_sql(store: Store) {
    let (journal, _) = store.open().unwrap();
    let _ = journal
        .record(start("c", "s", "exec"), end(Outcome::Blocked, "denied"))
        .unwrap();
    journal.flush().await.unwrap();
    let err = store
        .execute("UPDATE {calls} SET outcome = 'ok' WHERE call_id = 'c'")
        .unwrap_err();
    assert!(err.contains("final"), "{err}");
    assert_eq!(
        journal.get("c").unwrap().unwrap().outcome(),
        Some(Outcome::Blocked)
    );
}

on_each_engine!(reopen_after_drop_keeps_everything);
async fn reopen_after_drop_keeps_everything(store: Store) {
    {
        let (journal, _) = store.open().unwrap();
        let _ = journal
            .record(start("a", "s", "read"), end(Outcome::Ok, ""))
            .unwrap();
        journal.started(start("b", "s", "exec")).await.unwrap();
        let _ = journal
            .finish("b", end(Outcome::Timeout, "timed out after 30 s"))
            .unwrap();
        // No flush: dropping the last handle commits what is queued.
    }
    let (journal, report) = store.open().unwrap();
    assert!(!report.created);
    assert!(report.interrupted.is_empty());
    assert_eq!(
        journal.get("a").unwrap().unwrap().outcome(),
        Some(Outcome::Ok)
    );
    assert_eq!(
        journal.get("b").unwrap().unwrap().outcome(),
        Some(Outcome::Timeout)
    );
}

on_each_engine!(a_started_call_abandoned_mid_wait_can_still_be_finished);
async fn a_started_call_abandoned_mid_wait_can_still_be_finished(store: Store) {
    let (journal, _) = store.open().unwrap();
    // The first poll queues the record (the commit takes a sync, so the
    // answer cannot be there yet); the ready branch then drops the future.
    let abandoned = tokio::select! {
        biased;
        r = journal.started(start("a", "s", "exec")) => Some(r),
        () = std::future::ready(()) => None,
    };
    assert!(
        abandoned.is_none(),
        "the started record was confirmed on the first poll"
    );
    journal.flush().await.unwrap();
    assert_eq!(journal.get("a").unwrap().unwrap().end, None);
    assert_eq!(
        journal
            .finish("a", end(Outcome::Cancelled, "abandoned"))
            .unwrap(),
        FinishAck::Queued
    );
    journal.flush().await.unwrap();
    assert_eq!(
        journal.get("a").unwrap().unwrap().outcome(),
        Some(Outcome::Cancelled)
    );
    assert_eq!(journal.stats().in_flight, 0);
}

on_each_engine!(waiting_variants_behave_like_the_plain_ones);
async fn waiting_variants_behave_like_the_plain_ones(store: Store) {
    let (journal, _) = store.open().unwrap();
    journal.started(start("w", "s", "exec")).await.unwrap();
    assert_eq!(
        journal
            .finish_wait("w", end(Outcome::Ok, ""))
            .await
            .unwrap(),
        FinishAck::Queued
    );
    assert_eq!(
        journal
            .finish_wait("w", end(Outcome::Error, ""))
            .await
            .unwrap(),
        FinishAck::AlreadyFinished(Outcome::Ok)
    );
    let first = journal
        .record_wait(start("r", "s", "read"), end(Outcome::Blocked, ""))
        .await;
    assert_eq!(first.unwrap(), FinishAck::Queued);
    let again = journal
        .record_wait(start("r", "s", "read"), end(Outcome::Ok, ""))
        .await;
    assert_eq!(again.unwrap(), FinishAck::AlreadyFinished(Outcome::Blocked));
    let err = journal
        .finish_wait("ghost", end(Outcome::Ok, ""))
        .await
        .unwrap_err();
    assert!(
        matches!(err, talon_journal::JournalError::NotStarted { .. }),
        "{err}"
    );
    journal.flush().await.unwrap();
    assert_eq!(journal.history("s", 10).unwrap().len(), 2);
}
