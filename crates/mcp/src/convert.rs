//! An MCP `CallToolResult` as a Talon `ToolResult`, cut to the server's
//! output cap with a note.

use rmcp::model::{CallToolResult, ContentBlock as McpBlock, ResourceContents};
use serde_json::{Value, json};
use talon_tool_catalog::{ContentBlock, ResultStatus, ToolError, ToolErrorCode, ToolResult};

use crate::frame::cut_sizes;

/// Convert a result. A tool-level error (`isError`) becomes a tool error
/// with code `mcp.tool_error` carrying the (capped) text.
pub(crate) fn convert_result(
    result: CallToolResult,
    server: &str,
    tool: &str,
    cap: usize,
) -> Result<ToolResult, ToolError> {
    let mut out = Capped::new(cap);
    for block in &result.content {
        match block {
            McpBlock::Text(t) => out.text(&t.text),
            McpBlock::Image(i) => out.image(&i.data, &i.mime_type),
            McpBlock::Audio(a) => out.text(&format!(
                "[audio {} omitted: {} bytes of base64]",
                a.mime_type,
                a.data.len()
            )),
            McpBlock::Resource(r) => match &r.resource {
                ResourceContents::TextResourceContents { uri, text, .. } => {
                    out.text(&format!("[resource {uri}]\n{text}"));
                }
                ResourceContents::BlobResourceContents { uri, blob, .. } => {
                    out.text(&format!(
                        "[resource {uri}: {} bytes of base64 omitted]",
                        blob.len()
                    ));
                }
                _ => out.text("[resource omitted]"),
            },
            McpBlock::ResourceLink(l) => out.text(&format!("[resource link {}]", l.uri)),
            _ => out.text("[content of an unknown kind omitted]"),
        }
    }
    if result.content.is_empty()
        && let Some(structured) = &result.structured_content
    {
        out.text(&structured.to_string());
    }
    let truncated = out.truncated;
    let total = out.total;
    let mut blocks = out.blocks;
    if truncated {
        let note = format!(
            "[output truncated: the result was {total} bytes; mcp server `{server}` is limited to {cap} bytes (mcp.servers.{server}.maxOutputBytes)]"
        );
        blocks.push(ContentBlock::Text { text: note });
    }
    let structured = result
        .structured_content
        .filter(|v| v.to_string().len() <= cap);
    let details = json!({
        "mcp": {
            "server": server,
            "tool": tool,
            "truncated": truncated,
            "bytes": total,
        },
        "structuredContent": structured.unwrap_or(Value::Null),
    });
    let tool_result = ToolResult {
        content: blocks,
        details,
        status: ResultStatus::Ok,
    };
    if result.is_error == Some(true) {
        let text = tool_result.text();
        let message = if text.is_empty() {
            format!("mcp tool `{tool}` on server `{server}` reported an error")
        } else {
            text
        };
        return Err(ToolError::new(ToolErrorCode::McpToolError, message));
    }
    Ok(tool_result)
}

/// The length of `s` as the server sent it (a string the frame guard cut
/// counts what was dropped too).
fn sent_len(s: &str) -> usize {
    match cut_sizes(s) {
        Some((kept, dropped)) => kept.saturating_add(dropped),
        None => s.len(),
    }
}

struct Capped {
    cap: usize,
    used: usize,
    total: usize,
    truncated: bool,
    blocks: Vec<ContentBlock>,
}

impl Capped {
    fn new(cap: usize) -> Self {
        Capped {
            cap,
            used: 0,
            total: 0,
            truncated: false,
            blocks: Vec::new(),
        }
    }

    fn text(&mut self, text: &str) {
        self.total = self.total.saturating_add(sent_len(text));
        let room = self.cap.saturating_sub(self.used);
        if text.len() <= room {
            self.used += text.len();
            self.blocks.push(ContentBlock::Text {
                text: text.to_owned(),
            });
            return;
        }
        self.truncated = true;
        let mut cut = room;
        while cut > 0 && !text.is_char_boundary(cut) {
            cut -= 1;
        }
        if cut > 0 {
            self.used += cut;
            self.blocks.push(ContentBlock::Text {
                text: text[..cut].to_owned(),
            });
        }
    }

    fn image(&mut self, data: &str, mime: &str) {
        let sent = sent_len(data);
        self.total = self.total.saturating_add(sent);
        if sent != data.len() {
            // Cut while it was read: never passed on, whatever the cap.
            self.truncated = true;
            self.blocks.push(ContentBlock::Text {
                text: format!("[image {mime} omitted: {sent} bytes of base64, over the limit]"),
            });
            return;
        }
        if data.len() <= self.cap.saturating_sub(self.used) {
            self.used += data.len();
            self.blocks.push(ContentBlock::Image {
                data: data.to_owned(),
                mime_type: mime.to_owned(),
            });
        } else {
            self.truncated = true;
            self.blocks.push(ContentBlock::Text {
                text: format!(
                    "[image {mime} omitted: {} bytes over the limit]",
                    data.len()
                ),
            });
        }
    }
}

#[cfg(test)]
#[path = "convert_tests.rs"]
mod tests;
