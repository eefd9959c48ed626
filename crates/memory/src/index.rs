//! The SQLite FTS5 index of one memory scope (an agent's host workspace,
//! or one sandbox), and keeping it in step with the files.
//!
//! Every sync applies its changes in one transaction, so a crash, a file
//! that cannot be read or a provider that fails never leaves a half-written
//! index; the files are the source of truth and [`MemoryIndex::rebuild`]
//! reproduces the index from them.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use rusqlite::{Connection, OptionalExtension, params};
use serde::Serialize;
use sha2::{Digest, Sha256};
use talon_fs_bridge::FsBridge;

use crate::chunk::{Chunk, chunk_markdown};
use crate::discover::{Found, Skipped, discover};
use crate::embed::{EmbeddingProvider, cosine, from_blob, to_blob};
use crate::error::{MemoryError, MemoryErrorKind, Result};
use crate::query::{query_words, quoted_or};

/// The index layout version; an index of another version is rebuilt.
const SCHEMA_VERSION: &str = "1";
/// A snippet is the chunk itself up to this many characters, else an FTS5
/// snippet around the matched words (OpenClaw's limit).
pub const SNIPPET_MAX_CHARS: usize = 700;
/// Chunks embedded per provider request.
const EMBED_BATCH: usize = 64;

/// How an index reads and chunks files.
#[derive(Debug, Clone)]
pub struct IndexSettings {
    /// Extra paths (normalised), as configured.
    pub extra_paths: Vec<String>,
    /// Files larger than this are skipped (`memory.file_too_large`).
    pub max_file_bytes: u64,
    /// The largest chunk in bytes.
    pub chunk_bytes: usize,
    /// Sync before a search when no watcher marks changes.
    pub sync_on_search: bool,
    /// Hybrid weights (vector, text) and candidate multiplier.
    pub vector_weight: f64,
    /// See `vector_weight`.
    pub text_weight: f64,
    /// Candidates per wanted result, from each ranking.
    pub candidate_multiplier: usize,
}

impl Default for IndexSettings {
    fn default() -> Self {
        IndexSettings {
            extra_paths: Vec::new(),
            max_file_bytes: 8 * 1024 * 1024,
            chunk_bytes: 1600,
            sync_on_search: true,
            vector_weight: 0.7,
            text_weight: 0.3,
            candidate_multiplier: 4,
        }
    }
}

/// What one sync did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SyncReport {
    /// Memory files seen.
    pub files: usize,
    /// Files (re)chunked.
    pub indexed: usize,
    /// Files whose stored state was current.
    pub unchanged: usize,
    /// Files no longer there, dropped from the index.
    pub removed: usize,
    /// Chunks written.
    pub chunks_written: usize,
    /// Bytes of text chunked.
    pub bytes_indexed: u64,
    /// Paths skipped, with why.
    pub skipped: Vec<Skipped>,
    /// Chunks given a vector.
    pub embedded: usize,
    /// Why embedding failed, when it did (the text index is complete).
    pub embedding_error: Option<String>,
}

/// One search hit, in OpenClaw's shape.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SearchHit {
    /// The file, relative to the workspace (or an extra path as configured).
    pub path: String,
    /// First line of the chunk (1-based).
    pub start_line: u32,
    /// Last line of the chunk (1-based, inclusive).
    pub end_line: u32,
    /// Relevance in (0, 1]; higher is better.
    pub score: f64,
    /// The chunk text, or an excerpt around the matched words.
    pub snippet: String,
    /// Always `memory` (Talon indexes no session transcripts).
    pub source: &'static str,
    /// `path#Lstart-Lend`.
    pub citation: String,
}

/// The index's answer to a search.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SearchResponse {
    /// Best first.
    pub results: Vec<SearchHit>,
    /// `builtin` (the only backend).
    pub backend: &'static str,
    /// The embedding provider used: `none`, or its id.
    pub provider: String,
    /// The embedding model, when one was used.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// `text` (BM25 only) or `hybrid`.
    pub mode: &'static str,
    /// Why a configured provider was not used for this search.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fallback: Option<String>,
    /// Memory files not in the index, and why.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub skipped: Vec<Skipped>,
}

/// What `status` reports.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct IndexStatus {
    /// The index file.
    pub path: PathBuf,
    /// Files indexed.
    pub files: u64,
    /// Chunks indexed.
    pub chunks: u64,
    /// Chunks with a vector.
    pub embedded_chunks: u64,
    /// Bytes of the indexed files.
    pub bytes: u64,
    /// Files skipped, and why.
    pub skipped: Vec<Skipped>,
    /// The embedding provider (`none` or its id).
    pub provider: String,
    /// Whether a watcher marks changes.
    pub watching: bool,
    /// Whether a change is waiting for the next sync.
    pub dirty: bool,
}

