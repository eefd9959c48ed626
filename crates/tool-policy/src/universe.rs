//! The tools a run could have before policy: core tools plus plugin and MCP
//! tools, each with what policy needs to know about it.

use rustc_hash::FxHashMap;
use talon_tool_catalog::{CORE_TOOLS, ToolFamily, ToolSpec, normalize_tool_name};

/// What the policy knows about one candidate tool.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolEntry {
    /// Normalised name.
    pub name: String,
    /// The plugin id for plugin and MCP tools (`bundle-mcp` for MCP).
    pub plugin_id: Option<String>,
    /// The MCP server for MCP tools.
    pub mcp_server: Option<String>,
    /// Owner-only tools are removed for senders known not to be the owner.
    pub owner_only: bool,
}

impl ToolEntry {
    /// A core tool.
    pub fn core(name: &str) -> Self {
        ToolEntry {
            name: normalize_tool_name(name),
            plugin_id: None,
            mcp_server: None,
            owner_only: false,
        }
    }

    /// A plugin tool.
    pub fn plugin(name: &str, plugin_id: &str) -> Self {
        ToolEntry {
            name: normalize_tool_name(name),
            plugin_id: Some(normalize_tool_name(plugin_id)),
            mcp_server: None,
            owner_only: false,
        }
    }

    /// An MCP tool of `server` (plugin id `bundle-mcp`).
    pub fn mcp(name: &str, server: &str) -> Self {
        ToolEntry {
            name: normalize_tool_name(name),
            plugin_id: Some(talon_tool_catalog::BUNDLE_MCP_PLUGIN_ID.to_owned()),
            mcp_server: Some(server.to_owned()),
            owner_only: false,
        }
    }

    /// From a full spec.
    pub fn from_spec(spec: &ToolSpec) -> Self {
        let mut entry = match &spec.family {
            ToolFamily::Core { .. } => ToolEntry::core(&spec.name),
            ToolFamily::Plugin { plugin_id } => ToolEntry::plugin(&spec.name, plugin_id),
            ToolFamily::Mcp { server } => ToolEntry::mcp(&spec.name, server),
        };
        entry.owner_only = spec.owner_only;
        entry
    }

    /// Whether this is a plugin or MCP tool.
    pub fn is_plugin(&self) -> bool {
        self.plugin_id.is_some()
    }
}

/// The candidate tools of a run, in a deterministic order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ToolUniverse {
    tools: Vec<ToolEntry>,
    /// Name → position in `tools`.
    index: FxHashMap<String, usize>,
}

impl ToolUniverse {
    /// An empty universe.
    pub fn new() -> Self {
        Self::default()
    }

    /// Every core tool, in catalog order.
    pub fn core() -> Self {
        let mut u = Self::new();
        for t in CORE_TOOLS {
            u.push(ToolEntry::core(t.id));
        }
        u
    }

    /// From specs (order kept).
    pub fn from_specs<'a>(specs: impl IntoIterator<Item = &'a ToolSpec>) -> Self {
        let mut u = Self::new();
        for s in specs {
            u.push(ToolEntry::from_spec(s));
        }
        u
    }

    /// Add a tool; a second tool of the same name is ignored (first wins).
    pub fn push(&mut self, entry: ToolEntry) {
        if !self.index.contains_key(&entry.name) {
            self.index.insert(entry.name.clone(), self.tools.len());
            self.tools.push(entry);
        }
    }

    /// Builder form of [`ToolUniverse::push`].
    pub fn with(mut self, entry: ToolEntry) -> Self {
        self.push(entry);
        self
    }

    /// The tools.
    pub fn tools(&self) -> &[ToolEntry] {
        &self.tools
    }

    /// Look a tool up by normalised name.
    pub fn get(&self, name: &str) -> Option<&ToolEntry> {
        self.index.get(name).and_then(|&i| self.tools.get(i))
    }

    /// Whether any MCP tool is present.
    pub(crate) fn mcp_servers(&self) -> impl Iterator<Item = &str> {
        self.tools.iter().filter_map(|t| t.mcp_server.as_deref())
    }
}
