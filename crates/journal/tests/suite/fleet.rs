//! PostgreSQL only: several gateways (fleet members) on one database, the
//! database lost mid-run, and a schema newer than this build.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use pretty_assertions::assert_eq;
use talon_journal::{CallJournal, FinishAck, JournalError, JournalOptions, Outcome};
use talon_state::members::{self, Member};
use talon_state::{PgConfig, PgPool};
use talon_test_support::postgres::PgServer;

use super::{Engine, Store, end, start};

fn register(pool: &PgPool, id: &str) {
    members::register(
        pool,
        &Member {
            id: id.into(),
            host: "test-host".into(),
            pid: std::process::id(),
            listen: "127.0.0.1:0".into(),
            version: "test".into(),
            started_at_ms: 0,
            heartbeat_at_ms: 0,
            live: true,
        },
    )
    .unwrap();
}

/// Keep these members live (the gateway heartbeats every 2 s; a test
/// that ran past the 10 s window would otherwise lose them).
fn heartbeat(pool: &PgPool, ids: &[&str]) {
    for id in ids {
        assert!(
            members::heartbeat(pool, id).unwrap(),
            "{id} is not registered"
        );
    }
}

/// What the gateway does with a side-effecting call: the tool runs only
/// after `started` returned `Ok`.
async fn run_call(journal: &CallJournal, id: &str, ran: &AtomicBool) -> Result<(), JournalError> {
    journal.started(start(id, "s", "exec")).await?;
    ran.store(true, Ordering::SeqCst);
    Ok(())
}

/// The server stops mid-run (an immediate shutdown: connections cut).
/// `started` fails with the typed `unavailable` error and the call does
/// not run; a terminal record queued before is kept and retried; once the
/// server is back the journal writes again by itself.
#[test]
fn a_lost_database_fails_started_typed_and_heals_after_restart() {
    let mut server = PgServer::start().unwrap();
    let db = server.create_database().unwrap();
    let mut config: PgConfig = server.config(&db);
    config.connect_timeout = Duration::from_secs(2);
    config.statement_timeout = Duration::from_secs(5);
    let pool = PgPool::connect(config).unwrap();
    register(&pool, "m-1");
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let (journal, _) = CallJournal::open_postgres(&pool, "m-1", JournalOptions::default()).unwrap();
    rt.block_on(async {
        journal.started(start("before", "s", "exec")).await.unwrap();
        journal.flush().await.unwrap();
    });

    server.stop().unwrap();

    let ran = AtomicBool::new(false);
    let err = rt.block_on(run_call(&journal, "during", &ran)).unwrap_err();
    assert!(err.is_unavailable(), "{err:?}");
    assert_eq!(err.code(), "unavailable");
    assert!(
        !ran.load(Ordering::SeqCst),
        "the call ran without its record"
    );
    // A terminal record is accepted and kept for retry; flush says why it
    // is not durable yet.
    assert_eq!(
        journal.finish("before", end(Outcome::Ok, "done")).unwrap(),
        FinishAck::Queued
    );
    let err = rt.block_on(journal.flush()).unwrap_err();
    assert!(err.is_unavailable(), "{err:?}");
    // Reads fail typed too.
    let err = journal.get("before").unwrap_err();
    assert!(err.is_unavailable(), "{err:?}");
    assert!(journal.stats().failed_commits >= 1);

    server.start_again().unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    let healed = loop {
        let ran = AtomicBool::new(false);
        match rt.block_on(run_call(&journal, "after", &ran)) {
            Ok(()) => break ran.load(Ordering::SeqCst),
            Err(e) if Instant::now() < deadline => {
                assert!(e.is_unavailable(), "{e:?}");
                assert!(!ran.load(Ordering::SeqCst));
                std::thread::sleep(Duration::from_millis(200));
            }
            Err(e) => panic!("the journal did not write again after the restart: {e:?}"),
        }
    };
    assert!(healed);
    rt.block_on(journal.flush()).unwrap();
    // The `started` record committed before the crash survived it (the
    // pool's connections commit with `synchronous_commit = on`), the kept
    // terminal record landed, and
    // the refused call left no row: its id is still free.
    assert_eq!(
        journal.get("before").unwrap().unwrap().outcome(),
        Some(Outcome::Ok)
    );
    assert_eq!(journal.get("during").unwrap(), None);
    rt.block_on(journal.started(start("during", "s", "exec")))
        .unwrap();
    assert_eq!(journal.get("after").unwrap().unwrap().end, None);
    assert_eq!(journal.stats().lost_records, 0);
    drop(journal);
}

fn interrupted_ids(calls: &[talon_journal::InterruptedCall]) -> Vec<&str> {
    calls.iter().map(|c| c.call_id.as_str()).collect()
}

