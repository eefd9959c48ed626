//! The `Tool` trait, a call and its context.

use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use crate::error::ToolError;
use crate::result::ToolResult;
use crate::spec::ToolSpec;

/// One call of a tool by the model.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolCall {
    /// The call id the model gave (used for idempotency and correlation).
    pub id: String,
    /// The (normalised) tool name.
    pub name: String,
    /// The decoded arguments.
    pub params: Map<String, Value>,
}

/// What a tool knows about the run it executes in.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ToolContext {
    /// The agent id.
    pub agent_id: String,
    /// The session key.
    pub session_key: String,
    /// Whether the run is sandboxed.
    pub sandboxed: bool,
}

impl ToolContext {
    /// A context for an agent and session.
    pub fn new(agent_id: impl Into<String>, session_key: impl Into<String>) -> Self {
        ToolContext {
            agent_id: agent_id.into(),
            session_key: session_key.into(),
            sandboxed: false,
        }
    }

    /// Builder: mark the run sandboxed.
    pub fn sandboxed(mut self, sandboxed: bool) -> Self {
        self.sandboxed = sandboxed;
        self
    }
}

/// A tool the model can call.
#[async_trait::async_trait]
pub trait Tool: Send + Sync {
    /// The tool's definition.
    fn spec(&self) -> &ToolSpec;

    /// Run one call. Implementations check `abort` at their await points
    /// ([`CancelExt::check`](crate::CancelExt::check), or
    /// `abort.cancelled()` in a `select!`) and return an aborted
    /// [`ToolError`] once it fires. The token is the call's own (a child of
    /// the run's), so a call that ends leaves nothing registered on the run.
    async fn execute(
        &self,
        call: &ToolCall,
        ctx: &ToolContext,
        abort: &CancellationToken,
    ) -> Result<ToolResult, ToolError>;
}