/// A dump row: path, start line, end line, heading, text.
pub type ChunkRow = (String, u32, u32, String, String);

/// One memory index.
pub struct MemoryIndex {
    path: PathBuf,
    db: Arc<Mutex<Connection>>,
    settings: IndexSettings,
    embedder: Option<Arc<dyn EmbeddingProvider>>,
    dirty: Arc<AtomicBool>,
    watching: AtomicBool,
    chunk_count: Arc<AtomicU64>,
    /// Words in more than a tenth of the chunks (refreshed by each sync).
    common: Arc<Mutex<Arc<HashSet<String>>>>,
    /// The skipped files as of the last sync.
    skipped: Mutex<Vec<Skipped>>,
    sync_lock: tokio::sync::Mutex<()>,
    pub(crate) watcher: Mutex<Option<crate::watch::Watch>>,
}

impl std::fmt::Debug for MemoryIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MemoryIndex")
            .field("path", &self.path)
            .field("settings", &self.settings)
            .field(
                "embedder",
                &self.embedder.as_ref().map(|e| e.id().to_owned()),
            )
            .finish_non_exhaustive()
    }
}

fn create_schema(conn: &Connection) -> rusqlite::Result<()> {
    conn.execute_batch(
        "PRAGMA journal_mode=WAL;
         PRAGMA synchronous=NORMAL;
         CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
         CREATE TABLE IF NOT EXISTS files(
             path TEXT PRIMARY KEY,
             size INTEGER NOT NULL,
             mtime_ns INTEGER NOT NULL,
             hash TEXT NOT NULL,
             problem_code TEXT,
             problem TEXT);
         CREATE TABLE IF NOT EXISTS chunks(
             id INTEGER PRIMARY KEY,
             path TEXT NOT NULL,
             start_line INTEGER NOT NULL,
             end_line INTEGER NOT NULL,
             heading TEXT NOT NULL,
             text TEXT NOT NULL,
             embedding BLOB,
             embedding_model TEXT);
         CREATE INDEX IF NOT EXISTS chunks_path ON chunks(path);
         CREATE VIRTUAL TABLE IF NOT EXISTS chunks_fts USING fts5(
             text, heading, tokenize = 'unicode61 remove_diacritics 2');
         CREATE VIRTUAL TABLE IF NOT EXISTS chunks_vocab USING fts5vocab(chunks_fts, 'row');",
    )?;
    conn.execute(
        "INSERT OR IGNORE INTO meta(key, value) VALUES ('schema_version', ?1)",
        [SCHEMA_VERSION],
    )?;
    Ok(())
}

/// Open `path`, creating it; a file that is not a usable index of this
/// version (corrupt, another layout) is moved aside and a fresh one made.
fn open_db(path: &Path) -> Result<Connection> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(|e| {
            MemoryError::new(
                MemoryErrorKind::Index,
                format!("memory index directory {}: {e}", parent.display()),
            )
        })?;
    }
    let usable = |conn: &Connection| -> rusqlite::Result<bool> {
        let ok: String = conn.query_row("PRAGMA quick_check", [], |r| r.get(0))?;
        if ok != "ok" {
            return Ok(false);
        }
        create_schema(conn)?;
        let v: Option<String> = conn
            .query_row(
                "SELECT value FROM meta WHERE key = 'schema_version'",
                [],
                |r| r.get(0),
            )
            .optional()?;
        Ok(v.as_deref() == Some(SCHEMA_VERSION))
    };
    if let Ok(conn) = Connection::open(path)
        && matches!(usable(&conn), Ok(true))
    {
        return Ok(conn);
    }
    // Unusable: the files are the source of truth, so start over.
    tracing::warn!(
        target: "talon::memory",
        index = %path.display(),
        "memory index unusable (corrupt or another version); rebuilding it from the memory files"
    );
    for suffix in ["", "-wal", "-shm"] {
        let mut p = path.as_os_str().to_owned();
        p.push(suffix);
        let _ = std::fs::remove_file(PathBuf::from(p));
    }
    let conn = Connection::open(path).map_err(|e| MemoryError::sqlite(path, e))?;
    create_schema(&conn).map_err(|e| MemoryError::sqlite(path, e))?;
    Ok(conn)
}

/// A change a sync applies.
enum Change {
    Touch {
        path: String,
        size: u64,
        mtime_ns: i64,
    },
    Replace {
        path: String,
        size: u64,
        mtime_ns: i64,
        hash: String,
        chunks: Vec<Chunk>,
    },
    Skip {
        found: Found,
        skipped: Skipped,
    },
    Remove(String),
}

