//! `--deep`: the skills scanner over every skill the agents would load.

use std::path::{Path, PathBuf};

use talon_gateway_protocol::AuditSeverity;
use talon_skills::scanner::{ScanOptions, Severity, scan_skill_dir};
use talon_skills::{SkillRoots, default_eligibility_context, load_skills_with_config};

use crate::findings::Findings;
use crate::input::AuditInput;

pub(crate) fn check(input: &AuditInput<'_>, out: &mut Findings) {
    let config = input.config;
    let skills_config = config.skills_config();
    let base = input.config_dir();
    let extra = skills_config.extra_dirs(&base, input.home);
    let config_json = serde_json::to_value(config).unwrap_or(serde_json::Value::Null);
    let eligibility = default_eligibility_context(config_json);
    let mut dirs: Vec<(String, PathBuf)> = Vec::new();
    for agent in crate::audited_agents(config) {
        let workspace = config.agent_workspace_dir(&agent, &base, input.state_dir);
        let roots = SkillRoots::resolve(
            Some(&workspace),
            input.state_dir,
            input.home,
            extra.clone(),
            input.bundled_skills.map(Path::to_path_buf),
        );
        let set = load_skills_with_config(&roots, &skills_config, &eligibility);
        for skill in set.skills {
            let dir = if skill.location.is_dir() {
                skill.location.clone()
            } else {
                skill
                    .location
                    .parent()
                    .map_or_else(|| skill.location.clone(), Path::to_path_buf)
            };
            if !dirs.iter().any(|(_, d)| *d == dir) {
                dirs.push((skill.name.clone(), dir));
            }
        }
    }
    for (name, dir) in dirs {
        let report = scan_skill_dir(&dir, &ScanOptions::default());
        if let Some(worst) = report.findings.iter().map(|f| f.severity).max() {
            let severity = match worst {
                Severity::Critical => AuditSeverity::Critical,
                Severity::Warn => AuditSeverity::Warn,
                Severity::Info => AuditSeverity::Info,
            };
            let lines: Vec<String> = report
                .findings
                .iter()
                .map(|f| format!("{}:{} {}", f.file.display(), f.line, f.rule_id))
                .collect();
            out.push(
                "skills.code_safety",
                severity,
                format!("skill `{name}`: {} code-safety finding(s)", lines.len()),
                format!("{}: {}", dir.display(), lines.join("; ")),
                format!(
                    "Read the flagged lines (`talon skills scan {}`); remove the skill or the code unless you trust it.",
                    dir.display()
                ),
            );
        }
        if !report.skipped.is_empty() {
            let skipped: Vec<String> = report
                .skipped
                .iter()
                .map(|(p, why)| format!("{} ({why})", p.display()))
                .collect();
            out.push(
                "skills.code_safety.scan_failed",
                AuditSeverity::Warn,
                format!("skill `{name}`: not every file was scanned"),
                format!("{}: {}", dir.display(), skipped.join("; ")),
                "Make the files readable and under the scanner's limits, or remove them; an unscanned file is unaudited.",
            );
        }
    }
}
