//! Talon's memory search: the agent's `MEMORY.md` and `memory/**/*.md`
//! (plus `agents.defaults.memorySearch.extraPaths`) chunked by heading and
//! paragraph, with line ranges, into a SQLite FTS5 index in the state
//! directory, and the `memory_search` / `memory_get` tools over it.
//!
//! - [`MemoryIndex`]: one index (an agent's host workspace, or one
//!   sandbox). [`MemoryIndex::sync`] brings it in step with the files
//!   visible through a file bridge (size and modification time, then a
//!   content hash; one transaction per sync), [`MemoryIndex::search`]
//!   syncs when something changed and ranks with BM25.
//!   [`MemoryIndex::rebuild`] reproduces the index from the files.
//! - Query text is taken as words ([`fts_expression`]): no character a
//!   model sends is FTS5 syntax.
//! - A file that is not UTF-8 or is over the size limit is skipped with a
//!   stable code (`memory.invalid_utf8`, `memory.file_too_large`) that
//!   searches and `talon memory status` report; it never stops the others.
//! - [`EmbeddingProvider`]: off by default (no network, no model). With
//!   `provider: "openai"` an OpenAI-compatible `/embeddings` client
//!   ([`OpenAiEmbeddings`], cargo feature `openai`, through
//!   `talon-egress`'s guarded client) adds vector scores (hybrid ranking);
//!   when it fails the text ranking answers and says why.
//! - [`MemoryService`]: the indexes of one runtime, with a `notify` watcher
//!   on each host workspace (an edit marks the index dirty; the next
//!   search syncs).
#![deny(missing_docs)]

pub use crate::chunk::{Chunk, chunk_markdown};
pub use crate::discover::{MAX_FILES, Skipped, is_memory_path, normalize};
#[cfg(feature = "openai")]
pub use crate::embed::OpenAiEmbeddings;
pub use crate::embed::{
    DEFAULT_OPENAI_BASE_URL, DEFAULT_OPENAI_MODEL, EmbeddingProvider, cosine, parse_embeddings,
};
pub use crate::error::{MemoryError, MemoryErrorKind, Result};
pub use crate::index::{
    ChunkRow, IndexSettings, IndexStatus, MemoryIndex, SNIPPET_MAX_CHARS, SearchHit,
    SearchResponse, SyncReport,
};
pub use crate::query::{MAX_QUERY_WORDS, fts_expression, query_words};
pub use crate::service::{DEFAULT_MAX_RESULTS, MemoryScope, MemoryService, host_bridge};
pub use crate::tools::{MemoryGetTool, MemorySearchTool, memory_get_spec, memory_search_spec};
pub use talon_config::sections::memory::MemorySearchConfig;

mod chunk;
mod discover;
mod embed;
mod error;
mod index;
mod query;
mod service;
mod tools;
mod watch;
