//! `validate_sandbox_security`: the create parameters that would break a
//! sandbox's isolation; `validate_workspace_mounts`: the same rules for
//! the workspaces Talon mounts itself; `pin_mount_sources`: the sources
//! handed to the engine, canonical and checked again right before create.
//!
//! The threat is a slip of the hand, an injected config value, or a
//! process racing the sandbox's creation (swapping symlinks in a bind
//! source), not a hostile operator (the config is trusted; the
//! `dangerously*` switches exist). Every rule yields a [`SecurityFinding`]
//! with a stable code, the offending value, the config key to change and
//! how to fix it; all findings are listed, not just the first.
//!
//! Host paths are checked as written (lexically normalised) and again
//! after resolving symlinks through the deepest existing ancestor, so a
//! link to `/etc` (even to a path under it that does not exist yet) is
//! caught. A source is refused when it is `/`, equals or lies under a
//! blocked path ([`BLOCKED_HOST_PATHS`]: system dirs, the container
//! engines' sockets and state; [`BLOCKED_HOME_SUBPATHS`] in every home),
//! *covers* one (is a parent of it: `$HOME` covers `~/.ssh`, `/var` covers
//! `/var/run/docker.sock`), is a home directory, holds credentials
//! directly beneath it ([`CREDENTIAL_MARKERS`]), or is, lies in or covers
//! Talon's own state directory or config file.
//!
//! Each `dangerously*` switch lifts exactly one rule and nothing else:
//! `dangerouslyAllowExternalBindSources` the allowed roots,
//! `dangerouslyAllowReservedContainerTargets` the `/workspace` and
//! `/agent` targets, `dangerouslyAllowContainerNamespaceJoin` the
//! `container:*` network. Blocked paths, homes, credentials, Talon state,
//! system targets ([`SYSTEM_CONTAINER_TARGETS`]), propagation
//! ([`REFUSED_PROPAGATION_OPTIONS`]), `host` networking, unconfined
//! profiles, privileged, added capabilities and a `capDrop` without `ALL`
//! have no switch.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::backend::SandboxRequest;
use crate::bind_spec::{BindSpec, is_within, normalize_absolute, realpath_through_existing};
use crate::docker_config::{AGENT_WORKSPACE_MOUNT, DEFAULT_WORKDIR, DockerOrigins, DockerSettings};
use crate::error::SandboxError;
use crate::mounts::{MountEntry, MountKind};

/// Host paths no mount may target or cover: system directories, the
/// container engines' sockets and state (Docker, containerd, Podman /
/// CRI-O, the kubelet), and the per-user runtime dirs that hold rootless
/// engines' sockets. No `dangerously*` switch lifts any of them.
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
    "/var/lib/docker",
    "/var/lib/containerd",
    "/run/containerd",
    "/var/run/containerd",
    "/var/lib/containers",
    "/run/containers",
    "/var/run/containers",
    "/run/podman",
    "/var/run/podman",
    "/run/crio",
    "/var/lib/kubelet",
    "/run/user",
];

/// Sub-paths of every home directory no mount may target or cover:
/// credentials (cloud, registry, package index, git, GPG, SSH, Kubernetes,
/// password stores), rootless container engine state, and the shell and
/// git start-up files a writable mount would turn into code the host runs.
pub const BLOCKED_HOME_SUBPATHS: &[&str] = &[
    ".aws",
    ".azure",
    ".bash_login",
    ".bash_profile",
    ".bashrc",
    ".cargo",
    ".config",
    ".docker",
    ".git-credentials",
    ".gitconfig",
    ".gnupg",
    ".kube",
    ".local/share/containers",
    ".local/share/docker",
    ".netrc",
    ".npm",
    ".npmrc",
    ".openclaw",
    ".password-store",
    ".profile",
    ".pypirc",
    ".ssh",
    ".terraform.d",
    ".vault-token",
    ".zprofile",
    ".zshenv",
    ".zshrc",
];

