//! The `memory_search` and `memory_get` tools, with OpenClaw's parameters
//! (the catalog's schemas) and result shapes.

use std::sync::Arc;

use serde_json::json;
use talon_fs_bridge::FsBridge;
use talon_tool_catalog::params::{
    NumberOpts, StringOpts, read_number, read_string, refuse_unknown_keys,
};
use talon_tool_catalog::{
    CancelExt, CancellationToken, Tool, ToolCall, ToolContext, ToolError, ToolErrorCode,
    ToolResult, ToolSpec, json_result,
};

use crate::discover::{is_memory_path, normalize, relative_to_cwd};
use crate::error::MemoryError;
use crate::index::MemoryIndex;

fn spec(id: &str) -> ToolSpec {
    ToolSpec::core(id).unwrap_or_else(|| {
        ToolSpec::new(
            id,
            talon_tool_catalog::ToolFamily::Core {
                section: talon_tool_catalog::Section::Memory,
            },
        )
    })
}

/// The spec of `memory_search` (the catalog row).
pub fn memory_search_spec() -> ToolSpec {
    spec("memory_search")
}

/// The spec of `memory_get` (the catalog row).
pub fn memory_get_spec() -> ToolSpec {
    spec("memory_get")
}

/// `memory_search`: BM25 (and, with a provider, vector) search over the
/// run's memory index, synced first when files changed.
#[derive(Debug, Clone)]
pub struct MemorySearchTool {
    spec: ToolSpec,
    index: Arc<MemoryIndex>,
    bridge: Arc<dyn FsBridge>,
    max_results: usize,
    min_score: f64,
}

impl MemorySearchTool {
    /// The tool over `index`, reading files through `bridge`; `defaults`
    /// are `maxResults` and `minScore` when a call gives none.
    pub fn new(index: Arc<MemoryIndex>, bridge: Arc<dyn FsBridge>, defaults: (usize, f64)) -> Self {
        MemorySearchTool {
            spec: memory_search_spec(),
            index,
            bridge,
            max_results: defaults.0,
            min_score: defaults.1,
        }
    }
}

#[async_trait::async_trait]
impl Tool for MemorySearchTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    async fn execute(
        &self,
        call: &ToolCall,
        _ctx: &ToolContext,
        abort: &CancellationToken,
    ) -> Result<ToolResult, ToolError> {
        abort.check()?;
        let p = &call.params;
        refuse_unknown_keys::<&str>(
            "memory_search",
            p,
            &["query", "maxResults", "minScore"],
            &[],
        )?;
        let query = read_string(p, "query", StringOpts::required())?.unwrap_or_default();
        let max_results = match read_number(
            p,
            "maxResults",
            NumberOpts {
                integer: true,
                ..NumberOpts::default()
            },
        )? {
            None => self.max_results,
            Some(n) if (1.0..=100.0).contains(&n) => n as usize,
            Some(n) => {
                return Err(ToolError::input(
                    "maxResults",
                    format!("maxResults must be between 1 and 100, got {n}"),
                ));
            }
        };
        let min_score = match read_number(p, "minScore", NumberOpts::default())? {
            None => self.min_score,
            Some(s) if (0.0..=1.0).contains(&s) => s,
            Some(s) => {
                return Err(ToolError::input(
                    "minScore",
                    format!("minScore must be between 0 and 1, got {s}"),
                ));
            }
        };
        let response = tokio::select! {
            r = self.index.search(self.bridge.as_ref(), &query, max_results, min_score) => r,
            () = abort.cancelled() => return Err(ToolError::aborted("memory_search cancelled")),
        }
        .map_err(|e| e.into_tool_error("query"))?;
        let payload = serde_json::to_value(&response).map_err(|e| {
            ToolError::execution(format!("memory_search result cannot be encoded: {e}"))
        })?;
        Ok(json_result(payload))
    }
}

/// `memory_get`: lines of one memory file, read through the run's bridge;
/// any other path is refused.
#[derive(Debug, Clone)]
pub struct MemoryGetTool {
    spec: ToolSpec,
    bridge: Arc<dyn FsBridge>,
    extra_paths: Vec<String>,
    max_file_bytes: u64,
}

impl MemoryGetTool {
    /// The tool on `bridge`; `extra_paths` (normalised) are memory files
    /// too; files over `max_file_bytes` are refused.
    pub fn new(bridge: Arc<dyn FsBridge>, extra_paths: Vec<String>, max_file_bytes: u64) -> Self {
        MemoryGetTool {
            spec: memory_get_spec(),
            bridge,
            extra_paths,
            max_file_bytes,
        }
    }

