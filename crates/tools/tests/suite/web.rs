//! Web tools end to end: the SSRF guard, `web_fetch` against a real
//! loopback server, `web_search` against one fake server per provider, and
//! the read-only `gateway` tool.

mod server;

mod fetch;
mod gateway;
mod search;
#[path = "web/search_egress.rs"]
mod search_egress;
#[path = "web/ssrf_e2e.rs"]
mod ssrf_e2e;

use serde_json::{Map, Value};
use talon_tool_catalog::{CancellationToken, Tool, ToolCall, ToolContext, ToolError, ToolResult};

/// Call a tool with JSON params.
pub(crate) async fn call(tool: &dyn Tool, params: Value) -> Result<ToolResult, ToolError> {
    call_with(tool, params, &CancellationToken::new()).await
}

pub(crate) async fn call_with(
    tool: &dyn Tool,
    params: Value,
    abort: &CancellationToken,
) -> Result<ToolResult, ToolError> {
    let params: Map<String, Value> = match params {
        Value::Object(m) => m,
        other => panic!("params must be an object, got {other}"),
    };
    let call = ToolCall {
        id: "call-1".into(),
        name: tool.spec().name.clone(),
        params,
    };
    tool.execute(&call, &ToolContext::new("main", "agent:main:main"), abort)
        .await
}