struct Known {
    size: u64,
    mtime_ns: i64,
    hash: String,
    problem: bool,
}

/// The 1-based line of byte `offset` in `bytes`.
fn line_of(bytes: &[u8], offset: usize) -> usize {
    bytes[..offset.min(bytes.len())]
        .iter()
        .filter(|b| **b == b'\n')
        .count()
        + 1
}

/// `score` in (0, 1) from FTS5's BM25 rank (negative; lower is better).
fn text_score(rank: f64) -> f64 {
    let s = (-rank).max(0.0);
    s / (1.0 + s)
}

/// `text` cut to `max` characters (with `…` when cut).
fn cut_chars(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((i, _)) => format!("{}…", &text[..i]),
        None => text.to_owned(),
    }
}

impl MemoryIndex {
    /// Open (or create) the index at `path`.
    pub fn open(
        path: impl Into<PathBuf>,
        settings: IndexSettings,
        embedder: Option<Arc<dyn EmbeddingProvider>>,
    ) -> Result<Self> {
        let path = path.into();
        let conn = open_db(&path)?;
        let chunks = count_chunks(&conn).map_err(|e| MemoryError::sqlite(&path, e))?;
        let common = common_words(&conn, chunks).map_err(|e| MemoryError::sqlite(&path, e))?;
        Ok(MemoryIndex {
            chunk_count: Arc::new(AtomicU64::new(chunks)),
            common: Arc::new(Mutex::new(Arc::new(common))),
            skipped: Mutex::new(Vec::new()),
            path,
            db: Arc::new(Mutex::new(conn)),
            settings,
            embedder,
            dirty: Arc::new(AtomicBool::new(true)),
            watching: AtomicBool::new(false),
            sync_lock: tokio::sync::Mutex::new(()),
            watcher: Mutex::new(None),
        })
    }

    /// The index file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The settings it was opened with.
    pub fn settings(&self) -> &IndexSettings {
        &self.settings
    }

    /// The flag a watcher sets when a memory file changes.
    pub(crate) fn dirty_flag(&self) -> Arc<AtomicBool> {
        Arc::clone(&self.dirty)
    }

    /// Mark the index as followed by a watcher (no sync before a search
    /// unless it saw a change).
    pub(crate) fn set_watching(&self, on: bool) {
        self.watching.store(on, Ordering::SeqCst);
    }

    /// Whether the next search syncs first.
    pub fn needs_sync(&self) -> bool {
        self.dirty.load(Ordering::SeqCst)
            || (!self.watching.load(Ordering::SeqCst) && self.settings.sync_on_search)
    }

    /// Mark the index stale (the next search syncs).
    pub fn mark_dirty(&self) {
        self.dirty.store(true, Ordering::SeqCst);
    }

