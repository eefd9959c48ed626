//! Caps on what a server's tool list puts in front of the model: the
//! description, the title and the input schema of each tool are bounded
//! when the list is read, and a note in the description says what was cut.
//! (The frame guard already bounds every string while the list is read;
//! these caps are the much smaller ones a prompt can afford.)

use std::borrow::Cow;
use std::sync::Arc;

use rmcp::model::{JsonObject, Tool as McpTool};
use serde_json::Value;

/// Longest tool description passed to the model, in bytes.
pub const MAX_TOOL_DESCRIPTION_BYTES: usize = 4096;
/// Longest tool title (the label), in bytes.
pub const MAX_TOOL_TITLE_BYTES: usize = 256;
/// Largest input schema passed to the model, serialised, in bytes.
pub const MAX_TOOL_SCHEMA_BYTES: usize = 64 * 1024;
/// Longest `description` kept inside a schema that was over its cap.
const SCHEMA_DESCRIPTION_BYTES: usize = 256;

fn cut(s: &str, max: usize) -> &str {
    if s.len() <= max {
        return s;
    }
    let mut end = max;
    while end > 0 && !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

fn schema_len(schema: &JsonObject) -> usize {
    serde_json::to_string(schema).map_or(usize::MAX, |s| s.len())
}

/// Cut every `description` string inside `v` to `max` bytes.
fn shorten_descriptions(v: &mut Value, max: usize) {
    match v {
        Value::Object(map) => {
            for (key, value) in map.iter_mut() {
                match value {
                    Value::String(s) if key == "description" && s.len() > max => {
                        let kept = cut(s, max).to_owned();
                        *s = format!("{kept}…");
                    }
                    other => shorten_descriptions(other, max),
                }
            }
        }
        Value::Array(items) => {
            for item in items {
                shorten_descriptions(item, max);
            }
        }
        _ => {}
    }
}

/// The schema within [`MAX_TOOL_SCHEMA_BYTES`], and what was done to it:
/// long descriptions shortened, then (still too large) only the top-level
/// property names kept with any value allowed, then (still too large) an
/// open object.
fn cap_schema(schema: &JsonObject) -> Option<(JsonObject, &'static str)> {
    if schema_len(schema) <= MAX_TOOL_SCHEMA_BYTES {
        return None;
    }
    let mut shortened = Value::Object(schema.clone());
    shorten_descriptions(&mut shortened, SCHEMA_DESCRIPTION_BYTES);
    if let Value::Object(map) = shortened
        && schema_len(&map) <= MAX_TOOL_SCHEMA_BYTES
    {
        return Some((map, "the descriptions inside it were shortened"));
    }
    let mut names = JsonObject::new();
    names.insert("type".into(), Value::from("object"));
    if let Some(Value::Object(props)) = schema.get("properties") {
        let props: serde_json::Map<String, Value> = props
            .keys()
            .map(|k| (k.clone(), Value::Object(Default::default())))
            .collect();
        names.insert("properties".into(), Value::Object(props));
    }
    if let Some(required @ Value::Array(_)) = schema.get("required") {
        names.insert("required".into(), required.clone());
    }
    if schema_len(&names) <= MAX_TOOL_SCHEMA_BYTES {
        return Some((names, "only its property names were kept"));
    }
    let mut open = JsonObject::new();
    open.insert("type".into(), Value::from("object"));
    Some((open, "it was replaced by an open object"))
}

/// Bound `tool`'s description, title and input schema; the note of what
/// was cut (also appended to the description), or `None` when nothing was.
pub(crate) fn cap_tool(tool: &mut McpTool) -> Option<String> {
    let mut notes = Vec::new();
    if let Some((schema, what)) = cap_schema(&tool.input_schema) {
        notes.push(format!(
            "the input schema was {} bytes, over {MAX_TOOL_SCHEMA_BYTES}; {what}",
            schema_len(&tool.input_schema)
        ));
        tool.input_schema = Arc::new(schema);
    }
    if let Some(title) = &tool.title
        && title.len() > MAX_TOOL_TITLE_BYTES
    {
        notes.push(format!("the title was cut from {} bytes", title.len()));
        tool.title = Some(cut(title, MAX_TOOL_TITLE_BYTES).to_owned());
    }
    if let Some(schema) = &tool.output_schema
        && schema_len(schema) > MAX_TOOL_SCHEMA_BYTES
    {
        // Not shown to the model; dropped rather than kept whole.
        notes.push("the output schema was dropped (too large)".to_owned());
        tool.output_schema = None;
    }
    let description = tool.description.as_deref().unwrap_or("");
    let over = description.len() > MAX_TOOL_DESCRIPTION_BYTES;
    if !over && notes.is_empty() {
        return None;
    }
    if over {
        notes.insert(
            0,
            format!(
                "the description was cut from {} to {MAX_TOOL_DESCRIPTION_BYTES} bytes",
                description.len()
            ),
        );
    }
    let note = format!("[talon: {}]", notes.join("; "));
    let kept = cut(description, MAX_TOOL_DESCRIPTION_BYTES);
    let joined = if kept.is_empty() {
        note.clone()
    } else {
        format!("{kept}\n{note}")
    };
    tool.description = Some(Cow::Owned(joined));
    Some(note)
}

#[cfg(test)]
#[path = "tool_caps_tests.rs"]
mod tests;
