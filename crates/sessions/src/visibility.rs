//! Which sessions a session may see: `tools.sessions.visibility`, the
//! sandbox clamp (`agents.defaults.sandbox.sessionToolsVisibility`) and the
//! agent-to-agent rule (`tools.agentToAgent`). Every session tool asks
//! [`VisibilityPolicy::check`]; nothing else decides it.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// `tools.sessions.visibility`: how far a session's tools see.
#[derive(
    Debug,
    Clone,
    Copy,
    Default,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Serialize,
    Deserialize,
    JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Visibility {
    /// Only the session itself.
    #[serde(rename = "self")]
    SelfOnly,
    /// The session and the sessions it spawned, at any depth (the
    /// default).
    #[default]
    Tree,
    /// Every session of the same agent (other senders' sessions of that
    /// agent included).
    Agent,
    /// Every session; another agent's only where the agent-to-agent rule
    /// allows it.
    All,
}

impl Visibility {
    /// The config value (`self`, `tree`, `agent`, `all`).
    pub fn as_str(self) -> &'static str {
        match self {
            Visibility::SelfOnly => "self",
            Visibility::Tree => "tree",
            Visibility::Agent => "agent",
            Visibility::All => "all",
        }
    }
}

/// `agents.defaults.sandbox.sessionToolsVisibility`: what a sandboxed
/// session's tools may see at most.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum SandboxVisibility {
    /// At most the session's own tree, whatever `tools.sessions.visibility`
    /// says (the default).
    #[default]
    Spawned,
    /// No clamp: `tools.sessions.visibility` applies as configured.
    All,
}

/// `tools.agentToAgent`: whether sessions of one agent may reach another
/// agent's sessions.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AgentToAgent {
    /// Off by default: no session reaches another agent's.
    #[serde(default)]
    pub enabled: bool,
    /// The agents taking part (`*` for every agent); both the requesting
    /// and the target agent must be listed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub allow: Vec<String>,
}

impl AgentToAgent {
    fn lists(&self, agent_id: &str) -> bool {
        let agent = agent_id.trim();
        self.allow
            .iter()
            .map(|a| a.trim())
            .any(|a| a == "*" || a.eq_ignore_ascii_case(agent))
    }

    /// Whether a session of `from` may reach a session of `to`.
    pub fn check(&self, from: &str, to: &str) -> Result<(), Refusal> {
        if from.trim().eq_ignore_ascii_case(to.trim()) {
            return Ok(());
        }
        if !self.enabled {
            return Err(Refusal::AgentToAgentDisabled {
                from: from.to_owned(),
                to: to.to_owned(),
            });
        }
        for (role, agent) in [("requesting", from), ("target", to)] {
            if !self.lists(agent) {
                return Err(Refusal::AgentNotAllowed {
                    role,
                    agent: agent.to_owned(),
                });
            }
        }
        Ok(())
    }
}

/// Why a session may not see another.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Refusal {
    /// Outside what the effective visibility shows.
    #[error(
        "session `{target}` is not visible from this session (visibility `{visibility}`{clamp}); widen `tools.sessions.visibility` to see it",
        visibility = .visibility.as_str(),
        clamp = if *.clamped { ", clamped to the session's own tree because it is sandboxed (agents.defaults.sandbox.sessionToolsVisibility)" } else { "" }
    )]
    NotVisible {
        /// The session asked for (as the caller named it).
        target: String,
        /// The visibility in force.
        visibility: Visibility,
        /// Whether the sandbox clamp lowered it.
        clamped: bool,
    },
    /// Another agent's session while `tools.agentToAgent` is off.
    #[error(
        "agent `{from}` may not reach agent `{to}`'s sessions: agent-to-agent access is off (set tools.agentToAgent.enabled and list both agents in tools.agentToAgent.allow)"
    )]
    AgentToAgentDisabled {
        /// The requesting agent.
        from: String,
        /// The target agent.
        to: String,
    },
    /// An agent missing from `tools.agentToAgent.allow`.
    #[error("the {role} agent `{agent}` is not in tools.agentToAgent.allow")]
    AgentNotAllowed {
        /// `requesting` or `target`.
        role: &'static str,
        /// The agent.
        agent: String,
    },
}

impl Refusal {
    /// The stable machine code (`session.not_visible`,
    /// `session.agent_to_agent_denied`).
    pub fn code(&self) -> &'static str {
        match self {
            Refusal::NotVisible { .. } => "session.not_visible",
            Refusal::AgentToAgentDisabled { .. } | Refusal::AgentNotAllowed { .. } => {
                "session.agent_to_agent_denied"
            }
        }
    }
}

/// The session asking.
#[derive(Debug, Clone, Copy)]
pub struct Viewer<'a> {
    /// Its key.
    pub session_key: &'a str,
    /// Its agent.
    pub agent_id: &'a str,
    /// Whether it runs sandboxed.
    pub sandboxed: bool,
}

/// The session asked about.
#[derive(Debug, Clone, Copy)]
pub struct Target<'a> {
    /// Its key.
    pub session_key: &'a str,
    /// Its agent.
    pub agent_id: &'a str,
    /// Whether the viewer spawned it (directly or through its children).
    pub in_viewer_tree: bool,
}

/// The visibility settings in force for one agent.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct VisibilityPolicy {
    /// `tools.sessions.visibility`.
    pub visibility: Visibility,
    /// `agents.defaults.sandbox.sessionToolsVisibility`.
    pub sandbox: SandboxVisibility,
    /// `tools.agentToAgent`.
    pub agent_to_agent: AgentToAgent,
}

impl VisibilityPolicy {
    /// The visibility a session sees with, and whether the sandbox clamp
    /// lowered it.
    pub fn effective(&self, sandboxed: bool) -> (Visibility, bool) {
        if sandboxed
            && self.sandbox == SandboxVisibility::Spawned
            && self.visibility > Visibility::Tree
        {
            (Visibility::Tree, true)
        } else {
            (self.visibility, false)
        }
    }

    /// Whether `viewer` may see `target`.
    pub fn check(&self, viewer: Viewer<'_>, target: Target<'_>) -> Result<(), Refusal> {
        if viewer.session_key == target.session_key {
            return Ok(());
        }
        let (visibility, clamped) = self.effective(viewer.sandboxed);
        let same_agent = viewer
            .agent_id
            .trim()
            .eq_ignore_ascii_case(target.agent_id.trim());
        let visible = match visibility {
            Visibility::SelfOnly => false,
            Visibility::Tree => target.in_viewer_tree,
            Visibility::Agent => target.in_viewer_tree || same_agent,
            Visibility::All => true,
        };
        if !visible {
            return Err(Refusal::NotVisible {
                target: target.session_key.to_owned(),
                visibility,
                clamped,
            });
        }
        if visibility == Visibility::All && !target.in_viewer_tree {
            self.agent_to_agent
                .check(viewer.agent_id, target.agent_id)?;
        }
        Ok(())
    }
}

#[cfg(test)]
#[path = "visibility_tests.rs"]
mod tests;
