//! Call journal costs: a whole record queued and committed in a batch (the
//! path of idempotent tools), a durable `started` + `finish` pair (the
//! path of non-idempotent tools), and a session history read.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::hint::black_box;
use std::sync::atomic::{AtomicU64, Ordering};

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use talon_journal::{CallEnd, CallJournal, CallStart, Outcome, params_digest};

static NEXT: AtomicU64 = AtomicU64::new(0);

fn start(session: &str, digest: &str) -> CallStart {
    CallStart {
        call_id: format!("call-{}", NEXT.fetch_add(1, Ordering::Relaxed)),
        session_key: session.into(),
        agent_id: "main".into(),
        tool: "session_status".into(),
        params_digest: digest.into(),
        at_ms: 1_000,
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
    group.throughput(Throughput::Elements(1));
    group.bench_function("record_one", |b| {
        b.iter(|| {
            black_box(
                journal
                    .record(start("agent:main:bench", &digest), end())
                    .unwrap(),
            )
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
    rt.block_on(journal.flush()).unwrap();
    group.bench_function("history_50", |b| {
        b.iter(|| black_box(journal.history("agent:main:bench", 50).unwrap()));
    });
    group.bench_function("params_digest_small", |b| {
        let params = serde_json::json!({"command": "make test", "workdir": "/work", "timeout": 60});
        b.iter(|| black_box(params_digest(&params)));
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
