//! `talon skills list|prompt|scan`.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{Result, bail};
use serde_json::{Value, json};
use talon_config::{TalonConfig, home_dir};
use talon_skills::prompt::render_prompt;
use talon_skills::scanner::{ScanOptions, scan_skill_dir};
use talon_skills::{SkillRoots, SkillSet, load_skills_with_config};

use crate::Status;
use crate::cli::ContextArgs;
use crate::commands::{config_dir, load_config};

/// `~/x` → `<home>/x`; relative → against `base`; always absolute and
/// without `.` components (the model is shown these paths).
pub(crate) fn resolve_path(raw: &str, base: &Path) -> PathBuf {
    let raw = raw.trim();
    let joined = match raw.strip_prefix("~/").zip(home_dir()) {
        Some((rest, home)) => home.join(rest),
        None => {
            let p = PathBuf::from(raw);
            if p.is_absolute() { p } else { base.join(p) }
        }
    };
    let absolute = if joined.is_absolute() {
        joined
    } else {
        std::env::current_dir()
            .map(|cwd| cwd.join(&joined))
            .unwrap_or(joined)
    };
    absolute
        .components()
        .filter(|c| !matches!(c, std::path::Component::CurDir))
        .collect()
}

/// The agent's workspace: `--workspace`, else the agent's `workspace`,
/// else `agents.defaults.workspace`.
pub(crate) fn workspace(
    ctx: &ContextArgs,
    flag: Option<&Path>,
    config: &TalonConfig,
) -> Option<PathBuf> {
    if let Some(dir) = flag {
        return Some(resolve_path(&dir.to_string_lossy(), &config_dir(ctx)));
    }
    let agent = ctx
        .agent
        .clone()
        .unwrap_or_else(|| config.default_agent_id())
        .to_lowercase();
    let raw = config.agent(&agent).and_then(|a| a.workspace).or_else(|| {
        config
            .agents
            .as_ref()
            .and_then(|a| a.defaults.as_ref())
            .and_then(|d| d.workspace.clone())
    })?;
    Some(resolve_path(&raw, &config_dir(ctx)))
}

/// The bundled skills: `$TALON_BUNDLED_SKILLS_DIR`, else `skills/` beside
/// the executable.
pub(crate) fn bundled_dir() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("TALON_BUNDLED_SKILLS_DIR").filter(|v| !v.is_empty()) {
        return Some(PathBuf::from(dir));
    }
    let exe = std::env::current_exe().ok()?;
    Some(exe.parent()?.join("skills"))
}

fn load(ctx: &ContextArgs, flag: Option<&Path>) -> Result<(SkillSet, talon_skills::SkillsConfig)> {
    let loaded = load_config(ctx)?;
    let skills_config = loaded.config.skills_config();
    let base = config_dir(ctx);
    let extra = skills_config.extra_dirs(&base, home_dir().as_deref());
    let ws = workspace(ctx, flag, &loaded.config);
    let roots = SkillRoots::resolve(
        ws.as_deref(),
        &talon_config::state_dir(),
        home_dir().as_deref(),
        extra,
        bundled_dir(),
    );
    let config_json = serde_json::to_value(&loaded.config).unwrap_or(Value::Null);
    let eligibility = talon_skills::default_eligibility_context(config_json);
    let set = load_skills_with_config(&roots, &skills_config, &eligibility);
    Ok((set, skills_config))
}

