//! The storage seam itself, on each engine: the same writes give the same
//! answers on SQLite and on PostgreSQL, including what only a second
//! writer (or a batch holding one call id twice) can produce, which the
//! handle's in-flight map otherwise keeps from the engine.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use super::*;
use crate::options::Durability;
use crate::record::Outcome;

/// One engine: `writer` plays the process that wrote, `recoverer` the one
/// that opens next (the same file on SQLite; another fleet member on
/// PostgreSQL, since a member never recovers its own calls).
struct Engine {
    name: &'static str,
    writer: Arc<dyn JournalBackend>,
    recoverer: Arc<dyn JournalBackend>,
    _keep: Box<dyn std::any::Any>,
}

fn engines() -> Vec<Engine> {
    let dir = tempfile::tempdir().unwrap();
    let (sqlite, _) =
        crate::sqlite::SqliteBackend::open(&dir.path().join("j.sqlite"), Durability::Full).unwrap();
    let sqlite: Arc<dyn JournalBackend> = Arc::new(sqlite);
    #[allow(unused_mut)]
    let mut out = vec![Engine {
        name: "sqlite",
        writer: Arc::clone(&sqlite),
        recoverer: sqlite,
        _keep: Box::new(dir),
    }];
    #[cfg(feature = "postgres")]
    {
        use crate::postgres::PostgresBackend;
        let db = talon_test_support::postgres::shared_database().unwrap();
        let pool = db.pool().unwrap();
        let (writer, _) = PostgresBackend::open(&pool, "unit-writer", Durability::Full).unwrap();
        let (recoverer, _) =
            PostgresBackend::open(&pool, "unit-recoverer", Durability::Full).unwrap();
        out.push(Engine {
            name: "postgres",
            writer: Arc::new(writer),
            recoverer: Arc::new(recoverer),
            _keep: Box::new((db, pool)),
        });
    }
    out
}

fn call(id: &str, at_ms: u64) -> CallStart {
    CallStart {
        call_id: id.into(),
        session_key: "s".into(),
        agent_id: "a".into(),
        tool: "exec".into(),
        params_digest: "0".repeat(64),
        at_ms,
        tool_call_id: Some(format!("tc-{id}")),
    }
}

fn ended(outcome: Outcome, summary: &str, at_ms: u64) -> CallEnd {
    CallEnd {
        outcome,
        summary: summary.into(),
        at_ms,
        duration_us: 7,
    }
}

#[test]
fn a_batch_applies_in_order_and_the_first_record_of_a_call_wins() {
    for e in engines() {
        let (a, b) = (call("a", 1_000), call("b", 1_000));
        let (ok, cancelled) = (
            ended(Outcome::Ok, "first", 2_000),
            ended(Outcome::Cancelled, "second", 2_000),
        );
        let writes = [
            Write::Start(&a),
            Write::Start(&a),
            Write::Record {
                start: &b,
                end: &ok,
            },
            Write::Record {
                start: &b,
                end: &cancelled,
            },
            Write::Finish {
                call_id: "a",
                end: &ok,
            },
            Write::Finish {
                call_id: "a",
                end: &cancelled,
            },
            Write::Finish {
                call_id: "nobody",
                end: &ok,
            },
            Write::Prune { before_ms: 0 },
        ];
        let changed = e.writer.apply(&writes).unwrap();
        assert_eq!(changed, [1, 0, 1, 0, 1, 0, 0, 0], "{}", e.name);
        for id in ["a", "b"] {
            let end = e.writer.get(id).unwrap().unwrap().end.unwrap();
            assert_eq!(
                (end.outcome, end.summary.as_str()),
                (Outcome::Ok, "first"),
                "{} {id}",
                e.name
            );
        }
        // In a later batch too.
        assert_eq!(
            e.writer
                .apply(&[Write::Finish {
                    call_id: "a",
                    end: &cancelled
                }])
                .unwrap(),
            [0],
            "{}",
            e.name
        );
        assert!(e.writer.get("nobody").unwrap().is_none(), "{}", e.name);
        assert_eq!(e.writer.row_count().unwrap(), 2, "{}", e.name);
    }
}

#[test]
fn recovery_interrupts_calls_in_flight_and_times_them_from_their_start() {
    for e in engines() {
        let (c, done) = (call("c", 10_000), call("done", 10_000));
        let ok = ended(Outcome::Ok, "", 10_500);
        e.writer
            .apply(&[
                Write::Start(&c),
                Write::Record {
                    start: &done,
                    end: &ok,
                },
            ])
            .unwrap();
        let found = e.recoverer.recover(12_500).unwrap();
        assert_eq!(found.len(), 1, "{}", e.name);
        assert_eq!(found[0].call_id, "c");
        assert_eq!(found[0].tool_call_id.as_deref(), Some("tc-c"));
        let record = e.recoverer.get("c").unwrap().unwrap();
        let end = record.end.unwrap();
        assert_eq!(
            (end.outcome, end.at_ms, end.duration_us),
            (Outcome::Interrupted, 12_500, 2_500_000),
            "{}",
            e.name
        );
        assert_eq!(end.summary, crate::sqlite::INTERRUPTED_SUMMARY);
        assert_eq!(record.tool_call_id.as_deref(), Some("tc-c"));
        // Once: nothing is left to recover, and the finished call kept its end.
        assert!(
            e.recoverer.recover(13_000).unwrap().is_empty(),
            "{}",
            e.name
        );
        assert_eq!(
            e.recoverer.get("done").unwrap().unwrap().outcome(),
            Some(Outcome::Ok)
        );
    }
}

#[test]
fn retention_deletes_read_only_and_refused_calls_first_and_never_one_in_flight() {
    for e in engines() {
        let (changed, read, refused, running) = (
            call("changed", 1),
            call("read", 2),
            call("refused", 3),
            call("running", 4),
        );
        let (ok, blocked) = (
            ended(Outcome::Ok, "", 5),
            ended(Outcome::Blocked, "denied", 5),
        );
        e.writer
            .apply(&[
                Write::Start(&changed),
                Write::Record {
                    start: &read,
                    end: &ok,
                },
                Write::Record {
                    start: &refused,
                    end: &blocked,
                },
                Write::Start(&running),
                Write::Finish {
                    call_id: "changed",
                    end: &ok,
                },
            ])
            .unwrap();
        assert_eq!(
            e.writer.delete_oldest_terminal(10, true).unwrap(),
            2,
            "{}",
            e.name
        );
        assert!(e.writer.get("changed").unwrap().is_some(), "{}", e.name);
        assert_eq!(
            e.writer.delete_oldest_terminal(10, false).unwrap(),
            1,
            "{}",
            e.name
        );
        assert_eq!(e.writer.row_count().unwrap(), 1, "{}", e.name);
        assert_eq!(e.writer.get("running").unwrap().unwrap().end, None);
        assert!(e.writer.live_bytes().unwrap() > 0, "{}", e.name);
        e.writer.shrink().unwrap();
        let history = e.writer.history("s", 10).unwrap();
        assert_eq!(history.len(), 1, "{}", e.name);
        assert_eq!(
            e.writer.by_tool_call_id("s", "tc-running", 10).unwrap()[0].call_id,
            "running"
        );
    }
}
