//! The core tool catalog: every core tool id, its section, its profiles and
//! whether `group:openclaw` includes it. Profiles and groups are derived from
//! this one table and never listed a second time.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// A section of the core catalog. Each section is also a `group:<id>`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Section {
    /// Files: read, write, edit, apply_patch.
    Fs,
    /// Shell and processes.
    Runtime,
    /// Web search and fetch.
    Web,
    /// Memory search and retrieval.
    Memory,
    /// Session orchestration.
    Sessions,
    /// Browser and canvas.
    Ui,
    /// Channel messaging.
    Messaging,
    /// Cron, heartbeat and gateway.
    Automation,
    /// Paired device nodes.
    Nodes,
    /// Agent goals, plans and skills workshop.
    Agents,
    /// Image, audio and video generation.
    Media,
}

impl Section {
    /// Every section in catalog order.
    pub const ALL: [Section; 11] = [
        Section::Fs,
        Section::Runtime,
        Section::Web,
        Section::Memory,
        Section::Sessions,
        Section::Ui,
        Section::Messaging,
        Section::Automation,
        Section::Nodes,
        Section::Agents,
        Section::Media,
    ];

    /// The section id, as used in `group:<id>`.
    pub fn id(self) -> &'static str {
        match self {
            Section::Fs => "fs",
            Section::Runtime => "runtime",
            Section::Web => "web",
            Section::Memory => "memory",
            Section::Sessions => "sessions",
            Section::Ui => "ui",
            Section::Messaging => "messaging",
            Section::Automation => "automation",
            Section::Nodes => "nodes",
            Section::Agents => "agents",
            Section::Media => "media",
        }
    }

    /// The human title of the section.
    pub fn title(self) -> &'static str {
        match self {
            Section::Fs => "Files",
            Section::Runtime => "Runtime",
            Section::Web => "Web",
            Section::Memory => "Memory",
            Section::Sessions => "Sessions",
            Section::Ui => "UI",
            Section::Messaging => "Messaging",
            Section::Automation => "Automation",
            Section::Nodes => "Nodes",
            Section::Agents => "Agents",
            Section::Media => "Media",
        }
    }

    /// The group id of this section, e.g. `group:fs`.
    pub fn group_id(self) -> &'static str {
        match self {
            Section::Fs => "group:fs",
            Section::Runtime => "group:runtime",
            Section::Web => "group:web",
            Section::Memory => "group:memory",
            Section::Sessions => "group:sessions",
            Section::Ui => "group:ui",
            Section::Messaging => "group:messaging",
            Section::Automation => "group:automation",
            Section::Nodes => "group:nodes",
            Section::Agents => "group:agents",
            Section::Media => "group:media",
        }
    }
}

impl fmt::Display for Section {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.id())
    }
}

/// A built-in tool profile (`tools.profile`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Profile {
    /// Only `session_status`.
    Minimal,
    /// The coding tools plus all MCP tools.
    Coding,
    /// Session and message tools plus all MCP tools.
    Messaging,
    /// Everything (`allow: ["*"]`).
    Full,
}

impl Profile {
    /// Every profile.
    pub const ALL: [Profile; 4] = [
        Profile::Minimal,
        Profile::Coding,
        Profile::Messaging,
        Profile::Full,
    ];

    /// The profile id used in config.
    pub fn id(self) -> &'static str {
        match self {
            Profile::Minimal => "minimal",
            Profile::Coding => "coding",
            Profile::Messaging => "messaging",
            Profile::Full => "full",
        }
    }

    /// The allow list this profile stands for, derived from the catalog.
    ///
    /// `coding` and `messaging` end with the literal entry `bundle-mcp`, which
    /// admits every MCP tool; `full` is `["*"]`.
    pub fn allow_list(self) -> Vec<String> {
        if self == Profile::Full {
            return vec!["*".to_owned()];
        }
        let mut list: Vec<String> = CORE_TOOLS
            .iter()
            .filter(|t| t.profiles.contains(&self))
            .map(|t| t.id.to_owned())
            .collect();
        if matches!(self, Profile::Coding | Profile::Messaging) {
            list.push(BUNDLE_MCP_PLUGIN_ID.to_owned());
        }
        list
    }
}

