//! The `plugins` layer: OpenClaw's plugin switches applied to the tools of
//! plugin tool families. A plugin is identified by the plugin id its tools
//! carry (`ToolFamily::Plugin { plugin_id }`; MCP tools are `bundle-mcp`);
//! core tools are never touched by this layer.

use std::collections::HashMap;

use talon_tool_catalog::normalize_tool_name;

use crate::config::PluginsConfig;
use crate::policy::{CompiledPolicy, PolicyKeys, Verdict};
use crate::universe::ToolEntry;

/// The layer id reported by `explain` (present only when the configuration
/// has a `plugins` section).
pub const PLUGINS_LAYER_ID: &str = "plugins";

#[derive(Debug, Clone)]
struct PluginEntry {
    /// The id as the file spells it (for config keys).
    key: String,
    disabled: bool,
    policy: Option<CompiledPolicy>,
}

/// `plugins`, compiled.
#[derive(Debug, Clone, Default)]
pub(crate) struct PluginsLayer {
    disabled: bool,
    /// Normalised ids; `None` when absent or empty (every plugin).
    allow: Option<Vec<String>>,
    deny: Vec<String>,
    entries: HashMap<String, PluginEntry>,
}

fn ids(list: Option<&Vec<String>>) -> Vec<String> {
    list.into_iter()
        .flatten()
        .map(|s| normalize_tool_name(s))
        .filter(|s| !s.is_empty())
        .collect()
}

impl PluginsLayer {
    pub(crate) fn compile(cfg: &PluginsConfig) -> Self {
        let allow = ids(cfg.allow.as_ref());
        let mut entries = HashMap::new();
        for (id, e) in cfg.entries.iter().flatten() {
            let prefix = format!("plugins.entries.{id}.tools");
            entries.insert(
                normalize_tool_name(id),
                PluginEntry {
                    key: id.clone(),
                    disabled: e.enabled == Some(false),
                    policy: e
                        .tools
                        .as_ref()
                        .and_then(|t| CompiledPolicy::from_config(t, PolicyKeys::under(&prefix))),
                },
            );
        }
        PluginsLayer {
            disabled: cfg.enabled == Some(false),
            allow: (!allow.is_empty()).then_some(allow),
            deny: ids(cfg.deny.as_ref()),
            entries,
        }
    }

    /// Why the layer removes `tool` (rule, config key), if it does.
    pub(crate) fn remove(&self, tool: &ToolEntry) -> Option<(String, String)> {
        let pid = tool.plugin_id.as_deref()?;
        if self.disabled {
            return Some((
                format!("plugins are disabled (plugin {pid})"),
                "plugins.enabled".to_owned(),
            ));
        }
        if self.deny.iter().any(|d| d == pid) {
            return Some((format!("plugin {pid} denied"), "plugins.deny".to_owned()));
        }
        if let Some(allow) = &self.allow
            && !allow.iter().any(|a| a == pid)
        {
            return Some((
                format!("plugin {pid} not in plugins.allow [{}]", allow.join(", ")),
                "plugins.allow".to_owned(),
            ));
        }
        let entry = self.entries.get(pid)?;
        if entry.disabled {
            return Some((
                format!("plugin {pid} disabled"),
                format!("plugins.entries.{}.enabled", entry.key),
            ));
        }
        let policy = entry.policy.as_ref()?;
        let verdict = policy.decide(tool);
        (verdict != Verdict::Allow).then(|| {
            (
                policy.rule_text(&verdict),
                policy.key_for(&verdict).to_owned(),
            )
        })
    }
}
