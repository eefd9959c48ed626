use std::sync::Arc;
use std::time::{Duration, Instant};

use pretty_assertions::assert_eq;
use talon_journal::{FinishAck, Outcome};

use super::{Store, end, start};

const TASKS: usize = 8;
const CALLS_PER_TASK: usize = 250;

on_each_engine!(
    parallel_calls_with_racing_finishes_keep_one_terminal_each,
    threads = 4
);
/// 8 tasks × 250 calls, a mix of write-ahead and whole records, with two
/// racers finishing every write-ahead call: exactly one terminal record per
/// call, the stored one is the racer that got `Queued`, and no call leaks.
async fn parallel_calls_with_racing_finishes_keep_one_terminal_each(store: Store) {
    let (journal, _) = store.open().unwrap();
    let started_at = Instant::now();
    let mut tasks = Vec::new();
    for t in 0..TASKS {
        let journal = journal.clone();
        tasks.push(tokio::spawn(async move {
            let mut winners = Vec::new();
            for i in 0..CALLS_PER_TASK {
                let id = format!("t{t}-{i}");
                let session = format!("session-{t}");
                if i % 5 == 0 {
                    journal.started(start(&id, &session, "exec")).await.unwrap();
                    // Completion and cancellation race for the terminal record.
                    let (a, b) = (journal.clone(), journal.clone());
                    let (ida, idb) = (id.clone(), id.clone());
                    let ok = tokio::spawn(async move { a.finish(&ida, end(Outcome::Ok, "ok")) });
                    let cancel = tokio::spawn(async move {
                        b.finish(&idb, end(Outcome::Cancelled, "cancelled"))
                    });
                    let (ok, cancel) = (ok.await.unwrap().unwrap(), cancel.await.unwrap().unwrap());
                    let winner = match (ok, cancel) {
                        (FinishAck::Queued, FinishAck::AlreadyFinished(Outcome::Ok)) => Outcome::Ok,
                        (FinishAck::AlreadyFinished(Outcome::Cancelled), FinishAck::Queued) => {
                            Outcome::Cancelled
                        }
                        other => panic!("both or neither won for {id}: {other:?}"),
                    };
                    winners.push((id, winner));
                } else {
                    let ack = journal
                        .record(start(&id, &session, "read"), end(Outcome::Ok, ""))
                        .unwrap();
                    assert_eq!(ack, FinishAck::Queued);
                }
            }
            winners
        }));
    }
    let mut winners = Vec::new();
    for task in tasks {
        winners.extend(task.await.unwrap());
    }
    journal.flush().await.unwrap();
    assert!(
        started_at.elapsed() < Duration::from_secs(30),
        "took {:?}",
        started_at.elapsed()
    );

    assert_eq!(store.rows() as usize, TASKS * CALLS_PER_TASK);
    assert_eq!(store.count("outcome IS NULL"), 0);
    for (id, winner) in &winners {
        assert_eq!(
            journal.get(id).unwrap().unwrap().outcome(),
            Some(*winner),
            "{id}"
        );
    }
    let stats = journal.stats();
    assert_eq!(stats.in_flight, 0, "{stats:?}");
    assert_eq!(stats.queued, 0, "{stats:?}");
    assert_eq!(stats.ignored_terminals, 0, "{stats:?}");
    // Group commit: far fewer transactions than records.
    assert!(
        stats.committed_batches < stats.committed_records,
        "{stats:?}"
    );
    // Per-session history holds exactly that session's calls.
    let history = journal.history("session-3", 1000).unwrap();
    assert_eq!(history.len(), CALLS_PER_TASK);
    assert!(history.iter().all(|r| r.call_id.starts_with("t3-")));
}

on_each_engine!(sync record_works_from_plain_threads);
/// Clones used from plain threads (no runtime): `record` and `finish` are
/// synchronous.
fn record_works_from_plain_threads(store: Store) {
    let (journal, _) = store.open().unwrap();
    let journal = Arc::new(journal);
    let threads: Vec<_> = (0..4)
        .map(|t| {
            let journal = Arc::clone(&journal);
            std::thread::spawn(move || {
                for i in 0..100 {
                    let _ = journal
                        .record(
                            start(&format!("p{t}-{i}"), "s", "read"),
                            end(Outcome::Ok, ""),
                        )
                        .unwrap();
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    drop(journal);
    // Dropping the last handle committed everything.
    assert_eq!(store.rows(), 400);
}
