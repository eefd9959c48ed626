//! Which core tools this build can provide, and telling an embedder when
//! a profile removes one of its own tools.
//!
//! The catalog lists OpenClaw's whole vocabulary (42 core tools); the
//! built-in families implement part of it. Front ends mark the rest as
//! "not in this build" (`talon tools list`, `talon policy explain`) so a
//! tool the policy allows is never mistaken for one an agent can call.

use std::collections::HashSet;
use std::sync::Mutex;

use talon_tool_policy::PolicyOutcome;

use crate::builtin::{
    BROWSER_FAMILY_ID, CODING_FAMILY_ID, CRON_FAMILY_ID, GATEWAY_FAMILY_ID, MEDIA_FAMILY_ID,
    MEMORY_FAMILY_ID, MESSAGE_FAMILY_ID, SHELL_FAMILY_ID, WEB_FAMILY_ID,
};
use crate::cargo_features::missing_tool_feature;
use crate::status_family::STATUS_FAMILY_ID;

/// The core tools the runtime's built-in families implement (`cron` when
/// the embedder gives a cron service, as the gateway does), whatever this
/// build's cargo features; [`provided_core_tools`] is what this build
/// offers.
const IMPLEMENTED_CORE_TOOLS: &[&str] = &[
    "read",
    "write",
    "edit",
    "apply_patch",
    "exec",
    "process",
    "web_fetch",
    "web_search",
    "gateway",
    "session_status",
    "cron",
    "memory_search",
    "memory_get",
    "image_generate",
    "music_generate",
    "video_generate",
    "tts",
    "message",
    "browser",
    "image",
];

/// The core tools the gateway adds to every session's table (its own
/// family: the session store, the task ledger and the runners are the
/// gateway's), so they exist only when Talon runs as the gateway. The
/// gateway's family offers exactly this list.
pub const GATEWAY_CORE_TOOLS: &[&str] = &[
    "agents_list",
    "sessions_list",
    "sessions_history",
    "sessions_search",
    "sessions_send",
    "sessions_spawn",
    "sessions_yield",
    "subagents",
    "spawn_task",
    "dismiss_task",
];

/// Whether the gateway provides the core tool `name` (normalised) through
/// its own family ([`GATEWAY_CORE_TOOLS`]).
pub fn gateway_provides_core_tool(name: &str) -> bool {
    GATEWAY_CORE_TOOLS.contains(&name)
}

/// Whether this build implements the core tool `name` (normalised): one
/// of the built-in families offers it and the cargo feature it needs
/// (`web`, `sqlite-state`, `media`, `channels`, `browser`) is on. Every other catalog row is a name the
/// policy knows but no family of this build offers.
pub fn provides_core_tool(name: &str) -> bool {
    IMPLEMENTED_CORE_TOOLS.contains(&name) && missing_tool_feature(name).is_none()
}

/// The core tools this build implements, in catalog order.
pub fn provided_core_tools() -> Vec<&'static str> {
    talon_tool_catalog::CORE_TOOLS
        .iter()
        .map(|t| t.id)
        .filter(|id| provides_core_tool(id))
        .collect()
}

/// The catalog's core tools this build does not implement, in catalog
/// order.
pub fn missing_core_tools() -> Vec<&'static str> {
    talon_tool_catalog::CORE_TOOLS
        .iter()
        .map(|t| t.id)
        .filter(|id| !provides_core_tool(id))
        .collect()
}

/// Whether `id` is a family the runtime registers itself.
fn is_builtin_family(id: &str) -> bool {
    #[cfg(feature = "mcp")]
    if id == crate::mcp_family::MCP_FAMILY_ID {
        return true;
    }
    [
        CODING_FAMILY_ID,
        SHELL_FAMILY_ID,
        WEB_FAMILY_ID,
        GATEWAY_FAMILY_ID,
        CRON_FAMILY_ID,
        MEMORY_FAMILY_ID,
        MEDIA_FAMILY_ID,
        MESSAGE_FAMILY_ID,
        BROWSER_FAMILY_ID,
        STATUS_FAMILY_ID,
    ]
    .contains(&id)
}

/// The policy layers that remove tools no configuration line names: a
/// profile keeps its own list, so an embedder's tool falls out of it.
const PROFILE_LAYERS: &[&str] = &["profile", "provider-profile"];

/// Warns once per (family, tool, layer, rule) when a profile removes a
/// tool from a family the embedder registered, naming the layer and the
/// key to change. Explicit denies and allow lists are the operator's own
/// words and stay quiet; a profile is not.
#[derive(Debug, Default)]
pub(crate) struct ProfileRemovals {
    reported: Mutex<HashSet<(String, String, String, String)>>,
}

impl ProfileRemovals {
    /// Report the embedder tools `policy` removed through a profile.
    /// `offered` pairs each candidate tool with its family id.
    pub(crate) fn report<'a>(
        &self,
        agent: &str,
        offered: impl Iterator<Item = (&'a str, &'a str)>,
        policy: &PolicyOutcome,
    ) {
        for (tool, family) in offered {
            if is_builtin_family(family) || policy.allows(tool) {
                continue;
            }
            let Some(by) = policy.removed_by(tool) else {
                continue;
            };
            if !PROFILE_LAYERS.contains(&by.layer.as_str()) {
                continue;
            }
            let key = (
                family.to_owned(),
                tool.to_owned(),
                by.layer.clone(),
                by.rule.clone(),
            );
            let first = self
                .reported
                .lock()
                .map(|mut seen| seen.insert(key))
                .unwrap_or(true);
            if first {
                tracing::warn!(
                    target: "talon::runtime",
                    agent,
                    family,
                    tool,
                    layer = %by.layer,
                    rule = %by.rule,
                    config_key = %by.config_key,
                    "a tool profile removed this tool of a family you registered; \
                     add it to tools.alsoAllow (or change the profile) to offer it"
                );
            }
        }
    }
}