impl fmt::Display for Profile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.id())
    }
}

/// The error for a profile id that is not one of the built-in profiles.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown tool profile `{0}` (expected one of: minimal, coding, messaging, full)")]
pub struct UnknownProfile(pub String);

impl FromStr for Profile {
    type Err = UnknownProfile;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim().to_ascii_lowercase().as_str() {
            "minimal" => Ok(Profile::Minimal),
            "coding" => Ok(Profile::Coding),
            "messaging" => Ok(Profile::Messaging),
            "full" => Ok(Profile::Full),
            _ => Err(UnknownProfile(s.to_owned())),
        }
    }
}

/// The plugin id shared by every MCP tool; an allow list entry `bundle-mcp`
/// admits all of them.
pub const BUNDLE_MCP_PLUGIN_ID: &str = "bundle-mcp";

/// The dynamic group of every plugin tool.
pub const PLUGINS_GROUP_ID: &str = "group:plugins";

/// The group of every core tool flagged for it (all but the file, shell and
/// canvas tools).
pub const OPENCLAW_GROUP_ID: &str = "group:openclaw";

/// One row of the core catalog.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CoreTool {
    /// The tool id (its name as the model sees it).
    pub id: &'static str,
    /// The catalog section.
    pub section: Section,
    /// The profiles that include this tool.
    pub profiles: &'static [Profile],
    /// Whether `group:openclaw` includes this tool.
    pub in_openclaw_group: bool,
    /// Whether the tool only reads: it changes nothing (no file, process,
    /// message or config change), so a call needs no write-ahead journal
    /// record.
    pub read_only: bool,
    /// Whether the tool runs shell commands: its calls take a sandbox
    /// engine's exec slot, and its error text may quote the command line
    /// (and credentials in it), so observers get a digest instead.
    pub runs_commands: bool,
}

impl CoreTool {
    const fn read_only(mut self) -> Self {
        self.read_only = true;
        self
    }

    const fn runs_commands(mut self) -> Self {
        self.runs_commands = true;
        self
    }
}

const C: &[Profile] = &[Profile::Coding];
const CM: &[Profile] = &[Profile::Coding, Profile::Messaging];
const M: &[Profile] = &[Profile::Messaging];
const MCM: &[Profile] = &[Profile::Minimal, Profile::Coding, Profile::Messaging];
const NONE: &[Profile] = &[];

const fn row(
    id: &'static str,
    section: Section,
    profiles: &'static [Profile],
    in_openclaw_group: bool,
) -> CoreTool {
    CoreTool {
        id,
        section,
        profiles,
        in_openclaw_group,
        read_only: false,
        runs_commands: false,
    }
}

