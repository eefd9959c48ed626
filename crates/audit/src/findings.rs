//! Collecting findings and turning them into a report.

use talon_gateway_protocol::{AuditFinding, AuditSeverity, AuditSummary};

use crate::AuditReport;
use crate::checks::CHECKS;
use crate::input::AuditInput;

/// The findings of one audit, in the order the checks ran.
#[derive(Debug, Default)]
pub(crate) struct Findings(Vec<AuditFinding>);

impl Findings {
    /// Add one finding. `check_id` must be in [`CHECKS`] (a unit test
    /// runs every check against that table).
    pub(crate) fn push(
        &mut self,
        check_id: &str,
        severity: AuditSeverity,
        title: impl Into<String>,
        detail: impl Into<String>,
        remediation: impl Into<String>,
    ) {
        debug_assert!(
            CHECKS.iter().any(|c| c.id == check_id),
            "check id {check_id} is not in CHECKS"
        );
        self.0.push(AuditFinding {
            check_id: check_id.to_owned(),
            severity,
            title: title.into(),
            detail: detail.into(),
            remediation: remediation.into(),
        });
    }

    /// The findings so far (unit tests).
    #[cfg(test)]
    pub(crate) fn as_slice(&self) -> &[AuditFinding] {
        &self.0
    }

    /// A part of the setup the audit could not read: never reported clean.
    pub(crate) fn incomplete(&mut self, what: &str, detail: String) {
        self.push(
            "talon.audit.incomplete",
            AuditSeverity::Warn,
            format!("the audit could not check {what}"),
            detail,
            "Make it readable by the user running the audit (or fix the error shown) and run the audit again; until then this part is unaudited.",
        );
    }

    /// The report: most severe first (stable within a severity), with the
    /// counts.
    pub(crate) fn into_report(self, input: &AuditInput<'_>) -> AuditReport {
        let mut findings = self.0;
        findings.sort_by_key(|f| std::cmp::Reverse(f.severity));
        let mut summary = AuditSummary::default();
        for f in &findings {
            match f.severity {
                AuditSeverity::Critical => summary.critical += 1,
                AuditSeverity::Warn => summary.warn += 1,
                AuditSeverity::Info => summary.info += 1,
            }
        }
        AuditReport {
            config: input.origin.to_owned(),
            state_dir: input.state_dir.display().to_string(),
            deep: input.options.deep,
            summary,
            findings,
        }
    }
}
