//! Who is running, where, and why: the inputs that pick the layers.

use serde::{Deserialize, Serialize};

/// Why the run started.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Trigger {
    /// A person sent a message.
    #[default]
    User,
    /// A cron job fired.
    Cron,
    /// A heartbeat.
    Heartbeat,
    /// A memory-flush (compaction) run: only `read` and `write` survive.
    Memory,
}

/// What kind of sub-agent the run is, if any.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SubagentKind {
    /// A sub-agent that may spawn further sub-agents.
    Orchestrator,
    /// A leaf sub-agent: also loses session-listing and spawning tools.
    Leaf,
}

/// The context of one run.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RunContext {
    /// Agent id (lowercase).
    pub agent_id: String,
    /// Session key.
    pub session_key: String,
    /// The channel the message came through (`telegram`, `node`, `voice`…).
    pub message_provider: Option<String>,
    /// The model provider (`openai`, `anthropic`…).
    pub model_provider: Option<String>,
    /// The model id.
    pub model: Option<String>,
    /// The sender id.
    pub sender_id: Option<String>,
    /// Whether the sender is the owner. `Some(false)` removes owner-only
    /// tools; `None` (unknown) does not, as in OpenClaw.
    pub sender_is_owner: Option<bool>,
    /// The group chat / channel id.
    pub group_id: Option<String>,
    /// The account (bot) of the message provider that received the
    /// message (OpenClaw's `accountId`): picks
    /// `channels.<provider>.accounts.<id>.groups`. Absent means `default`.
    pub channel_account: Option<String>,
    /// The sender's display name (matches `toolsBySender` `name:` keys).
    pub sender_name: Option<String>,
    /// The sender's handle (matches `username:` keys; a leading `@` is
    /// ignored).
    pub sender_username: Option<String>,
    /// The sender's phone number in E.164 form (matches `e164:` keys).
    pub sender_e164: Option<String>,
    /// Force the run into its sandbox. A caller may only tighten: `true`
    /// sandboxes the run whatever the sandbox mode says; `false` means
    /// "decide from the configuration" — it can never turn a configured
    /// sandbox off. The runtime (`talon_runtime::resolve_run_sandbox`)
    /// takes the decision and writes the effective value back here before
    /// the policy's `sandbox` layer reads it, so the tool table and where
    /// the tools act always agree.
    pub sandboxed: bool,
    /// Sub-agent kind.
    pub subagent: Option<SubagentKind>,
    /// The parent's (or cron creator's) effective tools; the run gets at
    /// most these.
    pub inherited: Option<Vec<String>>,
    /// Why the run started.
    pub trigger: Trigger,
}

impl RunContext {
    /// A user-triggered run of `agent_id` in its main session.
    pub fn new(agent_id: impl Into<String>) -> Self {
        let agent_id = agent_id.into().trim().to_lowercase();
        RunContext {
            session_key: format!("agent:{agent_id}:main"),
            agent_id,
            ..RunContext::default()
        }
    }
}
