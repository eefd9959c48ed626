//! The `write` tool.

use std::sync::Arc;

use serde_json::json;
use talon_fs_bridge::{FsBridge, FsErrorCode, WriteOptions};
use talon_tool_catalog::params::read_bool;
use talon_tool_catalog::{
    CancelExt, CancellationToken, ContentBlock, Tool, ToolCall, ToolContext, ToolError,
    ToolErrorCode, ToolResult, ToolSpec,
};

use super::common::{PATH_ALIAS, check_keys, fs_error, require_path, require_text};
use super::spec_for;

/// `write`: create or replace a whole file atomically, through a
/// [`FsBridge`].
#[derive(Debug, Clone)]
pub struct WriteTool {
    spec: ToolSpec,
    bridge: Arc<dyn FsBridge>,
    append_only: bool,
}

/// The `WriteTool`'s spec (schema and model-facing description), without
/// building the tool: what the runtime lists before constructing it.
pub fn write_spec() -> ToolSpec {
    spec_for(
        "write",
        "Write",
        "Create a file, or replace a file's whole content, with the given content. Missing parent directories are created. The file is replaced atomically (readers see the old or the new content, never half), and an existing file keeps its permissions. With append: true the content is added to the end of the file instead (created when missing). To change part of an existing file, use edit instead of rewriting it.",
    )
}

impl WriteTool {
    /// The tool on `bridge`.
    pub fn new(bridge: Arc<dyn FsBridge>) -> Self {
        WriteTool {
            spec: write_spec(),
            bridge,
            append_only: false,
        }
    }

    /// Builder: refuse every call without `append: true` (the memory-flush
    /// run's append-only policy: it may add to files, never overwrite).
    pub fn append_only(mut self) -> Self {
        self.append_only = true;
        self
    }

    /// Add `content` to the end of `path`, creating it when missing. The
    /// read and the atomic replace go through one pinned file (the
    /// bridge's `edit`); a file created meanwhile is appended to.
    async fn append(
        &self,
        path: &str,
        content: &str,
    ) -> Result<(bool, talon_fs_bridge::WriteReport), ToolError> {
        let add = content.as_bytes();
        for _ in 0..3 {
            match self
                .bridge
                .edit(path, &|current: &[u8]| {
                    let mut out = Vec::with_capacity(current.len() + add.len());
                    out.extend_from_slice(current);
                    out.extend_from_slice(add);
                    Ok(out)
                })
                .await
            {
                Ok(report) => return Ok((false, report)),
                Err(e) if e.code == FsErrorCode::NotFound => {}
                Err(e) => return Err(fs_error("path", e)),
            }
            let create = WriteOptions {
                create_parents: true,
                create_new: true,
            };
            match self.bridge.write(path, add, create).await {
                Ok(report) => return Ok((true, report)),
                Err(e) if e.code == FsErrorCode::AlreadyExists => continue,
                Err(e) => return Err(fs_error("path", e)),
            }
        }
        Err(ToolError::execution(format!(
            "{path} kept appearing and disappearing while appending; try again"
        )))
    }
}

#[async_trait::async_trait]
impl Tool for WriteTool {
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
        check_keys(
            "write",
            &call.params,
            &["path", "content", "append"],
            &[PATH_ALIAS],
        )?;
        let path = require_path(&call.params)?;
        let content = require_text(&call.params, "content")?;
        let append = read_bool(&call.params, "append")?.unwrap_or(false);
        if self.append_only && !append {
            return Err(ToolError::new(
                ToolErrorCode::WriteAppendOnly,
                format!(
                    "this is a memory-flush run (trigger: memory), which may only append: call write with append: true to add the content to the end of {path}; replacing a file is refused"
                ),
            )
            .with_param("append"));
        }
        let (created, report) = if append {
            self.append(&path, &content).await?
        } else {
            let report = self
                .bridge
                .write(&path, content.as_bytes(), WriteOptions::default())
                .await
                .map_err(|e| fs_error("path", e))?;
            (report.created, report)
        };
        let text = match (append, created) {
            (true, true) => format!("Created {path} ({} bytes).", report.bytes),
            (true, false) => format!(
                "Appended {} bytes to {path} (now {} bytes).",
                content.len(),
                report.bytes
            ),
            (false, true) => format!("Created {path} ({} bytes).", report.bytes),
            (false, false) => format!("Replaced the content of {path} ({} bytes).", report.bytes),
        };
        Ok(ToolResult {
            content: vec![ContentBlock::Text { text }],
            details: json!({
                "path": path,
                "containerPath": report.container_path,
                "bytes": report.bytes,
                "created": created,
                "appended": append,
            }),
            status: talon_tool_catalog::ResultStatus::Ok,
        })
    }
}
