//! The `Tool` trait, a call and its context.

use std::sync::Arc;

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
    /// What an approval of this call was bound to (for `exec`: the
    /// canonical working directory and the hashes of the files the command
    /// runs). A tool that has one verifies it immediately before it starts
    /// anything, and refuses to run when it no longer holds.
    pub approval_pin: Option<ApprovalPin>,
    /// Whether the caller of this call is the owner: `Some(false)` when
    /// known not to be, `None` when nobody was proven (a tool with
    /// owner-only actions refuses them only on `Some(false)`, as the
    /// owner-only policy layer does).
    pub sender_is_owner: Option<bool>,
}

/// Checks, immediately before a command starts, that what its approval was
/// bound to still holds. Implemented by the hooks crate's exec pin.
pub trait RunBinding: Send + Sync + std::fmt::Debug {
    /// `Ok` when the command may start in `cwd` (the canonical directory
    /// the launcher resolved), a typed error (`approval.*` codes) when not.
    fn verify_before_run(&self, cwd: &std::path::Path) -> Result<(), ToolError>;
}

/// A shared [`RunBinding`]; two are equal when they are the same binding.
#[derive(Debug, Clone)]
pub struct ApprovalPin(Arc<dyn RunBinding>);

impl ApprovalPin {
    /// Wrap a binding.
    pub fn new(binding: Arc<dyn RunBinding>) -> Self {
        ApprovalPin(binding)
    }

    /// Verify the binding (see [`RunBinding::verify_before_run`]).
    pub fn verify_before_run(&self, cwd: &std::path::Path) -> Result<(), ToolError> {
        self.0.verify_before_run(cwd)
    }
}

impl PartialEq for ApprovalPin {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl Eq for ApprovalPin {}

impl ToolContext {
    /// A context for an agent and session.
    pub fn new(agent_id: impl Into<String>, session_key: impl Into<String>) -> Self {
        ToolContext {
            agent_id: agent_id.into(),
            session_key: session_key.into(),
            sandboxed: false,
            approval_pin: None,
            sender_is_owner: None,
        }
    }

    /// Builder: whether the caller is the owner (see
    /// [`ToolContext::sender_is_owner`]).
    pub fn with_sender_is_owner(mut self, owner: Option<bool>) -> Self {
        self.sender_is_owner = owner;
        self
    }

    /// Builder: the binding an approval of this call carries.
    pub fn with_approval_pin(mut self, pin: Option<ApprovalPin>) -> Self {
        self.approval_pin = pin;
        self
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
