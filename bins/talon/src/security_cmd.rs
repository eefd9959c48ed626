//! `talon security audit`: `talon-audit`'s report, as text or JSON.

use std::fmt::Write as _;

use std::net::ToSocketAddrs as _;

use anyhow::{Context as _, Result, bail};
use serde_json::{Value, json};
use talon_audit::{
    AuditInput, AuditOptions, AuditSeverity, GatewayProbe, fix_permissions, fix_secrets,
};
use talon_config::{ConfigError, resolve_config_path};

use crate::Status;
use crate::cli::{ContextArgs, GatewayTarget};

/// `--deep`'s probe target: `--gateway` (or `$TALON_GATEWAY_URL`), else
/// the address the config has the daemon listen on, reached through
/// loopback (`GatewayConfig::client_addr`, as `talon gateway status`);
/// the token from `--token` (or `$TALON_GATEWAY_TOKEN`), else the state
/// dir's token file when it is readable.
fn probe_target(
    config: &talon_config::TalonConfig,
    target: &GatewayTarget,
    state_dir: &std::path::Path,
) -> Result<GatewayProbe> {
    let addr = match target
        .gateway
        .as_deref()
        .map(str::trim)
        .filter(|s| !s.is_empty())
    {
        Some(raw) => {
            let url = crate::gateway_cmd::ws_url(raw)?;
            let authority = url
                .split_once("://")
                .map_or(url.as_str(), |(_, rest)| rest)
                .split('/')
                .next()
                .unwrap_or_default()
                .to_owned();
            authority
                .to_socket_addrs()
                .with_context(|| format!("--gateway `{raw}`: cannot resolve {authority}"))?
                .next()
                .with_context(|| format!("--gateway `{raw}`: {authority} has no address"))?
        }
        None => config.gateway_config().client_addr(),
    };
    let mut probe = GatewayProbe::new(addr);
    if let Some(t) = target
        .token
        .as_deref()
        .map(str::trim)
        .filter(|t| !t.is_empty())
    {
        probe.token = Some(t.to_owned());
        probe.token_source = "--token / $TALON_GATEWAY_TOKEN".to_owned();
    } else {
        let file = state_dir.join("gateway.token");
        if let Ok(text) = std::fs::read_to_string(&file) {
            let t = text.trim();
            if !t.is_empty() {
                probe.token = Some(t.to_owned());
                probe.token_source = file.display().to_string();
            }
        }
    }
    Ok(probe)
}

pub(crate) fn audit(
    ctx: &ContextArgs,
    deep: bool,
    json: bool,
    fix: bool,
    target: &GatewayTarget,
    out: &mut String,
) -> Result<Status> {
    let location = resolve_config_path(ctx.config.as_deref());
    let mut loaded = match location.load() {
        Ok(loaded) => loaded,
        // Unreadable is not invalid: the audit cannot run (exit 2).
        Err(ConfigError::Io { path, source }) => {
            bail!("cannot read config file {}: {source}", path.display())
        }
        Err(err) => return Ok(invalid(&err.to_string(), json, out)),
    };
    let config_file = crate::commands::config_file(ctx).filter(|p| p.exists());
    let state_dir = talon_config::state_dir();
    let fixed = if fix {
        Some(fix_permissions(config_file.as_deref(), &state_dir)?)
    } else {
        None
    };
    // Plain-text MCP secrets move into the secrets file and plain-text
    // gateway tokens become hashes; the audit then
    // reads the rewritten config.
    let secrets_fix = match (&config_file, fix) {
        (Some(file), true) => {
            let done = fix_secrets(file, &loaded.config, &state_dir)?;
            if done.changed() {
                loaded = match location.load() {
                    Ok(l) => l,
                    Err(err) => return Ok(invalid(&err.to_string(), json, out)),
                };
            }
            Some(done)
        }
        _ => None,
    };
    let home = talon_config::home_dir();
    let bundled = crate::skills_cmd::bundled_dir();
    let mut input = AuditInput::new(&loaded.config, &loaded.origin, &state_dir);
    input.config_file = config_file.as_deref();
    input.home = home.as_deref();
    input.home_dirs = talon_audit::process_home_dirs();
    input.bundled_skills = bundled.as_deref();
    input.options = AuditOptions { deep };
    if deep {
        input.gateway_probe = Some(probe_target(&loaded.config, target, &state_dir)?);
    }
    let report = match talon_audit::audit(&input) {
        Ok(report) => report,
        Err(talon_audit::AuditError::InvalidConfig { origin, message }) => {
            return Ok(invalid(&format!("{origin}: {message}"), json, out));
        }
        Err(e) => return Err(e.into()),
    };
    let status = match report.worst() {
        Some(AuditSeverity::Warn | AuditSeverity::Critical) => Status::No,
        Some(AuditSeverity::Info) | None => Status::Ok,
    };
    if json {
        let mut doc = serde_json::to_value(&report)?;
        if let (Some(fixed), Value::Object(map)) = (&fixed, &mut doc) {
            map.insert("fixed".to_owned(), serde_json::to_value(fixed)?);
        }
        if let (Some(done), Value::Object(map)) = (&secrets_fix, &mut doc) {
            map.insert("secretsFixed".to_owned(), serde_json::to_value(done)?);
        }
        out.push_str(&serde_json::to_string_pretty(&doc)?);
        out.push('\n');
        return Ok(status);
    }
    if let Some(fixed) = &fixed {
        if fixed.is_empty() {
            let _ = writeln!(out, "fix: nothing to tighten");
        }
        for change in fixed {
            let _ = writeln!(out, "fixed: {change}");
        }
    }
    if let Some(done) = &secrets_fix {
        for m in &done.moved {
            let _ = writeln!(
                out,
                "fixed: {} moved to the secrets file (now ${{secret:{}}})",
                m.key, m.secret
            );
        }
        for key in &done.hashed {
            let _ = writeln!(
                out,
                "fixed: {key} replaced by its tokenSha256 (the same token still works)"
            );
        }
        for why in &done.left {
            let _ = writeln!(out, "not fixed: {why}");
        }
    }
    let _ = writeln!(
        out,
        "security audit of {} (state dir {}){}\n",
        report.config,
        report.state_dir,
        if report.deep { ", deep" } else { "" }
    );
    for f in &report.findings {
        let _ = writeln!(
            out,
            "{:<8} {}: {}\n  {}\n  fix: {}\n",
            f.severity.as_str().to_uppercase(),
            f.check_id,
            f.title,
            f.detail,
            f.remediation
        );
    }
    let _ = writeln!(
        out,
        "summary: {} critical, {} warn, {} info",
        report.summary.critical, report.summary.warn, report.summary.info
    );
    Ok(status)
}

/// An invalid config: its error and nothing else, exit 1.
fn invalid(message: &str, json: bool, out: &mut String) -> Status {
    if json {
        let doc = json!({ "valid": false, "error": message });
        let _ = writeln!(
            out,
            "{}",
            serde_json::to_string_pretty(&doc).unwrap_or_default()
        );
    } else {
        let _ = writeln!(out, "{message}");
    }
    Status::No
}
