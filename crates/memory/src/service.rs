//! One place that turns `agents.defaults.memorySearch` into indexes: where
//! each index lives, its settings, the embedding provider, and the watcher
//! of a host workspace.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use sha2::{Digest, Sha256};
use talon_config::sections::memory::{MemoryEmbeddingProvider, MemorySearchConfig};

use crate::discover::normalize;
use crate::embed::EmbeddingProvider;
use crate::error::{MemoryError, MemoryErrorKind, Result};
use crate::index::{IndexSettings, MemoryIndex};

/// Whose memory an index holds.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum MemoryScope {
    /// A host workspace (watched for changes).
    Host(PathBuf),
    /// A sandboxed session (its sandbox workspace, read through the
    /// sandbox's bridge and checked for changes before each search).
    Sandbox(String),
}

/// `memory_search` results when the call and the config give no number.
pub const DEFAULT_MAX_RESULTS: usize = 6;

/// The memory indexes of one runtime.
pub struct MemoryService {
    config: MemorySearchConfig,
    state_dir: PathBuf,
    embedder: Option<Arc<dyn EmbeddingProvider>>,
    indexes: Mutex<HashMap<PathBuf, Arc<MemoryIndex>>>,
}

impl std::fmt::Debug for MemoryService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MemoryService")
            .field("state_dir", &self.state_dir)
            .field(
                "embedder",
                &self.embedder.as_ref().map(|e| e.id().to_owned()),
            )
            .finish_non_exhaustive()
    }
}

impl MemoryService {
    /// The service for `config` (`None`: the defaults), with indexes under
    /// `<state_dir>/memory/`. A configured provider this build cannot make
    /// is an error naming the key.
    pub fn new(config: Option<&MemorySearchConfig>, state_dir: impl Into<PathBuf>) -> Result<Self> {
        let config = config.cloned().unwrap_or_default();
        let embedder = build_embedder(&config)?;
        Ok(MemoryService {
            config,
            state_dir: state_dir.into(),
            embedder,
            indexes: Mutex::new(HashMap::new()),
        })
    }

    /// Builder: use `embedder` instead of the configured provider (tests,
    /// embedders with their own model).
    pub fn with_embedder(mut self, embedder: Arc<dyn EmbeddingProvider>) -> Self {
        self.embedder = Some(embedder);
        self
    }

    /// Whether memory search is on (`enabled`, default true).
    pub fn enabled(&self) -> bool {
        self.config.is_enabled()
    }

    /// The configuration.
    pub fn config(&self) -> &MemorySearchConfig {
        &self.config
    }

    /// The configured extra paths, normalised (those that cannot be are
    /// reported by every sync).
    pub fn extra_paths(&self) -> Vec<String> {
        self.config
            .extra_paths
            .iter()
            .flatten()
            .map(|p| normalize(p).unwrap_or_else(|| p.clone()))
            .collect()
    }

    /// The index settings the configuration gives.
    pub fn settings(&self) -> IndexSettings {
        let d = IndexSettings::default();
        let hybrid = self.config.query.as_ref().and_then(|q| q.hybrid.as_ref());
        let hybrid_on = hybrid.and_then(|h| h.enabled) != Some(false);
        IndexSettings {
            extra_paths: self.extra_paths(),
            max_file_bytes: self.config.max_file_bytes.unwrap_or(d.max_file_bytes),
            chunk_bytes: self
                .config
                .chunking
                .as_ref()
                .and_then(|c| c.tokens)
                .map(|t| (t as usize).saturating_mul(4))
                .unwrap_or(d.chunk_bytes),
            sync_on_search: self.config.sync.as_ref().and_then(|s| s.on_search) != Some(false),
            vector_weight: if hybrid_on {
                hybrid
                    .and_then(|h| h.vector_weight)
                    .unwrap_or(d.vector_weight)
            } else {
                0.0
            },
            text_weight: if hybrid_on {
                hybrid.and_then(|h| h.text_weight).unwrap_or(d.text_weight)
            } else {
                1.0
            },
            candidate_multiplier: hybrid
                .and_then(|h| h.candidate_multiplier)
                .map(|m| m as usize)
                .unwrap_or(d.candidate_multiplier),
        }
    }

    /// `maxResults` and `minScore` when a call gives none.
    pub fn search_defaults(&self) -> (usize, f64) {
        let q = self.config.query.as_ref();
        (
            q.and_then(|q| q.max_results)
                .map(|n| n as usize)
                .unwrap_or(DEFAULT_MAX_RESULTS),
            q.and_then(|q| q.min_score).unwrap_or(0.0),
        )
    }

