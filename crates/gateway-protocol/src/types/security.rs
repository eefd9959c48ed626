//! `security.*`: the security audit's report, one definition for the
//! gateway, the `talon security audit --json` output and `talon-audit`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// `security.audit`'s params.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SecurityAuditParams {
    /// Also run the slow checks (the skills' code-safety scan). Default
    /// false.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deep: Option<bool>,
}

/// How bad a finding is, least to most.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum AuditSeverity {
    /// Worth knowing (for example an agent's effective tool table).
    Info,
    /// A weakness to fix.
    Warn,
    /// An exposure to fix now.
    Critical,
}

impl AuditSeverity {
    /// `info`, `warn` or `critical`.
    pub fn as_str(self) -> &'static str {
        match self {
            AuditSeverity::Info => "info",
            AuditSeverity::Warn => "warn",
            AuditSeverity::Critical => "critical",
        }
    }
}

/// One finding of the security audit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AuditFinding {
    /// The stable check id: OpenClaw's where it checks the same condition
    /// (`sandbox.dangerous_bind_mount`, `fs.config.perms_world_readable`,
    /// ...), `talon.*` otherwise.
    pub check_id: String,
    /// How bad it is.
    pub severity: AuditSeverity,
    /// One line.
    pub title: String,
    /// What was found and where (config keys, paths); never a secret's
    /// value.
    pub detail: String,
    /// How to fix it.
    pub remediation: String,
}

/// How many findings of each severity.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct AuditSummary {
    /// Critical findings.
    pub critical: usize,
    /// Warnings.
    pub warn: usize,
    /// Informational findings.
    pub info: usize,
}

/// The security audit's report (`security.audit`'s answer and `talon
/// security audit --json`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SecurityAuditResponse {
    /// The configuration audited (a path, or `<built-in defaults>`).
    pub config: String,
    /// The state directory audited.
    pub state_dir: String,
    /// Whether the slow checks ran.
    pub deep: bool,
    /// Counts per severity.
    pub summary: AuditSummary,
    /// The findings, most severe first.
    pub findings: Vec<AuditFinding>,
}

impl SecurityAuditResponse {
    /// The most severe finding's severity (`None` without findings).
    pub fn worst(&self) -> Option<AuditSeverity> {
        self.findings.iter().map(|f| f.severity).max()
    }
}
