//! Helpers shared by the loop-detection tests.

use serde_json::{Map, Value};
use talon_tool_catalog::{ContentBlock, ToolResult};

use super::config::ResolvedLoopDetection;
use super::history::CallRecord;

/// The object inside `value` (an empty map for anything else).
pub(crate) fn params(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        _ => Map::new(),
    }
}

/// OpenClaw's defaults, enabled.
pub(crate) fn enabled_config() -> ResolvedLoopDetection {
    ResolvedLoopDetection {
        enabled: true,
        ..ResolvedLoopDetection::default()
    }
}

/// A finished record of `tool` with args signature `sig` and outcome `hash`.
pub(crate) fn rec(tool: &str, sig: &str, hash: Option<&str>) -> CallRecord {
    CallRecord {
        tool_name: tool.to_owned(),
        args_hash: format!("{tool}:{sig}"),
        call_id: String::new(),
        run_id: None,
        action: None,
        result_hash: hash.map(str::to_owned),
        unknown_tool_name: None,
    }
}

/// A tool result with one text block and these details.
pub(crate) fn result(text: &str, details: Value) -> ToolResult {
    ToolResult {
        content: vec![ContentBlock::Text {
            text: text.to_owned(),
        }],
        details,
        status: talon_tool_catalog::ResultStatus::Ok,
    }
}
