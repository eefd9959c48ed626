//! The `read` tool.

use std::sync::Arc;

use base64::Engine as _;
use serde_json::{Value, json};
use talon_fs_bridge::FsBridge;
use talon_tool_catalog::params::{Bounds, read_positive_integer};
use talon_tool_catalog::{
    CancelExt, CancellationToken, ContentBlock, Tool, ToolCall, ToolContext, ToolError, ToolResult,
    ToolSpec, image_result,
};

use super::common::{PATH_ALIAS, check_keys, fs_error, require_path};
use super::read_format::{ReadLimits, ScanCut, binary_reason, page, render, sniff_image};
use super::spec_for;

/// `read`: a text file's lines (paged, capped) or an image, through a
/// [`FsBridge`].
///
/// The four file tools share one bridge; on the host it is the workspace:
///
/// ```
/// use std::sync::Arc;
/// use talon_fs_bridge::{FsBridge, MountBridge};
/// use talon_tool_catalog::{CancellationToken, Tool, ToolCall, ToolContext, ToolErrorCode};
/// use talon_tools::{ApplyPatchTool, EditTool, ReadLimits, ReadTool, WriteTool};
///
/// let dir = tempfile::tempdir().unwrap();
/// let bridge: Arc<dyn FsBridge> = Arc::new(MountBridge::host(dir.path()).unwrap());
/// let read = ReadTool::new(bridge.clone(), ReadLimits::default());
/// let write = WriteTool::new(bridge.clone());
/// let _edit = EditTool::new(bridge.clone());
/// let _patch = ApplyPatchTool::new(bridge);
///
/// let ctx = ToolContext::new("main", "agent:main:main");
/// let call = |name: &str, args: serde_json::Value| ToolCall {
///     id: "c1".into(),
///     name: name.into(),
///     params: args.as_object().unwrap().clone(),
/// };
/// let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
/// rt.block_on(async {
///     let w = call("write", serde_json::json!({"path": "notes/a.txt", "content": "one\ntwo\n"}));
///     write.execute(&w, &ctx, &CancellationToken::new()).await.unwrap();
///     let r = call("read", serde_json::json!({"path": "notes/a.txt", "offset": 2}));
///     let result = read.execute(&r, &ctx, &CancellationToken::new()).await.unwrap();
///     assert_eq!(result.text(), "two");
///     // Paths that leave the workspace are refused with the bridge's code.
///     let bad = call("read", serde_json::json!({"path": "../etc/passwd"}));
///     let err = read.execute(&bad, &ctx, &CancellationToken::new()).await.unwrap_err();
///     assert_eq!(err.code(), ToolErrorCode::FsOutsideMounts);
///     assert_eq!(err.param(), Some("path"));
/// });
/// ```
#[derive(Debug, Clone)]
pub struct ReadTool {
    spec: ToolSpec,
    bridge: Arc<dyn FsBridge>,
    limits: ReadLimits,
}

/// The `read` tool's spec for `limits` (its description states them),
/// without building the tool: what the runtime lists before constructing it.
pub fn read_spec(limits: &ReadLimits) -> ToolSpec {
    let description = format!(
        "Read a text file or an image. Text comes back exactly as stored (no line numbers), at most {} lines or {} KiB per call; when more remains, a note at the end gives the offset to continue from. Use offset (first line, 1-based) and limit (number of lines) to page through large files. PNG, JPEG, GIF and WebP files come back as images (up to {} KiB); other binary files are refused. Paths are relative to the workspace or absolute.",
        limits.max_lines,
        limits.max_bytes / 1024,
        limits.max_image_bytes / 1024
    );
    spec_for("read", "Read", description)
}

impl ReadTool {
    /// The tool on `bridge` with `limits` ([`ReadLimits::default`] is
    /// 2000 lines / 50 KiB per call, 16 MiB scanned, images up to 3.75 MiB).
    pub fn new(bridge: Arc<dyn FsBridge>, limits: ReadLimits) -> Self {
        ReadTool {
            spec: read_spec(&limits),
            bridge,
            limits,
        }
    }

    /// The limits in force.
    pub fn limits(&self) -> &ReadLimits {
        &self.limits
    }
}

fn to_usize(v: Option<u64>) -> Option<usize> {
    v.map(|n| usize::try_from(n).unwrap_or(usize::MAX))
}

