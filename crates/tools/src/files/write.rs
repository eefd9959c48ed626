//! The `write` tool.

use std::sync::Arc;

use serde_json::json;
use talon_fs_bridge::{FsBridge, WriteOptions};
use talon_tool_catalog::{
    CancelExt, CancellationToken, ContentBlock, Tool, ToolCall, ToolContext, ToolError, ToolResult,
    ToolSpec,
};

use super::common::{PATH_ALIAS, check_keys, fs_error, require_path, require_text};
use super::spec_for;

/// `write`: create or replace a whole file atomically, through a
/// [`FsBridge`].
#[derive(Debug, Clone)]
pub struct WriteTool {
    spec: ToolSpec,
    bridge: Arc<dyn FsBridge>,
}

/// The `WriteTool`'s spec (schema and model-facing description), without
/// building the tool: what the runtime lists before constructing it.
pub fn write_spec() -> ToolSpec {
    spec_for(
        "write",
        "Write",
        "Create a file, or replace a file's whole content, with the given content. Missing parent directories are created. The file is replaced atomically (readers see the old or the new content, never half), and an existing file keeps its permissions. To change part of an existing file, use edit instead of rewriting it.",
    )
}

impl WriteTool {
    /// The tool on `bridge`.
    pub fn new(bridge: Arc<dyn FsBridge>) -> Self {
        WriteTool {
            spec: write_spec(),
            bridge,
        }
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
        check_keys("write", &call.params, &["path", "content"], &[PATH_ALIAS])?;
        let path = require_path(&call.params)?;
        let content = require_text(&call.params, "content")?;
        let report = self
            .bridge
            .write(&path, content.as_bytes(), WriteOptions::default())
            .await
            .map_err(|e| fs_error("path", e))?;
        let text = if report.created {
            format!("Created {path} ({} bytes).", report.bytes)
        } else {
            format!("Replaced the content of {path} ({} bytes).", report.bytes)
        };
        Ok(ToolResult {
            content: vec![ContentBlock::Text { text }],
            details: json!({
                "path": path,
                "containerPath": report.container_path,
                "bytes": report.bytes,
                "created": report.created,
            }),
            status: talon_tool_catalog::ResultStatus::Ok,
        })
    }
}
