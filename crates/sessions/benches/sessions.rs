//! The session store on a 10,000-message session: the last 50 messages
//! (what `sessions_history` reads) and a two-word search, each beside the
//! same query run on a raw SQLite connection to the same file (the floor).
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::json;
use talon_sessions::{Role, SessionRecord, SessionStatus, SessionStore};

const MESSAGES: u64 = 10_000;

fn bench(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("talon.db");
    let store = SessionStore::open(&path).unwrap();
    let key = "agent:main:gw:bench";
    store
        .save(&SessionRecord {
            key: key.into(),
            agent_id: "main".into(),
            parent_key: None,
            spawn_depth: 0,
            label: None,
            status: SessionStatus::Open,
            created_at_ms: 1,
            updated_at_ms: 1,
            params: json!({}),
        })
        .unwrap();
    for i in 0..MESSAGES {
        let role = if i % 2 == 0 {
            Role::User
        } else {
            Role::Assistant
        };
        let text = format!(
            "message {i}: the build of module {} finished in {} ms",
            i % 97,
            i % 1000
        );
        store.append_message(key, role, None, &text, i + 2).unwrap();
    }
    let raw = rusqlite::Connection::open(&path).unwrap();
    let mut g = c.benchmark_group("sessions");
    g.bench_function("history_last_50_of_10000", |b| {
        b.iter(|| store.messages(key, 50, None).unwrap());
    });
    g.bench_function("floor_raw_select_last_50", |b| {
        let mut stmt = raw
            .prepare_cached(
                "SELECT seq, session_key, at_ms, role, source, text, truncated FROM messages
                 WHERE session_key = ?1 ORDER BY seq DESC LIMIT 50",
            )
            .unwrap();
        b.iter(|| {
            stmt.query_map([key], |r| {
                Ok((
                    r.get::<_, i64>(0)?,
                    r.get::<_, String>(1)?,
                    r.get::<_, i64>(2)?,
                    r.get::<_, String>(3)?,
                    r.get::<_, Option<String>>(4)?,
                    r.get::<_, String>(5)?,
                    r.get::<_, bool>(6)?,
                ))
            })
            .unwrap()
            .count()
        });
    });
    let keys = vec![key.to_owned()];
    g.bench_function("search_two_words_in_10000", |b| {
        b.iter(|| store.search_messages(&keys, "module 42", 10).unwrap());
    });
    g.bench_function("floor_raw_like_two_words", |b| {
        let mut stmt = raw
            .prepare_cached(
                "SELECT seq, session_key, at_ms, role, source, text, truncated FROM messages
                 WHERE session_key IN (SELECT value FROM json_each(?1))
                 AND text LIKE '%module%' AND text LIKE '%42%' ORDER BY seq DESC LIMIT 10",
            )
            .unwrap();
        b.iter(|| {
            stmt.query_map([format!("[\"{key}\"]")], |r| r.get::<_, String>(5))
                .unwrap()
                .count()
        });
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