/// Names that mark a directory as holding credentials: a mount source
/// (custom bind or managed workspace) with any of them directly beneath
/// it is refused, wherever it lies. Narrower than
/// [`BLOCKED_HOME_SUBPATHS`]: a project may well carry its own
/// `.cargo/config.toml` or `.npmrc`, but never these.
pub const CREDENTIAL_MARKERS: &[&str] = &[
    ".aws",
    ".azure",
    ".cargo/credentials",
    ".cargo/credentials.toml",
    ".config/gcloud",
    ".config/gh",
    ".docker/config.json",
    ".git-credentials",
    ".gnupg",
    ".kube",
    ".netrc",
    ".password-store",
    ".pypirc",
    ".ssh",
    ".vault-token",
];

/// Container paths a custom bind may not land on or under (besides the
/// configured workdir); `dangerouslyAllowReservedContainerTargets` lifts
/// these, and only these.
pub const RESERVED_CONTAINER_TARGETS: &[&str] = &[DEFAULT_WORKDIR, AGENT_WORKSPACE_MOUNT];

/// Container system directories no bind may land on or under (and `/`
/// itself): a bind there replaces the image's programs, libraries or
/// configuration, or the kernel interfaces the engine masks. No switch
/// lifts them.
pub const SYSTEM_CONTAINER_TARGETS: &[&str] = &[
    "/bin", "/boot", "/dev", "/etc", "/lib", "/lib32", "/lib64", "/libx32", "/proc", "/run",
    "/sbin", "/sys", "/usr", "/var/run",
];

/// Bind options that make a mount share mount events with the host
/// (propagation other than private): refused, because a mount made on
/// either side would appear on the other.
pub const REFUSED_PROPAGATION_OPTIONS: &[&str] = &["shared", "rshared", "slave", "rslave"];

/// Bind options Talon accepts: `ro` / `rw`, private propagation
/// (`private`, `rprivate`: what every mount gets anyway) and the macOS
/// consistency hints (no effect on Linux).
pub const ACCEPTED_BIND_OPTIONS: &[&str] = &[
    "ro",
    "rw",
    "private",
    "rprivate",
    "consistent",
    "cached",
    "delegated",
];

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
    /// A bind lands on `/` or on or under a container system directory.
    BindSystemTarget,
    /// A bind asks for mount propagation (`shared`, `slave`, ...).
    BindPropagation,
    /// A bind option Talon does not accept (`z`, `Z`, unknown ones).
    BindUnsupportedOption,
    /// A bind source is a home directory (or `/home`).
    BindHomeDir,
    /// A bind source holds credentials (`.ssh`, `.aws`, ...) directly
    /// beneath it.
    BindHoldsCredentials,
    /// A bind source is, lies in or covers Talon's own state directory or
    /// config file.
    BindTalonState,
    /// The mounted workspace equals or lies under a blocked path.
    WorkspaceBlockedPath,
    /// The mounted workspace is `/` or a parent of a blocked path.
    WorkspaceCoversBlockedPath,
    /// The mounted workspace is a home directory.
    WorkspaceHomeDir,
    /// The mounted workspace holds credentials directly beneath it.
    WorkspaceHoldsCredentials,
    /// The mounted workspace is, lies in or covers Talon's own state
    /// directory or config file.
    WorkspaceTalonState,
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
    /// `capDrop` does not contain `ALL` (the engine's default capability
    /// set comes back).
    CapDropNotAll,
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
            FindingCode::BindSystemTarget => "bind-system-target",
            FindingCode::BindPropagation => "bind-propagation",
            FindingCode::BindUnsupportedOption => "bind-unsupported-option",
            FindingCode::BindHomeDir => "bind-home-dir",
            FindingCode::BindHoldsCredentials => "bind-holds-credentials",
            FindingCode::BindTalonState => "bind-talon-state",
            FindingCode::WorkspaceBlockedPath => "workspace-blocked-path",
            FindingCode::WorkspaceCoversBlockedPath => "workspace-covers-blocked-path",
            FindingCode::WorkspaceHomeDir => "workspace-home-dir",
            FindingCode::WorkspaceHoldsCredentials => "workspace-holds-credentials",
            FindingCode::WorkspaceTalonState => "workspace-talon-state",
            FindingCode::NetworkHost => "network-host",
            FindingCode::NetworkContainerJoin => "network-container-join",
            FindingCode::SeccompUnconfined => "seccomp-unconfined",
            FindingCode::ApparmorUnconfined => "apparmor-unconfined",
            FindingCode::Privileged => "privileged",
            FindingCode::CapAdd => "cap-add",
            FindingCode::CapDropNotAll => "cap-drop-not-all",
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
    /// The explanation, starting with `Sandbox security:`, ending with how
    /// to fix it.
    pub message: String,
}

