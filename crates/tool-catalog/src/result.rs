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

/// How a tool that returned a result says its work went: the call did
/// not fail (there is a result for the model), but the work it ran may
/// have (a command that exited non-zero, one killed at its time limit).
///
/// The runtime derives the call's status from this, never from `details`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum ResultStatus {
    /// The work succeeded (or is still running in the background).
    #[default]
    Ok,
    /// The work ran and failed (non-zero exit, killed, container gone).
    Failed,
    /// The work was stopped by its own time limit.
    TimedOut,
}

/// What a tool returns: content for the model, structured details for the
/// host that never reach the model, and the typed [`ResultStatus`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolResult {
    /// Content blocks shown to the model.
    pub content: Vec<ContentBlock>,
    /// Structured details for the host (UI, logs, hooks); never sent to the
    /// model.
    #[serde(default, skip_serializing_if = "Value::is_null")]
    pub details: Value,
    /// How the work went. Not serialised: the wire carries the call's
    /// status, which the runtime derives from this.
    #[serde(skip)]
    pub status: ResultStatus,
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

    /// Builder: set the status.
    #[must_use]
    pub fn with_status(mut self, status: ResultStatus) -> Self {
        self.status = status;
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
        status: ResultStatus::Ok,
    }
}

/// A result with one text block and no details.
pub fn text_result(text: impl Into<String>) -> ToolResult {
    ToolResult {
        content: vec![ContentBlock::Text { text: text.into() }],
        details: Value::Null,
        status: ResultStatus::Ok,
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
        status: ResultStatus::Ok,
    }
}
