//! `mcp.*`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// `mcp.status`'s answer: every MCP server the runtime has instantiated
/// (talon-mcp's status: agent, name, safe name, transport, state, tool
/// count, last error, restarts).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(transparent)]
pub struct McpStatusResponse(pub Value);
