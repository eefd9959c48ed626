//! The memory index on real files: a generated 10,000-note corpus with
//! known answers, the watcher, bad input, rebuilds, the tools and the
//! embedding client against a loopback HTTP server.

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
#[cfg(feature = "openai")]
use talon_config::sections::memory::{MemoryEmbeddingProvider, MemoryRemoteConfig};
use talon_config::sections::memory::{MemorySearchConfig, MemorySyncConfig};
use talon_fs_bridge::FsBridge;
use talon_memory::{
    IndexSettings, MemoryGetTool, MemoryIndex, MemoryScope, MemorySearchTool, MemoryService,
    host_bridge,
};
use talon_tool_catalog::{CancellationToken, Tool, ToolCall, ToolContext, ToolErrorCode};

type TestResult = Result<(), Box<dyn std::error::Error>>;
type Opened = (Arc<MemoryIndex>, Arc<dyn FsBridge>);

/// A made-up word unique to note `i` (consonant-vowel syllables).
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

const DATABASES: &[&str] = &["postgres", "sqlite", "mysql", "redis", "cassandra"];

/// Write `n` notes under `ws/memory/` (100 per day directory); note `i`
/// says which database project `codename(i)` uses and on which port.
fn write_corpus(ws: &Path, n: usize) -> std::io::Result<u64> {
    let mut bytes = 0u64;
    for i in 0..n {
        let dir = ws
            .join("memory")
            .join(format!("2026-{:02}", i / 100 % 12 + 1))
            .join(format!("d{}", i / 100));
        std::fs::create_dir_all(&dir)?;
        let text = format!(
            "# Notes {i}\n\nA day of work on several projects; meetings, reviews and planning.\n\n## Decisions\n\nProject {name} uses {db} as its database, listening on port {port}.\nWe agreed to review the deployment plan next week.\n\n## Todo\n\n- follow up with the team about project timelines\n- update the runbook\n",
            name = codename(i),
            db = DATABASES[i % DATABASES.len()],
            port = 10000 + i,
        );
        bytes += text.len() as u64;
        std::fs::write(dir.join(format!("note-{i:05}.md")), text)?;
    }
    std::fs::write(
        ws.join("MEMORY.md"),
        "# Long-term memory\n\nThe user prefers tabs over spaces.\n",
    )?;
    Ok(bytes)
}

