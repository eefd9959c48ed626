//! `talon sandbox explain|validate|resolve`.
//!
//! `ls`, `rm` and `recreate` need a backend (the Docker engine, or the SSH
//! hosts of the `ssh` backend) and live in `sandbox_manage`.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{Result, bail};
use serde_json::{Value, json};
use talon_config::{TalonConfig, home_dir, state_dir};
use talon_fs_bridge::Access;
use talon_runtime::RunSandbox;
use talon_sandbox_core::{
    BindSpec, DockerSettings, MountKind, SandboxBackend, SandboxRequest, SecurityEnv, mode_str,
    validate_request_security, validate_sandbox_security,
};
use talon_sandbox_local::Protections;
use talon_sandbox_ssh::SshBackend;
use talon_tool_policy::ListSource;

use crate::Status;
use crate::cli::ContextArgs;
use crate::commands::{load_config, run_context, run_sandbox};
use crate::table;

/// The agent workspace: the agent's `workspace`, else
/// `agents.defaults.workspace`, else (as OpenClaw) `<state dir>/workspace`
/// for the default agent and `<state dir>/workspace-<id>` for the others.
fn agent_workspace(ctx: &ContextArgs, config: &TalonConfig, agent: &str) -> PathBuf {
    config.agent_workspace_dir(agent, &crate::commands::config_dir(ctx), &state_dir())
}

/// Every home whose credentials a mount must not reach (one helper,
/// shared with the audit).
fn home_dirs() -> Vec<PathBuf> {
    talon_audit::process_home_dirs()
}

fn source_str(source: ListSource) -> &'static str {
    match source {
        ListSource::Agent => "agent",
        ListSource::Global => "global",
        ListSource::Default => "default",
    }
}

/// The run the flags describe, its sandbox decision (the runtime's one
/// function, [`crate::commands::run_sandbox`]) and the sandbox request it
/// would make, with the same materialised skills root the runtime mirrors
/// into (so the mounts and the config hash shown match the sandbox's).
pub(crate) fn request_for(
    ctx: &ContextArgs,
    config: &TalonConfig,
) -> anyhow::Result<(SandboxRequest, RunSandbox)> {
    let run = run_context(ctx, config)?;
    let decision = run_sandbox(config, &run);
    let workspace = agent_workspace(ctx, config, &run.agent_id);
    let resolved = &decision.config;
    let scope_key =
        talon_sandbox_core::scope_key(resolved.scope, &resolved.agent_id, &run.session_key);
    let skills =
        talon_sandbox_core::materialized_skills_root(&state_dir(), resolved.scope, &scope_key);
    let request = SandboxRequest::new(
        decision
            .config
            .clone()
            .with_config_file(crate::commands::config_file(ctx)),
        &run.session_key,
        &workspace,
        Some(&skills),
    );
    Ok((request, decision))
}

/// The Docker settings with `env` values replaced: they may hold
/// credentials, and explain output ends up in terminals and tickets. (The
/// config hash covers the real values.)
fn docker_for_display(docker: &DockerSettings) -> DockerSettings {
    let mut shown = docker.clone();
    for value in shown.env.values_mut() {
        *value = "<redacted>".to_owned();
    }
    shown
}

/// The scope's remote workdir, as the SSH backend answers it (the backend
/// owns the rule; nothing is connected to).
fn ssh_workdir(request: &SandboxRequest) -> String {
    SshBackend::new(home_dir()).workdir(request)
}

