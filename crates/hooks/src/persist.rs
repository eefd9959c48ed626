//! `tool_result_persist` and `before_message_write`: synchronous hooks on
//! what the host writes to a transcript, plus the rules for `details`
//! (stripped before replay to a model, bounded when persisted).

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use talon_tool_catalog::ContentBlock;

use crate::guard::run_sync_guarded;
use crate::registry::Hooks;

/// The largest `details` kept in a persisted record, as serialised JSON
/// bytes. Larger details become a compact summary.
pub const MAX_PERSISTED_DETAILS_BYTES: usize = 16 * 1024;

/// A tool result as it is written to the transcript.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolResultMessage {
    /// The call id.
    pub tool_call_id: String,
    /// The tool.
    pub tool_name: String,
    /// What the model sees.
    pub content: Vec<ContentBlock>,
    /// Host metadata; never replayed to a model.
    #[serde(default, skip_serializing_if = "Value::is_null")]
    pub details: Value,
    /// Whether the call failed or was blocked.
    #[serde(default)]
    pub is_error: bool,
}

impl ToolResultMessage {
    /// The message as a model may see it again: `details` removed.
    pub fn for_replay(&self) -> ToolResultMessage {
        ToolResultMessage {
            details: Value::Null,
            ..self.clone()
        }
    }
}

/// Replaces a tool result before it is persisted. Synchronous by design.
pub trait ToolResultPersistHandler: Send + Sync {
    /// Return `Some(message)` to replace what is written, `None` to keep
    /// the message as it is.
    fn tool_result_persist(&self, message: &ToolResultMessage) -> Option<ToolResultMessage>;
}

/// What a `before_message_write` handler decides.
#[derive(Debug, Clone, PartialEq)]
pub enum MessageWrite {
    /// Write the message as it is.
    Keep,
    /// Write this instead.
    Replace(Value),
    /// Do not write the record (the tool call itself is not affected).
    Block,
}

/// Sees every transcript record before it is written. Synchronous.
pub trait BeforeMessageWriteHandler: Send + Sync {
    /// Decide on one record (any transcript message, as JSON).
    fn before_message_write(&self, message: &Value) -> MessageWrite;
}

/// The outcome of [`Hooks::before_message_write`].
#[derive(Debug, Clone, PartialEq)]
pub enum WriteDecision {
    /// Write this record.
    Write(Value),
    /// Do not write; `by` is the handler that blocked (or failed).
    Blocked {
        /// The handler's id.
        by: String,
    },
}

impl Hooks {
    /// Run the `tool_result_persist` handlers in priority order, each on
    /// the previous one's message, then bound `details`. A handler that
    /// panics fails closed: the content is withheld (the record says so)
    /// rather than persisted unfiltered.
    pub fn tool_result_persist(&self, message: ToolResultMessage) -> ToolResultMessage {
        let mut current = message;
        for (reg, handler) in &self.persist {
            if !reg.matcher.matches(&current.tool_name) {
                continue;
            }
            match run_sync_guarded(|| handler.tool_result_persist(&current)) {
                Ok(Some(next)) => current = next,
                Ok(None) => {}
                Err(failure) => {
                    tracing::warn!(
                        target: "talon::tools",
                        hook = %reg.plugin_id,
                        class = failure.class(),
                        "tool_result_persist handler failed; withholding the result"
                    );
                    current = ToolResultMessage {
                        content: vec![ContentBlock::Text {
                            text: format!(
                                "[tool result withheld: persist hook `{}` failed]",
                                reg.plugin_id
                            ),
                        }],
                        details: Value::Null,
                        ..current
                    };
                }
            }
        }
        current.details = bound_details(current.details, MAX_PERSISTED_DETAILS_BYTES);
        current
    }

    /// Run the `before_message_write` handlers in priority order, each on
    /// the previous one's record. A block (or a panicking handler: fail
    /// closed) stops the write, never the tool call.
    pub fn before_message_write(&self, message: Value) -> WriteDecision {
        let mut current = message;
        for (reg, handler) in &self.message_write {
            match run_sync_guarded(|| handler.before_message_write(&current)) {
                Ok(MessageWrite::Keep) => {}
                Ok(MessageWrite::Replace(next)) => current = next,
                Ok(MessageWrite::Block) => {
                    return WriteDecision::Blocked {
                        by: reg.plugin_id.clone(),
                    };
                }
                Err(failure) => {
                    tracing::warn!(
                        target: "talon::tools",
                        hook = %reg.plugin_id,
                        class = failure.class(),
                        "before_message_write handler failed; not writing the record"
                    );
                    return WriteDecision::Blocked {
                        by: reg.plugin_id.clone(),
                    };
                }
            }
        }
        WriteDecision::Write(current)
    }
}

/// `details` no larger than `max_bytes` of JSON; larger ones become
/// `{persistedDetailsTruncated: true, originalBytes, keys}` (the top-level
/// keys, at most 32, or the value's type).
pub fn bound_details(details: Value, max_bytes: usize) -> Value {
    if details.is_null() {
        return details;
    }
    let size = serde_json::to_vec(&details)
        .map(|v| v.len())
        .unwrap_or(usize::MAX);
    if size <= max_bytes {
        return details;
    }
    let mut summary = Map::new();
    summary.insert("persistedDetailsTruncated".into(), Value::Bool(true));
    summary.insert("originalBytes".into(), Value::from(size));
    match &details {
        Value::Object(map) => {
            let keys: Vec<Value> = map
                .keys()
                .take(32)
                .map(|k| Value::String(k.clone()))
                .collect();
            summary.insert("keys".into(), Value::Array(keys));
        }
        Value::Array(items) => {
            summary.insert("type".into(), Value::String("array".into()));
            summary.insert("length".into(), Value::from(items.len()));
        }
        _ => {
            summary.insert("type".into(), Value::String("scalar".into()));
        }
    }
    Value::Object(summary)
}
