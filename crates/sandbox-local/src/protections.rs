//! [`Protections`]: what a local sandbox applies on this host and what the
//! host lacks, for `talon sandbox explain`.

use std::path::{Path, PathBuf};

use serde::Serialize;
use talon_sandbox_core::{ResolvedSandboxConfig, SandboxError};

use crate::backend::{INSTALL_HINT, find_bwrap};
use crate::layout::ISOLATION_FLAGS;
use crate::sandbox_exec::LandlockSetup;
use crate::seccomp::DENIED_SYSCALLS;
use crate::settings::{SettingProblem, unsupported_settings};

/// One protection: whether it is on, and a detail line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Protection {
    /// Applied to every command.
    pub applied: bool,
    /// What exactly, or why not.
    pub detail: String,
}

/// What the local backend applies, and what this host lacks.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Protections {
    /// The `bwrap` found, if any.
    pub bwrap: Option<PathBuf>,
    /// Namespaces (pid, ipc, uts, net, cgroup, mount) and dropped
    /// capabilities.
    pub namespaces: Protection,
    /// The read-only host system dirs and masked secrets.
    pub filesystem: Protection,
    /// The seccomp filter.
    pub seccomp: Protection,
    /// Landlock.
    pub landlock: Protection,
    /// Memory / pids / CPU limits.
    pub cgroup_limits: Protection,
    /// Network.
    pub network: Protection,
    /// Settings the local backend refuses (each blocks every command).
    pub refused_settings: Vec<SettingProblem>,
    /// What this host lacks (each blocks every command).
    pub missing: Vec<String>,
}

/// The home directories whose credentials no bind may reach: `$HOME`,
/// `$TALON_HOME` and the OS's idea of home.
pub(crate) fn process_home_dirs() -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = ["HOME", "TALON_HOME"]
        .iter()
        .filter_map(std::env::var_os)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .collect();
    dirs.extend(std::env::home_dir());
    dirs.dedup();
    dirs
}

fn read_trimmed(path: &str) -> Option<String> {
    std::fs::read_to_string(path)
        .ok()
        .map(|s| s.trim().to_owned())
}

/// When Talon does not run as root, bubblewrap needs user namespaces: an
/// error naming the fix when the kernel has them switched off.
pub(crate) fn check_user_namespaces() -> Result<(), SandboxError> {
    if rustix::process::geteuid().is_root() {
        return Ok(());
    }
    let max = read_trimmed("/proc/sys/user/max_user_namespaces");
    let debian = read_trimmed("/proc/sys/kernel/unprivileged_userns_clone");
    let off = max.as_deref() == Some("0") || debian.as_deref() == Some("0");
    if off {
        return Err(SandboxError::engine_unavailable(
            "the local sandbox backend needs user namespaces when Talon does not run as root, \
             and this kernel has them switched off (user.max_user_namespaces=0 or \
             kernel.unprivileged_userns_clone=0); enable them (`sysctl -w \
             user.max_user_namespaces=15000`, and on Debian `sysctl -w \
             kernel.unprivileged_userns_clone=1`), run Talon as root, or set \
             agents.defaults.sandbox.backend to \"docker\""
                .to_owned(),
        ));
    }
    Ok(())
}

/// Whether this kernel has seccomp filtering (`Seccomp:` in
/// `/proc/self/status`).
fn seccomp_in_kernel() -> bool {
    std::fs::read_to_string("/proc/self/status").is_ok_and(|s| s.contains("\nSeccomp:"))
}

impl Protections {
    /// What a sandbox for `config` gets on this host (looks bubblewrap and
    /// kernel features up; runs nothing but `talon-sandbox-exec --check`,
    /// found as [`crate::find_sandbox_exec`] does).
    pub fn detect(config: &ResolvedSandboxConfig, state_dir: &Path) -> Protections {
        Self::detect_with(config, state_dir, &LandlockSetup::detect(None))
    }

    /// As [`Protections::detect`], with the Landlock setup of a backend
    /// ([`crate::LocalBackend::landlock`]).
    pub fn detect_with(
        config: &ResolvedSandboxConfig,
        state_dir: &Path,
        landlock: &LandlockSetup,
    ) -> Protections {
        let bwrap = find_bwrap(std::env::var_os("PATH").as_deref());
        let mut missing = Vec::new();
        if bwrap.is_none() {
            missing.push(format!(
                "bubblewrap (bwrap) is not installed; {INSTALL_HINT}"
            ));
        }
        if let Err(e) = check_user_namespaces() {
            missing.push(e.to_string());
        }
        let seccomp_ok = seccomp_in_kernel();
        if !seccomp_ok {
            missing.push(
                "this kernel has no seccomp filtering (CONFIG_SECCOMP_FILTER); use backend \"docker\""
                    .to_owned(),
            );
        }
        let flags: Vec<&str> = ISOLATION_FLAGS.to_vec();
        let root = crate::rootfs::HostRoot::detect();
        let mut fs_detail = format!(
            "read-only: {}; masked: {}; tmpfs: {}; plus the mount plan; nothing else of the host \
             (no home dirs, no state dir)",
            crate::rootfs::SYSTEM_DIRS.join(" "),
            root.entries
                .iter()
                .filter_map(|e| match e {
                    crate::rootfs::RootEntry::MaskedFile { path }
                    | crate::rootfs::RootEntry::MaskedDir { path } => {
                        Some(path.display().to_string())
                    }
                    _ => None,
                })
                .collect::<Vec<_>>()
                .join(" "),
            config.docker.tmpfs.join(" ")
        );
        if root.exposes(state_dir) {
            fs_detail.push_str(&format!(
                "; WARNING: the state dir {} lies under a system dir the sandbox reads",
                state_dir.display()
            ));
        }
        let limits = crate::limits::requested(&config.docker);
        let egress = crate::settings::wants_egress(config);
        if egress && crate::sandbox_exec::find_sandbox_exec(landlock.helper()).is_none() {
            missing.push(format!(
                "network \"bridge\" needs the {} helper to relay the proxy port, and it was \
                 not found (install it next to the talon binary or set {})",
                crate::file_rules::SANDBOX_EXEC_NAME,
                crate::file_rules::SANDBOX_EXEC_ENV
            ));
        }
        let network_detail = if egress {
            format!(
                "bridge: a fresh network namespace with only loopback; HTTP and HTTPS reach out \
                 only through Talon's SSRF-guarded egress proxy ({} in HTTP_PROXY/HTTPS_PROXY; \
                 web_fetch's rules and tools.web.fetch.ssrfAllowlist; names resolved and \
                 vetted on the host); anything that ignores the proxy reaches nothing",
                crate::egress::EGRESS_PROXY_URL
            )
        } else {
            "none: a fresh network namespace with only loopback".to_owned()
        };
        Protections {
            bwrap,
            namespaces: Protection {
                applied: true,
                detail: format!("mount + {}", flags.join(" ")),
            },
            filesystem: Protection {
                applied: true,
                detail: fs_detail,
            },
            seccomp: Protection {
                applied: seccomp_ok,
                detail: format!(
                    "EPERM: {}; x32 syscall numbers refused; clone3: ENOSYS",
                    DENIED_SYSCALLS.join(" ")
                ),
            },
            landlock: Protection {
                applied: landlock.helper().is_some(),
                detail: landlock.detail(),
            },
            cgroup_limits: crate::limits::protection(&limits),
            network: Protection {
                applied: true,
                detail: network_detail,
            },
            refused_settings: unsupported_settings(config),
            missing,
        }
    }
}