    async fn blocking<T, F>(&self, f: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(&mut Connection, &Path) -> Result<T> + Send + 'static,
    {
        let db = Arc::clone(&self.db);
        let path = self.path.clone();
        tokio::task::spawn_blocking(move || {
            let mut conn = db.lock().map_err(|_| {
                MemoryError::new(
                    MemoryErrorKind::Index,
                    format!("memory index {}: lock poisoned", path.display()),
                )
            })?;
            f(&mut conn, &path)
        })
        .await
        .map_err(|e| {
            MemoryError::new(
                MemoryErrorKind::Index,
                format!("memory index task failed: {e}"),
            )
        })?
    }

    /// Bring the index in step with the memory files visible through
    /// `bridge`: new and changed files (by size and modification time,
    /// then content hash) are chunked again, removed ones dropped, in one
    /// transaction.
    pub async fn sync(&self, bridge: &dyn FsBridge) -> Result<SyncReport> {
        let _one = self.sync_lock.lock().await;
        // Cleared first: a change during this sync marks it again.
        self.dirty.store(false, Ordering::SeqCst);
        let result = self.sync_locked(bridge).await;
        if result.is_err() {
            self.dirty.store(true, Ordering::SeqCst);
        }
        if self.watching.load(Ordering::SeqCst) {
            crate::watch::refresh(self);
        }
        result
    }

    async fn sync_locked(&self, bridge: &dyn FsBridge) -> Result<SyncReport> {
        let (found, mut skipped) = discover(bridge, &self.settings.extra_paths).await;
        let known: HashMap<String, Known> = self
            .blocking(|conn, path| {
                let mut stmt = conn
                    .prepare_cached(
                        "SELECT path, size, mtime_ns, hash, problem_code IS NOT NULL FROM files",
                    )
                    .map_err(|e| MemoryError::sqlite(path, e))?;
                let rows = stmt
                    .query_map([], |r| {
                        Ok((
                            r.get::<_, String>(0)?,
                            Known {
                                size: r.get::<_, i64>(1)?.max(0) as u64,
                                mtime_ns: r.get(2)?,
                                hash: r.get(3)?,
                                problem: r.get(4)?,
                            },
                        ))
                    })
                    .map_err(|e| MemoryError::sqlite(path, e))?;
                rows.collect::<rusqlite::Result<HashMap<_, _>>>()
                    .map_err(|e| MemoryError::sqlite(path, e))
            })
            .await?;

        let mut report = SyncReport {
            files: found.len(),
            ..SyncReport::default()
        };
        let mut changes = Vec::new();
        for f in &found {
            if let Some(k) = known.get(&f.path)
                && k.size == f.size
                && k.mtime_ns == f.mtime_ns
                && f.mtime_ns != 0
            {
                report.unchanged += 1;
                continue;
            }
            match self.read_file(bridge, f).await {
                Ok(text) => {
                    let hash = format!("{:x}", Sha256::digest(text.as_bytes()));
                    if let Some(k) = known.get(&f.path)
                        && k.hash == hash
                        && !k.problem
                    {
                        report.unchanged += 1;
                        changes.push(Change::Touch {
                            path: f.path.clone(),
                            size: f.size,
                            mtime_ns: f.mtime_ns,
                        });
                        continue;
                    }
                    let chunks = chunk_markdown(&text, self.settings.chunk_bytes);
                    report.indexed += 1;
                    report.chunks_written += chunks.len();
                    report.bytes_indexed += text.len() as u64;
                    changes.push(Change::Replace {
                        path: f.path.clone(),
                        size: f.size,
                        mtime_ns: f.mtime_ns,
                        hash,
                        chunks,
                    });
                }
                Err(s) => changes.push(Change::Skip {
                    found: f.clone(),
                    skipped: s,
                }),
            }
        }
        let present: std::collections::HashSet<&str> =
            found.iter().map(|f| f.path.as_str()).collect();
        for path in known.keys() {
            if !present.contains(path.as_str()) {
                report.removed += 1;
                changes.push(Change::Remove(path.clone()));
            }
        }
        let count = Arc::clone(&self.chunk_count);
        let common = Arc::clone(&self.common);
        self.blocking(move |conn, path| {
            apply(conn, path, changes)?;
            let n = count_chunks(conn).map_err(|e| MemoryError::sqlite(path, e))?;
            count.store(n, Ordering::SeqCst);
            let words = common_words(conn, n).map_err(|e| MemoryError::sqlite(path, e))?;
            if let Ok(mut slot) = common.lock() {
                *slot = Arc::new(words);
            }
            Ok(())
        })
        .await?;
        let problems = self.problems().await?;
        skipped.extend(problems);
        skipped.sort_by(|a, b| a.path.cmp(&b.path));
        skipped.dedup_by(|a, b| a.path == b.path && a.code == b.code);
        if let Ok(mut cache) = self.skipped.lock() {
            cache.clone_from(&skipped);
        }
        report.skipped = skipped;
        if let Some(embedder) = self.embedder.clone() {
            match self.embed_missing(embedder.as_ref()).await {
                Ok(n) => report.embedded = n,
                Err(e) => report.embedding_error = Some(e.to_string()),
            }
        }
        tracing::debug!(target: "talon::memory", index = %self.path.display(), ?report.indexed, ?report.removed, "memory index synced");
        Ok(report)
    }

    /// The file's text, or why it is skipped.
    async fn read_file(&self, bridge: &dyn FsBridge, f: &Found) -> Result<String, Skipped> {
        let limit = self.settings.max_file_bytes;
        let too_large = |size: u64| Skipped {
            path: f.path.clone(),
            code: "memory.file_too_large".into(),
            message: format!(
                "{} is {size} bytes, over the {limit}-byte limit for memory files; split it into smaller files (or raise agents.defaults.memorySearch.maxFileBytes)",
                f.path
            ),
        };
        if f.size > limit {
            return Err(too_large(f.size));
        }
        let contents = bridge
            .read(&f.path, Some(limit.saturating_add(1)))
            .await
            .map_err(|e| Skipped {
                path: f.path.clone(),
                code: "memory.unreadable".into(),
                message: format!("{e}"),
            })?;
        if contents.truncated || contents.bytes.len() as u64 > limit {
            return Err(too_large(contents.total_size));
        }
        String::from_utf8(contents.bytes).map_err(|e| {
            let at = e.utf8_error().valid_up_to();
            let line = line_of(e.as_bytes(), at);
            Skipped {
                path: f.path.clone(),
                code: "memory.invalid_utf8".into(),
                message: format!(
                    "{} is not valid UTF-8 (byte {at}, line {line}); memory files must be UTF-8 text: re-save it as UTF-8",
                    f.path
                ),
            }
        })
    }

    async fn problems(&self) -> Result<Vec<Skipped>> {
        self.blocking(|conn, path| {
            let mut stmt = conn
                .prepare_cached(
                    "SELECT path, problem_code, problem FROM files WHERE problem_code IS NOT NULL ORDER BY path",
                )
                .map_err(|e| MemoryError::sqlite(path, e))?;
            let rows = stmt
                .query_map([], |r| {
                    Ok(Skipped {
                        path: r.get(0)?,
                        code: r.get(1)?,
                        message: r.get::<_, Option<String>>(2)?.unwrap_or_default(),
                    })
                })
                .map_err(|e| MemoryError::sqlite(path, e))?;
            rows.collect::<rusqlite::Result<Vec<_>>>()
                .map_err(|e| MemoryError::sqlite(path, e))
        })
        .await
    }

    /// Give every chunk without a vector of the current model one.
    async fn embed_missing(&self, embedder: &dyn EmbeddingProvider) -> Result<usize> {
        let model = embedder.model().to_owned();
        let mut done = 0;
        loop {
            let m = model.clone();
            let batch: Vec<(i64, String)> = self
                .blocking(move |conn, path| {
                    let mut stmt = conn
                        .prepare_cached(
                            "SELECT id, text FROM chunks WHERE embedding IS NULL OR embedding_model IS NOT ?1 ORDER BY id LIMIT ?2",
                        )
                        .map_err(|e| MemoryError::sqlite(path, e))?;
                    let rows = stmt
                        .query_map(params![m, EMBED_BATCH as i64], |r| Ok((r.get(0)?, r.get(1)?)))
                        .map_err(|e| MemoryError::sqlite(path, e))?;
                    rows.collect::<rusqlite::Result<Vec<_>>>()
                        .map_err(|e| MemoryError::sqlite(path, e))
                })
                .await?;
            if batch.is_empty() {
                return Ok(done);
            }
            let texts: Vec<String> = batch.iter().map(|(_, t)| t.clone()).collect();
            let vectors = embedder.embed(&texts).await?;
            let ids: Vec<i64> = batch.iter().map(|(id, _)| *id).collect();
            let m = model.clone();
            let n = ids.len();
            self.blocking(move |conn, path| {
                let tx = conn
                    .transaction()
                    .map_err(|e| MemoryError::sqlite(path, e))?;
                {
                    let mut up = tx
                        .prepare_cached(
                            "UPDATE chunks SET embedding = ?1, embedding_model = ?2 WHERE id = ?3",
                        )
                        .map_err(|e| MemoryError::sqlite(path, e))?;
                    for (id, v) in ids.iter().zip(vectors) {
                        up.execute(params![to_blob(&v), m, id])
                            .map_err(|e| MemoryError::sqlite(path, e))?;
                    }
                }
                tx.commit().map_err(|e| MemoryError::sqlite(path, e))
            })
            .await?;
            done += n;
        }
    }

    /// Drop everything and index the files again from scratch.
    pub async fn rebuild(&self, bridge: &dyn FsBridge) -> Result<SyncReport> {
        self.blocking(|conn, path| {
            conn.execute_batch(
                "BEGIN; DELETE FROM chunks_fts; DELETE FROM chunks; DELETE FROM files; COMMIT;",
            )
            .map_err(|e| MemoryError::sqlite(path, e))
        })
        .await?;
        self.sync(bridge).await
    }

    /// Sync when needed ([`MemoryIndex::needs_sync`]), then search.
    pub async fn search(
        &self,
        bridge: &dyn FsBridge,
        query: &str,
        max_results: usize,
        min_score: f64,
    ) -> Result<SearchResponse> {
        let mut sync_skipped = None;
        if self.needs_sync() {
            let report = self.sync(bridge).await?;
            sync_skipped = Some(report.skipped);
        }
        let mut resp = self.search_indexed(query, max_results, min_score).await?;
        resp.skipped = match sync_skipped {
            Some(s) => s,
            None => self.skipped.lock().map(|s| s.clone()).unwrap_or_default(),
        };
        Ok(resp)
    }

    /// Search what is indexed now (no sync). Query text is taken as words;
    /// no character of it is FTS5 syntax.
    pub async fn search_indexed(
        &self,
        query: &str,
        max_results: usize,
        min_score: f64,
    ) -> Result<SearchResponse> {
        let max_results = max_results.clamp(1, 100);
        let mut response = SearchResponse {
            results: Vec::new(),
            backend: "builtin",
            provider: "none".into(),
            model: None,
            mode: "text",
            fallback: None,
            skipped: Vec::new(),
        };
        let mut query_vector = None;
        if let Some(embedder) = &self.embedder {
            response.provider = embedder.id().to_owned();
            response.model = Some(embedder.model().to_owned());
            match embedder.embed(&[query.to_owned()]).await {
                Ok(mut v) => query_vector = v.pop(),
                Err(e) => {
                    response.fallback = Some(format!("text ranking only: {e}"));
                }
            }
        }
        let words = query_words(query);
        let common = self
            .common
            .lock()
            .map(|c| Arc::clone(&c))
            .unwrap_or_default();
        let wanted = if query_vector.is_some() {
            max_results * self.settings.candidate_multiplier.max(1)
        } else {
            max_results
        };
        let (vw, tw) = (self.settings.vector_weight, self.settings.text_weight);
        let model = response.model.clone();
        let hybrid = query_vector.is_some();
        let hits = self
            .blocking(move |conn, path| {
                let expr = match_expression(&words, &common);
                let text_hits = match expr {
                    Some(e) => text_search(conn, &e, wanted, &words)
                        .map_err(|e| MemoryError::sqlite(path, e))?,
                    None => Vec::new(),
                };
                let Some(qv) = query_vector else {
                    return Ok(text_hits);
                };
                let vector_hits = vector_search(conn, &qv, model.as_deref(), wanted)
                    .map_err(|e| MemoryError::sqlite(path, e))?;
                merge(conn, text_hits, vector_hits, vw, tw)
                    .map_err(|e| MemoryError::sqlite(path, e))
            })
            .await?;
        if hybrid {
            response.mode = "hybrid";
        }
        response.results = hits
            .into_iter()
            .filter(|h| h.score >= min_score)
            .take(max_results)
            .collect();
        Ok(response)
    }

    /// Counts, skipped files and provider.
    pub async fn status(&self) -> Result<IndexStatus> {
        let (files, chunks, embedded, bytes) = self
            .blocking(|conn, path| {
                let q = |sql: &str| -> Result<u64> {
                    conn.query_row(sql, [], |r| r.get::<_, i64>(0))
                        .map(|n| n.max(0) as u64)
                        .map_err(|e| MemoryError::sqlite(path, e))
                };
                Ok((
                    q("SELECT COUNT(*) FROM files WHERE problem_code IS NULL")?,
                    q("SELECT COUNT(*) FROM chunks")?,
                    q("SELECT COUNT(*) FROM chunks WHERE embedding IS NOT NULL")?,
                    q("SELECT COALESCE(SUM(size), 0) FROM files WHERE problem_code IS NULL")?,
                ))
            })
            .await?;
        Ok(IndexStatus {
            path: self.path.clone(),
            files,
            chunks,
            embedded_chunks: embedded,
            bytes,
            skipped: self.problems().await?,
            provider: self
                .embedder
                .as_ref()
                .map(|e| e.id().to_owned())
                .unwrap_or_else(|| "none".into()),
            watching: self.watching.load(Ordering::SeqCst),
            dirty: self.dirty.load(Ordering::SeqCst),
        })
    }

    /// Every chunk, ordered by path and line (to compare two indexes).
    pub async fn dump(&self) -> Result<Vec<ChunkRow>> {
        self.blocking(|conn, path| {
            let mut stmt = conn
                .prepare(
                    "SELECT c.path, c.start_line, c.end_line, c.heading, f.text
                     FROM chunks c JOIN chunks_fts f ON f.rowid = c.id
                     ORDER BY c.path, c.start_line, c.end_line",
                )
                .map_err(|e| MemoryError::sqlite(path, e))?;
            let rows = stmt
                .query_map([], |r| {
                    Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?))
                })
                .map_err(|e| MemoryError::sqlite(path, e))?;
            rows.collect::<rusqlite::Result<Vec<_>>>()
                .map_err(|e| MemoryError::sqlite(path, e))
        })
        .await
    }
}

