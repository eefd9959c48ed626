//! One agent's MCP tools as tool specs: safe names, sorted, plugin id
//! `bundle-mcp`, parallel only for servers that declare it.

use std::collections::HashSet;
use std::sync::Arc;

use serde::Serialize;
use serde_json::Value;
use talon_tool_catalog::{CORE_TOOLS, ExecutionMode, ToolFamily, ToolSpec};

use crate::names::{TOOL_NAME_SEPARATOR, safe_tool_name};
use crate::server::Server;

/// One materialised tool.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct MaterializedTool {
    /// The name the model calls.
    pub name: String,
    /// The configured server name.
    pub server: String,
    /// The server's safe name (the name's prefix).
    pub safe_server: String,
    /// The tool's name on the server.
    pub original_name: String,
    /// Parallel only when the server sets `supportsParallelToolCalls`.
    pub execution_mode: ExecutionMode,
    /// The spec (family [`ToolFamily::Mcp`] with the safe server name, so
    /// its plugin id is `bundle-mcp`).
    #[serde(skip)]
    pub spec: ToolSpec,
}

/// An agent's materialised MCP tools, sorted by name.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Materialized {
    /// The tools.
    pub tools: Vec<MaterializedTool>,
    /// One line per tool whose name had to change.
    pub renamed: Vec<String>,
}

impl Materialized {
    /// Find a tool by name (case-insensitively, as the runtime lowercases
    /// names).
    pub fn get(&self, name: &str) -> Option<&MaterializedTool> {
        let wanted = name.trim();
        self.tools
            .iter()
            .find(|t| t.name.eq_ignore_ascii_case(wanted))
    }
}

/// Project the current tool lists of `servers` (declaration order; safe
/// names already assigned). Tools are named in (safe server, original
/// name) order, after the core tool names are reserved, and returned
/// sorted by final name, so the same input set always gives the same
/// table.
pub(crate) fn materialize(servers: &[Arc<Server>]) -> Materialized {
    let mut rows: Vec<(&Server, rmcp::model::Tool)> = Vec::new();
    for server in servers {
        if !server.config.is_enabled() {
            continue;
        }
        let snap = server.shared.get();
        for tool in snap.tools.iter() {
            rows.push((server, tool.clone()));
        }
    }
    rows.sort_by(|(a, ta), (b, tb)| {
        a.safe_name
            .cmp(&b.safe_name)
            .then_with(|| ta.name.as_ref().cmp(tb.name.as_ref()))
    });
    let mut reserved: HashSet<String> = CORE_TOOLS.iter().map(|t| t.id.to_owned()).collect();
    let mut out = Materialized::default();
    for (server, tool) in rows {
        let name = safe_tool_name(&server.safe_name, &tool.name, &mut reserved);
        let wanted = format!("{}{TOOL_NAME_SEPARATOR}{}", server.name, tool.name);
        if name != wanted {
            out.renamed.push(format!(
                "mcp tool `{}` of server `{}` is exposed as `{name}`",
                tool.name, server.name
            ));
        }
        let execution_mode = if server.config.supports_parallel_tool_calls == Some(true) {
            ExecutionMode::Parallel
        } else {
            ExecutionMode::Serial
        };
        let description = tool
            .description
            .as_deref()
            .map(str::to_owned)
            .or_else(|| tool.title.clone())
            .unwrap_or_default();
        let spec = ToolSpec::new(
            name.clone(),
            ToolFamily::Mcp {
                server: server.safe_name.clone(),
            },
        )
        .with_label(tool.title.clone().unwrap_or_else(|| tool.name.to_string()))
        .with_description(description)
        .with_parameters(Value::Object((*tool.input_schema).clone()))
        .with_execution_mode(execution_mode);
        out.tools.push(MaterializedTool {
            name,
            server: server.name.clone(),
            safe_server: server.safe_name.clone(),
            original_name: tool.name.to_string(),
            execution_mode,
            spec,
        });
    }
    out.tools.sort_by(|a, b| a.name.cmp(&b.name));
    out
}
