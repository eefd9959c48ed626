//! The MCP family: an agent's materialised MCP tools, read from the
//! manager's current snapshot (start the servers first with
//! `McpManager::ensure_agent`; servers not started contribute nothing).

use std::sync::Arc;

use talon_mcp::McpManager;
use talon_tool_catalog::{Tool, ToolError, ToolSpec};

use crate::family::ToolFamily;
use crate::run::RunSpec;

/// The id of the MCP family in a run's construction plan.
pub const MCP_FAMILY_ID: &str = "mcp";

pub(crate) struct McpFamily {
    pub(crate) manager: Arc<McpManager>,
}

impl ToolFamily for McpFamily {
    fn id(&self) -> &str {
        MCP_FAMILY_ID
    }

    fn specs(&self, run: &RunSpec) -> Vec<ToolSpec> {
        if !self.manager.has_servers(&run.context.agent_id) {
            return Vec::new();
        }
        self.manager
            .materialize(&run.context.agent_id)
            .tools
            .iter()
            .map(|t| t.spec.clone())
            .collect()
    }

    fn construct(&self, name: &str, run: &RunSpec) -> Result<Arc<dyn Tool>, ToolError> {
        self.manager
            .tool(&run.context.agent_id, name)
            .ok_or_else(|| {
                ToolError::execution(format!(
                    "mcp tool `{name}` is no longer offered by agent `{}`'s servers",
                    run.context.agent_id
                ))
            })
    }
}