fn count_chunks(conn: &Connection) -> rusqlite::Result<u64> {
    conn.query_row("SELECT COUNT(*) FROM chunks", [], |r| r.get::<_, i64>(0))
        .map(|n| n.max(0) as u64)
}

/// A word in more than this share of the chunks is common.
const COMMON_SHARE: u64 = 10;

/// The words in more than a tenth of `total` chunks (at least 50): one
/// pass over the FTS5 vocabulary per sync, so a search never scans it.
fn common_words(conn: &Connection, total: u64) -> rusqlite::Result<HashSet<String>> {
    let limit = (total / COMMON_SHARE).max(50);
    let mut stmt = conn.prepare_cached("SELECT term FROM chunks_vocab WHERE doc > ?1")?;
    let rows = stmt.query_map([limit as i64], |r| r.get::<_, String>(0))?;
    rows.collect()
}

/// The FTS5 expression for `words`: when some words are rare, only those
/// (a word in more than a tenth of the chunks has a BM25 weight near zero
/// next to them, and scoring it costs a pass over most of the index);
/// otherwise all of them. `None` for no words.
fn match_expression(words: &[String], common: &HashSet<String>) -> Option<String> {
    if words.is_empty() {
        return None;
    }
    let rare: Vec<String> = words
        .iter()
        .filter(|w| !common.contains(w.as_str()))
        .cloned()
        .collect();
    Some(if rare.is_empty() {
        quoted_or(words)
    } else {
        quoted_or(&rare)
    })
}

