//! The sandbox tool policy: OpenClaw's defaults and its merge rules.
//!
//! One rule surprises people and is kept for compatibility:
//! - an explicitly allowed tool (in `allow` or `alsoAllow`, glob- and
//!   group-aware) leaves the *default* deny list; so `allow: ["*"]` empties
//!   it. A configured `deny` replaces the defaults wholesale.
//!
//! Each of allow / alsoAllow / deny is taken whole from the agent's
//! `tools.sandbox.tools` if set there, else from the global
//! `tools.sandbox.tools`, else the default: lists never merge across levels.
//!
//! OpenClaw's other surprise, an explicit `allow: []` meaning *allow
//! everything*, is not kept: `PolicyEngine::new` and the config loader
//! refuse an empty allow list, and a resolved empty list allows nothing.

use crate::config::{AgentToolsConfig, ToolPolicyConfig, ToolsConfig};
use crate::list::CompiledList;
use crate::policy::{CompiledPolicy, DefaultDeny, PolicyKeys};
use crate::universe::ToolEntry;

/// Tools a sandboxed session may use by default.
pub const DEFAULT_SANDBOX_TOOL_ALLOW: &[&str] = &[
    "exec",
    "process",
    "read",
    "write",
    "edit",
    "apply_patch",
    "image",
    "sessions_list",
    "sessions_history",
    "sessions_search",
    "sessions_send",
    "sessions_spawn",
    "sessions_yield",
    "subagents",
    "session_status",
];

/// Tools a sandboxed session may not use by default: host-control tools and
/// every bundled chat channel id.
pub const DEFAULT_SANDBOX_TOOL_DENY: &[&str] = &[
    "browser",
    "canvas",
    "computer",
    "nodes",
    "cron",
    "gateway",
    "feishu",
    "googlechat",
    "nostr",
    "msteams",
    "mattermost",
    "nextcloud-talk",
    "matrix",
    "raft",
    "line",
    "zalo",
    "clickclack",
    "zalouser",
    "sms",
    "synology-chat",
    "tlon",
    "discord",
    "imessage",
    "irc",
    "qqbot",
    "reef",
    "signal",
    "slack",
    "telegram",
    "twitch",
    "whatsapp",
];

/// Where a resolved sandbox list came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ListSource {
    /// `agents.<id>.tools.sandbox.tools.*`.
    Agent,
    /// `tools.sandbox.tools.*`.
    Global,
    /// Talon's (OpenClaw's) default.
    Default,
}

/// The effective sandbox tool policy of one agent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SandboxToolPolicy {
    /// The final allow list (empty = everything not denied).
    pub allow: Vec<String>,
    /// The final deny list.
    pub deny: Vec<String>,
    /// Where `allow` came from.
    pub allow_source: ListSource,
    /// Where `deny` came from.
    pub deny_source: ListSource,
    /// The config key of the allow list.
    pub allow_key: String,
    /// The config key of the deny list.
    pub deny_key: String,
}

fn pick<'a>(
    agent: Option<&'a ToolPolicyConfig>,
    global: Option<&'a ToolPolicyConfig>,
    get: impl Fn(&'a ToolPolicyConfig) -> Option<&'a Vec<String>>,
) -> (Option<&'a Vec<String>>, ListSource) {
    if let Some(v) = agent.and_then(&get) {
        return (Some(v), ListSource::Agent);
    }
    if let Some(v) = global.and_then(&get) {
        return (Some(v), ListSource::Global);
    }
    (None, ListSource::Default)
}

fn key(source: ListSource, agent_key: &str, list: &str) -> String {
    match source {
        ListSource::Agent => format!("{agent_key}.tools.sandbox.tools.{list}"),
        ListSource::Global | ListSource::Default => format!("tools.sandbox.tools.{list}"),
    }
}

/// Resolve the sandbox tool policy for an agent; an agent's own lists are
/// named `agents.<agent_id>.tools.sandbox.tools.*`.
pub fn resolve_sandbox_tool_policy(
    tools: &ToolsConfig,
    agent: Option<&AgentToolsConfig>,
    agent_id: &str,
) -> SandboxToolPolicy {
    resolve_sandbox_tool_policy_at(tools, agent, &format!("agents.{agent_id}"))
}