/// The SSH settings as `explain` shows them (`null` unless the backend is
/// `ssh`): the target, the remote root and the scope's remote workdir.
fn ssh_for_display(request: &SandboxRequest) -> Value {
    let cfg = &request.config;
    if cfg.backend != "ssh" {
        return Value::Null;
    }
    json!({
        "target": cfg.ssh.target(),
        "host": cfg.ssh.host,
        "port": cfg.ssh.port,
        "user": cfg.ssh.user,
        "identityFile": cfg.ssh.identity_file,
        "knownHostsFile": cfg.ssh.known_hosts_file,
        "hostKeyPolicy": cfg.ssh.host_key_policy.as_str(),
        "remoteRoot": cfg.ssh.workspace_root,
        "remoteDir": cfg.ssh.remote_sandbox_dir(&request.sandbox_name),
        "remoteWorkdir": ssh_workdir(request),
        "connectTimeoutSeconds": cfg.ssh.connect_timeout_seconds,
        "commandTimeoutSeconds": cfg.ssh.command_timeout_seconds,
        "keepaliveSeconds": cfg.ssh.keepalive_seconds,
    })
}

/// What the `local` backend applies on this host and what it lacks
/// (`null` unless the backend is `local`).
fn local_for_display(request: &SandboxRequest) -> Value {
    if request.config.backend != "local" {
        return Value::Null;
    }
    serde_json::to_value(Protections::detect(&request.config, &state_dir())).unwrap_or(Value::Null)
}

fn write_local_protections(request: &SandboxRequest, out: &mut String) {
    let p = Protections::detect(&request.config, &state_dir());
    let bwrap = p
        .bwrap
        .as_ref()
        .map_or_else(|| "not found".to_owned(), |b| b.display().to_string());
    let _ = writeln!(out, "bubblewrap: {bwrap}");
    for (name, prot) in [
        ("namespaces", &p.namespaces),
        ("filesystem", &p.filesystem),
        ("seccomp", &p.seccomp),
        ("landlock", &p.landlock),
        ("cgroup limits", &p.cgroup_limits),
        ("network", &p.network),
    ] {
        let state = if prot.applied { "on" } else { "off" };
        let _ = writeln!(out, "  {name}: {state} ({})", prot.detail);
    }
    for problem in p
        .refused_settings
        .iter()
        .map(ToString::to_string)
        .chain(p.missing)
    {
        let _ = writeln!(out, "blocked: {problem}");
    }
}

fn security_env(request: &SandboxRequest) -> SecurityEnv {
    SecurityEnv::for_request(request, &home_dirs())
}