/// Two gateways on one database: each call row carries its member; one
/// member's recovery never touches the other's live calls (nor its own),
/// only those of a member that is gone; a call id is unique across the
/// fleet; a late terminal record from a member declared gone loses.
#[test]
fn recovery_touches_only_members_that_are_gone() {
    let store = Store::new(Engine::Postgres);
    let pool = store.pool();
    register(pool, "m-a");
    register(pool, "m-b");
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let (a, _) = CallJournal::open_postgres(pool, "m-a", JournalOptions::default()).unwrap();
    let (b, report) = CallJournal::open_postgres(pool, "m-b", JournalOptions::default()).unwrap();
    assert!(report.interrupted.is_empty());
    // A member that never registered (or whose row was pruned) is gone.
    let (gone, _) = CallJournal::open_postgres(pool, "m-gone", JournalOptions::default()).unwrap();
    rt.block_on(async {
        a.started(start("a-1", "sa", "exec")).await.unwrap();
        b.started(start("b-1", "sb", "exec")).await.unwrap();
        gone.started(start("gone-1", "sg", "write")).await.unwrap();
        // One call id across the fleet.
        let err = b.started(start("a-1", "sb", "exec")).await.unwrap_err();
        assert!(matches!(err, JournalError::DuplicateCall { .. }), "{err:?}");
    });
    drop(gone);
    assert_eq!(store.count("member_id = 'm-a' AND call_id = 'a-1'"), 1);
    assert_eq!(store.count("member_id = 'm-b' AND call_id = 'b-1'"), 1);

    // A's recovery: only the gone member's call.
    heartbeat(pool, &["m-a", "m-b"]);
    let found = a.recover_departed().unwrap();
    assert_eq!(interrupted_ids(&found), ["gone-1"]);
    assert_eq!(found[0].session_key, "sg");
    let gone_1 = a.get("gone-1").unwrap().unwrap().end.unwrap();
    assert_eq!(gone_1.outcome, Outcome::Interrupted);
    assert!(gone_1.summary.contains("not re-run"), "{}", gone_1.summary);
    // Its duration runs from its start (a minute ago) to the recovery.
    assert!(
        (59_000_000..600_000_000).contains(&gone_1.duration_us),
        "{}",
        gone_1.duration_us
    );
    assert_eq!(found[0].tool_call_id.as_deref(), Some("tc-gone-1"));
    // Nothing left for B; a third gateway starting up recovers nothing of
    // the live ones either.
    assert!(b.recover_departed().unwrap().is_empty());
    register(pool, "m-c");
    heartbeat(pool, &["m-a", "m-b"]);
    let (c, report) = CallJournal::open_postgres(pool, "m-c", JournalOptions::default()).unwrap();
    assert!(report.interrupted.is_empty(), "{report:?}");
    assert_eq!(a.get("b-1").unwrap().unwrap().end, None);
    assert_eq!(b.get("a-1").unwrap().unwrap().end, None);

    // B stops heartbeating (its process hangs or died without leaving):
    // past the live window, A recovers B's call, and B's late terminal
    // record does not overwrite it.
    store
        .execute("UPDATE talon_members SET heartbeat_at_ms = 0 WHERE id = 'm-b'")
        .unwrap();
    heartbeat(pool, &["m-a", "m-c"]);
    let found = c.recover_departed().unwrap();
    assert_eq!(interrupted_ids(&found), ["b-1"]);
    assert_eq!(
        b.finish("b-1", end(Outcome::Ok, "late")).unwrap(),
        FinishAck::Queued
    );
    rt.block_on(b.flush()).unwrap();
    assert_eq!(b.stats().ignored_terminals, 1);
    assert_eq!(
        a.get("b-1").unwrap().unwrap().outcome(),
        Some(Outcome::Interrupted)
    );
    // A's own call is still in flight and finishes normally.
    assert_eq!(
        a.finish("a-1", end(Outcome::Ok, "done")).unwrap(),
        FinishAck::Queued
    );
    rt.block_on(a.flush()).unwrap();
    assert_eq!(c.get("a-1").unwrap().unwrap().outcome(), Some(Outcome::Ok));
    assert_eq!(store.count("outcome IS NULL"), 0);
}

/// A database whose journal schema is newer than this build is refused
/// with the foundation's `schema_newer` code, and left alone.
#[test]
fn a_newer_schema_on_postgres_is_refused_untouched() {
    let store = Store::new(Engine::Postgres);
    drop(store.open().unwrap());
    store
        .execute("UPDATE talon_schema SET version = 99 WHERE store = 'journal'")
        .unwrap();
    let err = store.open().unwrap_err();
    assert_eq!(err.code(), "schema_newer", "{err:?}");
    assert!(!err.is_unavailable());
    assert_eq!(
        store
            .execute(
                "UPDATE talon_schema SET version = version WHERE store = 'journal' AND version = 99"
            )
            .unwrap(),
        1
    );
}

/// A member id the journal cannot store is refused by name.
#[test]
fn a_bad_member_id_is_refused() {
    let store = Store::new(Engine::Postgres);
    for bad in ["", "a\nb"] {
        let err =
            CallJournal::open_postgres(store.pool(), bad, JournalOptions::default()).unwrap_err();
        assert!(
            matches!(
                err,
                JournalError::Invalid {
                    field: "memberId",
                    ..
                }
            ),
            "{err:?}"
        );
    }
}