impl std::fmt::Display for SecurityFinding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} [{}] ({})", self.message, self.code, self.key)
    }
}

/// The environment the mount rules are evaluated in. `sandbox-core` never
/// reads the process environment: the caller passes the homes, the state
/// dir and the config file.
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
    /// Talon's own state directory (`~/.talon`, `$TALON_STATE_DIR`): no
    /// mount may be it, cover it, or lie in it outside the
    /// [`managed_dirs`](Self::managed_dirs). `/` is ignored.
    pub state_dir: Option<PathBuf>,
    /// Talon's config file(s): no mount may be or cover one.
    pub config_files: Vec<PathBuf>,
    /// Directories strictly beneath the state dir that Talon manages for
    /// sandboxes (scope workspaces, skill mirrors, an agent workspace kept
    /// there): a mount at or under one is not refused for lying in the
    /// state dir. One that *is* the state dir exempts nothing.
    pub managed_dirs: Vec<PathBuf>,
}

impl SecurityEnv {
    /// The environment for one request: its allowed bind roots (the
    /// scope's sandbox workspace and the agent workspace), the state dir
    /// and config file its configuration was resolved with, its managed
    /// dirs (those two workspaces and its skill overlays), and `home_dirs`.
    pub fn for_request(request: &SandboxRequest, home_dirs: &[PathBuf]) -> SecurityEnv {
        let mut managed_dirs = request.allowed_bind_roots();
        managed_dirs.extend(
            request
                .mount_plan
                .entries
                .iter()
                .filter(|e| e.kind == MountKind::Skills)
                .map(|e| e.host_path.clone()),
        );
        SecurityEnv {
            allowed_roots: request.allowed_bind_roots(),
            home_dirs: home_dirs.to_vec(),
            state_dir: request.config.state_dir.clone(),
            config_files: request.config.config_file.iter().cloned().collect(),
            managed_dirs,
        }
    }
}

/// Every blocked host path for these home dirs: [`BLOCKED_HOST_PATHS`],
/// then [`BLOCKED_HOME_SUBPATHS`] under each home and each home's realpath.
pub fn blocked_host_paths(home_dirs: &[PathBuf]) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = BLOCKED_HOST_PATHS.iter().map(PathBuf::from).collect();
    for home in both_forms(home_dirs) {
        for sub in BLOCKED_HOME_SUBPATHS {
            let p = home.join(sub);
            if !out.contains(&p) {
                out.push(p);
            }
        }
    }
    out
}

/// Each path lexically normalised and through symlinks, `/` and
/// duplicates dropped.
fn both_forms(paths: &[PathBuf]) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = Vec::new();
    for path in paths {
        let Some(path) = normalize_absolute(&path.to_string_lossy()) else {
            continue;
        };
        let real = realpath_through_existing(&path);
        for p in [path, real] {
            if p != Path::new("/") && !out.contains(&p) {
                out.push(p);
            }
        }
    }
    out
}

/// The rules of one [`SecurityEnv`], worked out once.
#[derive(Debug)]
struct Rules {
    blocked: Vec<PathBuf>,
    homes: Vec<PathBuf>,
    state_dirs: Vec<PathBuf>,
    config_files: Vec<PathBuf>,
    managed: Vec<PathBuf>,
    roots: Vec<PathBuf>,
}

impl Rules {
    fn new(env: &SecurityEnv) -> Rules {
        let state_dirs = both_forms(env.state_dir.as_slice());
        let managed = both_forms(&env.managed_dirs)
            .into_iter()
            .filter(|m| state_dirs.iter().any(|s| m != s && is_within(m, s)))
            .collect();
        Rules {
            blocked: blocked_host_paths(&env.home_dirs),
            homes: both_forms(&env.home_dirs),
            state_dirs,
            config_files: both_forms(&env.config_files),
            managed,
            roots: env
                .allowed_roots
                .iter()
                .filter_map(|r| normalize_absolute(&r.to_string_lossy()))
                .map(|r| realpath_through_existing(&r))
                .collect(),
        }
    }
}