pub(crate) fn sandbox_explain(ctx: &ContextArgs, json: bool, out: &mut String) -> Result<Status> {
    let loaded = load_config(ctx)?;
    let (request, decision) = request_for(ctx, &loaded.config)?;
    let cfg = &request.config;
    let status = &decision.status;
    let findings = validate_request_security(&request, &security_env(&request));
    let policy = &cfg.tool_policy;
    let exec_env = loaded
        .config
        .exec_env_policy(&cfg.agent_id)
        .map_err(|e| anyhow::anyhow!("tools.exec.env.{e}"))?
        .explain_run(decision.sandboxed);
    if json {
        let doc = json!({
            "config": loaded.origin,
            "agent": cfg.agent_id,
            "session": status.session_key,
            "sandboxed": decision.sandboxed,
            "forced": decision.forced,
            "reason": decision.reason,
            "mode": status.mode,
            "modeKey": status.mode_key,
            "mainSessionKey": status.main_session_key,
            "comparableSessionKey": status.comparable_session_key,
            "backend": cfg.backend,
            "backendKey": cfg.backend_config_key(),
            "scope": cfg.scope.as_str(),
            "scopeKey": request.scope_key,
            "sandboxName": request.sandbox_name,
            "workspaceAccess": cfg.workspace_access.as_str(),
            "workspaceRoot": cfg.workspace_root,
            "workspaceDir": request.workspace_dir,
            "agentWorkspaceDir": request.agent_workspace_dir,
            "mounts": request.mount_plan.entries,
            "docker": docker_for_display(&cfg.docker),
            "ssh": ssh_for_display(&request),
            "local": local_for_display(&request),
            "toolPolicy": {
                "allow": policy.allow,
                "deny": policy.deny,
                "allowKey": policy.allow_key,
                "denyKey": policy.deny_key,
                "allowSource": source_str(policy.allow_source),
                "denySource": source_str(policy.deny_source),
            },
            "configHash": request.config_hash,
            "security": findings,
            "execEnv": exec_env,
        });
        out.push_str(&serde_json::to_string_pretty(&doc)?);
        out.push('\n');
        return Ok(Status::Ok);
    }
    let _ = writeln!(out, "config: {}", loaded.origin);
    let _ = writeln!(
        out,
        "agent: {}  session: {}",
        cfg.agent_id, status.session_key
    );
    let _ = writeln!(
        out,
        "sandboxed: {} ({})",
        if decision.sandboxed { "yes" } else { "no" },
        decision.reason
    );
    let _ = writeln!(
        out,
        "mode: {}  backend: {}  scope: {} ({})  workspaceAccess: {}",
        mode_str(cfg.mode),
        cfg.backend,
        cfg.scope.as_str(),
        request.scope_key,
        cfg.workspace_access.as_str()
    );
    if cfg.backend == "ssh" {
        let _ = writeln!(
            out,
            "sandbox: {}  ssh target: {}  host keys: {}",
            request.sandbox_name,
            cfg.ssh.target(),
            cfg.ssh.host_key_policy.as_str()
        );
        let _ = writeln!(
            out,
            "remote root: {}  remote workdir: {}",
            cfg.ssh.workspace_root,
            ssh_workdir(&request)
        );
        if cfg.ssh.host.is_none() {
            let _ = writeln!(
                out,
                "blocked: no ssh host configured; set agents.defaults.sandbox.ssh.host"
            );
        }
    } else if cfg.backend == "local" {
        let _ = writeln!(
            out,
            "sandbox: {} (bubblewrap, no image)",
            request.sandbox_name
        );
        write_local_protections(&request, out);
    } else {
        let _ = writeln!(
            out,
            "sandbox: {}  image: {}",
            request.sandbox_name, cfg.docker.image
        );
    }
    let _ = writeln!(out, "config hash: {}", request.config_hash);
    out.push_str("\nmounts:\n");
    let rows: Vec<Vec<String>> = request
        .mount_plan
        .entries
        .iter()
        .map(|m| {
            vec![
                format!("  {}", m.container_path),
                if m.read_only { "ro" } else { "rw" }.to_owned(),
                m.host_path.display().to_string(),
            ]
        })
        .collect();
    out.push_str(&table::render(&["  CONTAINER", "ACCESS", "HOST"], &rows));
    let _ = writeln!(
        out,
        "\nsandbox tool policy:\n  allow ({}): {}\n  deny ({}): {}",
        policy.allow_key,
        if policy.allow.is_empty() {
            "(nothing)".to_owned()
        } else {
            policy.allow.join(", ")
        },
        policy.deny_key,
        policy.deny.join(", ")
    );
    write_exec_env(&exec_env, out);
    for f in &findings {
        let _ = writeln!(out, "blocked: {f}");
    }
    Ok(Status::Ok)
}

/// The effective exec environment policy, names only.
fn write_exec_env(env: &talon_exec_env::EnvPolicyExplain, out: &mut String) {
    let none = |list: &[String]| {
        if list.is_empty() {
            "(none)".to_owned()
        } else {
            list.join(", ")
        }
    };
    let _ = writeln!(out, "\nexec environment (tools.exec.env):");
    if env.sandboxed {
        let _ = writeln!(
            out,
            "  inherit: {} (not applied: a sandboxed run inherits no host variable)",
            env.inherit.as_str()
        );
    } else {
        let _ = writeln!(out, "  inherit: {}", env.inherit.as_str());
    }
    let _ = writeln!(out, "  always excluded: {}", env.default_exclude.join(", "));
    let _ = writeln!(out, "  Talon's own: {}", env.talon_read.join(", "));
    let _ = writeln!(out, "  exclude: {}", none(&env.exclude));
    for layer in &env.include_only {
        let _ = writeln!(out, "  includeOnly: {}", none(layer));
    }
    let _ = writeln!(out, "  set: {}", none(&env.set_names));
    let _ = writeln!(out, "  inherited now: {}", none(&env.inherited_names));
}

