//! Unknown-allowlist warnings, with OpenClaw's wording.
//!
//! An entry is a *plugin* entry when it is `group:plugins`, a plugin id, a
//! plugin tool's name, or (when MCP tools are present) `bundle-mcp` or
//! `<server>__…`; a *core* entry when it is a core tool id or core group; a
//! glob is fine when it matches some candidate tool. Anything else is
//! unknown. Core ids that are shipped but not among this run's candidates
//! are reported separately, except for built-in profile steps.
//!
//! OpenClaw de-duplicates these process-wide; Talon returns them per
//! evaluation and leaves de-duplication to whoever logs them.

use talon_tool_catalog::{
    BUNDLE_MCP_PLUGIN_ID, PLUGINS_GROUP_ID, core_group_members, is_core_tool, normalize_tool_name,
};

use crate::pattern::Pattern;
use crate::universe::ToolUniverse;

/// Which kind of step an allow list belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum AllowlistStep {
    BuiltinProfile,
    Configured,
    AlsoAllow,
}

enum Class {
    Fine,
    Plugin,
    Unknown,
    Unavailable,
}

fn classify(entry: &str, universe: &ToolUniverse) -> Class {
    if entry == "*" {
        return Class::Fine;
    }
    let tools = universe.tools();
    let plugin_hit = entry == PLUGINS_GROUP_ID
        || tools
            .iter()
            .any(|t| t.plugin_id.as_deref() == Some(entry) || (t.is_plugin() && t.name == entry))
        || (entry == BUNDLE_MCP_PLUGIN_ID && universe.mcp_servers().next().is_some())
        || universe
            .mcp_servers()
            .any(|s| entry.starts_with(&format!("{}__", normalize_tool_name(s))));
    if plugin_hit {
        return Class::Plugin;
    }
    if let Some(members) = core_group_members(entry) {
        return if members.iter().any(|m| universe.get(m).is_some()) {
            Class::Fine
        } else {
            Class::Unavailable
        };
    }
    if is_core_tool(entry) {
        return if universe.get(entry).is_some() {
            Class::Fine
        } else {
            Class::Unavailable
        };
    }
    if entry.contains('*') {
        let p = Pattern::compile(entry);
        return if tools.iter().any(|t| p.matches(&t.name)) {
            Class::Fine
        } else {
            Class::Unknown
        };
    }
    Class::Unknown
}

pub(crate) fn analyse_allowlist(
    label: &str,
    entries: &[String],
    universe: &ToolUniverse,
    step: AllowlistStep,
) -> Vec<String> {
    let mut unknown = Vec::new();
    let mut unavailable = Vec::new();
    let mut plugin_count = 0usize;
    let mut counted = 0usize;
    for raw in entries {
        let entry = normalize_tool_name(raw);
        if entry.is_empty() {
            continue;
        }
        // The profile's own `bundle-mcp` entry is never news.
        if step == AllowlistStep::BuiltinProfile && entry == BUNDLE_MCP_PLUGIN_ID {
            continue;
        }
        counted += 1;
        match classify(&entry, universe) {
            Class::Fine => {}
            Class::Plugin => plugin_count += 1,
            Class::Unknown => unknown.push(entry),
            Class::Unavailable => {
                if step != AllowlistStep::BuiltinProfile {
                    unavailable.push(entry);
                }
            }
        }
    }
    let mut out = Vec::new();
    if step == AllowlistStep::Configured && counted > 0 && plugin_count == counted {
        out.push(format!(
            "tools: {label} allowlist contains only plugin entries; core tools will not be available."
        ));
    }
    let mut all = unknown.clone();
    all.extend(unavailable.iter().cloned());
    if !all.is_empty() {
        let suffix = match (unknown.is_empty(), unavailable.is_empty()) {
            (false, true) => "These entries won't match any tool unless the plugin is enabled.".to_owned(),
            (true, false) => "These entries are shipped core tools but unavailable in the current runtime/provider/model/config.".to_owned(),
            _ => format!(
                "Unknown entries ({}) won't match any tool unless the plugin is enabled; shipped core tools ({}) are unavailable in the current runtime/provider/model/config.",
                unknown.join(", "),
                unavailable.join(", ")
            ),
        };
        out.push(format!(
            "tools: {label} allowlist contains unknown entries ({}). {suffix}",
            all.join(", ")
        ));
    }
    out
}