pub(crate) fn skills_list(
    ctx: &ContextArgs,
    workspace: Option<&Path>,
    json: bool,
    out: &mut String,
) -> Result<Status> {
    let (set, _) = load(ctx, workspace)?;
    if json {
        let mut items: Vec<Value> = set
            .skills
            .iter()
            .map(talon_skills::Skill::summary_json)
            .collect();
        for r in &set.rejected {
            let name = r
                .location
                .parent()
                .filter(|_| r.location.ends_with("SKILL.md"))
                .unwrap_or(&r.location)
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            items.push(json!({
                "name": name,
                "description": "",
                "source": r.source.label(),
                "location": r.location,
                "eligible": false,
                "reasons": [r.message],
                "rejected": r.reason,
                "userInvocable": false,
                "disableModelInvocation": true,
                "shadows": [],
            }));
        }
        out.push_str(&serde_json::to_string_pretty(&items)?);
        out.push('\n');
        return Ok(Status::Ok);
    }
    let rows: Vec<Vec<String>> = set
        .skills
        .iter()
        .map(|s| {
            let status = if s.eligibility.eligible {
                "eligible".to_owned()
            } else {
                format!("ineligible: {}", s.eligibility.reasons.join("; "))
            };
            let invocation = match (
                s.frontmatter.user_invocable,
                s.frontmatter.disable_model_invocation,
            ) {
                (true, false) => "user+model",
                (true, true) => "user",
                (false, false) => "model",
                (false, true) => "none",
            };
            let shadows = s
                .shadows
                .iter()
                .map(|sh| sh.source.label())
                .collect::<Vec<_>>()
                .join(", ");
            vec![
                s.name.clone(),
                s.source.label().to_owned(),
                invocation.to_owned(),
                status,
                if shadows.is_empty() {
                    "-".into()
                } else {
                    format!("shadows {shadows}")
                },
                s.location.display().to_string(),
            ]
        })
        .collect();
    out.push_str(&crate::table::render(
        &[
            "SKILL",
            "SOURCE",
            "INVOCATION",
            "STATUS",
            "PRECEDENCE",
            "LOCATION",
        ],
        &rows,
    ));
    for r in &set.rejected {
        let _ = writeln!(
            out,
            "not a skill: {} ({}): {}",
            r.location.display(),
            r.reason,
            r.message
        );
    }
    for w in &set.warnings {
        let _ = writeln!(out, "warning: {w}");
    }
    Ok(Status::Ok)
}

pub(crate) fn skills_prompt(
    ctx: &ContextArgs,
    workspace: Option<&Path>,
    json: bool,
    out: &mut String,
) -> Result<Status> {
    let (set, config) = load(ctx, workspace)?;
    let rendered = render_prompt(&set.skills, &talon_skills::config_limits(&config));
    if json {
        let mut doc = serde_json::to_value(&rendered)?;
        if let Value::Object(map) = &mut doc {
            map.insert("bytes".into(), Value::from(rendered.text.len()));
        }
        out.push_str(&serde_json::to_string_pretty(&doc)?);
        out.push('\n');
        return Ok(Status::Ok);
    }
    out.push_str(&rendered.text);
    if !rendered.text.ends_with('\n') {
        out.push('\n');
    }
    let _ = writeln!(
        out,
        "-- {} of {} skills, {} chars ({} bytes) of a {} char budget, {:?} format",
        rendered.included,
        rendered.total,
        rendered.chars,
        rendered.text.len(),
        rendered.budget,
        rendered.format
    );
    Ok(Status::Ok)
}

pub(crate) fn skills_scan(path: &Path, json: bool, out: &mut String) -> Result<Status> {
    if !path.is_dir() {
        bail!(
            "{}: not a directory (pass a skill directory)",
            path.display()
        );
    }
    let report = scan_skill_dir(path, &ScanOptions::default());
    let status = if report.has_critical() {
        Status::No
    } else {
        Status::Ok
    };
    if json {
        out.push_str(&serde_json::to_string_pretty(&report)?);
        out.push('\n');
        return Ok(status);
    }
    for f in &report.findings {
        let _ = writeln!(
            out,
            "{}:{}: {} [{}] {}",
            f.file.display(),
            f.line,
            serde_json::to_value(f.severity)
                .ok()
                .and_then(|v| v.as_str().map(str::to_owned))
                .unwrap_or_default(),
            f.rule_id,
            f.excerpt
        );
    }
    for (path, why) in &report.skipped {
        let _ = writeln!(out, "{}: not scanned: {why}", path.display());
    }
    let _ = writeln!(
        out,
        "{} files scanned, {} findings{}",
        report.files_scanned,
        report.findings.len(),
        if report.has_critical() {
            ", critical: this skill fails the scan"
        } else {
            ""
        }
    );
    Ok(status)
}
