//! The policy sections of the configuration file, with OpenClaw's key
//! names. The `talon-config` crate composes these into the whole file:
//! its `tools` section holds these policy fields plus the typed settings
//! of the tools themselves (`fs`, `exec`, `web`, `loopDetection`,
//! `hooks`), which the policy pipeline does not read.
//!
//! Every struct rejects unknown keys; lists are kept as written (entries are
//! normalised when compiled, see [`crate::PolicyEngine`]).

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// An allow / alsoAllow / deny triple.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ToolPolicyConfig {
    /// Tools to allow. Absent or empty = everything not denied. Entries may
    /// be tool names, `*` globs, `group:*` ids, plugin ids or `bundle-mcp`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allow: Option<Vec<String>>,
    /// Tools to add to `allow` (with no `allow`, means "everything plus
    /// these", which matters only for plugin-only entries).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub also_allow: Option<Vec<String>>,
    /// Tools to remove. Deny always wins.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deny: Option<Vec<String>>,
}

impl ToolPolicyConfig {
    /// Whether no list is set.
    pub fn is_empty(&self) -> bool {
        self.allow.is_none() && self.also_allow.is_none() && self.deny.is_none()
    }
}

/// A policy that may also pick a profile (`tools.*`, `tools.byProvider.*`,
/// `agents.list[].tools`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ProfiledPolicyConfig {
    /// A built-in profile: `minimal`, `coding`, `messaging` or `full`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile: Option<String>,
    /// See [`ToolPolicyConfig::allow`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allow: Option<Vec<String>>,
    /// See [`ToolPolicyConfig::also_allow`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub also_allow: Option<Vec<String>>,
    /// See [`ToolPolicyConfig::deny`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deny: Option<Vec<String>>,
}

impl ProfiledPolicyConfig {
    /// The allow/alsoAllow/deny part.
    pub fn policy(&self) -> ToolPolicyConfig {
        ToolPolicyConfig {
            allow: self.allow.clone(),
            also_allow: self.also_allow.clone(),
            deny: self.deny.clone(),
        }
    }
}

/// `tools.sandbox` / `agents.list[].tools.sandbox`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SandboxToolsSection {
    /// The tool policy applied when the session is sandboxed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<ToolPolicyConfig>,
}

/// `tools.subagents`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SubagentsToolsSection {
    /// The sub-agent tool policy; an allowed entry lifts the matching
    /// default sub-agent deny.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<ToolPolicyConfig>,
}

/// One entry of `tools.groups`: the policy of a group chat / channel, with
/// optional per-sender policies inside that group.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct GroupToolPolicyConfig {
    /// See [`ToolPolicyConfig::allow`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allow: Option<Vec<String>>,
    /// See [`ToolPolicyConfig::also_allow`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub also_allow: Option<Vec<String>>,
    /// See [`ToolPolicyConfig::deny`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deny: Option<Vec<String>>,
    /// Per-sender policies within this group (sender id → policy; `*` is the
    /// fallback). Takes precedence over the global `tools.toolsBySender`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools_by_sender: Option<BTreeMap<String, ToolPolicyConfig>>,
}

impl GroupToolPolicyConfig {
    /// The allow/alsoAllow/deny part.
    pub fn policy(&self) -> ToolPolicyConfig {
        ToolPolicyConfig {
            allow: self.allow.clone(),
            also_allow: self.also_allow.clone(),
            deny: self.deny.clone(),
        }
    }
}

/// The policy part of the `tools` section.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ToolsConfig {
    /// The base profile: `minimal`, `coding`, `messaging` or `full`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile: Option<String>,
    /// Global allow list.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allow: Option<Vec<String>>,
    /// Added to the global allow list (and to the profile).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub also_allow: Option<Vec<String>>,
    /// Global deny list.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deny: Option<Vec<String>>,
    /// Per model provider (`openai`) or provider/model (`openai/gpt-5`):
    /// a profile and a policy. The provider/model key wins over the provider
    /// key.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub by_provider: Option<BTreeMap<String, ProfiledPolicyConfig>>,
    /// Per group chat / channel id (`*` is the fallback).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub groups: Option<BTreeMap<String, GroupToolPolicyConfig>>,
    /// Per sender (OpenClaw's key forms: `id:<id>`, `e164:<phone>`,
    /// `username:<handle>`, `name:<display name>`,
    /// `channel:<provider>:<id>`; a key without a prefix is a sender id;
    /// `*` is the fallback). Compared ignoring case; a leading `@` of a
    /// username or unprefixed key is ignored.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools_by_sender: Option<BTreeMap<String, ToolPolicyConfig>>,
    /// The sandbox tool policy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sandbox: Option<SandboxToolsSection>,
    /// The sub-agent tool policy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subagents: Option<SubagentsToolsSection>,
}