/// Why a host path may not be mounted.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Hit {
    /// It equals or lies under this blocked path.
    Blocked(PathBuf),
    /// It is a parent of this blocked path (or `/`).
    Covers(PathBuf),
    /// It is a home directory.
    Home,
    /// It is, lies in or covers this piece of Talon's own state.
    Talon(PathBuf),
    /// This credential lies directly beneath it.
    Credentials(PathBuf),
}

/// Judge one host path (already normalised or resolved). `look` lets the
/// credential check read the file system (only for a resolved path).
fn judge(path: &Path, rules: &Rules, look: bool) -> Option<Hit> {
    if path == Path::new("/") {
        return Some(Hit::Covers(PathBuf::from("/")));
    }
    // A directory Talon manages inside its state dir is not blocked by
    // what merely contains the state dir (`/root` when Talon runs as
    // root); every other rule still applies to it.
    let managed = rules.managed.iter().any(|m| is_within(path, m));
    let holds_state = |b: &PathBuf| rules.state_dirs.iter().any(|s| is_within(s, b));
    // The most specific blocked path it lies under names the reason.
    if let Some(b) = rules
        .blocked
        .iter()
        .filter(|b| is_within(path, b) && !(managed && holds_state(b)))
        .max_by_key(|b| b.components().count())
    {
        return Some(Hit::Blocked(b.clone()));
    }
    let under_home_root = path
        .parent()
        .is_some_and(|p| p == Path::new("/home") || p == Path::new("/Users"));
    if rules.homes.iter().any(|h| h == path)
        || under_home_root
        || path == Path::new("/home")
        || path == Path::new("/Users")
    {
        return Some(Hit::Home);
    }
    if let Some(c) = rules
        .config_files
        .iter()
        .find(|c| is_within(path, c) || is_within(c, path))
    {
        return Some(Hit::Talon(c.clone()));
    }
    for state in &rules.state_dirs {
        let inside = is_within(path, state) && !rules.managed.iter().any(|m| is_within(path, m));
        if inside || is_within(state, path) {
            return Some(Hit::Talon(state.clone()));
        }
    }
    if let Some(b) = rules.blocked.iter().find(|b| is_within(b, path)) {
        return Some(Hit::Covers(b.clone()));
    }
    if look {
        for marker in CREDENTIAL_MARKERS {
            let candidate = path.join(marker);
            if std::fs::symlink_metadata(&candidate).is_ok() {
                return Some(Hit::Credentials(candidate));
            }
        }
    }
    None
}

/// What is being mounted: a custom bind or a workspace Talon mounts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Subject {
    Bind,
    Workspace,
}

impl Hit {
    fn code(&self, subject: Subject) -> FindingCode {
        match (subject, self) {
            (Subject::Bind, Hit::Blocked(_)) => FindingCode::BindBlockedPath,
            (Subject::Bind, Hit::Covers(_)) => FindingCode::BindCoversBlockedPath,
            (Subject::Bind, Hit::Home) => FindingCode::BindHomeDir,
            (Subject::Bind, Hit::Talon(_)) => FindingCode::BindTalonState,
            (Subject::Bind, Hit::Credentials(_)) => FindingCode::BindHoldsCredentials,
            (Subject::Workspace, Hit::Blocked(_)) => FindingCode::WorkspaceBlockedPath,
            (Subject::Workspace, Hit::Covers(_)) => FindingCode::WorkspaceCoversBlockedPath,
            (Subject::Workspace, Hit::Home) => FindingCode::WorkspaceHomeDir,
            (Subject::Workspace, Hit::Talon(_)) => FindingCode::WorkspaceTalonState,
            (Subject::Workspace, Hit::Credentials(_)) => FindingCode::WorkspaceHoldsCredentials,
        }
    }