/// [`resolve_sandbox_tool_policy`] with the agent's entry named by its
/// config path (`agents.list[1]`), as the user's file spells it.
pub fn resolve_sandbox_tool_policy_at(
    tools: &ToolsConfig,
    agent: Option<&AgentToolsConfig>,
    agent_key: &str,
) -> SandboxToolPolicy {
    let agent_cfg = agent
        .and_then(|a| a.sandbox.as_ref())
        .and_then(|s| s.tools.as_ref());
    let global_cfg = tools.sandbox.as_ref().and_then(|s| s.tools.as_ref());

    let (allow, allow_source) = pick(agent_cfg, global_cfg, |c| c.allow.as_ref());
    let (also, also_source) = pick(agent_cfg, global_cfg, |c| c.also_allow.as_ref());
    let (deny, deny_source) = pick(agent_cfg, global_cfg, |c| c.deny.as_ref());
    let also: Vec<String> = also.cloned().unwrap_or_default();

    let mut final_allow: Vec<String> = match allow {
        Some(list) if list.iter().all(|e| e.trim().is_empty()) => Vec::new(),
        Some(list) => CompiledList::union(&list[..], &also[..]),
        None => {
            let defaults: Vec<String> = DEFAULT_SANDBOX_TOOL_ALLOW
                .iter()
                .map(|s| (*s).to_owned())
                .collect();
            CompiledList::union(&defaults[..], &also[..])
        }
    };

    let final_deny: Vec<String> = match deny {
        Some(list) => list.clone(),
        None => {
            // Explicit allow entries (allow when configured, plus alsoAllow)
            // lift the matching default denies.
            let explicit: Vec<String> = match allow {
                Some(list) => CompiledList::union(&list[..], &also[..]),
                None => also.clone(),
            };
            let explicit = CompiledList::compile(&explicit);
            DEFAULT_SANDBOX_TOOL_DENY
                .iter()
                .filter(|d| explicit.matching_entry(&ToolEntry::core(d)).is_none())
                .map(|d| (*d).to_owned())
                .collect()
        }
    };

    if !final_allow.is_empty() {
        let allow_list = CompiledList::compile(&final_allow);
        let deny_list = CompiledList::compile(&final_deny);
        let image = ToolEntry::core("image");
        if allow_list.matching_entry(&image).is_none() && deny_list.matching_entry(&image).is_none()
        {
            final_allow.push("image".to_owned());
        }
    }

    let allow_key_source = if allow.is_some() {
        allow_source
    } else {
        also_source
    };
    SandboxToolPolicy {
        allow: final_allow,
        deny: final_deny,
        allow_source,
        deny_source,
        allow_key: key(allow_key_source, agent_key, "allow"),
        deny_key: key(deny_source, agent_key, "deny"),
    }
}

/// Why the sandbox tool policy blocks a tool (both `false`: it does not).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SandboxToolBlock {
    /// A deny entry matches it.
    pub blocked_by_deny: bool,
    /// The allow list is non-empty and no entry matches it (only checked
    /// when not denied).
    pub blocked_by_allow: bool,
}

impl SandboxToolBlock {
    /// Whether the tool is blocked at all.
    pub fn blocked(self) -> bool {
        self.blocked_by_deny || self.blocked_by_allow
    }
}

impl SandboxToolPolicy {
    /// Classify a core tool against this policy: deny first; the allow
    /// list only when not denied and non-empty. Like OpenClaw's sandbox
    /// classifier there is no write ⇒ apply_patch allowance.
    pub fn classify(&self, tool: &str) -> SandboxToolBlock {
        let entry = ToolEntry::core(&tool.trim().to_lowercase());
        let denied = CompiledList::compile(&self.deny)
            .matching_entry(&entry)
            .is_some();
        let not_allowed = !denied
            && !self.allow.is_empty()
            && CompiledList::compile(&self.allow)
                .matching_entry(&entry)
                .is_none();
        SandboxToolBlock {
            blocked_by_deny: denied,
            blocked_by_allow: not_allowed,
        }
    }
}

impl SandboxToolPolicy {
    pub(crate) fn compile(&self) -> CompiledPolicy {
        let allow = Some(&self.allow[..]);
        let mut policy = CompiledPolicy::from_lists(
            allow,
            None,
            Some(&self.deny[..]),
            PolicyKeys {
                allow: self.allow_key.clone(),
                deny: self.deny_key.clone(),
            },
        )
        .unwrap_or_default();
        // The sandbox classifier has no write ⇒ apply_patch allowance.
        policy.apply_patch_via_write = false;
        if self.deny_source == ListSource::Default {
            policy.default_deny = Some(DefaultDeny {
                entries: self.deny.clone(),
                rule_prefix: "default sandbox deny",
                lift_key: self.deny_key.replace(".deny", ".alsoAllow"),
                fixed: None,
            });
        }
        policy
    }
}

/// When sessions run in a sandbox (`agents.*.sandbox.mode`).
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    Default,
    serde::Serialize,
    serde::Deserialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum SandboxMode {
    /// Never sandboxed (default).
    #[default]
    Off,
    /// Every session except the agent's main session.
    NonMain,
    /// Every session.
    All,
}

#[cfg(test)]
#[path = "sandbox_tests.rs"]
mod tests;