    fn refused(&self, path: &str, why: &str) -> ToolError {
        ToolError::new(
            ToolErrorCode::MemoryPathRefused,
            format!(
                "memory_get reads memory files only (MEMORY.md, memory/**/*.md{}); `{path}` {why}. Use a path returned by memory_search",
                if self.extra_paths.is_empty() {
                    String::new()
                } else {
                    format!(", {}", self.extra_paths.join(", "))
                }
            ),
        )
        .with_param("path")
    }
}

impl MemoryGetTool {
    /// Walk `path` from its memory root (the workspace for `MEMORY.md` and
    /// `memory/`, the extra path for files under one) and refuse a
    /// symbolic link at any step. A missing step is left to the read.
    async fn check_no_links(&self, path: &str) -> Result<(), ToolError> {
        let cwd = self.bridge.cwd().to_owned();
        let (mut dir, rest) = match self.extra_paths.iter().find(|e| {
            path.strip_prefix(e.as_str())
                .is_some_and(|r| r.starts_with('/'))
        }) {
            Some(e) => (e.clone(), path[e.len() + 1..].to_owned()),
            None => (cwd, path.to_owned()),
        };
        let parts: Vec<&str> = rest.split('/').collect();
        for (i, part) in parts.iter().enumerate() {
            let entries = match self.bridge.list(&dir).await {
                Ok(e) => e,
                Err(_) => return Ok(()),
            };
            let Some(entry) = entries.iter().find(|e| e.name == *part) else {
                return Ok(());
            };
            if entry.kind == talon_fs_bridge::FileKind::Symlink {
                let so_far = parts[..=i].join("/");
                return Err(self.refused(
                    path,
                    &format!("goes through the symbolic link `{so_far}` (memory_get does not follow links)"),
                ));
            }
            dir = format!("{}/{part}", dir.trim_end_matches('/'));
        }
        Ok(())
    }
}

fn positive(
    p: &serde_json::Map<String, serde_json::Value>,
    key: &str,
) -> Result<Option<usize>, ToolError> {
    match read_number(
        p,
        key,
        NumberOpts {
            integer: true,
            ..NumberOpts::default()
        },
    )? {
        None => Ok(None),
        Some(n) if n >= 1.0 => Ok(Some(n.min(u32::MAX as f64) as usize)),
        Some(n) => Err(ToolError::input(
            key,
            format!("{key} must be 1 or more, got {n}"),
        )),
    }
}

#[async_trait::async_trait]
impl Tool for MemoryGetTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    async fn execute(
        &self,
        call: &ToolCall,
        _ctx: &ToolContext,
        abort: &CancellationToken,
    ) -> Result<ToolResult, ToolError> {
        abort.check()?;
        let p = &call.params;
        refuse_unknown_keys::<&str>("memory_get", p, &["path", "from", "lines"], &[])?;
        let raw = read_string(p, "path", StringOpts::required())?.unwrap_or_default();
        let from = positive(p, "from")?.unwrap_or(1);
        let lines = positive(p, "lines")?;
        let cwd = self.bridge.cwd().to_owned();
        let Some(path) = normalize(&raw).map(|n| relative_to_cwd(&n, &cwd)) else {
            return Err(self.refused(&raw, "is empty or has a `..` component"));
        };
        if !is_memory_path(&path, &self.extra_paths) {
            return Err(self.refused(&path, "is not one"));
        }
        // No link on the way: a link under memory/ must not reach a file
        // that is not memory (the index does not follow links either).
        self.check_no_links(&path).await?;
        let contents = self
            .bridge
            .read(&path, Some(self.max_file_bytes.saturating_add(1)))
            .await
            .map_err(|e| MemoryError::bridge("memory_get", e).into_tool_error("path"))?;
        if contents.truncated || contents.bytes.len() as u64 > self.max_file_bytes {
            return Err(ToolError::new(
                ToolErrorCode::MemoryFileUnreadable,
                format!(
                    "{path} is {} bytes, over the {}-byte limit for memory files; read it in parts with the read tool, or split it",
                    contents.total_size, self.max_file_bytes
                ),
            )
            .with_param("path"));
        }
        let text = String::from_utf8(contents.bytes).map_err(|e| {
            let at = e.utf8_error().valid_up_to();
            ToolError::new(
                ToolErrorCode::MemoryFileUnreadable,
                format!("{path} is not valid UTF-8 (byte {at}); memory files must be UTF-8 text"),
            )
            .with_param("path")
        })?;
        let all: Vec<&str> = text.lines().collect();
        let start = from.min(all.len() + 1);
        let end = match lines {
            Some(n) => start.saturating_add(n).saturating_sub(1).min(all.len()),
            None => all.len(),
        };
        let slice = if start <= end {
            all[start - 1..end].join("\n")
        } else {
            String::new()
        };
        Ok(json_result(json!({
            "path": path,
            "text": slice,
            "from": start,
            "to": end,
            "totalLines": all.len(),
        })))
    }
}
