//! `mcp.status`.

use serde_json::json;
use talon_gateway_protocol::McpStatusResponse;

/// Every MCP server the runtime has instantiated: agent, name, safe name,
/// transport, state, tool count, last error, restarts.
pub(crate) fn status(runtime: &talon_runtime::Runtime) -> McpStatusResponse {
    McpStatusResponse(
        serde_json::to_value(runtime.mcp_manager().status())
            .unwrap_or_else(|e| json!({"servers": [], "error": e.to_string()})),
    )
}
