//! The typed `agents.defaults.memorySearch` section: OpenClaw's memory
//! search keys that Talon honours (any other key is an error naming it).
//! The reader is `talon-memory`, which re-exports these types.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// What a memory index covers (OpenClaw's `memorySearch.sources`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum MemorySourceKind {
    /// `MEMORY.md`, `memory/**/*.md` and `extraPaths`.
    Memory,
    /// Session transcripts. Talon keeps none, so nothing is indexed for it.
    Sessions,
}

/// Which embedding provider adds vector scores to the text ranking.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum MemoryEmbeddingProvider {
    /// No embeddings: BM25 text ranking only, no network, no model (the
    /// default).
    #[default]
    None,
    /// OpenClaw's `auto`: Talon never picks a network provider by itself,
    /// so this is `none` unless `remote.baseUrl` is set (then `openai`).
    Auto,
    /// An OpenAI-compatible `POST <baseUrl>/embeddings` endpoint.
    Openai,
}

/// `memorySearch.remote`: where the embedding endpoint is.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MemoryRemoteConfig {
    /// The API base URL, with its version path (default
    /// `https://api.openai.com/v1`); Talon posts to `<baseUrl>/embeddings`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_url: Option<String>,
    /// The bearer token (never logged or shown).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_key: Option<String>,
    /// Extra request headers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub headers: Option<BTreeMap<String, String>>,
    /// Talon key: let the endpoint be a loopback or private address (a
    /// local embedding server). Cloud metadata endpoints stay refused.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allow_private_network: Option<bool>,
}

/// `memorySearch.query.hybrid`: how vector and text scores combine.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MemoryHybridConfig {
    /// Whether vector scores are mixed in when a provider is configured
    /// (default true).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enabled: Option<bool>,
    /// Weight of the vector score (default 0.7).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vector_weight: Option<f64>,
    /// Weight of the BM25 text score (default 0.3).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text_weight: Option<f64>,
    /// Candidates taken from each ranking per wanted result (default 4).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub candidate_multiplier: Option<u32>,
}

/// `memorySearch.query`: the defaults of a search.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MemoryQueryConfig {
    /// Results returned when the call gives no `maxResults` (default 6).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_results: Option<u32>,
    /// The lowest score returned when the call gives no `minScore`
    /// (default 0: every BM25 match).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_score: Option<f64>,
    /// Hybrid ranking.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hybrid: Option<MemoryHybridConfig>,
}

/// `memorySearch.sync`: when the index follows the files.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MemorySyncConfig {
    /// Watch the memory files and re-index on change (default true).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub watch: Option<bool>,
    /// Debounce of the watcher in ms (default 100).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub watch_debounce_ms: Option<u64>,
    /// Check the files for changes before a search when nothing watches
    /// them (default true).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub on_search: Option<bool>,
}

/// `memorySearch.chunking`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MemoryChunkingConfig {
    /// The largest chunk, in tokens of about four bytes (default 400); a
    /// longer paragraph is split at line ends.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokens: Option<u32>,
    /// Accepted for OpenClaw files; Talon's chunks follow headings and
    /// paragraphs and do not overlap.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub overlap: Option<u32>,
}

/// `memorySearch.store`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MemoryStoreConfig {
    /// The index file; `{agentId}` is replaced by the agent id (default
    /// `<state dir>/memory/<agentId>.sqlite`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
}

/// `agents.defaults.memorySearch`, and an agent's own `memorySearch`
/// (merged over it, see [`MemorySearchConfig::merged`]).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MemorySearchConfig {
    /// Whether `memory_search` and `memory_get` are offered (default true).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enabled: Option<bool>,
    /// What is indexed (default `["memory"]`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sources: Option<Vec<MemorySourceKind>>,
    /// More Markdown files or directories to index, relative to the
    /// workspace or absolute; read through the run's file bridge, so a
    /// path the file tools may not read is skipped with its reason.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extra_paths: Option<Vec<String>>,
    /// The embedding provider (default `none`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider: Option<MemoryEmbeddingProvider>,
    /// The embedding model (default `text-embedding-3-small`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Accepted for OpenClaw files: when the provider fails Talon always
    /// falls back to text ranking and says so in the result.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fallback: Option<String>,
    /// The embedding endpoint.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub remote: Option<MemoryRemoteConfig>,
    /// Search defaults.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub query: Option<MemoryQueryConfig>,
    /// Index freshness.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sync: Option<MemorySyncConfig>,
    /// Chunk size.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chunking: Option<MemoryChunkingConfig>,
    /// Where the index lives.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub store: Option<MemoryStoreConfig>,
    /// Talon key: a memory file larger than this many bytes is skipped with
    /// a `memory.file_too_large` notice (default 8 MiB).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_file_bytes: Option<u64>,
}

