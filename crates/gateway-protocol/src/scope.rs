//! Token scopes.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// What a token may do. Scopes are ordered, each including the ones
/// before it: `read-only` ⊂ `runner` ⊂ `owner` ⊂ `operator`.
///
/// The method table gives each method its least scope; no method needs
/// `owner` as such: what the owner scope adds to `runner` is the *owner
/// capability* ([`Scope::is_owner`]), which decides a session's
/// `senderIsOwner` and so whether it gets the owner-only tools.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum Scope {
    /// Inspect: health, config (redacted), sessions, tool tables, pending
    /// approvals, cron and task listings.
    ReadOnly,
    /// Run agents: create and close sessions, invoke tools, serve cron
    /// runs. A runner's session is the owner's only when the sender it
    /// relays is in the owner list. (`agent`, this scope's former name, is
    /// accepted.)
    #[serde(alias = "agent")]
    Runner,
    /// A runner that is the owner: its sessions get the owner-only tools.
    Owner,
    /// Administer: the owner, plus resolving approvals, changing cron
    /// jobs, cancelling tasks, recreating sandboxes and reloading.
    Operator,
}

impl Scope {
    /// Every scope, least first.
    pub const ALL: [Scope; 4] = [
        Scope::ReadOnly,
        Scope::Runner,
        Scope::Owner,
        Scope::Operator,
    ];

    /// The runner scope's former name.
    #[allow(non_upper_case_globals, reason = "the former variant's name")]
    pub const Agent: Scope = Scope::Runner;

    /// The wire name (`read-only`, `runner`, `owner`, `operator`).
    pub fn as_str(self) -> &'static str {
        match self {
            Scope::ReadOnly => "read-only",
            Scope::Runner => "runner",
            Scope::Owner => "owner",
            Scope::Operator => "operator",
        }
    }

    /// Parse a wire name (`readonly` and `read_only` are accepted too, and
    /// `agent` for `runner`).
    pub fn parse(s: &str) -> Option<Scope> {
        match s.trim().to_ascii_lowercase().as_str() {
            "read-only" | "readonly" | "read_only" | "read" => Some(Scope::ReadOnly),
            "runner" | "agent" => Some(Scope::Runner),
            "owner" => Some(Scope::Owner),
            "operator" | "admin" => Some(Scope::Operator),
            _ => None,
        }
    }

    /// Whether this scope includes `needed`.
    pub fn covers(self, needed: Scope) -> bool {
        self >= needed
    }

    /// Whether a token with this scope is the owner (`owner` and
    /// `operator`): its sessions are the owner's whatever sender they
    /// name.
    pub fn is_owner(self) -> bool {
        self >= Scope::Owner
    }
}

impl std::fmt::Display for Scope {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}