fn open(
    ws: &Path,
    state: &Path,
    settings: IndexSettings,
) -> Result<Opened, Box<dyn std::error::Error>> {
    let index = Arc::new(MemoryIndex::open(
        state.join("memory.sqlite"),
        settings,
        None,
    )?);
    Ok((index, host_bridge(ws)?))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn known_answer_recall_over_10000_notes() -> TestResult {
    let ws = tempfile::tempdir()?;
    let state = tempfile::tempdir()?;
    let n = 10_000;
    let bytes = write_corpus(ws.path(), n)?;
    let (index, bridge) = open(ws.path(), state.path(), IndexSettings::default())?;
    let started = Instant::now();
    let report = index.sync(bridge.as_ref()).await?;
    let build = started.elapsed();
    assert_eq!(report.files, n + 1);
    assert_eq!(report.indexed, n + 1);
    assert!(report.skipped.is_empty(), "{:?}", report.skipped);

    // Every 20th note: a natural question naming only the project.
    let mut top1 = 0;
    let mut top6 = 0;
    let mut asked = 0;
    for i in (0..n).step_by(20) {
        asked += 1;
        let q = format!("which database does project {} use?", codename(i));
        let resp = index.search_indexed(&q, 6, 0.0).await?;
        let want = format!("note-{i:05}.md");
        let pos = resp.results.iter().position(|h| h.path.ends_with(&want));
        if pos == Some(0) {
            top1 += 1;
        }
        if pos.is_some() {
            top6 += 1;
            let hit = &resp.results[pos.unwrap_or(0)];
            // The hit points at the Decisions section's lines.
            assert_eq!((hit.start_line, hit.end_line), (5, 8), "{hit:?}");
            assert!(hit.snippet.contains(DATABASES[i % DATABASES.len()]));
            assert!(hit.score > 0.0 && hit.score <= 1.0);
        }
    }
    let recall1 = f64::from(top1) / f64::from(asked);
    let recall6 = f64::from(top6) / f64::from(asked);
    println!(
        "memory corpus: {n} notes, {:.1} MB, indexed in {:.2?} ({:.2?}/MB, debug build); known-answer recall@1 {recall1:.3}, recall@6 {recall6:.3} over {asked} queries",
        bytes as f64 / 1e6,
        build,
        build.div_f64(bytes as f64 / 1e6)
    );
    assert!(recall1 >= 0.95, "recall@1 {recall1}");
    assert!(recall6 >= 0.99, "recall@6 {recall6}");

    // A second sync touches nothing.
    let again = index.sync(bridge.as_ref()).await?;
    assert_eq!(
        (again.indexed, again.unchanged, again.removed),
        (0, n + 1, 0)
    );
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rebuild_from_scratch_reproduces_the_index() -> TestResult {
    let ws = tempfile::tempdir()?;
    let state = tempfile::tempdir()?;
    write_corpus(ws.path(), 300)?;
    let (index, bridge) = open(ws.path(), state.path(), IndexSettings::default())?;
    index.sync(bridge.as_ref()).await?;
    // Incremental history: edit, delete, add.
    std::fs::write(
        ws.path().join("memory/2026-01/d0/note-00003.md"),
        "# Changed\n\nnew text\n",
    )?;
    std::fs::remove_file(ws.path().join("memory/2026-01/d0/note-00004.md"))?;
    std::fs::write(
        ws.path().join("memory/extra.md"),
        "# Extra\n\nadded later\n",
    )?;
    index.mark_dirty();
    let r = index.sync(bridge.as_ref()).await?;
    assert_eq!((r.indexed, r.removed), (2, 1), "{r:?}");
    let incremental = index.dump().await?;

    index.rebuild(bridge.as_ref()).await?;
    assert_eq!(index.dump().await?, incremental);

    // A fresh index file from nothing gives the same rows.
    let other = MemoryIndex::open(
        state.path().join("fresh.sqlite"),
        IndexSettings::default(),
        None,
    )?;
    other.sync(bridge.as_ref()).await?;
    assert_eq!(other.dump().await?, incremental);

    // A corrupt index file is replaced, and a sync rebuilds it.
    drop(other);
    std::fs::write(state.path().join("fresh.sqlite"), b"this is not a database")?;
    let healed = MemoryIndex::open(
        state.path().join("fresh.sqlite"),
        IndexSettings::default(),
        None,
    )?;
    healed.sync(bridge.as_ref()).await?;
    assert_eq!(healed.dump().await?, incremental);
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_files_are_skipped_with_a_reason_and_never_corrupt_the_index() -> TestResult {
    let ws = tempfile::tempdir()?;
    let state = tempfile::tempdir()?;
    std::fs::create_dir_all(ws.path().join("memory"))?;
    std::fs::write(
        ws.path().join("memory/good.md"),
        "# Good\n\nzebra crossing notes\n",
    )?;
    let mut bad = b"# Bad\n\nline two\n".to_vec();
    bad.extend_from_slice(&[0xff, 0xfe, b'x', b'\n']);
    std::fs::write(ws.path().join("memory/bad.md"), &bad)?;
    // 50 MB of text.
    let line = "quokka sightings are recorded here every single day\n";
    let huge: String = line.repeat(50 * 1024 * 1024 / line.len());
    std::fs::write(ws.path().join("memory/huge.md"), &huge)?;
    let (index, bridge) = open(ws.path(), state.path(), IndexSettings::default())?;

    let resp = index.search(bridge.as_ref(), "zebra", 6, 0.0).await?;
    assert_eq!(resp.results.len(), 1);
    assert_eq!(resp.results[0].path, "memory/good.md");
    let codes: Vec<(&str, &str)> = resp
        .skipped
        .iter()
        .map(|s| (s.path.as_str(), s.code.as_str()))
        .collect();
    assert_eq!(
        codes,
        vec![
            ("memory/bad.md", "memory.invalid_utf8"),
            ("memory/huge.md", "memory.file_too_large")
        ]
    );
    let bad_msg = &resp.skipped[0].message;
    assert!(
        bad_msg.contains("line 4") && bad_msg.contains("UTF-8"),
        "{bad_msg}"
    );
    assert!(resp.skipped[1].message.contains("maxFileBytes"));
    // Nothing of the huge file is searchable.
    assert!(
        index
            .search(bridge.as_ref(), "quokka", 6, 0.0)
            .await?
            .results
            .is_empty()
    );

    // A file that was fine and turns bad loses its old chunks.
    std::fs::write(ws.path().join("memory/good.md"), [0xc3, 0x28])?;
    index.mark_dirty();
    let resp = index.search(bridge.as_ref(), "zebra", 6, 0.0).await?;
    assert!(resp.results.is_empty());
    assert_eq!(resp.skipped.len(), 3);
    let status = index.status().await?;
    assert_eq!((status.files, status.chunks), (0, 0));

    // Fixed again: indexed again.
    std::fs::write(
        ws.path().join("memory/bad.md"),
        "# Bad no more\n\nzebra again\n",
    )?;
    index.mark_dirty();
    let resp = index.search(bridge.as_ref(), "zebra", 6, 0.0).await?;
    assert_eq!(resp.results.len(), 1);
    assert_eq!(resp.results[0].path, "memory/bad.md");
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn query_text_is_never_fts_syntax() -> TestResult {
    let ws = tempfile::tempdir()?;
    let state = tempfile::tempdir()?;
    std::fs::create_dir_all(ws.path().join("memory"))?;
    std::fs::write(ws.path().join("memory/a.md"), "# A\n\nalpha beta gamma\n")?;
    std::fs::write(
        ws.path().join("memory/b.md"),
        "# B\n\nnear and or not delta\n",
    )?;
    let (index, bridge) = open(ws.path(), state.path(), IndexSettings::default())?;
    index.sync(bridge.as_ref()).await?;
    for q in [
        "\"",
        "\"\"\"",
        "*",
        "alpha*",
        "NEAR(alpha beta)",
        "NEAR(alpha beta, 2)",
        "-alpha",
        "alpha -beta",
        "(",
        ")",
        "(alpha OR",
        "alpha AND",
        "NOT",
        "OR OR OR",
        "text:alpha",
        "{text heading}: alpha",
        "^alpha",
        "alpha\" OR \"*",
        "'; DROP TABLE chunks; --",
        "\0\u{1}",
        "",
        "   ",
    ] {
        let resp = index
            .search_indexed(q, 6, 0.0)
            .await
            .map_err(|e| format!("query {q:?} failed: {e}"))?;
        // Only chunks holding one of the query's words come back.
        for h in &resp.results {
            let words = talon_memory::query_words(q);
            assert!(
                words
                    .iter()
                    .any(|w| h.snippet.to_lowercase().contains(w.as_str())),
                "query {q:?} matched {h:?}"
            );
        }
    }
    // FTS keywords are plain words: `near` finds the note that says it.
    let resp = index.search_indexed("NEAR", 6, 0.0).await?;
    assert_eq!(resp.results.len(), 1);
    assert_eq!(resp.results[0].path, "memory/b.md");
    // The injection attempt did nothing.
    assert_eq!(index.status().await?.chunks, 2);
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_edit_is_found_within_one_second_through_the_watcher() -> TestResult {
    let ws = tempfile::tempdir()?;
    let state = tempfile::tempdir()?;
    std::fs::create_dir_all(ws.path().join("memory"))?;
    std::fs::write(ws.path().join("MEMORY.md"), "# Memory\n\nnothing yet\n")?;
    // Only the watcher may trigger a sync: no check before each search.
    let config = MemorySearchConfig {
        sync: Some(MemorySyncConfig {
            on_search: Some(false),
            ..MemorySyncConfig::default()
        }),
        ..MemorySearchConfig::default()
    };
    let service = MemoryService::new(Some(&config), state.path())?;
    let index = service.index("main", &MemoryScope::Host(ws.path().to_path_buf()))?;
    let bridge = host_bridge(ws.path())?;
    assert!(
        index
            .search(bridge.as_ref(), "pangolin", 6, 0.0)
            .await?
            .results
            .is_empty()
    );
    assert!(
        !index.needs_sync(),
        "a watched, synced index does not sync per search"
    );

    for (file, word) in [
        ("memory/new-note.md", "pangolin"),
        ("MEMORY.md", "armadillo"),
        ("memory/deep/er/note.md", "okapi"),
    ] {
        let path = ws.path().join(file);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        let started = Instant::now();
        std::fs::write(&path, format!("# Note\n\nSaw a {word} today.\n"))?;
        let mut found = None;
        while started.elapsed() < Duration::from_secs(1) {
            let resp = index.search(bridge.as_ref(), word, 6, 0.0).await?;
            if let Some(h) = resp.results.first() {
                found = Some((h.path.clone(), started.elapsed()));
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        let (hit, after) = found.ok_or(format!("{file}: `{word}` not found within 1 s"))?;
        assert_eq!(hit, file);
        println!("memory watch: {file} searchable after {after:.1?}");
    }
    // The old MEMORY.md text is gone.
    assert!(
        index
            .search(bridge.as_ref(), "nothing yet", 6, 0.0)
            .await?
            .results
            .is_empty()
    );
    Ok(())
}

fn call(name: &str, params: Value) -> ToolCall {
    ToolCall {
        id: "c1".into(),
        name: name.into(),
        params: params.as_object().cloned().unwrap_or_default(),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_tools_answer_in_openclaw_shapes_and_memory_get_refuses_other_files() -> TestResult {
    let ws = tempfile::tempdir()?;
    let state = tempfile::tempdir()?;
    std::fs::create_dir_all(ws.path().join("memory"))?;
    std::fs::create_dir_all(ws.path().join("notes"))?;
    std::fs::write(
        ws.path().join("memory/2026-01-02.md"),
        "# Jan 2\n\nline 3\nline 4 wombat\nline 5\n",
    )?;
    std::fs::write(
        ws.path().join("notes/extra.md"),
        "# Extra\n\nwombat extra\n",
    )?;
    std::fs::write(ws.path().join("secret.txt"), "hunter2\n")?;
    std::fs::write(ws.path().join("README.md"), "# readme\n")?;
    std::os::unix::fs::symlink("../secret.txt", ws.path().join("memory/link.md"))?;
    let config = MemorySearchConfig {
        extra_paths: Some(vec!["notes".into()]),
        ..MemorySearchConfig::default()
    };
    let service = MemoryService::new(Some(&config), state.path())?;
    let index = service.index("main", &MemoryScope::Host(ws.path().to_path_buf()))?;
    let bridge = host_bridge(ws.path())?;
    let search = MemorySearchTool::new(index, Arc::clone(&bridge), service.search_defaults());
    let get = MemoryGetTool::new(Arc::clone(&bridge), service.extra_paths(), 1 << 20);
    let ctx = ToolContext::default();
    let abort = CancellationToken::new();

    let out = search
        .execute(
            &call("memory_search", json!({"query": "wombat"})),
            &ctx,
            &abort,
        )
        .await?;
    let results = out.details["results"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert_eq!(results.len(), 2, "{}", out.details);
    let paths: Vec<&str> = results.iter().filter_map(|r| r["path"].as_str()).collect();
    assert!(paths.contains(&"memory/2026-01-02.md") && paths.contains(&"notes/extra.md"));
    let hit = results
        .iter()
        .find(|r| r["path"] == "memory/2026-01-02.md")
        .cloned()
        .unwrap_or_default();
    for key in [
        "path",
        "startLine",
        "endLine",
        "score",
        "snippet",
        "source",
        "citation",
    ] {
        assert!(hit.get(key).is_some(), "missing {key}: {hit}");
    }
    assert_eq!(hit["startLine"], 1);
    assert_eq!(hit["endLine"], 5);
    assert_eq!(hit["source"], "memory");
    // In a two-file index BM25 alone is near zero; the word share is not.
    assert!(hit["score"].as_f64().unwrap_or(0.0) >= 0.5, "{hit}");
    assert_eq!(out.details["provider"], "none");
    assert_eq!(out.details["mode"], "text");
    // The symlink is not followed into the index.
    assert!(!paths.contains(&"memory/link.md"));
    // The model's text is the JSON of the details.
    let shown: Value = serde_json::from_str(&out.text())?;
    assert_eq!(shown, out.details);

    let bad = search
        .execute(
            &call("memory_search", json!({"query": "x", "maxResults": 0})),
            &ctx,
            &abort,
        )
        .await;
    assert_eq!(
        bad.err().map(|e| e.param().map(str::to_owned)),
        Some(Some("maxResults".into()))
    );
    let unknown = search
        .execute(
            &call("memory_search", json!({"query": "x", "limit": 3})),
            &ctx,
            &abort,
        )
        .await;
    assert_eq!(
        unknown.err().map(|e| e.code()),
        Some(ToolErrorCode::InputUnknownParam)
    );

    let out = get
        .execute(
            &call(
                "memory_get",
                json!({"path": "memory/2026-01-02.md", "from": 3, "lines": 2}),
            ),
            &ctx,
            &abort,
        )
        .await?;
    assert_eq!(out.details["path"], "memory/2026-01-02.md");
    assert_eq!(out.details["text"], "line 3\nline 4 wombat");
    let abs = ws.path().join("notes/extra.md");
    let out = get
        .execute(
            &call("memory_get", json!({"path": abs.to_string_lossy()})),
            &ctx,
            &abort,
        )
        .await?;
    assert_eq!(out.details["path"], "notes/extra.md");

    for (path, why) in [
        ("secret.txt", "is not one"),
        ("README.md", "is not one"),
        ("memory/../secret.txt", ".."),
        ("memory/link.md", "symbolic link"),
        ("/etc/passwd", "is not one"),
    ] {
        let err = get
            .execute(&call("memory_get", json!({"path": path})), &ctx, &abort)
            .await
            .err()
            .ok_or(format!("{path} was read"))?;
        assert_eq!(
            err.code(),
            ToolErrorCode::MemoryPathRefused,
            "{path}: {err:?}"
        );
        assert!(err.message().contains(why), "{path}: {}", err.message());
        assert!(!err.message().contains("hunter2"));
    }
    let missing = get
        .execute(
            &call("memory_get", json!({"path": "memory/none.md"})),
            &ctx,
            &abort,
        )
        .await;
    assert_eq!(
        missing.err().map(|e| e.code()),
        Some(ToolErrorCode::FsNotFound)
    );
    Ok(())
}

#[cfg(feature = "openai")]
/// A loopback `/v1/embeddings` server: each text becomes a bag-of-words
/// vector over a fixed vocabulary where synonyms share a dimension, so
/// vector search finds what BM25 cannot. Counts requests.
async fn embedding_server() -> std::io::Result<(String, Arc<std::sync::atomic::AtomicUsize>)> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
    let hits = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counter = Arc::clone(&hits);
    tokio::spawn(async move {
        while let Ok((mut sock, _)) = listener.accept().await {
            let counter = Arc::clone(&counter);
            tokio::spawn(async move {
                let mut buf = Vec::new();
                let mut chunk = [0u8; 8192];
                let (head_end, len) = loop {
                    let Ok(n) = sock.read(&mut chunk).await else {
                        return;
                    };
                    if n == 0 {
                        return;
                    }
                    buf.extend_from_slice(&chunk[..n]);
                    if let Some(pos) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                        let head = String::from_utf8_lossy(&buf[..pos]).to_lowercase();
                        let len = head
                            .lines()
                            .find_map(|l| l.strip_prefix("content-length:"))
                            .and_then(|v| v.trim().parse::<usize>().ok())
                            .unwrap_or(0);
                        break (pos + 4, len);
                    }
                };
                while buf.len() < head_end + len {
                    let Ok(n) = sock.read(&mut chunk).await else {
                        return;
                    };
                    if n == 0 {
                        return;
                    }
                    buf.extend_from_slice(&chunk[..n]);
                }
                counter.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                let head = String::from_utf8_lossy(&buf[..head_end]).to_lowercase();
                let authorized = head.contains("authorization: bearer test-key");
                let body: Value = serde_json::from_slice(&buf[head_end..]).unwrap_or(Value::Null);
                const GROUPS: &[&[&str]] = &[
                    &["car", "automobile", "vehicle"],
                    &["happy", "joyful", "glad"],
                    &["database", "postgres", "sqlite"],
                    &["dog", "puppy", "hound"],
                ];
                let data: Vec<Value> = body["input"]
                    .as_array()
                    .cloned()
                    .unwrap_or_default()
                    .iter()
                    .enumerate()
                    .map(|(i, t)| {
                        let text = t.as_str().unwrap_or("").to_lowercase();
                        let mut v: Vec<f32> = GROUPS
                            .iter()
                            .map(|g| g.iter().filter(|w| text.contains(**w)).count() as f32)
                            .collect();
                        v.push(0.01);
                        json!({"index": i, "embedding": v})
                    })
                    .collect();
                let (status, payload) = if authorized {
                    (
                        "200 OK",
                        json!({"object": "list", "data": data}).to_string(),
                    )
                } else {
                    ("401 Unauthorized", "{\"error\":\"bad key\"}".to_owned())
                };
                let resp = format!(
                    "HTTP/1.1 {status}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{payload}",
                    payload.len()
                );
                let _ = sock.write_all(resp.as_bytes()).await;
            });
        }
    });
    Ok((format!("http://{addr}/v1"), hits))
}

#[cfg(feature = "openai")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_openai_client_adds_hybrid_ranking_through_the_egress_guard() -> TestResult {
    let ws = tempfile::tempdir()?;
    std::fs::create_dir_all(ws.path().join("memory"))?;
    std::fs::write(
        ws.path().join("memory/cars.md"),
        "# Garage\n\nThe automobile needs new tyres.\n",
    )?;
    std::fs::write(
        ws.path().join("memory/pets.md"),
        "# Pets\n\nThe puppy learned to sit.\n",
    )?;
    let (base_url, requests) = embedding_server().await?;
    let bridge = host_bridge(ws.path())?;
    let config = |private: bool| MemorySearchConfig {
        provider: Some(MemoryEmbeddingProvider::Openai),
        model: Some("test-embed".into()),
        remote: Some(MemoryRemoteConfig {
            base_url: Some(base_url.clone()),
            api_key: Some("test-key".into()),
            // Loopback is a private destination: opened on purpose here.
            allow_private_network: Some(private),
            ..MemoryRemoteConfig::default()
        }),
        ..MemorySearchConfig::default()
    };

    let state = tempfile::tempdir()?;
    let service = MemoryService::new(Some(&config(true)), state.path())?;
    let index = service.index("main", &MemoryScope::Sandbox("s1".into()))?;
    let report = index.sync(bridge.as_ref()).await?;
    assert_eq!(report.embedded, 2, "{report:?}");
    assert_eq!(report.embedding_error, None);
    // "vehicle" is in no file: BM25 alone finds nothing, the vectors do.
    let resp = index.search_indexed("vehicle", 6, 0.1).await?;
    assert_eq!(resp.mode, "hybrid");
    assert_eq!(resp.provider, "openai");
    assert_eq!(resp.model.as_deref(), Some("test-embed"));
    assert_eq!(
        resp.results.first().map(|h| h.path.as_str()),
        Some("memory/cars.md")
    );
    assert_eq!(resp.results.len(), 1, "{resp:?}");
    assert!(requests.load(std::sync::atomic::Ordering::SeqCst) >= 2);

    // Without the opt-in the guard refuses loopback: nothing is sent, the
    // text index still works and the answer says why it fell back.
    let before = requests.load(std::sync::atomic::Ordering::SeqCst);
    let state = tempfile::tempdir()?;
    let service = MemoryService::new(Some(&config(false)), state.path())?;
    let index = service.index("main", &MemoryScope::Sandbox("s1".into()))?;
    let report = index.sync(bridge.as_ref()).await?;
    let why = report
        .embedding_error
        .ok_or("embedding should have been refused")?;
    assert!(why.contains("allowPrivateNetwork"), "{why}");
    let resp = index.search_indexed("puppy", 6, 0.0).await?;
    assert_eq!(resp.mode, "text");
    assert!(resp.fallback.is_some());
    assert_eq!(
        resp.results.first().map(|h| h.path.as_str()),
        Some("memory/pets.md")
    );
    assert_eq!(requests.load(std::sync::atomic::Ordering::SeqCst), before);
    Ok(())
}

#[test]
fn the_default_config_has_no_provider_and_needs_no_network() -> TestResult {
    let state = tempfile::tempdir()?;
    let service = MemoryService::new(None, state.path())?;
    assert!(service.enabled());
    assert_eq!(service.search_defaults(), (6, 0.0));
    let path = service.index_path("Main", &MemoryScope::Sandbox("k".into()));
    assert!(path.starts_with(state.path().join("memory")));
    assert_ne!(
        path,
        service.index_path("main", &MemoryScope::Host(state.path().into()))
    );
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sandbox_bridge_is_indexed_and_read_in_its_own_namespace() -> TestResult {
    use talon_fs_bridge::{Mount, MountBridge};
    let root = tempfile::tempdir()?;
    let state = tempfile::tempdir()?;
    let sandbox_ws = root.path().join("sandbox-ws");
    let host_ws = root.path().join("host-ws");
    std::fs::create_dir_all(sandbox_ws.join("memory"))?;
    std::fs::create_dir_all(host_ws.join("memory"))?;
    std::fs::write(sandbox_ws.join("memory/s.md"), "# S\n\nsandbox capybara\n")?;
    std::fs::write(host_ws.join("memory/h.md"), "# H\n\nhost capybara\n")?;
    let bridge: Arc<dyn FsBridge> = Arc::new(MountBridge::new(
        vec![Mount::writable("/workspace", &sandbox_ws)],
        "/workspace",
    )?);
    let service = MemoryService::new(None, state.path())?;
    let index = service.index("main", &MemoryScope::Sandbox("agent:main:s1".into()))?;
    let search = MemorySearchTool::new(index, Arc::clone(&bridge), service.search_defaults());
    let get = MemoryGetTool::new(Arc::clone(&bridge), Vec::new(), 1 << 20);
    let (ctx, abort) = (ToolContext::default(), CancellationToken::new());
    let out = search
        .execute(
            &call("memory_search", json!({"query": "capybara"})),
            &ctx,
            &abort,
        )
        .await?;
    let results = out.details["results"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    // Only the sandbox's file, named as inside the sandbox.
    assert_eq!(results.len(), 1, "{}", out.details);
    assert_eq!(results[0]["path"], "memory/s.md");
    let out = get
        .execute(
            &call("memory_get", json!({"path": "/workspace/memory/s.md"})),
            &ctx,
            &abort,
        )
        .await?;
    assert_eq!(out.details["path"], "memory/s.md");
    assert_eq!(out.details["text"], "# S\n\nsandbox capybara");
    // The host's file is not reachable from the sandbox.
    let host_file = host_ws.join("memory/h.md");
    let err = get
        .execute(
            &call("memory_get", json!({"path": host_file.to_string_lossy()})),
            &ctx,
            &abort,
        )
        .await
        .err()
        .ok_or("a host path was read from the sandbox")?;
    assert!(
        err.code() == ToolErrorCode::MemoryPathRefused
            || err.code() == ToolErrorCode::FsOutsideMounts,
        "{err:?}"
    );
    Ok(())
}
