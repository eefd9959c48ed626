//! Gateways on PostgreSQL against SQLite, in the same run: 8-way
//! `POST /tools/invoke` of `session_status` (each call journalled: a
//! write-ahead record and its terminal record) on one SQLite gateway, on
//! one gateway on PostgreSQL, and on three gateways sharing one PostgreSQL
//! database (8 clients each). Reports req/s and p50/p99, and the ratios to
//! the SQLite gateway of the same run. The PostgreSQL server is a private
//! cluster started here (Debian's `postgresql`, `cargo xtask
//! postgres-install`). Run with `cargo bench -p talon-gateway --bench
//! fleet`; the figures are also written to `target/fleet-bench.json`.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout
)]
#![allow(
    clippy::disallowed_methods,
    reason = "bench code starts its binaries directly"
)]

mod common;

use std::sync::Arc;
use std::time::{Duration, Instant};

use common::{Call, Daemon, HttpClient};
use serde_json::json;
use talon_test_support::postgres::PgServer;

const WAYS_PER_GATEWAY: usize = 8;
const CALLS_PER_WAY: usize = 500;
const PASSWORD_VAR: &str = "TALON_BENCH_PG_PASSWORD";

struct Figures {
    name: String,
    calls: usize,
    rps: f64,
    p50_us: f64,
    p99_us: f64,
}

/// `WAYS_PER_GATEWAY` keep-alive clients on each daemon, all released at
/// once; every client makes `CALLS_PER_WAY` calls after a warm-up.
async fn run(name: &str, daemons: &[Daemon]) -> Figures {
    let ways = daemons.len() * WAYS_PER_GATEWAY;
    let barrier = Arc::new(tokio::sync::Barrier::new(ways + 1));
    let mut handles = Vec::new();
    for d in daemons {
        for _ in 0..WAYS_PER_GATEWAY {
            let mut client = HttpClient::connect(d).await;
            let barrier = Arc::clone(&barrier);
            handles.push(tokio::spawn(async move {
                for _ in 0..50 {
                    client.invoke(Call::Status).await;
                }
                barrier.wait().await;
                let mut lat = Vec::with_capacity(CALLS_PER_WAY);
                for _ in 0..CALLS_PER_WAY {
                    let s = Instant::now();
                    client.invoke(Call::Status).await;
                    lat.push(s.elapsed());
                }
                lat
            }));
        }
    }
    barrier.wait().await;
    let t0 = Instant::now();
    let mut lat: Vec<Duration> = Vec::new();
    for h in handles {
        lat.extend(h.await.unwrap());
    }
    let wall = t0.elapsed();
    lat.sort_unstable();
    let pct =
        |p: f64| lat[((lat.len() as f64 * p) as usize).min(lat.len() - 1)].as_secs_f64() * 1e6;
    Figures {
        name: name.to_owned(),
        calls: lat.len(),
        rps: lat.len() as f64 / wall.as_secs_f64(),
        p50_us: pct(0.5),
        p99_us: pct(0.99),
    }
}

fn postgres_config(url: &str) -> String {
    json!({
        "state": { "backend": "postgres", "url": url, "password": format!("${{{PASSWORD_VAR}}}") }
    })
    .to_string()
}

fn main() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let server = PgServer::start().unwrap();
    let password = server.password().to_owned();
    let env = [(PASSWORD_VAR, password.as_str())];
    let mut results = Vec::new();
    {
        let d = common::start_with("{}", &[]);
        results.push(rt.block_on(run("1 gateway, SQLite", std::slice::from_ref(&d))));
    }
    {
        let url = server.url(&server.create_database().unwrap());
        let d = common::start_with(&postgres_config(&url), &env);
        results.push(rt.block_on(run("1 gateway, PostgreSQL", std::slice::from_ref(&d))));
    }
    {
        let url = server.url(&server.create_database().unwrap());
        let fleet: Vec<Daemon> = (0..3)
            .map(|_| common::start_with(&postgres_config(&url), &env))
            .collect();
        results.push(rt.block_on(run("3 gateways, one PostgreSQL", &fleet)));
    }
    let floor = results[0].rps;
    println!("\ntools.invoke (session_status, {WAYS_PER_GATEWAY} clients per gateway), same run");
    println!(
        "{:<30} {:>8} {:>10} {:>9} {:>9} {:>14}",
        "scenario", "calls", "req/s", "p50 µs", "p99 µs", "vs SQLite"
    );
    for f in &results {
        println!(
            "{:<30} {:>8} {:>10.0} {:>9.0} {:>9.0} {:>13.2}x",
            f.name,
            f.calls,
            f.rps,
            f.p50_us,
            f.p99_us,
            f.rps / floor
        );
    }
    let doc = json!({
        "scenarios": results.iter().map(|f| json!({
            "name": f.name, "calls": f.calls, "reqPerSec": f.rps,
            "p50Us": f.p50_us, "p99Us": f.p99_us, "vsSqlite": f.rps / floor,
        })).collect::<Vec<_>>(),
    });
    let out =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/fleet-bench.json");
    let _ = std::fs::write(out, serde_json::to_string_pretty(&doc).unwrap());
}
