//! Call journal costs: a whole record queued and committed in a batch (the
//! path of idempotent tools), a durable `started` + `finish` pair (the
//! path of non-idempotent tools), and a session history read — on SQLite
//! and, in the same run, on PostgreSQL (a private server started by
//! `talon_test_support::postgres::PgServer`; a missing PostgreSQL fails
//! the bench naming `cargo xtask postgres-install`).
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::hint::black_box;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use talon_journal::{
    CallEnd, CallJournal, CallStart, Durability, JournalOptions, Outcome, params_digest,
};

static NEXT: AtomicU64 = AtomicU64::new(0);

fn start(session: &str, digest: &str) -> CallStart {
    CallStart {
        call_id: format!("call-{}", NEXT.fetch_add(1, Ordering::Relaxed)),
        session_key: session.into(),
        agent_id: "main".into(),
        tool: "session_status".into(),
        params_digest: digest.into(),
        at_ms: 1_000,
        tool_call_id: None,
    }
}

fn end() -> CallEnd {
    CallEnd {
        outcome: Outcome::Ok,
        summary: "ok".into(),
        at_ms: 1_001,
        duration_us: 40,
    }
}

fn bench(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let (journal, _) = CallJournal::open(&dir.path().join("journal.sqlite")).unwrap();
    let digest = params_digest(&serde_json::json!({"sessionKey": "agent:main:main"}));

    let mut group = c.benchmark_group("journal");
    const BURST: u64 = 1000;
    group.throughput(Throughput::Elements(BURST));
    group.bench_function("record_1000_then_flush", |b| {
        b.iter(|| {
            for _ in 0..BURST {
                let ack = journal
                    .record(start("agent:main:bench", &digest), end())
                    .unwrap();
                let _ = black_box(ack);
            }
            rt.block_on(journal.flush()).unwrap();
        });
    });
    // Baseline, same run: the naive journal — one SQLite transaction per
    // record on the same kind of file (WAL, synchronous=FULL), no batching.
    let naive_path = dir.path().join("naive.sqlite");
    let naive = rusqlite::Connection::open(&naive_path).unwrap();
    naive
        .execute_batch(
            "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL;
             CREATE TABLE calls (call_id TEXT PRIMARY KEY, session_key TEXT, agent_id TEXT,
               tool TEXT, params_digest TEXT, outcome TEXT, summary TEXT, at_ms INTEGER,
               ended_at_ms INTEGER, duration_us INTEGER);",
        )
        .unwrap();
    group.bench_function("baseline_naive_1000_transactions", |b| {
        b.iter(|| {
            for _ in 0..BURST {
                let s = start("agent:main:bench", &digest);
                let e = end();
                naive
                    .execute(
                        "INSERT INTO calls VALUES (?1, ?2, ?3, ?4, ?5, 'ok', ?6, ?7, ?8, ?9)",
                        rusqlite::params![
                            s.call_id,
                            s.session_key,
                            s.agent_id,
                            s.tool,
                            s.params_digest,
                            e.summary,
                            i64::try_from(s.at_ms).unwrap(),
                            i64::try_from(e.at_ms).unwrap(),
                            i64::try_from(e.duration_us).unwrap()
                        ],
                    )
                    .unwrap();
            }
        });
    });
    group.throughput(Throughput::Elements(1));
    // The caller's side only: validate, update the in-flight map, enqueue.
    // The writer's work is flushed outside the timed region.
    group.bench_function("record_enqueue_only", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            let mut done = 0;
            while done < iters {
                let chunk = (iters - done).min(4096);
                let calls: Vec<_> = (0..chunk)
                    .map(|_| start("agent:main:bench", &digest))
                    .collect();
                let began = Instant::now();
                for call in calls {
                    let _ = black_box(journal.record(call, end()).unwrap());
                }
                total += began.elapsed();
                rt.block_on(journal.flush()).unwrap();
                done += chunk;
            }
            total
        });
    });
    rt.block_on(journal.flush()).unwrap();
    group.bench_function("started_durable_then_finish", |b| {
        b.iter(|| {
            let s = start("agent:main:exec", &digest);
            let id = s.call_id.clone();
            rt.block_on(journal.started(s)).unwrap();
            let _ = black_box(journal.finish(&id, end()).unwrap());
        });
    });
    let (light, _) = CallJournal::open_with(
        &dir.path().join("light.sqlite"),
        JournalOptions::with_durability(Durability::ProcessCrash),
    )
    .unwrap();
    group.bench_function("started_process_crash_durability_then_finish", |b| {
        b.iter(|| {
            let s = start("agent:main:exec", &digest);
            let id = s.call_id.clone();
            rt.block_on(light.started(s)).unwrap();
            let _ = black_box(light.finish(&id, end()).unwrap());
        });
    });
    rt.block_on(journal.flush()).unwrap();
    group.bench_function("history_50", |b| {
        b.iter(|| black_box(journal.history("agent:main:bench", 50).unwrap()));
    });
    postgres(&mut group, &rt, &digest);
    group.bench_function("params_digest_small", |b| {
        let params = serde_json::json!({"command": "make test", "workdir": "/work", "timeout": 60});
        b.iter(|| black_box(params_digest(&params)));
    });
    group.finish();
}

/// The same paths on PostgreSQL, one database on a private loopback
/// server, the journal writing as one fleet member.
fn postgres(
    group: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>,
    rt: &tokio::runtime::Runtime,
    digest: &str,
) {
    let server = talon_test_support::postgres::PgServer::start()
        .expect("the PostgreSQL half of the journal bench needs a server");
    let db = server.create_database().unwrap();
    let pool = talon_state::PgPool::connect(server.config(&db)).unwrap();
    let (journal, _) =
        CallJournal::open_postgres(&pool, "bench-member", JournalOptions::default()).unwrap();
    const BURST: u64 = 1000;
    group.throughput(Throughput::Elements(BURST));
    group.bench_function("postgres_record_1000_then_flush", |b| {
        b.iter(|| {
            for _ in 0..BURST {
                let ack = journal
                    .record(start("agent:main:bench", digest), end())
                    .unwrap();
                let _ = black_box(ack);
            }
            rt.block_on(journal.flush()).unwrap();
        });
    });
    group.throughput(Throughput::Elements(1));
    group.bench_function("postgres_started_durable_then_finish", |b| {
        b.iter(|| {
            let s = start("agent:main:exec", digest);
            let id = s.call_id.clone();
            rt.block_on(journal.started(s)).unwrap();
            let _ = black_box(journal.finish(&id, end()).unwrap());
        });
    });
    rt.block_on(journal.flush()).unwrap();
    group.bench_function("postgres_history_50", |b| {
        b.iter(|| black_box(journal.history("agent:main:bench", 50).unwrap()));
    });
    drop(journal);
    drop(pool);
    drop(server);
}

criterion_group!(benches, bench);
criterion_main!(benches);
