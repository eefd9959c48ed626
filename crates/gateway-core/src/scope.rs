//! Token scopes and the least scope each method needs.

use serde::{Deserialize, Serialize};

/// What a token may do. Scopes are ordered: `operator` ⊃ `agent` ⊃
/// `read-only`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
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

/// Every WebSocket method and the least scope it needs, in one table (the
/// dispatcher refuses anything not listed here as "method not found").
pub const METHODS: &[(&str, Scope)] = &[
    ("health", Scope::ReadOnly),
    ("config.get", Scope::ReadOnly),
    ("config.schema.lookup", Scope::ReadOnly),
    ("sessions.list", Scope::ReadOnly),
    ("sessions.create", Scope::Agent),
    ("sessions.close", Scope::Agent),
    ("tools.list", Scope::ReadOnly),
    ("tools.invoke", Scope::Agent),
    ("approvals.list", Scope::ReadOnly),
    ("approvals.resolve", Scope::Operator),
    ("cron.status", Scope::ReadOnly),
    ("cron.list", Scope::ReadOnly),
    ("cron.get", Scope::ReadOnly),
    ("cron.runs", Scope::ReadOnly),
    ("cron.add", Scope::Operator),
    ("cron.update", Scope::Operator),
    ("cron.remove", Scope::Operator),
    ("cron.run", Scope::Operator),
    ("cron.wake", Scope::Operator),
    ("tasks.list", Scope::ReadOnly),
    ("tasks.get", Scope::ReadOnly),
    ("tasks.cancel", Scope::Operator),
    ("skills.list", Scope::ReadOnly),
    ("skills.prompt", Scope::ReadOnly),
    ("sandbox.explain", Scope::ReadOnly),
    ("sandbox.list", Scope::ReadOnly),
    ("sandbox.recreate", Scope::Operator),
    ("mcp.status", Scope::ReadOnly),
    ("runner.subscribe", Scope::Agent),
    ("runner.complete", Scope::Agent),
    ("gateway.reload", Scope::Operator),
];

/// The least scope `method` needs; `None` for an unknown method.
pub fn required_scope(method: &str) -> Option<Scope> {
    METHODS.iter().find(|(m, _)| *m == method).map(|(_, s)| *s)
}

#[cfg(test)]
#[path = "scope_tests.rs"]
mod tests;
