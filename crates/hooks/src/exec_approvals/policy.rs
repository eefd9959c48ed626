//! `tools.exec.security` / `tools.exec.ask` and the decision they give.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// `tools.exec.security`: which commands may run at all.
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
pub enum ExecSecurity {
    /// No command runs.
    Deny,
    /// Only commands whose every simple command is on the agent's
    /// allowlist run (a miss is refused, or asked with `ask: on-miss`).
    Allowlist,
    /// Every command may run (Talon's default, as before this setting).
    #[default]
    Full,
}

impl ExecSecurity {
    /// The config spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            ExecSecurity::Deny => "deny",
            ExecSecurity::Allowlist => "allowlist",
            ExecSecurity::Full => "full",
        }
    }
}

/// `tools.exec.ask`: when a human is asked.
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
#[serde(rename_all = "kebab-case")]
pub enum ExecAsk {
    /// Never ask.
    #[default]
    Off,
    /// Ask when `security: allowlist` and the command misses the allowlist.
    OnMiss,
    /// Ask before every command (an `allow-always` still adds the
    /// allowlist entries, but does not stop the asking).
    Always,
}

impl ExecAsk {
    /// The config spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            ExecAsk::Off => "off",
            ExecAsk::OnMiss => "on-miss",
            ExecAsk::Always => "always",
        }
    }
}

/// The policy of one agent: security, ask, and what a needed approval
/// falls back to when no approver is attached.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ExecPolicy {
    /// See [`ExecSecurity`].
    pub security: ExecSecurity,
    /// See [`ExecAsk`].
    pub ask: ExecAsk,
    /// When an approval is needed and no approver is attached: `deny`
    /// (default), `allowlist` (run only an allowlisted command) or `full`.
    /// A request that times out always denies.
    #[serde(default = "deny")]
    pub ask_fallback: ExecSecurity,
}

fn deny() -> ExecSecurity {
    ExecSecurity::Deny
}

impl ExecPolicy {
    /// `security` and `ask` with the default fallback (`deny`).
    pub fn new(security: ExecSecurity, ask: ExecAsk) -> Self {
        ExecPolicy {
            security,
            ask,
            ask_fallback: ExecSecurity::Deny,
        }
    }

    /// The stricter of two policies, field by field (OpenClaw: the
    /// approvals file can only tighten `tools.exec`).
    pub fn stricter(self, other: ExecPolicy) -> ExecPolicy {
        ExecPolicy {
            security: self.security.min(other.security),
            ask: self.ask.max(other.ask),
            ask_fallback: self.ask_fallback.min(other.ask_fallback),
        }
    }

    /// Whether the policy lets every command run without asking (nothing
    /// to analyse).
    pub fn is_open(self) -> bool {
        self.security == ExecSecurity::Full && self.ask != ExecAsk::Always
    }

    /// What to do with a command, given whether it is allowlisted
    /// (OpenClaw's `requiresExecApproval`).
    pub fn decide(self, allowlisted: bool) -> PolicyDecision {
        match self.security {
            ExecSecurity::Deny => PolicyDecision::Deny,
            _ if self.ask == ExecAsk::Always => PolicyDecision::Ask,
            ExecSecurity::Full => PolicyDecision::Run,
            ExecSecurity::Allowlist if allowlisted => PolicyDecision::Run,
            ExecSecurity::Allowlist if self.ask == ExecAsk::OnMiss => PolicyDecision::Ask,
            ExecSecurity::Allowlist => PolicyDecision::Deny,
        }
    }
}

/// What [`ExecPolicy::decide`] says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PolicyDecision {
    /// Run it.
    Run,
    /// Ask a human.
    Ask,
    /// Refuse it.
    Deny,
}
