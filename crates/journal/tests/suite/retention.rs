use std::path::Path;
use std::time::Duration;

use pretty_assertions::assert_eq;
use talon_journal::{CallEnd, Durability, JournalOptions, Outcome, Retention};

use super::{Engine, Store, end, raw, recent_ms, start};

/// The journal's footprint on disk: the database and its WAL.
fn on_disk(path: &Path) -> u64 {
    let mut wal = path.as_os_str().to_owned();
    wal.push("-wal");
    let size = |p: &Path| std::fs::metadata(p).map_or(0, |m| m.len());
    size(path) + size(Path::new(&wal))
}

on_each_engine!(
    a_size_limit_keeps_the_file_bounded_and_calls_in_flight,
    threads = 2
);
/// Under a size limit the file stays bounded however many calls are
/// journalled, read-only records go before those of calls that changed
/// something, and calls in flight are never deleted.
async fn a_size_limit_keeps_the_file_bounded_and_calls_in_flight(store: Store) {
    const MAX: u64 = 256 * 1024;
    const CALLS: usize = 20_000;
    const BATCH: usize = 500;
    let path = store.path();
    let retention = Retention::new(None, Some(MAX)).checked_every(Duration::ZERO);
    let options = JournalOptions::with_durability(Durability::ProcessCrash).retention(retention);
    let (journal, _) = store.open_with(options).unwrap();

    // The oldest rows: calls still running, and one finished side effect.
    for i in 0..3 {
        journal
            .started(start(&format!("running-{i}"), "s", "exec"))
            .await
            .unwrap();
    }
    journal
        .started(start("changed", "s", "write"))
        .await
        .unwrap();
    let _ = journal
        .finish("changed", end(Outcome::Ok, "wrote a.txt"))
        .unwrap();

    let summary = "x".repeat(200);
    let mut largest = 0;
    for i in 0..CALLS {
        let outcome = if i % 5 == 0 {
            Outcome::Blocked
        } else {
            Outcome::Ok
        };
        let _ = journal
            .record_wait(start(&format!("r{i}"), "s", "read"), end(outcome, &summary))
            .await
            .unwrap();
        if (i + 1) % BATCH == 0 {
            // The writer checks retention right after the commit a flush
            // waits for; the second flush returns once that check is done.
            journal.flush().await.unwrap();
            journal.flush().await.unwrap();
            if store.engine() == Engine::Sqlite {
                largest = largest.max(on_disk(&path));
            }
        }
    }
    // Unbounded, 20 000 calls take megabytes; here the file stays within a
    // small multiple of the limit (the WAL of one batch on top). On
    // PostgreSQL the server owns the files: the rows kept are the measure.
    let rows = store.rows();
    assert!((rows as usize) < CALLS / 4, "{rows} rows kept of {CALLS}");
    if store.engine() == Engine::Sqlite {
        assert!(
            largest <= 4 * MAX,
            "the journal grew to {largest} bytes under a {MAX}-byte limit"
        );
    }
    assert!(journal.stats().pruned_records >= (CALLS as u64) / 2);
    // The newest record is kept; the oldest read-only ones went.
    assert!(journal.get(&format!("r{}", CALLS - 1)).unwrap().is_some());
    assert_eq!(journal.get("r0").unwrap(), None);
    // The side effect's record outlived the read-only records after it.
    assert_eq!(
        journal.get("changed").unwrap().unwrap().outcome(),
        Some(Outcome::Ok)
    );
    // Calls in flight survive every round and still finish normally.
    for i in 0..3 {
        let id = format!("running-{i}");
        let record = journal.get(&id).unwrap().unwrap();
        assert_eq!(record.end, None, "{id}");
        let _ = journal.finish(&id, end(Outcome::Ok, "done")).unwrap();
    }
    journal.flush().await.unwrap();
    assert_eq!(
        journal.get("running-2").unwrap().unwrap().outcome(),
        Some(Outcome::Ok)
    );
}

on_each_engine!(an_age_limit_drops_old_terminal_records_at_open);
/// Terminal records past the age limit go when the journal opens; recent
/// ones and calls in flight stay.
async fn an_age_limit_drops_old_terminal_records_at_open(store: Store) {
    let day = 86_400_000;
    {
        let (journal, _) = store
            .open_with(JournalOptions::default().retention(Retention::keep_all()))
            .unwrap();
        let old = CallEnd {
            at_ms: recent_ms() - 40 * day,
            ..end(Outcome::Ok, "")
        };
        let young = CallEnd {
            at_ms: recent_ms() - 2 * day,
            ..end(Outcome::Ok, "")
        };
        let _ = journal.record(start("old", "s", "read"), old).unwrap();
        let _ = journal.record(start("young", "s", "read"), young).unwrap();
        journal
            .started(start("running", "s", "exec"))
            .await
            .unwrap();
        journal.flush().await.unwrap();
    }
    // Kept with no limits; a 30-day limit (the default) drops `old`.
    let (journal, _) = store
        .open_with(JournalOptions::default().retention(Retention::keep_all()))
        .unwrap();
    assert!(journal.get("old").unwrap().is_some());
    drop(journal);
    let (journal, report) = store.open().unwrap();
    assert_eq!(journal.get("old").unwrap(), None);
    assert!(journal.get("young").unwrap().is_some());
    // `running` was in flight at the first reopen, so it is `interrupted`
    // now, and recent: kept.
    assert!(report.interrupted.is_empty());
    assert_eq!(
        journal.get("running").unwrap().unwrap().outcome(),
        Some(Outcome::Interrupted)
    );
    assert_eq!(journal.stats().pruned_records, 1);
    // The file uses incremental vacuum, so freed pages can be returned.
    if store.engine() == Engine::Sqlite {
        let mode: i64 = raw(&store.path())
            .pragma_query_value(None, "auto_vacuum", |r| r.get(0))
            .unwrap();
        assert_eq!(mode, 2);
    }
}
