//! Tool families: groups of tools the runtime constructs per run.

use std::sync::Arc;

use talon_tool_catalog::{Tool, ToolError, ToolSpec};

use crate::run::RunSpec;

/// A group of tools built for a run (coding, shell, web, MCP, a plugin…).
///
/// `specs` must be cheap (schemas only): it runs for every assembly, before
/// policy. `construct` runs only for tools that survive policy — at assembly
/// time, or on first use when the family is [`lazy`](ToolFamily::lazy)
/// (OpenClaw's lazy `exec`: expensive modules are not loaded for runs that
/// never call them).
pub trait ToolFamily: Send + Sync {
    /// A stable id (used in the run's construction plan).
    fn id(&self) -> &str;

    /// The tools this family offers to `run` (their names are normalised
    /// by the runtime).
    fn specs(&self, run: &RunSpec) -> Vec<ToolSpec>;

    /// Build one tool. An error makes calls of that tool fail with it.
    fn construct(&self, name: &str, run: &RunSpec) -> Result<Arc<dyn Tool>, ToolError>;

    /// Whether tools are built on first use instead of at assembly.
    fn lazy(&self) -> bool {
        false
    }
}

/// A family of ready-made tools (what an embedder usually registers).
#[derive(Clone)]
pub struct ToolSet {
    id: String,
    tools: Vec<Arc<dyn Tool>>,
}

impl std::fmt::Debug for ToolSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<&str> = self.tools.iter().map(|t| t.spec().name.as_str()).collect();
        f.debug_struct("ToolSet")
            .field("id", &self.id)
            .field("tools", &names)
            .finish()
    }
}

impl ToolSet {
    /// An empty set.
    pub fn new(id: impl Into<String>) -> Self {
        ToolSet {
            id: id.into(),
            tools: Vec::new(),
        }
    }

    /// Builder: add a tool.
    pub fn with(mut self, tool: Arc<dyn Tool>) -> Self {
        self.tools.push(tool);
        self
    }
}

impl ToolFamily for ToolSet {
    fn id(&self) -> &str {
        &self.id
    }

    fn specs(&self, _run: &RunSpec) -> Vec<ToolSpec> {
        self.tools.iter().map(|t| t.spec().clone()).collect()
    }

    fn construct(&self, name: &str, _run: &RunSpec) -> Result<Arc<dyn Tool>, ToolError> {
        self.tools
            .iter()
            .find(|t| t.spec().name == name)
            .cloned()
            .ok_or_else(|| {
                ToolError::execution(format!("tool set `{}` has no tool `{name}`", self.id))
            })
    }
}
