//! `after_tool_call`: observe only, in parallel, fire and forget.

use std::sync::Arc;
use std::time::Duration;

use serde::Serialize;
use serde_json::{Map, Value};
use talon_tool_catalog::{ContentBlock, ToolResult};
use tokio::task::JoinHandle;

use crate::error::HookError;
use crate::event::HookContext;
use crate::guard::run_guarded;
use crate::redact::redact_params_for_log;
use crate::registration::{DEFAULT_AFTER_TOOL_CALL_TIMEOUT, Registration};
use crate::registry::Hooks;

/// Longest text block passed to observers; longer text is cut with a note.
pub const AFTER_RESULT_TEXT_LIMIT: usize = 4_000;

/// What an observer sees of one finished call.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AfterToolCallEvent {
    /// The normalised tool name.
    pub tool_name: String,
    /// The call id.
    pub tool_call_id: String,
    /// The run id.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub run_id: Option<String>,
    /// The parameters the tool ran with, redacted for logs.
    pub params: Value,
    /// How long the tool ran.
    pub duration_ms: u64,
    /// The result's content, redacted (text capped, images summarised,
    /// `details` left out); `None` when the call failed or was blocked.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub result: Option<Value>,
    /// The error message, when the tool failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The denied reason, when the call was blocked.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub blocked: Option<String>,
}

impl AfterToolCallEvent {
    /// Build an event, redacting `params` and `result`.
    pub fn new(
        tool_name: &str,
        tool_call_id: &str,
        params: &Map<String, Value>,
        duration: Duration,
    ) -> Self {
        AfterToolCallEvent {
            tool_name: tool_name.to_owned(),
            tool_call_id: tool_call_id.to_owned(),
            run_id: None,
            params: redact_params_for_log(tool_name, &Value::Object(params.clone())),
            duration_ms: u64::try_from(duration.as_millis()).unwrap_or(u64::MAX),
            result: None,
            error: None,
            blocked: None,
        }
    }

    /// Builder: the (redacted) result.
    pub fn with_result(mut self, result: &ToolResult) -> Self {
        self.result = Some(redact_result(result));
        self
    }

    /// Builder: the error.
    pub fn with_error(mut self, message: impl Into<String>) -> Self {
        self.error = Some(message.into());
        self
    }
}

/// The content of `result` for observers: text capped at
/// [`AFTER_RESULT_TEXT_LIMIT`] characters, images as their MIME type and
/// size, no `details`.
pub fn redact_result(result: &ToolResult) -> Value {
    let blocks: Vec<Value> = result
        .content
        .iter()
        .map(|block| match block {
            ContentBlock::Text { text } => {
                let count = text.chars().count();
                if count > AFTER_RESULT_TEXT_LIMIT {
                    let cut: String = text.chars().take(AFTER_RESULT_TEXT_LIMIT).collect();
                    serde_json::json!({"type": "text", "text": cut, "truncatedChars": count - AFTER_RESULT_TEXT_LIMIT})
                } else {
                    serde_json::json!({"type": "text", "text": text})
                }
            }
            ContentBlock::Image { data, mime_type } => {
                serde_json::json!({"type": "image", "mimeType": mime_type, "base64Chars": data.len()})
            }
        })
        .collect();
    serde_json::json!({ "content": blocks })
}

/// An `after_tool_call` observer. Its return value is ignored; its failure
/// never affects the call.
#[async_trait::async_trait]
pub trait AfterToolCallHandler: Send + Sync {
    /// Observe one finished call.
    async fn after_tool_call(
        &self,
        event: &AfterToolCallEvent,
        ctx: &HookContext,
    ) -> Result<(), HookError>;
}

/// The observers started for one call. Dropping it leaves them running;
/// tests await [`AfterCallTasks::join`].
#[derive(Debug, Default)]
pub struct AfterCallTasks {
    handles: Vec<JoinHandle<()>>,
}

impl AfterCallTasks {
    /// How many observers were started.
    pub fn len(&self) -> usize {
        self.handles.len()
    }

    /// Whether none was started.
    pub fn is_empty(&self) -> bool {
        self.handles.is_empty()
    }

    /// Whether every observer has finished.
    pub fn is_finished(&self) -> bool {
        self.handles.iter().all(JoinHandle::is_finished)
    }

    /// Wait for every observer to finish.
    pub async fn join(self) {
        for h in self.handles {
            let _ = h.await;
        }
    }
}

impl Hooks {
    /// Start every matching `after_tool_call` observer in parallel on the
    /// current tokio runtime and return at once. Requires a tokio runtime.
    pub fn fire_after_tool_call(
        &self,
        event: AfterToolCallEvent,
        ctx: &HookContext,
    ) -> AfterCallTasks {
        let mut tasks = AfterCallTasks::default();
        if self.after.is_empty() {
            return tasks;
        }
        let event = Arc::new(event);
        for (reg, handler) in &self.after {
            if !reg.matcher.matches(&event.tool_name) {
                continue;
            }
            let handler = Arc::clone(handler);
            let event = Arc::clone(&event);
            let ctx = ctx.clone();
            let reg: Registration = reg.clone();
            let timeout = reg.timeout.unwrap_or(DEFAULT_AFTER_TOOL_CALL_TIMEOUT);
            tasks.handles.push(tokio::spawn(async move {
                if let Err(failure) =
                    run_guarded(handler.after_tool_call(&event, &ctx), Some(timeout)).await
                {
                    tracing::warn!(
                        target: "talon::tools",
                        hook = %reg.plugin_id,
                        class = failure.class(),
                        "after_tool_call observer failed (ignored)"
                    );
                }
            }));
        }
        tasks
    }
}
