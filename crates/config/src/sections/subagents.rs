//! `agents.defaults.subagents` and `agents.list[].subagents`: how far
//! `sessions_spawn` may go (OpenClaw's keys). Every limit is enforced by
//! the gateway's sub-agent tools; the model keys are accepted for
//! compatibility and passed to the runner, which runs the model.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Default `maxSpawnDepth` (OpenClaw v2026.7.2: depth-1 sub-agents are
/// leaves unless the config opts into nesting).
pub const DEFAULT_MAX_SPAWN_DEPTH: u32 = 1;
/// Default `maxChildrenPerAgent`: active children of one session.
pub const DEFAULT_MAX_CHILDREN_PER_AGENT: u32 = 5;
/// Default `maxConcurrent`: sub-agent runs in flight in the gateway.
pub const DEFAULT_MAX_CONCURRENT: u32 = 8;
/// Default `runTimeoutSeconds` (Talon: every run has a deadline; OpenClaw's
/// `0` means none, which Talon does not allow).
pub const DEFAULT_RUN_TIMEOUT_SECONDS: u64 = 900;
/// Longest `runTimeoutSeconds` accepted (one day).
pub const MAX_RUN_TIMEOUT_SECONDS: u64 = 86_400;

/// `agents.defaults.subagents`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SubagentDefaults {
    /// How deep sub-agents nest (1–5, default 1): a child at this depth is
    /// a leaf and cannot spawn.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_spawn_depth: Option<u32>,
    /// Active children one session may have (1–20, default 5).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_children_per_agent: Option<u32>,
    /// Sub-agent runs in flight in the whole gateway (at least 1, default 8).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_concurrent: Option<u32>,
    /// The default budget of a spawned run, in seconds (1–86400, default
    /// 900). `0` (OpenClaw: no timeout) is refused: every run has a
    /// deadline.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_timeout_seconds: Option<u64>,
    /// The agents a session may spawn children of, besides its own (`*`:
    /// any configured agent). An agent's own list replaces this one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allow_agents: Option<Vec<String>>,
    /// The model sub-agents run on (handed to the runner).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<serde_json::Value>,
    /// The thinking level sub-agents use (handed to the runner).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thinking: Option<String>,
    /// OpenClaw's announce timeout (Talon announces within the gateway;
    /// accepted and unused).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub announce_timeout_ms: Option<u64>,
    /// OpenClaw's archive delay (accepted and unused: Talon keeps finished
    /// sub-agent sessions as history).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub archive_after_minutes: Option<u64>,
}

/// `agents.list[].subagents`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AgentSubagents {
    /// The agents this agent's sessions may spawn children of, besides its
    /// own (`*`: any configured agent); replaces the default list.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allow_agents: Option<Vec<String>>,
    /// The model this agent's sub-agents run on (handed to the runner).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<serde_json::Value>,
    /// The thinking level (handed to the runner).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thinking: Option<String>,
}

/// The sub-agent limits after defaults, as the gateway enforces them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SubagentLimits {
    /// `maxSpawnDepth`.
    pub max_spawn_depth: u32,
    /// `maxChildrenPerAgent`.
    pub max_children_per_agent: u32,
    /// `maxConcurrent`.
    pub max_concurrent: u32,
    /// `runTimeoutSeconds`.
    pub run_timeout_seconds: u64,
}

impl SubagentDefaults {
    /// The limits with defaults applied (values were range-checked at
    /// load).
    pub fn limits(&self) -> SubagentLimits {
        SubagentLimits {
            max_spawn_depth: self.max_spawn_depth.unwrap_or(DEFAULT_MAX_SPAWN_DEPTH),
            max_children_per_agent: self
                .max_children_per_agent
                .unwrap_or(DEFAULT_MAX_CHILDREN_PER_AGENT),
            max_concurrent: self.max_concurrent.unwrap_or(DEFAULT_MAX_CONCURRENT),
            run_timeout_seconds: self
                .run_timeout_seconds
                .unwrap_or(DEFAULT_RUN_TIMEOUT_SECONDS),
        }
    }

    /// Each out-of-range value: its key (below `agents.defaults.subagents`)
    /// and what is allowed.
    pub fn problems(&self) -> Vec<(&'static str, String)> {
        let mut out = Vec::new();
        if let Some(d) = self.max_spawn_depth
            && !(1..=5).contains(&d)
        {
            out.push(("maxSpawnDepth", format!("must be 1–5, not {d}")));
        }
        if let Some(c) = self.max_children_per_agent
            && !(1..=20).contains(&c)
        {
            out.push(("maxChildrenPerAgent", format!("must be 1–20, not {c}")));
        }
        if self.max_concurrent == Some(0) {
            out.push(("maxConcurrent", "must be at least 1".to_owned()));
        }
        if let Some(t) = self.run_timeout_seconds
            && !(1..=MAX_RUN_TIMEOUT_SECONDS).contains(&t)
        {
            out.push((
                "runTimeoutSeconds",
                format!(
                    "must be 1–{MAX_RUN_TIMEOUT_SECONDS} seconds, not {t} (Talon gives every sub-agent run a deadline; 0 would mean none)"
                ),
            ));
        }
        out
    }
}
