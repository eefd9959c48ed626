//! Sandbox settings: `talon-sandbox-core`'s security validation of the
//! defaults and every agent, the `dangerously*` switches, namespace joins
//! they allow, and agents left unsandboxed.

use std::path::{Path, PathBuf};

use serde::Serialize;
use talon_config::TalonConfig;
use talon_gateway_protocol::AuditSeverity;
use talon_sandbox_core::{
    FindingCode, ResolvedSandboxConfig, SandboxInputs, SandboxMode, SandboxRequest, SandboxScope,
    SecurityEnv, SecurityFinding, scope_workspace_dir, validate_request_security,
};

use crate::findings::Findings;
use crate::input::AuditInput;

/// One deduplicated sandbox security finding and the sandboxes it applies
/// to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ScopedSecurityFinding {
    /// The finding, as `talon-sandbox-core` reports it.
    #[serde(flatten)]
    pub finding: SecurityFinding,
    /// `defaults`, or the agent ids whose sandbox has it.
    pub scopes: Vec<String>,
}

/// One sandbox the config describes, as the validators judge it: the
/// defaults alone (as the default agent would see them with no sandbox
/// block of its own) or one agent's, for its main session.
#[derive(Debug, Clone)]
pub struct SandboxSubject {
    /// `defaults`, or the agent id.
    pub label: String,
    /// The request a sandbox for the agent's main session would get.
    pub request: SandboxRequest,
    /// The scope's workspace dir (for a per-session scope, the whole
    /// workspace root stands in for it).
    pub scope_dir: PathBuf,
    /// The agent's own workspace.
    pub workspace: PathBuf,
}

/// The defaults and every agent, each as the request its main session's
/// sandbox would get. `config_dir` resolves relative agent workspaces.
pub fn sandbox_subjects(
    config: &TalonConfig,
    config_file: Option<&Path>,
    config_dir: &Path,
    state_dir: &Path,
    home: Option<&Path>,
) -> Vec<SandboxSubject> {
    let default_agent = config.default_agent_id();
    let defaults_only = {
        let tools = config
            .tools
            .as_ref()
            .map(talon_config::ToolsSection::policy)
            .unwrap_or_default();
        let defaults = config
            .agents
            .as_ref()
            .and_then(|a| a.defaults.as_ref())
            .and_then(|d| d.sandbox.as_ref());
        ResolvedSandboxConfig::resolve(&SandboxInputs {
            agent_id: &default_agent,
            defaults,
            agent: None,
            agent_key: None,
            state_dir,
            home,
            tools: &tools,
            agent_tools: None,
        })
    };
    let workspace = |agent: &str| config.agent_workspace_dir(agent, config_dir, state_dir);
    let mut subjects: Vec<(String, ResolvedSandboxConfig, PathBuf)> = vec![(
        "defaults".to_owned(),
        defaults_only,
        workspace(&default_agent),
    )];
    for agent in config.agent_ids() {
        let resolved = config.resolved_sandbox_config(&agent, state_dir, home);
        let ws = workspace(&agent);
        subjects.push((agent, resolved, ws));
    }
    subjects
        .into_iter()
        .map(|(label, resolved, workspace)| {
            // The scope's dir; a per-session scope is only known per
            // session, so the whole workspace root stands in for it here.
            let scope_dir = match resolved.scope {
                SandboxScope::Session => resolved.workspace_root.clone(),
                SandboxScope::Agent | SandboxScope::Shared => {
                    let key =
                        talon_sandbox_core::scope_key(resolved.scope, &resolved.agent_id, "main");
                    scope_workspace_dir(&resolved.workspace_root, resolved.scope, &key)
                }
            };
            let request = SandboxRequest::new(
                resolved.with_config_file(config_file.map(Path::to_path_buf)),
                "main",
                &workspace,
                None,
            );
            SandboxSubject {
                label,
                request,
                scope_dir,
                workspace,
            }
        })
        .collect()
}