/// The core catalog in its canonical order (OpenClaw v2026.7.2).
pub const CORE_TOOLS: &[CoreTool] = &[
    row("read", Section::Fs, C, false).read_only(),
    row("write", Section::Fs, C, false),
    row("edit", Section::Fs, C, false),
    row("apply_patch", Section::Fs, C, false),
    row("exec", Section::Runtime, C, false).runs_commands(),
    row("process", Section::Runtime, C, false),
    row("code_execution", Section::Runtime, C, true),
    row("web_search", Section::Web, C, true).read_only(),
    row("web_fetch", Section::Web, C, true).read_only(),
    row("x_search", Section::Web, C, true),
    row("memory_search", Section::Memory, C, true).read_only(),
    row("memory_get", Section::Memory, C, true).read_only(),
    row("sessions", Section::Sessions, CM, true),
    row("sessions_list", Section::Sessions, CM, true).read_only(),
    row("sessions_history", Section::Sessions, CM, true).read_only(),
    row("sessions_search", Section::Sessions, CM, true),
    row("sessions_send", Section::Sessions, CM, true),
    row("sessions_spawn", Section::Sessions, C, true),
    row("sessions_yield", Section::Sessions, C, true),
    row("subagents", Section::Sessions, C, true),
    row("session_status", Section::Sessions, MCM, true).read_only(),
    row("spawn_task", Section::Sessions, C, true),
    row("dismiss_task", Section::Sessions, C, true),
    row("browser", Section::Ui, NONE, true),
    row("canvas", Section::Ui, NONE, false),
    row("message", Section::Messaging, M, true),
    row("heartbeat_respond", Section::Automation, NONE, true),
    row("cron", Section::Automation, C, true),
    row("gateway", Section::Automation, NONE, true).read_only(),
    row("nodes", Section::Nodes, NONE, true),
    row("computer", Section::Nodes, NONE, true),
    row("agents_list", Section::Agents, NONE, true).read_only(),
    row("get_goal", Section::Agents, C, true),
    row("create_goal", Section::Agents, C, true),
    row("update_goal", Section::Agents, C, true),
    row("update_plan", Section::Agents, C, true),
    row("skill_workshop", Section::Agents, C, true),
    row("image", Section::Media, C, true),
    row("image_generate", Section::Media, C, true),
    row("music_generate", Section::Media, C, true),
    row("video_generate", Section::Media, C, true),
    row("tts", Section::Media, NONE, true),
];

/// Look up a core tool by (already normalised) id.
pub fn core_tool(id: &str) -> Option<&'static CoreTool> {
    CORE_TOOLS.iter().find(|t| t.id == id)
}

/// Whether calls of `id` (already normalised) change nothing: true only
/// for a core tool flagged read-only; any other tool (MCP, plugin,
/// unknown) is assumed to have side effects.
pub fn is_read_only(id: &str) -> bool {
    core_tool(id).is_some_and(|t| t.read_only)
}

/// Whether `id` (already normalised) is a core tool that runs shell
/// commands (its catalog row says so, as `exec`'s does).
pub fn runs_commands(id: &str) -> bool {
    core_tool(id).is_some_and(|t| t.runs_commands)
}

/// Whether `id` (already normalised) is a core tool id.
pub fn is_core_tool(id: &str) -> bool {
    core_tool(id).is_some()
}

/// Normalise a tool name the way OpenClaw does: trim, lowercase, then map
/// the two known aliases (`bash` → `exec`, `apply-patch` → `apply_patch`).
pub fn normalize_tool_name(name: &str) -> String {
    let lowered = name.trim().to_lowercase();
    match lowered.as_str() {
        "bash" => "exec".to_owned(),
        "apply-patch" => "apply_patch".to_owned(),
        _ => lowered,
    }
}

/// The members of a core group id (`group:openclaw` or `group:<section>`),
/// in catalog order, or `None` when `id` is not a core group.
///
/// `group:plugins` is dynamic (it depends on the loaded plugins) and is
/// resolved by the policy crate, not here.
pub fn core_group_members(id: &str) -> Option<Vec<&'static str>> {
    if id == OPENCLAW_GROUP_ID {
        return Some(
            CORE_TOOLS
                .iter()
                .filter(|t| t.in_openclaw_group)
                .map(|t| t.id)
                .collect(),
        );
    }
    let section = Section::ALL.into_iter().find(|s| s.group_id() == id)?;
    Some(
        CORE_TOOLS
            .iter()
            .filter(|t| t.section == section)
            .map(|t| t.id)
            .collect(),
    )
}

/// Every core group id: `group:openclaw` then one per section.
pub fn core_group_ids() -> Vec<&'static str> {
    std::iter::once(OPENCLAW_GROUP_ID)
        .chain(Section::ALL.iter().map(|s| s.group_id()))
        .collect()
}

#[cfg(test)]
#[path = "catalog_tests.rs"]
mod tests;