    fn message(&self, what: &str, path: &Path, via: Option<&Path>, subject: Subject) -> String {
        let through = via.map_or_else(String::new, |v| {
            format!(" (through symlinks it resolves to \"{}\")", v.display())
        });
        let why = match self {
            Hit::Covers(hit) if hit == Path::new("/") => "mounts the host root \"/\"".to_owned(),
            Hit::Covers(hit) => format!(
                "covers the blocked path \"{}\" (it is a parent of it)",
                hit.display()
            ),
            Hit::Blocked(hit) => format!("targets the blocked path \"{}\"", hit.display()),
            Hit::Home => "is a home directory (it holds the user's credentials and start-up files)"
                .to_owned(),
            Hit::Talon(hit) => format!(
                "reaches Talon's own state or configuration \"{}\" (a sandbox must never read or rewrite the policy that confines it)",
                hit.display()
            ),
            Hit::Credentials(hit) => {
                format!("holds credentials (\"{}\" lies in it)", hit.display())
            }
        };
        let fix = match subject {
            Subject::Bind => {
                "Mount a narrower directory that holds no system files, credentials or Talon state; no dangerously* switch lifts this."
            }
            Subject::Workspace => {
                "Point the agent workspace (the agent's or agents.defaults' workspace, or sandbox.workspaceRoot) at a project directory that holds no credentials, home directory or Talon state, or move those files out of it."
            }
        };
        format!(
            "Sandbox security: {what} \"{}\"{through} {why}. {fix}",
            path.display()
        )
    }
}

/// Judge a host path as written and after symlinks are resolved; the
/// first hit wins. Returns the hit and the resolved path when that is
/// what hit.
fn judge_both(path: &Path, as_written: &str, rules: &Rules) -> Option<(Hit, Option<PathBuf>)> {
    if let Some(hit) = judge(path, rules, false) {
        return Some((hit, None));
    }
    // Resolved from the source as written: `..` after a symlink climbs
    // from the link's target, as the kernel (and Docker) would.
    let real = realpath_through_existing(Path::new(&as_written.trim().replace('\\', "/")));
    judge(&real, rules, true).map(|hit| (hit, (real != path).then_some(real)))
}

