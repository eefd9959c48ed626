//! `validate_sandbox_security`: the create parameters that would break a
//! sandbox's isolation.
//!
//! The threat is a slip of the hand or an injected config value, not a
//! hostile operator (the config is trusted; the `dangerously*` switches
//! exist). Every rule yields a [`SecurityFinding`] with a stable code, the
//! offending value and the config key to change; all findings are listed,
//! not just the first.
//!
//! Bind sources are checked as written (lexically normalised) and again
//! after resolving symlinks through the deepest existing ancestor, so a
//! link to `/etc` (even to a path under it that does not exist yet) is
//! caught. A source is refused when it is `/`, equals or lies under a
//! blocked path, or *covers* one (is a parent of it: `$HOME` covers
//! `~/.ssh`, `/var` covers `/var/run/docker.sock`).

use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::bind_spec::{BindSpec, is_within, normalize_absolute, realpath_through_existing};
use crate::docker_config::{AGENT_WORKSPACE_MOUNT, DEFAULT_WORKDIR, DockerOrigins, DockerSettings};
use crate::error::SandboxError;

/// Host paths no bind may target or cover (the Docker socket under each of
/// its paths included).
pub const BLOCKED_HOST_PATHS: &[&str] = &[
    "/etc",
    "/private/etc",
    "/proc",
    "/sys",
    "/dev",
    "/root",
    "/boot",
    "/run",
    "/var/run",
    "/private/var/run",
    "/var/run/docker.sock",
    "/private/var/run/docker.sock",
    "/run/docker.sock",
];

/// Sub-paths of every home directory no bind may target or cover.
pub const BLOCKED_HOME_SUBPATHS: &[&str] = &[
    ".aws", ".cargo", ".config", ".docker", ".gnupg", ".kube", ".netrc", ".npm", ".ssh",
];

/// Container paths a custom bind may not land on or under (besides the
/// configured workdir).
pub const RESERVED_CONTAINER_TARGETS: &[&str] = &[DEFAULT_WORKDIR, AGENT_WORKSPACE_MOUNT];

/// What a finding is about (its `code` is stable).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum FindingCode {
    /// A bind source equals or lies under a blocked path.
    BindBlockedPath,
    /// A bind source is `/` or a parent of a blocked path.
    BindCoversBlockedPath,
    /// A bind source is not an absolute host path (relative, named volume).
    BindNotAbsolute,
    /// A bind is not `source:target[:options]` with an absolute target.
    BindInvalidSpec,
    /// A bind source lies outside the allowed roots.
    BindOutsideAllowedRoots,
    /// A bind lands on or under a reserved container path.
    BindReservedTarget,
    /// `network: host`.
    NetworkHost,
    /// `network: container:*` without the break-glass switch.
    NetworkContainerJoin,
    /// `seccompProfile: unconfined`.
    SeccompUnconfined,
    /// `apparmorProfile: unconfined`.
    ApparmorUnconfined,
    /// `privileged: true`.
    Privileged,
    /// An added capability.
    CapAdd,
}

impl FindingCode {
    /// The stable code (`bind-blocked-path`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            FindingCode::BindBlockedPath => "bind-blocked-path",
            FindingCode::BindCoversBlockedPath => "bind-covers-blocked-path",
            FindingCode::BindNotAbsolute => "bind-not-absolute",
            FindingCode::BindInvalidSpec => "bind-invalid-spec",
            FindingCode::BindOutsideAllowedRoots => "bind-outside-allowed-roots",
            FindingCode::BindReservedTarget => "bind-reserved-target",
            FindingCode::NetworkHost => "network-host",
            FindingCode::NetworkContainerJoin => "network-container-join",
            FindingCode::SeccompUnconfined => "seccomp-unconfined",
            FindingCode::ApparmorUnconfined => "apparmor-unconfined",
            FindingCode::Privileged => "privileged",
            FindingCode::CapAdd => "cap-add",
        }
    }
}

