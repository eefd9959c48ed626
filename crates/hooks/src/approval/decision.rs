//! The vocabulary of approvals: decisions, scopes, severities.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// How an approval ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum ApprovalDecision {
    /// Run this one call.
    AllowOnce,
    /// Run this call, and remember the grant for the approval's scope.
    AllowAlways,
    /// Do not run it.
    Deny,
    /// Nobody answered in time (denies).
    Timeout,
    /// The call or run was cancelled while waiting (denies).
    Cancelled,
}

impl ApprovalDecision {
    /// The decisions a human approver may give, in the order they are
    /// offered; also the default `allowed_decisions` of a request.
    pub const USER_DECISIONS: [ApprovalDecision; 3] = [
        ApprovalDecision::AllowOnce,
        ApprovalDecision::AllowAlways,
        ApprovalDecision::Deny,
    ];

    /// Whether a human may give this decision. `timeout` and `cancelled`
    /// are produced only by the broker.
    pub fn is_user_decision(self) -> bool {
        matches!(
            self,
            ApprovalDecision::AllowOnce | ApprovalDecision::AllowAlways | ApprovalDecision::Deny
        )
    }

    /// Whether the call may run.
    pub fn allows(self) -> bool {
        matches!(
            self,
            ApprovalDecision::AllowOnce | ApprovalDecision::AllowAlways
        )
    }

    /// The wire name (`allow-once`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            ApprovalDecision::AllowOnce => "allow-once",
            ApprovalDecision::AllowAlways => "allow-always",
            ApprovalDecision::Deny => "deny",
            ApprovalDecision::Timeout => "timeout",
            ApprovalDecision::Cancelled => "cancelled",
        }
    }

    /// Parse a wire name.
    pub fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "allow-once" => ApprovalDecision::AllowOnce,
            "allow-always" => ApprovalDecision::AllowAlways,
            "deny" => ApprovalDecision::Deny,
            "timeout" => ApprovalDecision::Timeout,
            "cancelled" => ApprovalDecision::Cancelled,
            _ => return None,
        })
    }
}

/// How far an `allow-always` grant reaches. The grant is always for one
/// plugin and one tool; the scope says for which runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ApprovalScope {
    /// Calls in the same session (the default).
    #[default]
    Session,
    /// Calls of the same agent, in any session.
    Agent,
    /// Every call of this tool for this plugin.
    Global,
}

impl ApprovalScope {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            ApprovalScope::Session => "session",
            ApprovalScope::Agent => "agent",
            ApprovalScope::Global => "global",
        }
    }

    /// Parse a wire name.
    pub fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "session" => ApprovalScope::Session,
            "agent" => ApprovalScope::Agent,
            "global" => ApprovalScope::Global,
            _ => return None,
        })
    }
}

/// How loudly to ask.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ApprovalSeverity {
    /// Routine.
    #[default]
    Info,
    /// Worth a second look.
    Warning,
    /// Dangerous.
    Critical,
}