    /// Where the index of `agent` in `scope` lives.
    pub fn index_path(&self, agent: &str, scope: &MemoryScope) -> PathBuf {
        let agent = sanitize(agent);
        let scope_key = match scope {
            MemoryScope::Host(p) => format!(
                "host:{}",
                std::fs::canonicalize(p)
                    .unwrap_or_else(|_| p.clone())
                    .display()
            ),
            MemoryScope::Sandbox(session) => format!("sandbox:{agent}:{session}"),
        };
        let hash = format!("{:x}", Sha256::digest(scope_key.as_bytes()));
        let short = &hash[..12];
        if let Some(custom) = self.config.store.as_ref().and_then(|s| s.path.as_deref()) {
            let p = PathBuf::from(custom.replace("{agentId}", &agent));
            let p = if p.is_absolute() {
                p
            } else {
                self.state_dir.join(p)
            };
            return match scope {
                MemoryScope::Host(_) => p,
                MemoryScope::Sandbox(_) => {
                    let mut s = p.into_os_string();
                    s.push(format!(".sandbox-{short}"));
                    PathBuf::from(s)
                }
            };
        }
        let kind = match scope {
            MemoryScope::Host(_) => "host",
            MemoryScope::Sandbox(_) => "sandbox",
        };
        self.state_dir
            .join("memory")
            .join(format!("{agent}-{kind}-{short}.sqlite"))
    }

    /// The index of `agent` in `scope`, opened once and shared; a host
    /// scope is watched unless `sync.watch` is false.
    pub fn index(&self, agent: &str, scope: &MemoryScope) -> Result<Arc<MemoryIndex>> {
        let path = self.index_path(agent, scope);
        let mut map = self.indexes.lock().map_err(|_| {
            MemoryError::new(MemoryErrorKind::Index, "memory service lock poisoned")
        })?;
        if let Some(ix) = map.get(&path) {
            return Ok(Arc::clone(ix));
        }
        let index = Arc::new(MemoryIndex::open(
            &path,
            self.settings(),
            self.embedder.clone(),
        )?);
        let watch = self.config.sync.as_ref().and_then(|s| s.watch) != Some(false);
        if let (MemoryScope::Host(root), true) = (scope, watch)
            && let Err(e) = crate::watch::watch(&index, root)
        {
            // Without a watcher the index syncs before every search.
            tracing::warn!(target: "talon::memory", error = %e, "memory files are not watched");
        }
        map.insert(path, Arc::clone(&index));
        Ok(index)
    }
}

impl MemoryService {
    /// The index of `agent` in `scope`, opened on its own and never
    /// watched (for one-shot front ends such as the CLI: each search
    /// syncs first unless `sync.onSearch` is false).
    pub fn index_unwatched(&self, agent: &str, scope: &MemoryScope) -> Result<MemoryIndex> {
        MemoryIndex::open(
            self.index_path(agent, scope),
            self.settings(),
            self.embedder.clone(),
        )
    }
}

/// An agent id safe as a file name part.
fn sanitize(agent: &str) -> String {
    let s: String = agent
        .trim()
        .to_lowercase()
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if s.is_empty() { "main".into() } else { s }
}

fn build_embedder(config: &MemorySearchConfig) -> Result<Option<Arc<dyn EmbeddingProvider>>> {
    match config.effective_provider() {
        MemoryEmbeddingProvider::None | MemoryEmbeddingProvider::Auto => Ok(None),
        MemoryEmbeddingProvider::Openai => openai(config),
    }
}

#[cfg(feature = "openai")]
fn openai(config: &MemorySearchConfig) -> Result<Option<Arc<dyn EmbeddingProvider>>> {
    let remote = config.remote.clone().unwrap_or_default();
    let client = crate::embed::OpenAiEmbeddings::new(&remote, config.model.as_deref())?;
    Ok(Some(Arc::new(client)))
}

#[cfg(not(feature = "openai"))]
fn openai(_config: &MemorySearchConfig) -> Result<Option<Arc<dyn EmbeddingProvider>>> {
    Err(MemoryError::new(
        MemoryErrorKind::Config,
        "agents.defaults.memorySearch.provider: `openai` needs talon-memory's `openai` cargo feature, which this build left out",
    ))
}

/// The host workspace's memory, for front ends without a runtime (the
/// CLI): a bridge on `workspace` and its scope.
pub fn host_bridge(workspace: &Path) -> Result<Arc<dyn talon_fs_bridge::FsBridge>> {
    let bridge = talon_fs_bridge::MountBridge::host(workspace)
        .map_err(|e| MemoryError::bridge(&format!("workspace {}", workspace.display()), e))?;
    Ok(Arc::new(bridge))
}
