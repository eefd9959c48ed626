//! The session store on a 10,000-message session, on each engine in the
//! same run: the last 50 messages (what `sessions_history` reads) and a
//! two-word search, each beside the same query run raw on the same database
//! (the floor: a raw rusqlite connection to the file, a raw statement on
//! the PostgreSQL pool). PostgreSQL is a private server on loopback
//! started by the bench (`talon_test_support::postgres`).
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::json;
use talon_sessions::{Role, SessionRecord, SessionStatus, SessionStore};

const MESSAGES: u64 = 10_000;
const KEY: &str = "agent:main:gw:bench";

fn fill(store: &SessionStore) {
    store
        .save(&SessionRecord {
            key: KEY.into(),
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
        store.append_message(KEY, role, None, &text, i + 2).unwrap();
    }
}

fn bench(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("talon.db");
    let store = SessionStore::open(&path).unwrap();
    fill(&store);
    let raw = rusqlite::Connection::open(&path).unwrap();
    let keys = vec![KEY.to_owned()];
    let mut g = c.benchmark_group("sessions");
    g.bench_function("history_last_50_of_10000", |b| {
        b.iter(|| store.messages(KEY, 50, None).unwrap());
    });
    g.bench_function("floor_raw_select_last_50", |b| {
        let mut stmt = raw
            .prepare_cached(
                "SELECT seq, session_key, at_ms, role, source, text, truncated FROM messages
                 WHERE session_key = ?1 ORDER BY seq DESC LIMIT 50",
            )
            .unwrap();
        b.iter(|| {
            stmt.query_map([KEY], |r| {
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
            stmt.query_map([format!("[\"{KEY}\"]")], |r| r.get::<_, String>(5))
                .unwrap()
                .count()
        });
    });

    let db = talon_test_support::postgres::shared_database().unwrap();
    let pool = db.pool().unwrap();
    let pg = SessionStore::open_postgres(&pool).unwrap();
    fill(&pg);
    g.bench_function("postgres_history_last_50_of_10000", |b| {
        b.iter(|| pg.messages(KEY, 50, None).unwrap());
    });
    g.bench_function("postgres_floor_raw_select_last_50", |b| {
        b.iter(|| {
            pool.run(|c| {
                let rows = c.query(
                    "SELECT seq, session_key, at_ms, role, source, text, truncated
                     FROM session_messages WHERE session_key = $1 ORDER BY seq DESC LIMIT 50",
                    &[&KEY],
                )?;
                let read: Vec<_> = rows
                    .iter()
                    .map(|r| {
                        (
                            r.get::<_, i64>(0),
                            r.get::<_, String>(1),
                            r.get::<_, i64>(2),
                            r.get::<_, String>(3),
                            r.get::<_, Option<String>>(4),
                            r.get::<_, String>(5),
                            r.get::<_, bool>(6),
                        )
                    })
                    .collect();
                Ok(read.len())
            })
            .unwrap()
        });
    });
    g.bench_function("postgres_search_two_words_in_10000", |b| {
        b.iter(|| pg.search_messages(&keys, "module 42", 10).unwrap());
    });
    g.bench_function("postgres_floor_raw_like_two_words", |b| {
        b.iter(|| {
            pool.run(|c| {
                let rows = c.query(
                    "SELECT seq, session_key, at_ms, role, source, text, truncated
                     FROM session_messages WHERE session_key = ANY($1)
                     AND text LIKE '%module%' AND text LIKE '%42%' ORDER BY seq DESC LIMIT 10",
                    &[&vec![KEY.to_owned()]],
                )?;
                Ok(rows.len())
            })
            .unwrap()
        });
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