/// The policy part of `agents.list[].tools`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AgentToolsConfig {
    /// The agent's profile (replaces `tools.profile` for this agent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile: Option<String>,
    /// Agent allow list.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allow: Option<Vec<String>>,
    /// Added to the agent allow list (and to the profile).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub also_allow: Option<Vec<String>>,
    /// Agent deny list.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deny: Option<Vec<String>>,
    /// Per provider, for this agent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub by_provider: Option<BTreeMap<String, ProfiledPolicyConfig>>,
    /// The agent's sandbox tool policy (each list replaces the global one
    /// wholesale).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sandbox: Option<SandboxToolsSection>,
    /// Per sender, for this agent: a matching entry here wins over
    /// `tools.toolsBySender` (OpenClaw's sender layer). Keys as in
    /// [`ToolsConfig::tools_by_sender`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools_by_sender: Option<BTreeMap<String, ToolPolicyConfig>>,
}

impl AgentToolsConfig {
    /// The allow/alsoAllow/deny part.
    pub fn policy(&self) -> ToolPolicyConfig {
        ToolPolicyConfig {
            allow: self.allow.clone(),
            also_allow: self.also_allow.clone(),
            deny: self.deny.clone(),
        }
    }
}

/// Everything the policy pipeline reads from the configuration file.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PolicyConfig {
    /// The `tools` section.
    pub tools: ToolsConfig,
    /// Per agent id, that agent's `tools` block (from `agents.list[]` or
    /// `agents.entries`).
    pub agents: BTreeMap<String, AgentToolsConfig>,
    /// Per agent id, the config path of its entry (`agents.list[1]`,
    /// `agents.entries.ops`), so that explanations name keys as the user's
    /// file spells them; an agent without one is named `agents.<id>`.
    pub agent_keys: BTreeMap<String, String>,
    /// The `plugins` section (plugin switches and per-plugin policies).
    pub plugins: Option<PluginsConfig>,
    /// The tool policies of OpenClaw's `channels.<provider>` sections, by
    /// provider id as written (`telegram`, `discord`, ...).
    pub channels: BTreeMap<String, ChannelToolsConfig>,
}

/// The tool policies of one chat provider (`channels.<provider>`), as
/// OpenClaw writes them. They feed the `group` layer of runs whose message
/// provider is this one: the first of the group's `toolsBySender` match,
/// the group's `tools`, the `*` group's `toolsBySender` match, the `*`
/// group's `tools`, then (Talon) this provider's own `toolsBySender` match
/// and `tools` is the layer's policy.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ChannelToolsConfig {
    /// The policy of every run of this provider no group entry matched.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<ToolPolicyConfig>,
    /// Per sender, for runs of this provider no group entry matched (keys
    /// as in [`ToolsConfig::tools_by_sender`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools_by_sender: Option<BTreeMap<String, ToolPolicyConfig>>,
    /// Per group id (`*` is the fallback for groups not listed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub groups: Option<BTreeMap<String, ChannelGroupToolsConfig>>,
    /// Per account (bot) of the provider: its own groups. With one account
    /// its groups replace the provider's when it lists any; with several,
    /// an account that has `groups` uses only those.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub accounts: Option<BTreeMap<String, ChannelAccountToolsConfig>>,
}

/// `channels.<provider>.groups.<id>`: a group's policy, and per sender
/// within it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ChannelGroupToolsConfig {
    /// The group's policy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<ToolPolicyConfig>,
    /// Per sender in this group; a match wins over the group's `tools`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools_by_sender: Option<BTreeMap<String, ToolPolicyConfig>>,
}

/// `channels.<provider>.accounts.<id>`: the account's groups.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ChannelAccountToolsConfig {
    /// Per group id, as [`ChannelToolsConfig::groups`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub groups: Option<BTreeMap<String, ChannelGroupToolsConfig>>,
}

impl PolicyConfig {
    /// The config path of agent `id`'s entry ([`Self::agent_keys`], else
    /// `agents.<id>`).
    pub fn agent_key(&self, id: &str) -> String {
        self.agent_keys
            .get(id)
            .cloned()
            .unwrap_or_else(|| format!("agents.{id}"))
    }
}

/// `plugins`: OpenClaw's plugin switches, applied to the tools of plugin
/// tool families (every tool whose spec names a plugin id, MCP tools
/// under `bundle-mcp`). Core tools are never affected.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PluginsConfig {
    /// `false` removes every plugin tool (default true).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enabled: Option<bool>,
    /// Plugin ids whose tools are kept; a plugin not listed loses its
    /// tools (absent or empty = every plugin).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allow: Option<Vec<String>>,
    /// Plugin ids whose tools are removed (wins over `allow`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deny: Option<Vec<String>>,
    /// Per plugin id: its switch and its own tool policy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub entries: Option<BTreeMap<String, PluginEntryConfig>>,
}

/// `plugins.entries.<id>`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PluginEntryConfig {
    /// `false` removes this plugin's tools.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enabled: Option<bool>,
    /// A tool policy applied to this plugin's tools only (entries name
    /// tools, globs or groups as in `tools.allow`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<ToolPolicyConfig>,
}
