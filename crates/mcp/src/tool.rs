//! `McpToolHandle`: one materialised tool as a Talon [`Tool`].

use std::sync::Arc;

use talon_tool_catalog::{
    CancellationToken, Tool, ToolCall, ToolContext, ToolError, ToolResult, ToolSpec,
};

use crate::convert::convert_result;
use crate::server::Server;

/// Calls one tool of one server.
pub(crate) struct McpToolHandle {
    pub(crate) spec: ToolSpec,
    pub(crate) server: Arc<Server>,
    pub(crate) original_name: String,
}

impl std::fmt::Debug for McpToolHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpToolHandle")
            .field("name", &self.spec.name)
            .field("server", &self.server.name)
            .field("original_name", &self.original_name)
            .finish()
    }
}

#[async_trait::async_trait]
impl Tool for McpToolHandle {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    async fn execute(
        &self,
        call: &ToolCall,
        _ctx: &ToolContext,
        abort: &CancellationToken,
    ) -> Result<ToolResult, ToolError> {
        let result = self
            .server
            .call(&self.original_name, call.params.clone(), abort)
            .await?;
        convert_result(
            result,
            &self.server.name,
            &self.original_name,
            self.server.config.max_output_bytes(),
        )
    }
}
