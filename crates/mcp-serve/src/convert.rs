//! Talon's tool definitions and call outcomes in MCP's shapes.

use std::sync::Arc;

use rmcp::model::{CallToolResult, ContentBlock as McpContent, JsonObject, Tool};
use serde_json::Value;
use talon_runtime::{InvokeOutcome, ToolDefinition};
use talon_tool_catalog::ContentBlock;

/// A Talon tool definition as an MCP tool: name, description and the
/// input schema as the table gives it.
pub(crate) fn mcp_tool(def: &ToolDefinition) -> Tool {
    let schema = match &def.parameters {
        Value::Object(map) => map.clone(),
        other => {
            // The table hands out object schemas; anything else would be
            // rejected by MCP clients, so it is wrapped rather than sent.
            tracing::warn!(
                tool = %def.name,
                kind = json_kind(other),
                "tool schema is not an object; serving an empty object schema"
            );
            let mut map = JsonObject::new();
            map.insert("type".into(), Value::String("object".into()));
            map.insert("properties".into(), Value::Object(JsonObject::new()));
            map
        }
    };
    let description = (!def.description.is_empty()).then(|| def.description.clone().into());
    Tool::new_with_raw(def.name.clone(), description, Arc::new(schema))
}

/// A call's outcome as an MCP result: the tool's content on success; the
/// structured `blocked` JSON (layer, hook, config key) or the error text
/// otherwise. `isError` comes from the one outcome mapping
/// ([`InvokeOutcome::wire`]). `details` never leave the host.
pub(crate) fn call_result(tool: &str, outcome: &InvokeOutcome) -> CallToolResult {
    let content = match outcome {
        InvokeOutcome::Completed { result, .. } => result.content.iter().map(mcp_content).collect(),
        InvokeOutcome::Blocked(blocked) => {
            let json = blocked.to_model_json(tool);
            let text = serde_json::to_string_pretty(&json).unwrap_or_else(|_| json.to_string());
            vec![McpContent::text(text)]
        }
        InvokeOutcome::Failed(err) => vec![McpContent::text(err.to_string())],
    };
    if outcome.wire().mcp_is_error {
        CallToolResult::error(content)
    } else {
        CallToolResult::success(content)
    }
}

fn mcp_content(block: &ContentBlock) -> McpContent {
    match block {
        ContentBlock::Text { text } => McpContent::text(text.clone()),
        ContentBlock::Image { data, mime_type } => {
            McpContent::image(data.clone(), mime_type.clone())
        }
    }
}

fn json_kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

#[cfg(test)]
#[path = "convert_tests.rs"]
mod tests;