impl std::fmt::Display for FindingCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One refused create parameter.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SecurityFinding {
    /// What is wrong.
    pub code: FindingCode,
    /// The offending value as configured.
    pub value: String,
    /// The config key to change
    /// (`agents.list[2].sandbox.docker.binds[0]`).
    pub key: String,
    /// The host path a bind source resolved to through symlinks, when that
    /// is what made it blocked.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resolved: Option<String>,
    /// The explanation, starting with `Sandbox security:`.
    pub message: String,
}

impl std::fmt::Display for SecurityFinding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} [{}] ({})", self.message, self.code, self.key)
    }
}

/// The environment the bind rules are evaluated in.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SecurityEnv {
    /// Bind sources must lie under one of these (normally the scope's
    /// sandbox workspace dir and the agent workspace dir); empty: no root
    /// check.
    pub allowed_roots: Vec<PathBuf>,
    /// Home directories whose sensitive sub-paths are blocked (`$HOME`,
    /// the OS home, `$TALON_HOME`, ...); `/` is ignored; each one's
    /// realpath is added.
    pub home_dirs: Vec<PathBuf>,
}

/// Every blocked host path for these home dirs: [`BLOCKED_HOST_PATHS`],
/// then [`BLOCKED_HOME_SUBPATHS`] under each home and each home's realpath.
pub fn blocked_host_paths(home_dirs: &[PathBuf]) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = BLOCKED_HOST_PATHS.iter().map(PathBuf::from).collect();
    let mut homes: Vec<PathBuf> = Vec::new();
    for home in home_dirs {
        let Some(home) = normalize_absolute(&home.to_string_lossy()) else {
            continue;
        };
        if home == Path::new("/") {
            continue;
        }
        let real = realpath_through_existing(&home);
        for h in [home, real] {
            if h != Path::new("/") && !homes.contains(&h) {
                homes.push(h);
            }
        }
    }
    for home in homes {
        for sub in BLOCKED_HOME_SUBPATHS {
            let p = home.join(sub);
            if !out.contains(&p) {
                out.push(p);
            }
        }
    }
    out
}

/// Why a host path is blocked: `(code, the blocked path it hits)`.
fn blocked_reason(path: &Path, blocked: &[PathBuf]) -> Option<(FindingCode, PathBuf)> {
    if path == Path::new("/") {
        return Some((FindingCode::BindCoversBlockedPath, PathBuf::from("/")));
    }
    // The most specific blocked path it lies under names the reason.
    if let Some(b) = blocked
        .iter()
        .filter(|b| is_within(path, b))
        .max_by_key(|b| b.components().count())
    {
        return Some((FindingCode::BindBlockedPath, b.clone()));
    }
    blocked
        .iter()
        .find(|b| is_within(b, path))
        .map(|b| (FindingCode::BindCoversBlockedPath, b.clone()))
}

fn blocked_message(
    code: FindingCode,
    bind: &str,
    path: &Path,
    hit: &Path,
    via: Option<&Path>,
) -> String {
    let through = via.map_or_else(String::new, |v| {
        format!(" (through symlinks it resolves to \"{}\")", v.display())
    });
    let what = match code {
        FindingCode::BindCoversBlockedPath if hit == Path::new("/") => {
            "mounts the host root \"/\"".to_owned()
        }
        FindingCode::BindCoversBlockedPath => {
            format!(
                "covers the blocked path \"{}\" (it is a parent of it)",
                hit.display()
            )
        }
        _ => format!("targets the blocked path \"{}\"", hit.display()),
    };
    format!(
        "Sandbox security: bind mount \"{bind}\" source \"{}\"{through} {what}. Mount a narrower directory that holds no system files or credentials.",
        path.display()
    )
}