/// Check one sandbox's Docker settings; every problem is listed.
pub fn validate_sandbox_security(
    settings: &DockerSettings,
    origins: &DockerOrigins,
    env: &SecurityEnv,
) -> Vec<SecurityFinding> {
    let mut findings = Vec::new();
    let rules = Rules::new(env);
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
                    "Sandbox security: bind mount \"{bind}\" is not \"/host/path:/container/path[:options]\". Write it as an absolute host path, an absolute container path and optional options."
                ),
            ));
            continue;
        };
        bind_source_findings(bind, &spec, &rules, settings, &mut findings, &finding);
        bind_option_findings(bind, &spec, &mut findings, &finding);
        match normalize_absolute(&spec.target).filter(|_| spec.target.starts_with('/')) {
            None => findings.push(finding(
                FindingCode::BindInvalidSpec,
                None,
                format!(
                    "Sandbox security: bind mount \"{bind}\" target \"{}\" is not an absolute container path. Use an absolute path such as /data.",
                    spec.target
                ),
            )),
            Some(target) => {
                let system = if target == Path::new("/") {
                    Some("/")
                } else {
                    SYSTEM_CONTAINER_TARGETS
                        .iter()
                        .copied()
                        .find(|s| is_within(&target, Path::new(s)))
                };
                let hit = reserved
                    .iter()
                    .find(|r| is_within(&target, Path::new(r.as_str())));
                if let Some(system) = system {
                    findings.push(finding(
                        FindingCode::BindSystemTarget,
                        None,
                        format!(
                            "Sandbox security: bind mount \"{bind}\" target \"{}\" lands on the container system path \"{system}\", which would replace the image's programs, configuration or kernel interfaces. Mount it somewhere else, such as /data or /mnt/<name>; no switch lifts this.",
                            target.display()
                        ),
                    ));
                } else if let (Some(hit), false) =
                    (hit, settings.dangerously_allow_reserved_container_targets)
                {
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
    if !settings
        .cap_drop
        .iter()
        .any(|c| c.trim().eq_ignore_ascii_case("ALL"))
    {
        findings.push(SecurityFinding {
            code: FindingCode::CapDropNotAll,
            value: format!("{:?}", settings.cap_drop),
            key: origins.key("capDrop"),
            resolved: None,
            message: "Sandbox security: capDrop does not contain \"ALL\", so the engine's default capability set (chown, setuid, net_raw, mknod, ...) comes back. Set capDrop to [\"ALL\"] or remove the key.".to_owned(),
        });
    }
    findings
}

fn bind_source_findings(
    bind: &str,
    spec: &BindSpec,
    rules: &Rules,
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
    let what = format!("bind mount \"{bind}\" source");
    if let Some((hit, via)) = judge_both(&source, &spec.source, rules) {
        findings.push(finding(
            hit.code(Subject::Bind),
            via.as_ref().map(|v| v.to_string_lossy().into_owned()),
            hit.message(&what, &source, via.as_deref(), Subject::Bind),
        ));
        return;
    }
    let real = realpath_through_existing(Path::new(&spec.source.trim().replace('\\', "/")));
    if let Some(problem) = outside_roots(&real, rules, settings) {
        findings.push(finding(
            FindingCode::BindOutsideAllowedRoots,
            (real != source).then(|| real.to_string_lossy().into_owned()),
            format!("Sandbox security: bind mount \"{bind}\" {problem}"),
        ));
    }
}

/// The allowed-roots rule: `dangerouslyAllowExternalBindSources` widens
/// the roots to every path, and nothing else.
fn outside_roots(real: &Path, rules: &Rules, settings: &DockerSettings) -> Option<String> {
    if rules.roots.is_empty()
        || settings.dangerously_allow_external_bind_sources
        || rules.roots.iter().any(|root| is_within(real, root))
    {
        return None;
    }
    let list: Vec<String> = rules
        .roots
        .iter()
        .map(|r| format!("\"{}\"", r.display()))
        .collect();
    Some(format!(
        "source \"{}\" is outside the allowed roots ({}). Move it under one of them, or set dangerouslyAllowExternalBindSources=true only if you accept the exposure (blocked paths stay blocked).",
        real.display(),
        list.join(", ")
    ))
}

fn bind_option_findings(
    bind: &str,
    spec: &BindSpec,
    findings: &mut Vec<SecurityFinding>,
    finding: &dyn Fn(FindingCode, Option<String>, String) -> SecurityFinding,
) {
    let Some(options) = spec.options.as_deref() else {
        return;
    };
    for option in options.split(',').map(str::trim).filter(|o| !o.is_empty()) {
        let lowered = option.to_ascii_lowercase();
        if REFUSED_PROPAGATION_OPTIONS.contains(&lowered.as_str()) {
            findings.push(finding(
                FindingCode::BindPropagation,
                None,
                format!(
                    "Sandbox security: bind mount \"{bind}\" asks for \"{option}\" mount propagation, which lets mounts made on the host or in the sandbox appear on the other side. Remove \"{option}\" (binds are always private)."
                ),
            ));
        } else if option == "z" || option == "Z" {
            findings.push(finding(
                FindingCode::BindUnsupportedOption,
                None,
                format!(
                    "Sandbox security: bind mount \"{bind}\" asks for SELinux relabelling \"{option}\", which Talon's mounts (the Engine API's Mounts, read-only recursively) cannot apply. Remove \"{option}\" and label the directory yourself (chcon -Rt container_file_t <dir>)."
                ),
            ));
        } else if !ACCEPTED_BIND_OPTIONS.contains(&lowered.as_str()) {
            findings.push(finding(
                FindingCode::BindUnsupportedOption,
                None,
                format!(
                    "Sandbox security: bind mount \"{bind}\" has the option \"{option}\", which Talon does not accept. Use only {}.",
                    ACCEPTED_BIND_OPTIONS.join(", ")
                ),
            ));
        }
    }
}

/// The config key naming a managed mount's host directory: the agent's
/// (`agents.list[2].workspace`) when the agent is configured, else the
/// defaults'.
fn managed_key(entry: &MountEntry, request: &SandboxRequest) -> String {
    let prefix = request
        .config
        .agent_key
        .as_deref()
        .unwrap_or("agents.defaults");
    match entry.kind {
        MountKind::Workspace if entry.host_path != request.agent_workspace_dir => {
            format!("{prefix}.sandbox.workspaceRoot")
        }
        MountKind::Skills => format!("{prefix}.skills"),
        MountKind::Workspace | MountKind::Agent | MountKind::Bind => format!("{prefix}.workspace"),
    }
}

/// Check the workspaces Talon mounts itself (the workdir, `/agent`, skill
/// overlays) like any bind: none may be a home directory, hold
/// credentials, be or cover a blocked path, or reach Talon's own state
/// directory or config file. Custom binds are
/// [`validate_sandbox_security`]'s.
pub fn validate_workspace_mounts(
    request: &SandboxRequest,
    env: &SecurityEnv,
) -> Vec<SecurityFinding> {
    let rules = Rules::new(env);
    let mut findings = Vec::new();
    for entry in &request.mount_plan.entries {
        if entry.kind == MountKind::Bind {
            continue;
        }
        let written = entry.host_path.to_string_lossy();
        let Some(path) = normalize_absolute(&written) else {
            continue;
        };
        let what = format!(
            "the {} mounted at {}",
            kind_label(entry.kind),
            entry.container_path
        );
        if let Some((hit, via)) = judge_both(&path, &written, &rules) {
            findings.push(SecurityFinding {
                code: hit.code(Subject::Workspace),
                value: written.into_owned(),
                key: managed_key(entry, request),
                resolved: via.as_ref().map(|v| v.to_string_lossy().into_owned()),
                message: hit.message(&what, &path, via.as_deref(), Subject::Workspace),
            });
        }
    }
    findings
}

fn kind_label(kind: MountKind) -> &'static str {
    match kind {
        MountKind::Workspace => "workspace",
        MountKind::Agent => "agent workspace",
        MountKind::Skills => "skills directory",
        MountKind::Bind => "bind",
    }
}

/// Every finding for one request: its Docker settings
/// ([`validate_sandbox_security`]) and its managed workspaces
/// ([`validate_workspace_mounts`]).
pub fn validate_request_security(
    request: &SandboxRequest,
    env: &SecurityEnv,
) -> Vec<SecurityFinding> {
    let mut findings =
        validate_sandbox_security(&request.config.docker, &request.config.docker_origins, env);
    findings.extend(validate_workspace_mounts(request, env));
    findings
}

fn findings_error(findings: &[SecurityFinding]) -> Result<(), SandboxError> {
    if findings.is_empty() {
        return Ok(());
    }
    let text: Vec<String> = findings.iter().map(ToString::to_string).collect();
    Err(SandboxError::config(text.join("\n")))
}

/// [`validate_sandbox_security`] as a `Result`: every finding's message in
/// one [`SandboxError`] of kind [`SandboxErrorKind::Config`](crate::SandboxErrorKind::Config).
pub fn ensure_sandbox_security(
    settings: &DockerSettings,
    origins: &DockerOrigins,
    env: &SecurityEnv,
) -> Result<(), SandboxError> {
    findings_error(&validate_sandbox_security(settings, origins, env))
}

/// [`validate_workspace_mounts`] as a `Result`: what a backend that mounts
/// no custom binds (SSH, which copies the workspace to another host) runs
/// before it touches anything.
pub fn ensure_workspace_security(
    request: &SandboxRequest,
    env: &SecurityEnv,
) -> Result<(), SandboxError> {
    findings_error(&validate_workspace_mounts(request, env))
}

/// [`validate_request_security`] as a `Result`: what every backend runs
/// before it creates anything.
pub fn ensure_request_security(
    request: &SandboxRequest,
    env: &SecurityEnv,
) -> Result<(), SandboxError> {
    findings_error(&validate_request_security(request, env))
}

/// A mount source pinned for the engine: the canonical path (no symlink
/// anywhere in it) that is handed over instead of the path as written,
/// and the identity of what it named when it was checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PinnedSource {
    /// The canonical host path.
    pub canonical: PathBuf,
    /// Its device.
    pub dev: u64,
    /// Its inode.
    pub ino: u64,
}

