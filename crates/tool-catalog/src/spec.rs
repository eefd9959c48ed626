//! `ToolSpec`: what a tool is, independent of how it runs.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::catalog::{BUNDLE_MCP_PLUGIN_ID, Section, core_tool};
use crate::core_schemas::{core_tool_description, core_tool_label, core_tool_parameters};

/// Whether calls of a tool may run concurrently with other calls in the
/// same turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ExecutionMode {
    /// May run alongside other parallel calls.
    #[default]
    Parallel,
    /// Runs alone, in call order. Written `sequential`, as OpenClaw's
    /// `executionMode` says (`serial` is accepted when read).
    #[serde(rename = "sequential", alias = "serial")]
    Serial,
}

/// Where a tool comes from. Policy uses this to expand `group:plugins`,
/// plugin ids and `bundle-mcp`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum ToolFamily {
    /// A core tool in a catalog section.
    Core {
        /// The catalog section.
        section: Section,
    },
    /// A tool registered by a plugin.
    Plugin {
        /// The plugin's id (an allow list entry of this id admits the tool).
        plugin_id: String,
    },
    /// A tool of a configured MCP server (plugin id `bundle-mcp`).
    Mcp {
        /// The configured server name.
        server: String,
    },
}

impl ToolFamily {
    /// The plugin id the tool belongs to, if it is not a core tool.
    pub fn plugin_id(&self) -> Option<&str> {
        match self {
            ToolFamily::Core { .. } => None,
            ToolFamily::Plugin { plugin_id } => Some(plugin_id),
            ToolFamily::Mcp { .. } => Some(BUNDLE_MCP_PLUGIN_ID),
        }
    }
}

/// The definition of one tool: name, texts, parameter schema and flags.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolSpec {
    /// The name the model calls (normalised: lowercase).
    pub name: String,
    /// A short human label.
    pub label: String,
    /// The description the model reads.
    pub description: String,
    /// The JSON Schema of the parameters (an object schema).
    pub parameters: Value,
    /// Only the owner of the gateway may call it.
    pub owner_only: bool,
    /// Parallel or serial execution.
    pub execution_mode: ExecutionMode,
    /// Where the tool comes from.
    pub family: ToolFamily,
}

impl ToolSpec {
    /// A spec with the given name and family, an empty object schema,
    /// parallel execution, not owner-only.
    pub fn new(name: impl Into<String>, family: ToolFamily) -> Self {
        let name = name.into();
        ToolSpec {
            label: name.clone(),
            name,
            description: String::new(),
            parameters: serde_json::json!({"type": "object", "properties": {}}),
            owner_only: false,
            execution_mode: ExecutionMode::Parallel,
            family,
        }
    }

    /// The spec of a core tool by id, with its catalog schema, label and
    /// description; `None` for an id that is not a core tool.
    ///
    /// `cron`, `gateway`, `nodes` and `computer` are owner-only (the
    /// owner-only policy step removes them for non-owner senders);
    /// `exec`, `process`, `apply_patch`, `write` and `edit` run serially.
    pub fn core(id: &str) -> Option<Self> {
        let row = core_tool(id)?;
        let owner_only = matches!(row.id, "cron" | "gateway" | "nodes" | "computer");
        let execution_mode = if matches!(
            row.id,
            "exec" | "process" | "apply_patch" | "write" | "edit"
        ) {
            ExecutionMode::Serial
        } else {
            ExecutionMode::Parallel
        };
        Some(ToolSpec {
            name: row.id.to_owned(),
            label: core_tool_label(row.id).unwrap_or(row.id).to_owned(),
            description: core_tool_description(row.id).unwrap_or_default().to_owned(),
            parameters: core_tool_parameters(row.id)
                .unwrap_or_else(|| serde_json::json!({"type": "object", "properties": {}})),
            owner_only,
            execution_mode,
            family: ToolFamily::Core {
                section: row.section,
            },
        })
    }

    /// Builder: set the label.
    pub fn with_label(mut self, label: impl Into<String>) -> Self {
        self.label = label.into();
        self
    }

    /// Builder: set the description.
    pub fn with_description(mut self, description: impl Into<String>) -> Self {
        self.description = description.into();
        self
    }

    /// Builder: set the parameter schema.
    pub fn with_parameters(mut self, parameters: Value) -> Self {
        self.parameters = parameters;
        self
    }

    /// Builder: set the execution mode.
    pub fn with_execution_mode(mut self, mode: ExecutionMode) -> Self {
        self.execution_mode = mode;
        self
    }

    /// Builder: mark the tool owner-only.
    pub fn owner_only(mut self, owner_only: bool) -> Self {
        self.owner_only = owner_only;
        self
    }
}

/// The specs of every core tool, in catalog order.
pub fn core_tool_specs() -> Vec<ToolSpec> {
    crate::catalog::CORE_TOOLS
        .iter()
        .filter_map(|t| ToolSpec::core(t.id))
        .collect()
}
