//! The pool's hand-over cost against the raw driver on the same server in
//! the same run: `SELECT 1` on a `postgres::Client` owned by the bench
//! thread (the floor) and through `PgPool::run` (a worker thread and two
//! channel hops); a lease renewal, the cron owner's steady cost.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use talon_state::{PgPool, lease};
use talon_test_support::postgres::PgServer;

fn bench(c: &mut Criterion) {
    let server = PgServer::start().unwrap();
    let db = server.create_database().unwrap();
    let config = server.config(&db);
    let mut raw: talon_state::postgres::Config = config.url.parse().unwrap();
    raw.password(server.password());
    let mut client = raw.connect(talon_state::postgres::NoTls).unwrap();
    let pool = PgPool::connect(config.with_pool_size(2)).unwrap();
    let mut g = c.benchmark_group("state");
    g.bench_function("raw_client_select_1 (floor)", |b| {
        b.iter(|| client.simple_query("SELECT 1").unwrap())
    });
    g.bench_function("pool_run_select_1", |b| {
        b.iter(|| {
            pool.run(|c| Ok(c.simple_query("SELECT 1").map(drop)?))
                .unwrap()
        })
    });
    let held = lease::acquire(&pool, "bench", "me", Duration::from_secs(60))
        .unwrap()
        .unwrap();
    g.bench_function("lease_renew", |b| {
        b.iter(|| {
            lease::renew(&pool, &held, Duration::from_secs(60))
                .unwrap()
                .unwrap()
        })
    });
    g.finish();
    drop(server);
}

criterion_group!(benches, bench);
criterion_main!(benches);