impl PinnedSource {
    /// Pin `path` without judging it (for a spec the caller already
    /// validated): its canonical path and identity.
    pub fn resolve(path: &Path) -> std::io::Result<PinnedSource> {
        let canonical = std::fs::canonicalize(path)?;
        let meta = std::fs::metadata(&canonical)?;
        Ok(PinnedSource {
            canonical,
            dev: meta.dev(),
            ino: meta.ino(),
        })
    }

    /// Whether the canonical path still names the same file with no
    /// symlink in it: `Err` naming the mount when it was swapped.
    pub fn verify(&self, container_path: &str) -> Result<(), SandboxError> {
        let swapped = || {
            SandboxError::config(format!(
                "Sandbox security: the mount source \"{}\" (for {container_path}) changed while the sandbox was being created (a symlink or directory was swapped in); nothing was started. Make sure nothing else rewrites the mount sources.",
                self.canonical.display()
            ))
        };
        let again = std::fs::canonicalize(&self.canonical).map_err(|_| swapped())?;
        let meta = std::fs::metadata(&again).map_err(|_| swapped())?;
        if again != self.canonical || meta.dev() != self.dev || meta.ino() != self.ino {
            return Err(swapped());
        }
        Ok(())
    }
}

/// Pin every mount source of `request`, in plan order, immediately before
/// the backend hands them to its engine: each source is resolved to its
/// canonical path (it must exist), judged again there by the same rules
/// as [`validate_request_security`] (blocked paths, homes, credentials,
/// Talon state, and for custom binds the allowed roots), and its identity
/// recorded for [`PinnedSource::verify`]. A symlink swapped into a source
/// after validation therefore either fails here or is no longer part of
/// the path the engine sees.
pub fn pin_mount_sources(
    request: &SandboxRequest,
    env: &SecurityEnv,
) -> Result<Vec<PinnedSource>, SandboxError> {
    let rules = Rules::new(env);
    let origins = &request.config.docker_origins;
    let mut bind_index = 0usize;
    let mut out = Vec::with_capacity(request.mount_plan.entries.len());
    for entry in &request.mount_plan.entries {
        let (key, subject) = if entry.kind == MountKind::Bind {
            bind_index += 1;
            (origins.bind_key(bind_index - 1), Subject::Bind)
        } else {
            (managed_key(entry, request), Subject::Workspace)
        };
        let canonical = std::fs::canonicalize(&entry.host_path).map_err(|e| {
            SandboxError::config(format!(
                "{key}: mount source {} (for {}) cannot be resolved ({e}); create it or remove the mount",
                entry.host_path.display(),
                entry.container_path
            ))
            .with_source(e)
        })?;
        let what = match subject {
            Subject::Bind => format!("bind mount source for {}", entry.container_path),
            Subject::Workspace => format!(
                "the {} mounted at {}",
                kind_label(entry.kind),
                entry.container_path
            ),
        };
        let refused = |code: FindingCode, message: String| {
            SandboxError::config(
                SecurityFinding {
                    code,
                    value: entry.host_path.to_string_lossy().into_owned(),
                    key: key.clone(),
                    resolved: Some(canonical.to_string_lossy().into_owned()),
                    message,
                }
                .to_string(),
            )
        };
        if let Some(hit) = judge(&canonical, &rules, true) {
            return Err(refused(
                hit.code(subject),
                hit.message(&what, &entry.host_path, Some(&canonical), subject),
            ));
        }
        if subject == Subject::Bind
            && let Some(problem) = outside_roots(&canonical, &rules, &request.config.docker)
        {
            return Err(refused(
                FindingCode::BindOutsideAllowedRoots,
                format!("Sandbox security: {what} {problem}"),
            ));
        }
        let meta = std::fs::metadata(&canonical).map_err(|e| {
            SandboxError::config(format!(
                "{key}: mount source {} cannot be read ({e})",
                canonical.display()
            ))
            .with_source(e)
        })?;
        let pinned = PinnedSource {
            canonical,
            dev: meta.dev(),
            ino: meta.ino(),
        };
        pinned.verify(&entry.container_path)?;
        out.push(pinned);
    }
    Ok(out)
}

#[cfg(test)]
#[path = "security_tests.rs"]
mod tests;