/// First terminal wins in SQL, not only in one handle's memory: two
/// members finish the same calls at once with different outcomes; each
/// call keeps exactly one terminal record, and exactly one of the two
/// writers counted it written.
#[test]
fn racing_finishes_from_two_members_keep_one_terminal_each() {
    const CALLS: usize = 200;
    let store = Store::new(Engine::Postgres);
    let pool = store.pool();
    register(pool, "m-a");
    register(pool, "m-b");
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let (a, _) = CallJournal::open_postgres(pool, "m-a", JournalOptions::default()).unwrap();
    let (b, _) = CallJournal::open_postgres(pool, "m-b", JournalOptions::default()).unwrap();
    rt.block_on(async {
        for i in 0..CALLS {
            a.started(start(&format!("c{i}"), "s", "exec"))
                .await
                .unwrap();
        }
        let (ja, jb) = (a.clone(), b.clone());
        let fa = tokio::spawn(async move {
            for i in 0..CALLS {
                let ack = ja
                    .finish_wait(&format!("c{i}"), end(Outcome::Ok, "a"))
                    .await
                    .unwrap();
                assert_eq!(ack, FinishAck::Queued);
            }
            ja.flush().await.unwrap();
        });
        let fb = tokio::spawn(async move {
            for i in (0..CALLS).rev() {
                // B does not have the call open: it reads the row, then
                // queues its terminal record if none is stored yet.
                let _ = jb
                    .finish_wait(&format!("c{i}"), end(Outcome::Cancelled, "b"))
                    .await
                    .unwrap();
            }
            jb.flush().await.unwrap();
        });
        fa.await.unwrap();
        fb.await.unwrap();
    });
    assert_eq!(store.rows() as usize, CALLS);
    assert_eq!(store.count("outcome IS NULL"), 0);
    let written_a = store.count("outcome = 'ok' AND summary = 'a'");
    let written_b = store.count("outcome = 'cancelled' AND summary = 'b'");
    assert_eq!((written_a + written_b) as usize, CALLS);
    let (sa, sb) = (a.stats(), b.stats());
    let written_a = u64::try_from(written_a).unwrap();
    // A wrote its starts and the terminal records it won; the rest of its
    // terminal records were ignored by the database, not overwritten.
    assert_eq!(sa.committed_records, CALLS as u64 + written_a, "{sa:?}");
    assert_eq!(sa.ignored_terminals, CALLS as u64 - written_a, "{sa:?}");
    assert_eq!(
        sb.committed_records,
        u64::try_from(written_b).unwrap(),
        "{sb:?}"
    );
}

/// Several gateways starting at once on a fresh database: the migration
/// runs once (under the foundation's advisory lock) and every open works.
#[test]
fn gateways_opening_at_once_migrate_once() {
    let store = Store::new(Engine::Postgres);
    let opens: Vec<_> = (0..4)
        .map(|n| {
            let pool = store.pool().clone();
            std::thread::spawn(move || {
                CallJournal::open_postgres(&pool, &format!("m-{n}"), JournalOptions::default()).map(
                    |(journal, report)| {
                        drop(journal);
                        report.created
                    },
                )
            })
        })
        .collect();
    let created: Vec<bool> = opens
        .into_iter()
        .map(|t| t.join().unwrap().unwrap())
        .collect();
    assert!(created.iter().any(|c| *c), "{created:?}");
    assert_eq!(
        store
            .execute(
                "UPDATE talon_schema SET version = version WHERE store = 'journal' AND version = 1"
            )
            .unwrap(),
        1
    );
}

/// Without anyone asking, a journal on PostgreSQL recovers the calls of a
/// member that has gone within about one live window (its recovery
/// thread), and leaves its own call alone.
#[test]
fn departed_members_are_recovered_on_a_timer() {
    let store = Store::new(Engine::Postgres);
    let pool = store.pool();
    register(pool, "m-a");
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let (a, _) = CallJournal::open_postgres(pool, "m-a", JournalOptions::default()).unwrap();
    let (gone, _) = CallJournal::open_postgres(pool, "m-gone", JournalOptions::default()).unwrap();
    rt.block_on(async {
        a.started(start("mine", "s", "exec")).await.unwrap();
        gone.started(start("theirs", "s", "exec")).await.unwrap();
    });
    drop(gone);
    let began = Instant::now();
    let deadline = began + talon_state::members::LIVE_WINDOW * 2;
    loop {
        heartbeat(pool, &["m-a"]);
        if a.get("theirs").unwrap().unwrap().end.is_some() {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "not recovered within {:?}",
            began.elapsed()
        );
        std::thread::sleep(Duration::from_millis(250));
    }
    assert_eq!(
        a.get("theirs").unwrap().unwrap().outcome(),
        Some(Outcome::Interrupted)
    );
    assert_eq!(a.get("mine").unwrap().unwrap().end, None);
}
