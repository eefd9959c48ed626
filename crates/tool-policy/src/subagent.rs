//! The sub-agent layer: what a spawned sub-agent may never do by default.

use crate::config::ToolsConfig;
use crate::context::SubagentKind;
use crate::list::CompiledList;
use crate::policy::{CompiledPolicy, DefaultDeny, FixedDeny, PolicyKeys};
use crate::universe::ToolEntry;

/// Denied for every sub-agent.
pub const SUBAGENT_DEFAULT_DENY: &[&str] = &[
    "gateway",
    "agents_list",
    "session_status",
    "cron",
    "sessions_send",
];

/// Additionally denied for leaf sub-agents.
pub const LEAF_SUBAGENT_EXTRA_DENY: &[&str] = &[
    "subagents",
    "sessions_list",
    "sessions_history",
    "sessions_search",
    "sessions_spawn",
];

/// The orchestration tools a leaf sub-agent never gets, whatever
/// `tools.subagents.tools` allows (OpenClaw lets an explicit allow lift
/// them): a leaf that could spawn, message other sessions, schedule jobs or
/// drive the gateway would not be a leaf.
pub const LEAF_SUBAGENT_FIXED_DENY: &[&str] = &[
    "sessions_spawn",
    "subagents",
    "sessions_send",
    "cron",
    "gateway",
];

/// The sub-agent policy: defaults minus what `tools.subagents.tools`
/// explicitly allows, plus its configured deny; its allow list applies.
/// For a leaf, [`LEAF_SUBAGENT_FIXED_DENY`] stays denied regardless.
pub(crate) fn subagent_policy(tools: &ToolsConfig, kind: SubagentKind) -> CompiledPolicy {
    let cfg = tools.subagents.as_ref().and_then(|s| s.tools.as_ref());
    let explicit: Vec<String> = cfg
        .map(|c| {
            CompiledList::union(
                c.allow.as_deref().unwrap_or_default(),
                c.also_allow.as_deref().unwrap_or_default(),
            )
        })
        .unwrap_or_default();
    let explicit = CompiledList::compile(&explicit);
    let mut deny: Vec<String> = SUBAGENT_DEFAULT_DENY
        .iter()
        .chain(if kind == SubagentKind::Leaf {
            LEAF_SUBAGENT_EXTRA_DENY
        } else {
            &[]
        })
        .filter(|d| explicit.matching_entry(&ToolEntry::core(d)).is_none())
        .map(|d| (*d).to_owned())
        .collect();
    let fixed = (kind == SubagentKind::Leaf).then(|| FixedDeny {
        entries: LEAF_SUBAGENT_FIXED_DENY
            .iter()
            .map(|d| (*d).to_owned())
            .collect(),
        rule_prefix: "leaf sub-agent deny (fixed)",
        key: "tools.subagents.tools (a leaf sub-agent never orchestrates; no key lifts this)",
    });
    if let Some(f) = &fixed {
        deny = CompiledList::union(&f.entries[..], &deny[..]);
    }
    let defaults = deny.clone();
    if let Some(extra) = cfg.and_then(|c| c.deny.as_ref()) {
        deny = CompiledList::union(&deny[..], &extra[..]);
    }
    let mut policy = CompiledPolicy::from_lists(
        cfg.and_then(|c| c.allow.as_deref()),
        cfg.and_then(|c| c.also_allow.as_deref()),
        Some(&deny[..]),
        PolicyKeys::under("tools.subagents.tools"),
    )
    .unwrap_or_default();
    policy.default_deny = Some(DefaultDeny {
        entries: defaults,
        rule_prefix: "default sub-agent deny",
        lift_key: "tools.subagents.tools.alsoAllow".to_owned(),
        fixed,
    });
    policy
}