/// Check one sandbox's Docker settings; every problem is listed.
pub fn validate_sandbox_security(
    settings: &DockerSettings,
    origins: &DockerOrigins,
    env: &SecurityEnv,
) -> Vec<SecurityFinding> {
    let mut findings = Vec::new();
    let blocked = blocked_host_paths(&env.home_dirs);
    let roots: Vec<PathBuf> = env
        .allowed_roots
        .iter()
        .filter_map(|r| normalize_absolute(&r.to_string_lossy()))
        .map(|r| realpath_through_existing(&r))
        .collect();
    let mut reserved: Vec<String> = RESERVED_CONTAINER_TARGETS
        .iter()
        .map(|s| (*s).to_owned())
        .collect();
    if let Some(workdir) = normalize_absolute(&settings.workdir) {
        let workdir = workdir.to_string_lossy().into_owned();
        if !reserved.contains(&workdir) {
            reserved.push(workdir);
        }
    }

    for (index, bind) in settings.binds.iter().enumerate() {
        let key = origins.bind_key(index);
        let finding =
            |code: FindingCode, resolved: Option<String>, message: String| SecurityFinding {
                code,
                value: bind.clone(),
                key: key.clone(),
                resolved,
                message,
            };
        let Some(spec) = BindSpec::parse(bind) else {
            findings.push(finding(
                FindingCode::BindInvalidSpec,
                None,
                format!(
                    "Sandbox security: bind mount \"{bind}\" is not \"/host/path:/container/path[:options]\"."
                ),
            ));
            continue;
        };
        bind_source_findings(
            bind,
            &spec,
            &blocked,
            &roots,
            settings,
            &mut findings,
            &finding,
        );
        match normalize_absolute(&spec.target).filter(|_| spec.target.starts_with('/')) {
            None => findings.push(finding(
                FindingCode::BindInvalidSpec,
                None,
                format!(
                    "Sandbox security: bind mount \"{bind}\" target \"{}\" is not an absolute container path.",
                    spec.target
                ),
            )),
            Some(target) => {
                let hit = reserved
                    .iter()
                    .find(|r| is_within(&target, Path::new(r.as_str())));
                if let (Some(hit), false) = (hit, settings.dangerously_allow_reserved_container_targets) {
                    findings.push(finding(
                        FindingCode::BindReservedTarget,
                        None,
                        format!(
                            "Sandbox security: bind mount \"{bind}\" target \"{}\" lands on the reserved container path \"{hit}\", which Talon mounts itself. Use another target, or set dangerouslyAllowReservedContainerTargets=true only if you accept shadowing the workspace mounts.",
                            target.display()
                        ),
                    ));
                }
            }
        }
    }

    let network = settings.network.trim();
    let lowered = network.to_ascii_lowercase();
    if lowered == "host" {
        findings.push(SecurityFinding {
            code: FindingCode::NetworkHost,
            value: settings.network.clone(),
            key: origins.key("network"),
            resolved: None,
            message: format!(
                "Sandbox security: network mode \"{network}\" is blocked. Network \"host\" mode bypasses container network isolation. Use \"bridge\" or \"none\" instead."
            ),
        });
    } else if lowered.starts_with("container:")
        && !settings.dangerously_allow_container_namespace_join
    {
        findings.push(SecurityFinding {
            code: FindingCode::NetworkContainerJoin,
            value: settings.network.clone(),
            key: origins.key("network"),
            resolved: None,
            message: format!(
                "Sandbox security: network mode \"{network}\" is blocked by default. Network \"container:*\" joins another container's namespace and bypasses sandbox network isolation. Use a custom bridge network, or set dangerouslyAllowContainerNamespaceJoin=true only when you fully trust this runtime."
            ),
        });
    }

    let profiles = [
        (
            &settings.seccomp_profile,
            "seccompProfile",
            FindingCode::SeccompUnconfined,
            "seccomp",
            "Disabling seccomp removes syscall filtering",
        ),
        (
            &settings.apparmor_profile,
            "apparmorProfile",
            FindingCode::ApparmorUnconfined,
            "apparmor",
            "Disabling AppArmor removes mandatory access control",
        ),
    ];
    for (value, field, code, label, why) in profiles {
        if let Some(profile) = value
            && profile.trim().eq_ignore_ascii_case("unconfined")
        {
            findings.push(SecurityFinding {
                code,
                value: profile.clone(),
                key: origins.key(field),
                resolved: None,
                message: format!(
                    "Sandbox security: {label} profile \"{profile}\" is blocked. {why} and weakens sandbox isolation. Use a custom profile or omit this setting."
                ),
            });
        }
    }

    if settings.privileged {
        findings.push(SecurityFinding {
            code: FindingCode::Privileged,
            value: "true".to_owned(),
            key: origins.key("privileged"),
            resolved: None,
            message: "Sandbox security: privileged containers are blocked. A privileged container has every capability and the host's devices. Remove privileged.".to_owned(),
        });
    }
    for (index, cap) in settings.cap_add.iter().enumerate() {
        findings.push(SecurityFinding {
            code: FindingCode::CapAdd,
            value: cap.clone(),
            key: origins.cap_add_key(index),
            resolved: None,
            message: format!(
                "Sandbox security: adding capability \"{cap}\" is blocked. Sandboxes drop capabilities, they never add them. Remove it from capAdd."
            ),
        });
    }
    findings
}