fn apply(conn: &mut Connection, path: &Path, changes: Vec<Change>) -> Result<()> {
    let err = |e| MemoryError::sqlite(path, e);
    let tx = conn.transaction().map_err(err)?;
    {
        let mut del_fts = tx
            .prepare_cached(
                "DELETE FROM chunks_fts WHERE rowid IN (SELECT id FROM chunks WHERE path = ?1)",
            )
            .map_err(err)?;
        let mut del_chunks = tx
            .prepare_cached("DELETE FROM chunks WHERE path = ?1")
            .map_err(err)?;
        let mut del_file = tx
            .prepare_cached("DELETE FROM files WHERE path = ?1")
            .map_err(err)?;
        let mut put_file = tx
            .prepare_cached(
                "INSERT OR REPLACE INTO files(path, size, mtime_ns, hash, problem_code, problem)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            )
            .map_err(err)?;
        let mut touch = tx
            .prepare_cached("UPDATE files SET size = ?2, mtime_ns = ?3 WHERE path = ?1")
            .map_err(err)?;
        let mut put_chunk = tx
            .prepare_cached(
                "INSERT INTO chunks(path, start_line, end_line, heading, text) VALUES (?1, ?2, ?3, ?4, ?5)",
            )
            .map_err(err)?;
        let mut put_fts = tx
            .prepare_cached("INSERT INTO chunks_fts(rowid, text, heading) VALUES (?1, ?2, ?3)")
            .map_err(err)?;
        for change in changes {
            match change {
                Change::Touch {
                    path: p,
                    size,
                    mtime_ns,
                } => {
                    touch
                        .execute(params![p, size as i64, mtime_ns])
                        .map_err(err)?;
                }
                Change::Remove(p) => {
                    del_fts.execute([&p]).map_err(err)?;
                    del_chunks.execute([&p]).map_err(err)?;
                    del_file.execute([&p]).map_err(err)?;
                }
                Change::Skip { found, skipped } => {
                    del_fts.execute([&found.path]).map_err(err)?;
                    del_chunks.execute([&found.path]).map_err(err)?;
                    put_file
                        .execute(params![
                            found.path,
                            found.size as i64,
                            found.mtime_ns,
                            "",
                            skipped.code,
                            skipped.message
                        ])
                        .map_err(err)?;
                }
                Change::Replace {
                    path: p,
                    size,
                    mtime_ns,
                    hash,
                    chunks,
                } => {
                    del_fts.execute([&p]).map_err(err)?;
                    del_chunks.execute([&p]).map_err(err)?;
                    put_file
                        .execute(params![
                            p,
                            size as i64,
                            mtime_ns,
                            hash,
                            None::<String>,
                            None::<String>
                        ])
                        .map_err(err)?;
                    for c in chunks {
                        put_chunk
                            .execute(params![p, c.start_line, c.end_line, c.heading, c.text])
                            .map_err(err)?;
                        let id = tx.last_insert_rowid();
                        put_fts
                            .execute(params![id, c.text, c.heading])
                            .map_err(err)?;
                    }
                }
            }
        }
    }
    tx.commit().map_err(err)
}

fn hit(path: String, start: u32, end: u32, score: f64, snippet: String) -> SearchHit {
    let citation = if start == end {
        format!("{path}#L{start}")
    } else {
        format!("{path}#L{start}-L{end}")
    };
    SearchHit {
        path,
        start_line: start,
        end_line: end,
        score,
        snippet,
        source: "memory",
        citation,
    }
}

/// Share of `words` the chunk `text` contains (as whole words).
fn coverage(text: &str, words: &[String]) -> f64 {
    if words.is_empty() {
        return 0.0;
    }
    let present: std::collections::HashSet<String> = text
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect();
    let found = words
        .iter()
        .filter(|w| present.contains(w.as_str()))
        .count();
    found as f64 / words.len() as f64
}

/// BM25 over text (weight 1) and heading (weight 0.5); the score is half
/// the share of the query's words the chunk holds and half the BM25 rank
/// mapped into (0, 1), best first. (BM25 alone gives near-zero scores in a
/// small index, where every word is in many chunks.)
fn text_search(
    conn: &Connection,
    expr: &str,
    limit: usize,
    words: &[String],
) -> rusqlite::Result<Vec<SearchHit>> {
    let mut stmt = conn.prepare_cached(
        "SELECT c.path, c.start_line, c.end_line, f.text,
                bm25(chunks_fts, 1.0, 0.5) AS rank,
                snippet(chunks_fts, 0, '', '', '…', 48), f.heading
         FROM chunks_fts f JOIN chunks c ON c.id = f.rowid
         WHERE chunks_fts MATCH ?1
         ORDER BY rank LIMIT ?2",
    )?;
    let rows = stmt.query_map(params![expr, limit as i64], |r| {
        let text: String = r.get(3)?;
        let snippet: String = r.get(5)?;
        let heading: String = r.get(6)?;
        let rank: f64 = r.get(4)?;
        let cover = coverage(&format!("{heading}\n{text}"), words);
        let score = 0.5 * cover + 0.5 * text_score(rank);
        let shown = if text.chars().count() <= SNIPPET_MAX_CHARS {
            text
        } else {
            cut_chars(&snippet, SNIPPET_MAX_CHARS)
        };
        Ok(hit(r.get(0)?, r.get(1)?, r.get(2)?, score, shown))
    })?;
    let mut hits: Vec<SearchHit> = rows.collect::<rusqlite::Result<_>>()?;
    // Stable: equal scores keep the BM25 order.
    hits.sort_by(|a, b| b.score.total_cmp(&a.score));
    Ok(hits)
}

/// Chunk ids by cosine similarity to `qv` (vectors of `model` only).
fn vector_search(
    conn: &Connection,
    qv: &[f32],
    model: Option<&str>,
    limit: usize,
) -> rusqlite::Result<Vec<(i64, f64)>> {
    let mut stmt = conn.prepare_cached(
        "SELECT id, embedding FROM chunks WHERE embedding IS NOT NULL AND embedding_model IS ?1",
    )?;
    let mut scored: Vec<(i64, f64)> = stmt
        .query_map(params![model], |r| {
            let blob: Vec<u8> = r.get(1)?;
            Ok((r.get(0)?, f64::from(cosine(qv, &from_blob(&blob)))))
        })?
        .collect::<rusqlite::Result<_>>()?;
    scored.sort_by(|a, b| b.1.total_cmp(&a.1));
    scored.truncate(limit);
    Ok(scored)
}

/// Weighted sum of vector and text scores over both candidate lists.
fn merge(
    conn: &Connection,
    text_hits: Vec<SearchHit>,
    vector_hits: Vec<(i64, f64)>,
    vw: f64,
    tw: f64,
) -> rusqlite::Result<Vec<SearchHit>> {
    let key = |h: &SearchHit| (h.path.clone(), h.start_line, h.end_line);
    let mut by_key: HashMap<(String, u32, u32), (SearchHit, f64, f64)> = HashMap::new();
    for h in text_hits {
        let s = h.score;
        by_key.insert(key(&h), (h, s, 0.0));
    }
    let mut stmt =
        conn.prepare_cached("SELECT path, start_line, end_line, text FROM chunks WHERE id = ?1")?;
    for (id, vs) in vector_hits {
        let h = stmt.query_row([id], |r| {
            let text: String = r.get(3)?;
            Ok(hit(
                r.get(0)?,
                r.get(1)?,
                r.get(2)?,
                0.0,
                cut_chars(&text, SNIPPET_MAX_CHARS),
            ))
        })?;
        by_key
            .entry(key(&h))
            .and_modify(|e| e.2 = vs.max(0.0))
            .or_insert((h, 0.0, vs.max(0.0)));
    }
    let mut out: Vec<SearchHit> = by_key
        .into_values()
        .map(|(mut h, ts, vs)| {
            h.score = vw * vs + tw * ts;
            h
        })
        .collect();
    out.sort_by(|a, b| {
        b.score
            .total_cmp(&a.score)
            .then_with(|| a.path.cmp(&b.path))
            .then(a.start_line.cmp(&b.start_line))
    });
    Ok(out)
}