/// A Docker setting the Docker backend would refuse when it creates the
/// container, and the sandboxes (`defaults`, agent ids) that have it.
#[derive(Debug, Clone, serde::Serialize)]
pub(crate) struct DockerSettingError {
    /// The backend's own message (what, which key, how to fix).
    pub(crate) message: String,
    /// `defaults`, or the agent ids whose sandbox has it.
    pub(crate) scopes: Vec<String>,
}

/// The Docker backend's own checks of its settings
/// ([`talon_sandbox_docker::check_settings`]), run for the defaults and
/// every agent whose sandbox uses the `docker` backend, deduplicated by
/// message: what a sandboxed call would otherwise meet first.
pub(crate) fn docker_setting_errors(
    ctx: &ContextArgs,
    config: &TalonConfig,
) -> Vec<DockerSettingError> {
    let home = home_dir();
    let mut errors: Vec<DockerSettingError> = Vec::new();
    let subjects = talon_audit::sandbox_subjects(
        config,
        crate::commands::config_file(ctx).as_deref(),
        &crate::commands::config_dir(ctx),
        &state_dir(),
        home.as_deref(),
    );
    for subject in subjects {
        if subject.request.config.backend != "docker" {
            continue;
        }
        for e in talon_sandbox_docker::check_settings(&subject.request) {
            match errors.iter_mut().find(|x| x.message == e.message()) {
                Some(existing) => existing.scopes.push(subject.label.clone()),
                None => errors.push(DockerSettingError {
                    message: e.message().to_owned(),
                    scopes: vec![subject.label.clone()],
                }),
            }
        }
    }
    errors
}

pub(crate) fn sandbox_validate(ctx: &ContextArgs, json: bool, out: &mut String) -> Result<Status> {
    let loaded = load_config(ctx)?;
    let docker_errors = docker_setting_errors(ctx, &loaded.config);
    let home = home_dir();
    // The defaults alone, then every agent: one function, shared with
    // `talon security audit`.
    let findings = talon_audit::sandbox_findings(
        &loaded.config,
        crate::commands::config_file(ctx).as_deref(),
        &crate::commands::config_dir(ctx),
        &state_dir(),
        home.as_deref(),
        &home_dirs(),
    );
    let valid = findings.is_empty() && docker_errors.is_empty();
    let status = if valid { Status::Ok } else { Status::No };
    if json {
        let doc = json!({
            "config": loaded.origin,
            "valid": valid,
            "findings": findings,
            "dockerSettings": docker_errors,
        });
        out.push_str(&serde_json::to_string_pretty(&doc)?);
        out.push('\n');
        return Ok(status);
    }
    for f in &findings {
        let _ = writeln!(
            out,
            "{}: {} [{}]\n  value: {}{}\n  applies to: {}\n  {}",
            loaded.origin,
            f.finding.key,
            f.finding.code,
            f.finding.value,
            f.finding
                .resolved
                .as_ref()
                .map_or_else(String::new, |r| format!(" (resolves to {r})")),
            f.scopes.join(", "),
            f.finding.message
        );
    }
    for e in &docker_errors {
        let _ = writeln!(
            out,
            "{}: {}\n  applies to: {}",
            loaded.origin,
            e.message,
            e.scopes.join(", ")
        );
    }
    if !docker_errors.is_empty() {
        let n = docker_errors.len();
        let _ = writeln!(
            out,
            "{}: {n} Docker setting{} the Docker backend would refuse",
            loaded.origin,
            if n == 1 { "" } else { "s" }
        );
    }
    if findings.is_empty() {
        let _ = writeln!(
            out,
            "{}: sandbox settings pass security validation",
            loaded.origin
        );
    } else {
        let n = findings.len();
        let _ = writeln!(
            out,
            "{}: {n} blocked sandbox setting{}",
            loaded.origin,
            if n == 1 { "" } else { "s" }
        );
    }
    Ok(status)
}