fn bind_source_findings(
    bind: &str,
    spec: &BindSpec,
    blocked: &[PathBuf],
    roots: &[PathBuf],
    settings: &DockerSettings,
    findings: &mut Vec<SecurityFinding>,
    finding: &dyn Fn(FindingCode, Option<String>, String) -> SecurityFinding,
) {
    let Some(source) = normalize_absolute(&spec.source).filter(|_| {
        let s = spec.source.replace('\\', "/");
        s.starts_with('/')
    }) else {
        findings.push(finding(
            FindingCode::BindNotAbsolute,
            None,
            format!(
                "Sandbox security: bind mount \"{bind}\" source \"{}\" is not an absolute host path (relative paths and named volumes are refused). Use an absolute path.",
                spec.source
            ),
        ));
        return;
    };
    if let Some((code, hit)) = blocked_reason(&source, blocked) {
        findings.push(finding(
            code,
            None,
            blocked_message(code, bind, &source, &hit, None),
        ));
        return;
    }
    // Resolved from the source as written: `..` after a symlink climbs
    // from the link's target, as the kernel (and Docker) would.
    let real = realpath_through_existing(Path::new(&spec.source.trim().replace('\\', "/")));
    if real != source
        && let Some((code, hit)) = blocked_reason(&real, blocked)
    {
        findings.push(finding(
            code,
            Some(real.to_string_lossy().into_owned()),
            blocked_message(code, bind, &source, &hit, Some(&real)),
        ));
        return;
    }
    if !roots.is_empty()
        && !settings.dangerously_allow_external_bind_sources
        && !roots.iter().any(|root| is_within(&real, root))
    {
        let list: Vec<String> = roots
            .iter()
            .map(|r| format!("\"{}\"", r.display()))
            .collect();
        findings.push(finding(
            FindingCode::BindOutsideAllowedRoots,
            (real != source).then(|| real.to_string_lossy().into_owned()),
            format!(
                "Sandbox security: bind mount \"{bind}\" source \"{}\" is outside the allowed roots ({}). Move it under one of them, or set dangerouslyAllowExternalBindSources=true only if you accept the exposure.",
                real.display(),
                list.join(", ")
            ),
        ));
    }
}

/// [`validate_sandbox_security`] as a `Result`: every finding's message in
/// one [`SandboxError::Config`].
pub fn ensure_sandbox_security(
    settings: &DockerSettings,
    origins: &DockerOrigins,
    env: &SecurityEnv,
) -> Result<(), SandboxError> {
    let findings = validate_sandbox_security(settings, origins, env);
    if findings.is_empty() {
        return Ok(());
    }
    let text: Vec<String> = findings.iter().map(ToString::to_string).collect();
    Err(SandboxError::Config(text.join("\n")))
}

#[cfg(test)]
#[path = "security_tests.rs"]
mod tests;