/// The sandbox security findings of the defaults alone (as the default
/// agent would see them with no sandbox block of its own) and of every
/// agent, each judged by `validate_request_security` with the scope's
/// workspace and the agent workspace as allowed roots, deduplicated by
/// code, key and value. `config_dir` resolves relative agent workspaces;
/// `config_file` is kept out of every mount.
pub fn sandbox_findings(
    config: &TalonConfig,
    config_file: Option<&Path>,
    config_dir: &Path,
    state_dir: &Path,
    home: Option<&Path>,
    home_dirs: &[PathBuf],
) -> Vec<ScopedSecurityFinding> {
    let mut findings: Vec<ScopedSecurityFinding> = Vec::new();
    for subject in sandbox_subjects(config, config_file, config_dir, state_dir, home) {
        let SandboxSubject {
            label,
            request,
            scope_dir,
            workspace,
        } = subject;
        let mut env = SecurityEnv::for_request(&request, home_dirs);
        env.allowed_roots = vec![scope_dir.clone(), workspace];
        env.managed_dirs.push(scope_dir);
        for finding in validate_request_security(&request, &env) {
            match findings.iter_mut().find(|f| {
                f.finding.code == finding.code
                    && f.finding.key == finding.key
                    && f.finding.value == finding.value
            }) {
                Some(existing) => {
                    if !existing.scopes.contains(&label) {
                        existing.scopes.push(label.clone());
                    }
                }
                None => findings.push(ScopedSecurityFinding {
                    finding,
                    scopes: vec![label.clone()],
                }),
            }
        }
    }
    findings
}

/// The audit check id of a sandbox-core finding code, with its severity
/// and title.
fn classify(code: FindingCode) -> (&'static str, AuditSeverity, &'static str) {
    use AuditSeverity::{Critical, Warn};
    match code {
        FindingCode::BindBlockedPath
        | FindingCode::BindCoversBlockedPath
        | FindingCode::BindHomeDir
        | FindingCode::BindHoldsCredentials
        | FindingCode::BindTalonState => (
            "sandbox.dangerous_bind_mount",
            Critical,
            "a sandbox bind mounts a dangerous host path",
        ),
        FindingCode::BindNotAbsolute => (
            "sandbox.bind_mount_non_absolute",
            Warn,
            "a sandbox bind source is not an absolute host path",
        ),
        FindingCode::BindInvalidSpec
        | FindingCode::BindOutsideAllowedRoots
        | FindingCode::BindReservedTarget
        | FindingCode::BindSystemTarget
        | FindingCode::BindPropagation
        | FindingCode::BindUnsupportedOption => (
            "talon.sandbox.bind_refused",
            Warn,
            "a sandbox bind is refused",
        ),
        FindingCode::WorkspaceBlockedPath
        | FindingCode::WorkspaceCoversBlockedPath
        | FindingCode::WorkspaceHomeDir
        | FindingCode::WorkspaceHoldsCredentials
        | FindingCode::WorkspaceTalonState => (
            "talon.sandbox.dangerous_workspace",
            Critical,
            "a sandbox workspace reaches a dangerous host path",
        ),
        FindingCode::NetworkHost | FindingCode::NetworkContainerJoin => (
            "sandbox.dangerous_network_mode",
            Critical,
            "a sandbox network bypasses container network isolation",
        ),
        FindingCode::SeccompUnconfined => (
            "sandbox.dangerous_seccomp_profile",
            Critical,
            "a sandbox runs without seccomp",
        ),
        FindingCode::ApparmorUnconfined => (
            "sandbox.dangerous_apparmor_profile",
            Critical,
            "a sandbox runs without AppArmor",
        ),
        FindingCode::Privileged | FindingCode::CapAdd | FindingCode::CapDropNotAll => (
            "talon.sandbox.dangerous_capabilities",
            Critical,
            "a sandbox keeps or adds Linux capabilities",
        ),
    }
}

pub(crate) fn check(input: &AuditInput<'_>, out: &mut Findings) {
    let config = input.config;
    let config_file = input.config_file_abs();
    for f in sandbox_findings(
        config,
        config_file.as_deref(),
        &input.config_dir(),
        input.state_dir,
        input.home,
        &input.home_dirs,
    ) {
        let (id, severity, title) = classify(f.finding.code);
        let resolved = f
            .finding
            .resolved
            .as_ref()
            .map_or_else(String::new, |r| format!(" (resolves to {r})"));
        out.push(
            id,
            severity,
            format!("{title}: {}", f.finding.key),
            format!(
                "{} = {}{resolved} [{}], applies to: {}. {}",
                f.finding.key,
                f.finding.value,
                f.finding.code,
                f.scopes.join(", "),
                f.finding.message
            ),
            format!(
                "Change {} (see the message for how); `talon sandbox validate` lists every sandbox finding. The sandbox refuses to start until it is fixed.",
                f.finding.key
            ),
        );
    }
    for agent in crate::audited_agents(config) {
        let resolved = config.resolved_sandbox_config(&agent, input.state_dir, input.home);
        switches(&agent, &resolved, out);
        mode_off(config, &agent, &resolved, out);
    }
}