#[async_trait::async_trait]
impl Tool for ReadTool {
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
            "read",
            &call.params,
            &["path", "offset", "limit"],
            &[PATH_ALIAS],
        )?;
        let path = require_path(&call.params)?;
        let offset = to_usize(read_positive_integer(
            &call.params,
            "offset",
            Bounds::default(),
        )?);
        let limit = to_usize(read_positive_integer(
            &call.params,
            "limit",
            Bounds::default(),
        )?);
        let limits = &self.limits;
        let cap = limits
            .max_scan_bytes
            .max(limits.max_image_bytes.saturating_add(1));
        let contents = self
            .bridge
            .read(&path, Some(cap))
            .await
            .map_err(|e| fs_error("path", e))?;
        abort.check()?;

        if let Some(kind) = sniff_image(&contents.bytes) {
            if contents.total_size > limits.max_image_bytes || contents.truncated {
                return Err(ToolError::input(
                    "path",
                    format!(
                        "{path} is an image ({}, {} bytes), larger than read's {}-byte image cap; make a smaller copy (e.g. scale it down with exec) and read that",
                        kind.mime_type(),
                        contents.total_size,
                        limits.max_image_bytes
                    ),
                ));
            }
            let data = base64::engine::general_purpose::STANDARD.encode(&contents.bytes);
            let mut result = image_result(
                &path,
                data,
                kind.mime_type(),
                json!({
                    "kind": "image",
                    "mimeType": kind.mime_type(),
                    "bytes": contents.total_size,
                }),
            );
            result.content.insert(
                0,
                ContentBlock::Text {
                    text: format!(
                        "Read image file {path} [{}, {} bytes]",
                        kind.mime_type(),
                        contents.total_size
                    ),
                },
            );
            return Ok(result);
        }
        if let Some(reason) = binary_reason(&contents.bytes) {
            return Err(ToolError::input(
                "path",
                format!(
                    "{path} is a binary file ({reason}; {} bytes); read returns text and PNG, JPEG, GIF or WebP images only. Inspect it with exec (e.g. `file` or `xxd | head`)",
                    contents.total_size
                ),
            ));
        }

        // When only the start was read, look at whole lines only.
        let (bytes, scan) = if contents.truncated {
            let end = contents
                .bytes
                .iter()
                .rposition(|b| *b == b'\n')
                .map_or(0, |i| i + 1);
            (
                &contents.bytes[..end],
                Some(ScanCut {
                    total_size: contents.total_size,
                    scanned: end,
                }),
            )
        } else {
            (contents.bytes.as_slice(), None)
        };
        // Strict decoding is the fast path; only a file with invalid bytes
        // past the sniffed start pays for the lossy one.
        let text = match std::str::from_utf8(bytes) {
            Ok(text) => std::borrow::Cow::Borrowed(text),
            Err(_) => String::from_utf8_lossy(bytes),
        };
        let lossy = matches!(text, std::borrow::Cow::Owned(_));
        let shown = page(&text, offset, limit, limits).map_err(|e| {
            let scope = if scan.is_some() {
                format!(
                    "the part of {path} that read looks at ({} bytes of {}) has {} lines; use exec (e.g. sed -n) for lines further on",
                    bytes.len(),
                    contents.total_size,
                    e.total_lines
                )
            } else {
                format!("{path} has {} lines", e.total_lines)
            };
            ToolError::input(
                "offset",
                format!(
                    "offset {} is past the end of the file: {scope}; give an offset from 1 to {}",
                    e.offset,
                    e.total_lines.max(1)
                ),
            )
        })?;
        let rendered = render(&shown, limits, scan);
        let details = json!({
            "path": path,
            "kind": "text",
            "startLine": shown.start_line,
            "endLine": shown.end_line,
            "totalLines": shown.total_lines,
            "totalLinesExact": scan.is_none(),
            "truncated": shown.cut.is_some() || scan.is_some(),
            "truncatedBy": shown.cut.map(|c| Value::String(c.as_str().to_owned())).unwrap_or(Value::Null),
            "nextOffset": shown.next_offset(),
            "bytes": shown.text.len(),
            "totalBytes": contents.total_size,
            "invalidUtf8Replaced": lossy,
        });
        Ok(ToolResult {
            content: vec![ContentBlock::Text { text: rendered }],
            details,
            status: talon_tool_catalog::ResultStatus::Ok,
        })
    }
}