impl MemorySearchConfig {
    /// Whether memory search is on (`enabled`, default true).
    pub fn is_enabled(&self) -> bool {
        self.enabled != Some(false)
    }

    /// An agent's `memorySearch` over `agents.defaults.memorySearch`, as
    /// OpenClaw's `resolveMemorySearchConfig` merges them: each key the
    /// agent sets wins, nested blocks (`remote`, `query`, `query.hybrid`,
    /// `sync`, `chunking`, `store`) key by key, and `extraPaths` is both
    /// lists (trimmed, blanks and repeats dropped, defaults first).
    pub fn merged(defaults: Option<&Self>, agent: Option<&Self>) -> Self {
        let d = defaults.cloned().unwrap_or_default();
        let Some(a) = agent else {
            return d;
        };
        let mut paths: Vec<String> = Vec::new();
        for p in d.extra_paths.iter().chain(a.extra_paths.iter()).flatten() {
            let p = p.trim();
            if !p.is_empty() && !paths.iter().any(|q| q == p) {
                paths.push(p.to_owned());
            }
        }
        let extra_paths = (d.extra_paths.is_some() || a.extra_paths.is_some()).then_some(paths);
        let remote = match (d.remote, a.remote.clone()) {
            (Some(d), Some(a)) => Some(MemoryRemoteConfig {
                base_url: a.base_url.or(d.base_url),
                api_key: a.api_key.or(d.api_key),
                headers: a.headers.or(d.headers),
                allow_private_network: a.allow_private_network.or(d.allow_private_network),
            }),
            (d, a) => a.or(d),
        };
        let query = match (d.query, a.query.clone()) {
            (Some(d), Some(a)) => Some(MemoryQueryConfig {
                max_results: a.max_results.or(d.max_results),
                min_score: a.min_score.or(d.min_score),
                hybrid: match (d.hybrid, a.hybrid) {
                    (Some(d), Some(a)) => Some(MemoryHybridConfig {
                        enabled: a.enabled.or(d.enabled),
                        vector_weight: a.vector_weight.or(d.vector_weight),
                        text_weight: a.text_weight.or(d.text_weight),
                        candidate_multiplier: a.candidate_multiplier.or(d.candidate_multiplier),
                    }),
                    (d, a) => a.or(d),
                },
            }),
            (d, a) => a.or(d),
        };
        let sync = match (d.sync, a.sync.clone()) {
            (Some(d), Some(a)) => Some(MemorySyncConfig {
                watch: a.watch.or(d.watch),
                watch_debounce_ms: a.watch_debounce_ms.or(d.watch_debounce_ms),
                on_search: a.on_search.or(d.on_search),
            }),
            (d, a) => a.or(d),
        };
        let chunking = match (d.chunking, a.chunking.clone()) {
            (Some(d), Some(a)) => Some(MemoryChunkingConfig {
                tokens: a.tokens.or(d.tokens),
                overlap: a.overlap.or(d.overlap),
            }),
            (d, a) => a.or(d),
        };
        let store = match (d.store, a.store.clone()) {
            (Some(d), Some(a)) => Some(MemoryStoreConfig {
                path: a.path.or(d.path),
            }),
            (d, a) => a.or(d),
        };
        MemorySearchConfig {
            enabled: a.enabled.or(d.enabled),
            sources: a.sources.clone().or(d.sources),
            extra_paths,
            provider: a.provider.or(d.provider),
            model: a.model.clone().or(d.model),
            fallback: a.fallback.clone().or(d.fallback),
            remote,
            query,
            sync,
            chunking,
            store,
            max_file_bytes: a.max_file_bytes.or(d.max_file_bytes),
        }
    }

    /// The provider actually used: `auto` is `openai` only with a
    /// configured `remote.baseUrl`.
    pub fn effective_provider(&self) -> MemoryEmbeddingProvider {
        match self.provider.unwrap_or_default() {
            MemoryEmbeddingProvider::Auto => {
                if self
                    .remote
                    .as_ref()
                    .and_then(|r| r.base_url.as_ref())
                    .is_some()
                {
                    MemoryEmbeddingProvider::Openai
                } else {
                    MemoryEmbeddingProvider::None
                }
            }
            other => other,
        }
    }
}
