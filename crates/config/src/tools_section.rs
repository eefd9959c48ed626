//! The `tools` section and an agent's `tools` block: the policy fields
//! (handed to `talon-tool-policy` as [`ToolsConfig`] /
//! [`AgentToolsConfig`]) and the typed settings of the tools themselves.
//!
//! (The policy fields are repeated rather than flattened because serde's
//! `flatten` does not combine with `deny_unknown_fields`.)

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use talon_hooks::HooksConfig;
use talon_hooks::loop_detection::LoopDetectionConfig;
use talon_tool_policy::config::{
    AgentToolsConfig, GroupToolPolicyConfig, ProfiledPolicyConfig, SandboxToolsSection,
    SubagentsToolsSection, ToolPolicyConfig, ToolsConfig,
};

use crate::sections::exec::{AgentExecConfig, ExecConfig};
use crate::sections::fs::FsToolsConfig;
use crate::sections::media::VisionProviderConfig;
use crate::sections::sessions::{AgentToAgent, SessionsToolsConfig};
use crate::sections::web::WebToolsConfig;

/// The `tools` section.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[schemars(rename = "ToolsConfig")]
pub struct ToolsSection {
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
    /// Per sender (`id:`, `e164:`, `username:`, `name:`,
    /// `channel:<provider>:<id>`; a key without a prefix is an id; `*` is
    /// the fallback).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools_by_sender: Option<BTreeMap<String, ToolPolicyConfig>>,
    /// The sandbox tool policy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sandbox: Option<SandboxToolsSection>,
    /// The sub-agent tool policy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subagents: Option<SubagentsToolsSection>,
    /// `tools.fs`: how far the host file tools reach.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fs: Option<FsToolsConfig>,
    /// `tools.exec`: the exec tool's limits and the exec policy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exec: Option<ExecConfig>,
    /// `tools.web`: `web_fetch` and `web_search`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub web: Option<WebToolsConfig>,
    /// `tools.imageProvider`: the vision endpoint `image` asks (Talon's
    /// own key; without it `image` answers `media.no_provider`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image_provider: Option<VisionProviderConfig>,
    /// `tools.loopDetection`: the loop detector (off by default).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loop_detection: Option<LoopDetectionConfig>,
    /// `tools.hooks`: command hooks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hooks: Option<HooksConfig>,
    /// `tools.sessions`: what the session tools may see.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sessions: Option<SessionsToolsConfig>,
    /// `tools.agentToAgent`: whether one agent's sessions may reach
    /// another's (off by default).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_to_agent: Option<AgentToAgent>,
}

impl ToolsSection {
    /// The part the policy pipeline reads.
    pub fn policy(&self) -> ToolsConfig {
        ToolsConfig {
            profile: self.profile.clone(),
            allow: self.allow.clone(),
            also_allow: self.also_allow.clone(),
            deny: self.deny.clone(),
            by_provider: self.by_provider.clone(),
            groups: self.groups.clone(),
            tools_by_sender: self.tools_by_sender.clone(),
            sandbox: self.sandbox.clone(),
            subagents: self.subagents.clone(),
        }
    }
}

/// `agents.list[].tools` / `agents.entries.<id>.tools`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[schemars(rename = "AgentToolsConfig")]
pub struct AgentToolsSection {
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
    /// The agent's loop-detection overlay (merged over
    /// `tools.loopDetection`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loop_detection: Option<LoopDetectionConfig>,
    /// The agent's `tools.fs` (overrides `tools.fs` key by key).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fs: Option<FsToolsConfig>,
    /// The agent's `tools.exec`: `security` and `ask`, overriding
    /// `tools.exec` key by key.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exec: Option<AgentExecConfig>,
    /// Per sender, for this agent (a match wins over
    /// `tools.toolsBySender`; keys as there).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools_by_sender: Option<BTreeMap<String, ToolPolicyConfig>>,
}

impl AgentToolsSection {
    /// The part the policy pipeline reads.
    pub fn policy(&self) -> AgentToolsConfig {
        AgentToolsConfig {
            profile: self.profile.clone(),
            allow: self.allow.clone(),
            also_allow: self.also_allow.clone(),
            deny: self.deny.clone(),
            by_provider: self.by_provider.clone(),
            sandbox: self.sandbox.clone(),
            tools_by_sender: self.tools_by_sender.clone(),
        }
    }
}
