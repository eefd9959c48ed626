//! Talon's security audit: what an effective configuration and state
//! directory expose, as findings.
//!
//! # Overview
//!
//! * [`audit`] takes an [`AuditInput`] (the loaded [`TalonConfig`], the
//!   config file's path, the state directory, the home directories and
//!   [`AuditOptions`]) and returns an [`AuditReport`]: findings
//!   `{checkId, severity, title, detail, remediation}` (most severe first)
//!   plus a summary of counts per severity. `talon security audit` and the
//!   gateway's `security.audit` both call it, so there is one set of checks.
//! * The report types are the gateway protocol's ([`AuditFinding`],
//!   [`AuditSeverity`], [`AuditSummary`], [`AuditReport`]): one definition
//!   for the CLI's JSON and the wire.
//! * [`CHECKS`] lists every check id this crate can emit. OpenClaw's id is
//!   used where the same condition is checked
//!   (`sandbox.dangerous_bind_mount`, `fs.config.perms_world_readable`,
//!   `tools.exec.security_full_configured`, ...); Talon's own are
//!   `talon.*`.
//! * [`fix_permissions`] is `--fix`: it only tightens file modes (config
//!   file to at most 0600, state directory to at most 0700, the gateway
//!   token file to at most 0600) and returns what it changed; a second run
//!   changes nothing. [`fix_secrets`] moves MCP servers' plain-text secrets
//!   into `<state dir>/secrets.json` behind `${secret:NAME}` references
//!   and turns plain-text `gateway.auth.tokens[].token` entries into their
//!   `tokenSha256`, editing only those literals of the config file
//!   (idempotent too).
//! * With [`AuditOptions::deep`] and [`AuditInput::gateway_probe`], a
//!   [`GatewayProbe`] connects to a running gateway over loopback with a
//!   bounded timeout (`/healthz`, an unauthenticated request, `health`
//!   with a token); an unreachable gateway is an info finding.
//! * [`sandbox_findings`] is the sandbox security validation of the
//!   defaults and every agent (`talon sandbox validate` prints it; the
//!   audit maps it onto check ids).
//!
//! Every decision comes from the crate that owns it: bind, network and
//! capability findings from `talon-sandbox-core`'s
//! `validate_request_security`, the tool table from the policy engine with
//! the runtime's one sandbox decision (`resolve_run_sandbox`), exec
//! security from the config's exec policy, the exec environment from
//! `talon-exec-env`'s `EnvPolicy` and credential patterns, hook health from
//! the runtime's `check_hooks`, the HTTP surface's deny list from
//! `GatewayConfig::http_tool_deny` (as the gateway builds it), skill
//! findings from the skills scanner (with [`AuditOptions::deep`]). A part the audit cannot read (a
//! file mode it cannot stat, a cron store it cannot open) is a
//! `talon.audit.incomplete` warning, so an unreadable setup is never
//! reported clean.
//!
//! # Example
//!
//! ```
//! use talon_audit::{AuditInput, AuditSeverity, audit};
//!
//! let loaded = talon_config::load_str(
//!     r#"{ tools: { exec: { security: "full" } },
//!          agents: { list: [{ id: "main", sandbox: { mode: "off" } }] } }"#,
//!     "talon.json",
//! )
//! .unwrap();
//! let state = tempfile::tempdir().unwrap();
//! let input = AuditInput::new(&loaded.config, &loaded.origin, state.path());
//! let report = audit(&input).unwrap();
//! let exec = report
//!     .findings
//!     .iter()
//!     .find(|f| f.check_id == "tools.exec.security_full_configured")
//!     .unwrap();
//! // Unsandboxed, so `exec` runs any command on the host.
//! assert_eq!(exec.severity, AuditSeverity::Critical);
//! assert!(report.summary.critical >= 1);
//! ```
#![deny(missing_docs)]

pub use crate::checks::{CHECKS, CheckInfo};
pub use crate::error::{AuditError, Result};
pub use crate::fix::{FixChange, SecretMove, SecretsFix, fix_permissions, fix_secrets};
pub use crate::input::{AuditInput, AuditOptions, process_home_dirs};
pub use crate::probe::GatewayProbe;
pub use crate::sandbox::{
    SandboxSubject, ScopedSecurityFinding, sandbox_findings, sandbox_subjects,
};
pub use talon_gateway_protocol::{AuditFinding, AuditSeverity, AuditSummary};

/// The audit's report: `security.audit`'s response type.
pub type AuditReport = talon_gateway_protocol::SecurityAuditResponse;

mod checks;
mod cron;
mod egress;
mod error;
mod exec_env;
mod findings;
mod fix;
mod fs_perms;
mod gateway;
mod hooks;
mod input;
mod probe;
mod sandbox;
mod secrets;
mod sessions;
mod skills;
mod tools;

use talon_config::TalonConfig;
use talon_tool_policy::PolicyEngine;

use crate::findings::Findings;

/// Run every check on `input`. Fails only when the configuration does not
/// compile into a tool policy (an invalid configuration, reported as
/// [`AuditError::InvalidConfig`] and nothing else).
pub fn audit(input: &AuditInput<'_>) -> Result<AuditReport> {
    let engine = PolicyEngine::new(&input.config.policy_config()).map_err(|e| {
        AuditError::InvalidConfig {
            origin: input.origin.to_owned(),
            message: e.to_string(),
        }
    })?;
    let mut out = Findings::default();
    let secrets = secrets::check(input.config, &mut out);
    fs_perms::check(input, secrets.any(), &mut out);
    sandbox::check(input, &mut out);
    let tables = tools::agent_tables(input, &engine);
    tools::check(input, &tables, &mut out);
    sessions::check(input, &tables, &mut out);
    gateway::check_owner_wildcards(input, &mut out);
    gateway::check(input, &mut out);
    gateway::check_dropped_restrictions(input, &mut out);
    exec_env::check(input, &mut out);
    egress::check(input, &mut out);
    hooks::check(input, &mut out);
    cron::check(input, &engine, &mut out);
    if input.options.deep {
        skills::check(input, &mut out);
        if let Some(probe) = &input.gateway_probe {
            probe::check(probe, &mut out);
        }
    }
    Ok(out.into_report(input))
}

/// The agents the audit covers: every configured agent, else the default
/// one (`main`).
fn audited_agents(config: &TalonConfig) -> Vec<String> {
    let ids = config.agent_ids();
    if ids.is_empty() {
        vec![config.default_agent_id()]
    } else {
        ids
    }
}
