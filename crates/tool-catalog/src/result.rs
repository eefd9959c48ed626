//! `ToolResult` and its builders.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One block of content the model sees.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum ContentBlock {
    /// Plain text.
    Text {
        /// The text.
        text: String,
    },
    /// An image, base64-encoded.
    Image {
        /// Base64 data.
        data: String,
        /// MIME type, e.g. `image/png`.
        #[serde(rename = "mimeType")]
        mime_type: String,
    },
}

/// What a tool returns: content for the model, and structured details for
/// the host that never reach the model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolResult {
    /// Content blocks shown to the model.
    pub content: Vec<ContentBlock>,
    /// Structured details for the host (UI, logs, hooks); never sent to the
    /// model.
    #[serde(default, skip_serializing_if = "Value::is_null")]
    pub details: Value,
}

impl ToolResult {
    /// All text blocks joined with newlines.
    pub fn text(&self) -> String {
        let mut out = String::new();
        for block in &self.content {
            if let ContentBlock::Text { text } = block {
                if !out.is_empty() {
                    out.push('\n');
                }
                out.push_str(text);
            }
        }
        out
    }

    /// Builder: attach details.
    pub fn with_details(mut self, details: Value) -> Self {
        self.details = details;
        self
    }
}

/// A result whose content is `payload` pretty-printed as JSON (two-space
/// indent) and whose details are the payload itself.
pub fn json_result(payload: Value) -> ToolResult {
    let text = serde_json::to_string_pretty(&payload).unwrap_or_else(|_| payload.to_string());
    ToolResult {
        content: vec![ContentBlock::Text { text }],
        details: payload,
    }
}

/// A result with one text block and no details.
pub fn text_result(text: impl Into<String>) -> ToolResult {
    ToolResult {
        content: vec![ContentBlock::Text { text: text.into() }],
        details: Value::Null,
    }
}

/// A result with one image block; `details` gets the `path` the image came
/// from merged in (when details is an object or null).
pub fn image_result(
    path: &str,
    base64: impl Into<String>,
    mime_type: impl Into<String>,
    details: Value,
) -> ToolResult {
    let details = match details {
        Value::Object(mut map) => {
            map.insert("path".to_owned(), Value::String(path.to_owned()));
            Value::Object(map)
        }
        Value::Null => serde_json::json!({ "path": path }),
        other => other,
    };
    ToolResult {
        content: vec![ContentBlock::Image {
            data: base64.into(),
            mime_type: mime_type.into(),
        }],
        details,
    }
}