/// `dangerously*` switches that are on, and a `container:*` network one of
/// them lets through.
fn switches(agent: &str, resolved: &ResolvedSandboxConfig, out: &mut Findings) {
    let docker = &resolved.docker;
    let origins = &resolved.docker_origins;
    let mut on: Vec<String> = Vec::new();
    for (field, set) in [
        (
            "dangerouslyAllowReservedContainerTargets",
            docker.dangerously_allow_reserved_container_targets,
        ),
        (
            "dangerouslyAllowExternalBindSources",
            docker.dangerously_allow_external_bind_sources,
        ),
        (
            "dangerouslyAllowContainerNamespaceJoin",
            docker.dangerously_allow_container_namespace_join,
        ),
    ] {
        if set {
            on.push(origins.key(field));
        }
    }
    if !on.is_empty() {
        out.push(
            "config.insecure_or_dangerous_flags",
            AuditSeverity::Warn,
            format!("agent `{agent}`: {} dangerously* switch(es) on", on.len()),
            format!(
                "{} {} true for agent `{agent}`'s sandbox: each lifts one of the sandbox's safety rules (blocked paths, homes, credentials and Talon's state stay blocked).",
                on.join(", "),
                if on.len() == 1 { "is" } else { "are" }
            ),
            "Remove the switch unless you accept what it lifts; prefer a narrower bind or a custom bridge network.",
        );
    }
    let network = docker.network.trim().to_ascii_lowercase();
    if network.starts_with("container:") && docker.dangerously_allow_container_namespace_join {
        out.push(
            "sandbox.dangerous_network_mode",
            AuditSeverity::Critical,
            format!("agent `{agent}`: the sandbox joins another container's network namespace"),
            format!(
                "{} = {} is allowed by {}: the sandbox shares that container's network (and whatever it can reach, the host's network if it runs with `host`).",
                origins.key("network"),
                docker.network,
                origins.key("dangerouslyAllowContainerNamespaceJoin")
            ),
            "Use `none` or a custom bridge network and remove dangerouslyAllowContainerNamespaceJoin.",
        );
    }
}

fn mode_off(
    config: &TalonConfig,
    agent: &str,
    resolved: &ResolvedSandboxConfig,
    out: &mut Findings,
) {
    if resolved.mode != SandboxMode::Off {
        return;
    }
    let mode_key = resolved
        .mode_key
        .clone()
        .unwrap_or_else(|| "agents.defaults.sandbox.mode".to_owned());
    out.push(
        "talon.sandbox.mode_off",
        AuditSeverity::Warn,
        format!("agent `{agent}` runs every session unsandboxed"),
        format!(
            "The sandbox mode of agent `{agent}` is `off` ({mode_key}): its file and shell tools act on the host for every session, whoever sends the messages."
        ),
        format!("Set {mode_key} to \"non-main\" (sandbox every session but the main one) or \"all\"."),
    );
    let has_docker = config
        .agents
        .as_ref()
        .and_then(|a| a.defaults.as_ref())
        .and_then(|d| d.sandbox.as_ref())
        .is_some_and(|s| s.docker.is_some())
        || config
            .agent(agent)
            .and_then(|a| a.sandbox)
            .is_some_and(|s| s.docker.is_some());
    if has_docker {
        out.push(
            "sandbox.docker_config_mode_off",
            AuditSeverity::Warn,
            format!("agent `{agent}` has sandbox Docker settings but no sandbox"),
            format!("Docker settings are configured for agent `{agent}`, but its sandbox mode is `off` ({mode_key}), so none of them applies."),
            format!("Set {mode_key} to \"non-main\" or \"all\", or remove the unused docker block."),
        );
    }
}
