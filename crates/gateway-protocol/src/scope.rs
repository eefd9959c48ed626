//! Token scopes.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// What a token may do. Scopes are ordered: `operator` ⊃ `agent` ⊃
/// `read-only`.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum Scope {
    /// Inspect: health, config (redacted), sessions, tool tables, pending
    /// approvals, cron and task listings.
    ReadOnly,
    /// Run agents: create and close sessions, invoke tools, serve cron runs.
    Agent,
    /// Administer: resolve approvals, change cron jobs, cancel tasks,
    /// recreate sandboxes.
    Operator,
}

impl Scope {
    /// Every scope, least first.
    pub const ALL: [Scope; 3] = [Scope::ReadOnly, Scope::Agent, Scope::Operator];

    /// The wire name (`read-only`, `agent`, `operator`).
    pub fn as_str(self) -> &'static str {
        match self {
            Scope::ReadOnly => "read-only",
            Scope::Agent => "agent",
            Scope::Operator => "operator",
        }
    }

    /// Parse a wire name (`readonly` and `read_only` are accepted too).
    pub fn parse(s: &str) -> Option<Scope> {
        match s.trim().to_ascii_lowercase().as_str() {
            "read-only" | "readonly" | "read_only" | "read" => Some(Scope::ReadOnly),
            "agent" => Some(Scope::Agent),
            "operator" | "admin" => Some(Scope::Operator),
            _ => None,
        }
    }

    /// Whether this scope includes `needed`.
    pub fn covers(self, needed: Scope) -> bool {
        self >= needed
    }
}

impl std::fmt::Display for Scope {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}
