//! `memory_search` over a 10,000-note index, against a floor measured in
//! the same run: the plain SQLite FTS5 query (same file, same rare word,
//! `bm25` order, no Talon code). Also the index build per MB.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    missing_docs,
    clippy::print_stdout
)]

use std::hint::black_box;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use serde_json::json;
use talon_memory::{IndexSettings, MemoryIndex, MemorySearchTool, host_bridge};
use talon_tool_catalog::{CancellationToken, Tool, ToolCall, ToolContext};

const NOTES: usize = 10_000;

fn codename(i: usize) -> String {
    const C: &[u8] = b"bdfgklmnprstvz";
    const V: &[u8] = b"aeiou";
    let mut n = i + 7919;
    let mut s = String::new();
    for _ in 0..4 {
        s.push(C[n % C.len()] as char);
        n /= C.len();
        s.push(V[n % V.len()] as char);
        n /= V.len();
    }
    s.push_str(&format!("{}", i % 97));
    s
}

/// The same corpus as the recall test: note `i` names project
/// `codename(i)`, its database and port. Returns the bytes written.
fn write_corpus(ws: &Path, n: usize) -> u64 {
    let dbs = ["postgres", "sqlite", "mysql", "redis", "cassandra"];
    let mut bytes = 0;
    for i in 0..n {
        let dir = ws.join("memory").join(format!("d{}", i / 100));
        std::fs::create_dir_all(&dir).unwrap();
        let text = format!(
            "# Notes {i}\n\nA day of work on several projects; meetings, reviews and planning.\n\n## Decisions\n\nProject {} uses {} as its database, listening on port {}.\nWe agreed to review the deployment plan next week.\n\n## Todo\n\n- follow up with the team about project timelines\n- update the runbook\n",
            codename(i),
            dbs[i % dbs.len()],
            10000 + i
        );
        bytes += text.len() as u64;
        std::fs::write(dir.join(format!("note-{i:05}.md")), text).unwrap();
    }
    bytes
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    sorted[((sorted.len() as f64 - 1.0) * p).round() as usize]
}

fn bench(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let ws = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    let bytes = write_corpus(ws.path(), NOTES);
    let bridge = host_bridge(ws.path()).unwrap();
    // An index that is current (what a watched index with no change is):
    // no sync before a search.
    let settings = IndexSettings {
        sync_on_search: false,
        ..IndexSettings::default()
    };
    let index_path = state.path().join("memory.sqlite");
    let index = Arc::new(MemoryIndex::open(&index_path, settings.clone(), None).unwrap());
    let started = Instant::now();
    rt.block_on(index.sync(bridge.as_ref())).unwrap();
    let build = started.elapsed();
    let mb = bytes as f64 / 1e6;
    println!(
        "memory/index_build_10k_notes: {NOTES} notes, {mb:.2} MB in {build:.2?} = {:.0} ms/MB",
        build.as_secs_f64() * 1e3 / mb
    );

    let queries: Vec<String> = (0..NOTES)
        .step_by(7)
        .map(|i| format!("which database does project {} use?", codename(i)))
        .collect();
    let words: Vec<String> = (0..NOTES).step_by(7).map(codename).collect();
    let raw = rusqlite::Connection::open(&index_path).unwrap();
    let raw_query = |word: &str| {
        let mut stmt = raw
            .prepare_cached(
                "SELECT rowid, bm25(chunks_fts) FROM chunks_fts WHERE chunks_fts MATCH ?1 ORDER BY rank LIMIT 6",
            )
            .unwrap();
        let rows: Vec<(i64, f64)> = stmt
            .query_map([format!("\"{word}\"")], |r| Ok((r.get(0)?, r.get(1)?)))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        rows
    };

    // p50 / p99 of single searches, interleaved with the floor.
    let mut ours = Vec::new();
    let mut floor = Vec::new();
    for (q, w) in queries.iter().zip(&words).cycle().take(3000) {
        let t = Instant::now();
        let r = rt.block_on(index.search_indexed(q, 6, 0.0)).unwrap();
        ours.push(t.elapsed());
        assert!(!r.results.is_empty());
        let t = Instant::now();
        black_box(raw_query(w));
        floor.push(t.elapsed());
    }
    ours.sort();
    floor.sort();
    let (p50, p99) = (percentile(&ours, 0.5), percentile(&ours, 0.99));
    let (f50, f99) = (percentile(&floor, 0.5), percentile(&floor, 0.99));
    println!(
        "memory/search_10k_notes (3000 interleaved): p50 {p50:.1?} p99 {p99:.1?}; floor (raw FTS5 query) p50 {f50:.1?} p99 {f99:.1?}; ratio p50 {:.2}x",
        p50.as_secs_f64() / f50.as_secs_f64()
    );

    let mut i = 0;
    c.bench_function("memory/search_10k_notes", |b| {
        b.iter(|| {
            i = (i + 1) % queries.len();
            black_box(
                rt.block_on(index.search_indexed(&queries[i], 6, 0.0))
                    .unwrap(),
            )
        });
    });
    let mut j = 0;
    c.bench_function("baseline/fts5_query_10k_notes", |b| {
        b.iter(|| {
            j = (j + 1) % words.len();
            black_box(raw_query(&words[j]))
        });
    });
    let tool = MemorySearchTool::new(Arc::clone(&index), Arc::clone(&bridge), (6, 0.0));
    let ctx = ToolContext::default();
    let abort = CancellationToken::new();
    let mut k = 0;
    c.bench_function("memory/tool_call_10k_notes", |b| {
        b.iter(|| {
            k = (k + 1) % queries.len();
            let call = ToolCall {
                id: "b".into(),
                name: "memory_search".into(),
                params: json!({"query": queries[k]}).as_object().cloned().unwrap(),
            };
            black_box(rt.block_on(tool.execute(&call, &ctx, &abort)).unwrap())
        });
    });

    // Index build from nothing: 1,000 notes per iteration.
    let small = tempfile::tempdir().unwrap();
    let small_bytes = write_corpus(small.path(), 1000);
    let small_bridge = host_bridge(small.path()).unwrap();
    let mut group = c.benchmark_group("memory");
    group.sample_size(10);
    group.bench_function("index_build_1000_notes", |b| {
        b.iter_batched(
            || {
                let dir = tempfile::tempdir().unwrap();
                let ix =
                    MemoryIndex::open(dir.path().join("m.sqlite"), settings.clone(), None).unwrap();
                (dir, ix)
            },
            |(dir, ix)| {
                let r = rt.block_on(ix.sync(small_bridge.as_ref())).unwrap();
                assert_eq!(r.indexed, 1000);
                drop(ix);
                drop(dir);
            },
            BatchSize::PerIteration,
        );
    });
    group.finish();
    println!(
        "memory/index_build_1000_notes covers {:.3} MB (divide its median by this for time per MB)",
        small_bytes as f64 / 1e6
    );
}

criterion_group!(benches, bench);
criterion_main!(benches);
