//! A compiled allow or deny list: entries normalised, core groups expanded,
//! plugin entries kept as predicates on the tool's plugin id.

use rustc_hash::FxHashMap;

use talon_tool_catalog::{PLUGINS_GROUP_ID, core_group_members, normalize_tool_name};

use crate::pattern::Pattern;
use crate::universe::ToolEntry;

/// One compiled list.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct CompiledList {
    /// Exact names → the entry as written that produced them.
    exact: FxHashMap<String, String>,
    /// Glob patterns with their entry as written.
    globs: Vec<(Pattern, String)>,
    /// `*` as written, when present.
    all: Option<String>,
    /// `group:plugins` as written, when present.
    plugins_group: Option<String>,
    /// Entries as written (normalised, blanks dropped), for audit and
    /// warnings.
    entries: Vec<String>,
}

impl CompiledList {
    /// Compile raw entries. Blank entries are dropped (config validation
    /// already rejected them for files; programmatic callers get OpenClaw's
    /// behaviour).
    pub(crate) fn compile<S: AsRef<str>>(raw: &[S]) -> Self {
        let mut list = CompiledList::default();
        for entry in raw {
            let normalised = normalize_tool_name(entry.as_ref());
            if normalised.is_empty() {
                continue;
            }
            if !list.entries.contains(&normalised) {
                list.entries.push(normalised.clone());
            }
            if normalised == "*" {
                list.all.get_or_insert(normalised);
                continue;
            }
            if normalised == PLUGINS_GROUP_ID {
                list.plugins_group.get_or_insert(normalised);
                continue;
            }
            if let Some(members) = core_group_members(&normalised) {
                for m in members {
                    list.exact
                        .entry(m.to_owned())
                        .or_insert_with(|| normalised.clone());
                }
                continue;
            }
            if normalised.contains('*') {
                list.globs.push((Pattern::compile(&normalised), normalised));
                continue;
            }
            list.exact.entry(normalised.clone()).or_insert(normalised);
        }
        list
    }

    /// Whether the list has no entries.
    pub(crate) fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The normalised entries.
    pub(crate) fn entries(&self) -> &[String] {
        &self.entries
    }

    /// The entry (as written) that matches this tool, if any.
    pub(crate) fn matching_entry(&self, tool: &ToolEntry) -> Option<&str> {
        if !self.exact.is_empty()
            && let Some(e) = self.exact.get(&tool.name)
        {
            return Some(e);
        }
        if let Some(pid) = &tool.plugin_id {
            if !self.exact.is_empty()
                && let Some(e) = self.exact.get(pid)
            {
                return Some(e);
            }
            if let Some(e) = &self.plugins_group {
                return Some(e);
            }
        }
        if let Some(e) = &self.all {
            return Some(e);
        }
        self.globs
            .iter()
            .find(|(p, _)| p.matches(&tool.name))
            .map(|(_, e)| e.as_str())
    }

    /// Whether a bare core name (already normalised) matches: the `write`
    /// ⇒ `apply_patch` rule.
    pub(crate) fn matches_name(&self, name: &str) -> bool {
        self.exact.contains_key(name)
            || self.all.is_some()
            || self.globs.iter().any(|(p, _)| p.matches(name))
    }

    /// Every entry of `a` then `b`, de-duplicated, order kept.
    pub(crate) fn union<S: AsRef<str>>(a: &[S], b: &[S]) -> Vec<String> {
        let mut out: Vec<String> = Vec::with_capacity(a.len() + b.len());
        for e in a.iter().chain(b) {
            let e = e.as_ref().to_owned();
            if !out.contains(&e) {
                out.push(e);
            }
        }
        out
    }
}

#[cfg(test)]
#[path = "list_tests.rs"]
mod tests;
