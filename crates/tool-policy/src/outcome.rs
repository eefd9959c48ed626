//! What the pipeline returns: the audit of every layer and the final tools.

use serde::{Deserialize, Serialize};

/// Stable layer ids, in pipeline order (the two pre-filters and the
/// trigger filter first, then OpenClaw's twelve layers).
pub const LAYER_IDS: &[&str] = &[
    "message-provider",
    "model-provider",
    "trigger",
    "profile",
    "provider-profile",
    "global",
    "global-provider",
    "agent",
    "agent-provider",
    "group",
    "sender",
    "sandbox",
    "owner-only",
    "subagent",
    "inherited",
];

/// One removed tool.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Removal {
    /// The tool.
    pub tool: String,
    /// The rule that removed it, e.g. `deny exec` or
    /// `not in allow list [read, write]`.
    pub rule: String,
    /// The config key that would change the outcome.
    pub config_key: String,
}

/// The audit of one layer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LayerAudit {
    /// Stable id (see [`LAYER_IDS`]).
    pub id: String,
    /// Human label (OpenClaw's warning label, e.g. `tools.profile (coding)`).
    pub label: String,
    /// Whether the layer had a policy in this run (a layer without one
    /// passes everything).
    pub active: bool,
    /// What it removed.
    pub removed: Vec<Removal>,
}

/// Where a tool was removed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RemovedBy {
    /// The layer id.
    pub layer: String,
    /// The rule.
    pub rule: String,
    /// The config key to change.
    pub config_key: String,
}

/// The result of running the pipeline.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PolicyOutcome {
    /// Every layer, in order.
    pub layers: Vec<LayerAudit>,
    /// The surviving tools, in input order.
    pub tools: Vec<String>,
    /// Warnings (unknown allowlist entries, explicit empty allow lists).
    pub warnings: Vec<String>,
}

impl PolicyOutcome {
    /// Whether `tool` (normalised) survived.
    pub fn allows(&self, tool: &str) -> bool {
        self.tools.iter().any(|t| t == tool)
    }

    /// The first layer that removed `tool`, if any.
    pub fn removed_by(&self, tool: &str) -> Option<RemovedBy> {
        self.layers.iter().find_map(|l| {
            l.removed
                .iter()
                .find(|r| r.tool == tool)
                .map(|r| RemovedBy {
                    layer: l.id.clone(),
                    rule: r.rule.clone(),
                    config_key: r.config_key.clone(),
                })
        })
    }
}

/// The answer to "may this run use TOOL?".
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CheckOutcome {
    /// The normalised tool name.
    pub tool: String,
    /// Whether it survives every layer.
    pub allowed: bool,
    /// The layer that removed it (`null` when allowed).
    pub removed_by: Option<RemovedBy>,
}