pub(crate) fn sandbox_resolve(
    ctx: &ContextArgs,
    path: &str,
    write: bool,
    json: bool,
    out: &mut String,
) -> Result<Status> {
    if path.trim().is_empty() {
        bail!("PATH is empty: give a container path such as /workspace/src/main.rs");
    }
    let loaded = load_config(ctx)?;
    let (request, decision) = request_for(ctx, &loaded.config)?;
    let sandboxed = decision.sandboxed;
    let session = request.session_key.clone();
    let workdir = request.config.docker.workdir.clone();
    if let Some(missing) = request
        .mount_plan
        .entries
        .iter()
        .find(|m| m.container_path == workdir && !m.host_path.is_dir())
    {
        bail!(
            "the sandbox workspace {} does not exist yet (it is created when the sandbox first starts); nothing to resolve against",
            missing.host_path.display()
        );
    }
    // A bind that security validation refuses never gets mounted; leave it
    // out of the mapping too.
    let findings = validate_sandbox_security(
        &request.config.docker,
        &request.config.docker_origins,
        &security_env(&request),
    );
    let refused: Vec<BindSpec> = findings
        .iter()
        .filter_map(|f| BindSpec::parse(&f.value))
        .collect();
    let mut plan = request.mount_plan.clone();
    let before = plan.entries.len();
    plan.entries.retain(|e| {
        e.kind != MountKind::Bind
            || !refused.iter().any(|b| {
                Path::new(&b.source) == e.host_path.as_path() && b.target == e.container_path
            })
    });
    let left_out = before - plan.entries.len();
    let bridge = plan
        .mount_bridge(&workdir)
        .map_err(|e| anyhow::anyhow!("cannot build the mount table: {e}"))?;
    let access = if write { Access::Write } else { Access::Read };
    let (doc, status): (Value, Status) = match bridge.resolve_blocking(path, access) {
        Ok(resolved) => (
            json!({
                "containerPath": resolved.container_path,
                "hostPath": resolved.host_path,
                "mount": resolved.mount,
                "readOnly": resolved.read_only,
            }),
            Status::Ok,
        ),
        Err(err) => (
            json!({
                "containerPath": path,
                "refused": err.code.as_str(),
                "reason": err.message,
            }),
            Status::No,
        ),
    };
    if json {
        out.push_str(&serde_json::to_string_pretty(&doc)?);
        out.push('\n');
        return Ok(status);
    }
    if left_out > 0 {
        let _ = writeln!(
            out,
            "note: {left_out} bind(s) refused by security validation are not mounted (see `talon sandbox validate`)"
        );
    }
    if !sandboxed {
        let _ = writeln!(
            out,
            "note: session {session} does not run sandboxed (see `talon sandbox explain`); this is the mapping its sandbox would use"
        );
    }
    match status {
        Status::Ok => {
            let _ = writeln!(
                out,
                "{} -> {} (mount {}, {})",
                doc["containerPath"].as_str().unwrap_or_default(),
                doc["hostPath"].as_str().unwrap_or("-"),
                doc["mount"].as_str().unwrap_or_default(),
                if doc["readOnly"].as_bool() == Some(true) {
                    "read-only"
                } else {
                    "writable"
                }
            );
        }
        Status::No | Status::Error => {
            let _ = writeln!(
                out,
                "{}: refused ({}): {}",
                path,
                doc["refused"].as_str().unwrap_or_default(),
                doc["reason"].as_str().unwrap_or_default()
            );
        }
    }
    Ok(status)
}
