//! Finding `talon-sandbox-exec` on the host and asking it what Landlock
//! this kernel enforces ([`LandlockSetup`]).

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use talon_proc_tree::{ChildCommand, ChildEnv, ProcessGroup};

use crate::file_rules::{
    Enforcement, LandlockReport, SANDBOX_EXEC_ENV, SANDBOX_EXEC_NAME, SANDBOX_EXEC_PATH,
};

/// Find the helper: `explicit`, else `$TALON_SANDBOX_EXEC`, else
/// `talon-sandbox-exec` next to the running executable, else the running
/// executable itself when it dispatches the helper
/// ([`crate::dispatch_multicall`]: `talon`, `talon-gateway`). `None` when
/// the chosen candidate is not a file (an explicit or configured path
/// that is missing is never replaced by a fallback).
pub fn find_sandbox_exec(explicit: Option<&Path>) -> Option<PathBuf> {
    let candidate = match explicit {
        Some(p) => p.to_path_buf(),
        None => match std::env::var_os(SANDBOX_EXEC_ENV).filter(|v| !v.is_empty()) {
            Some(p) => PathBuf::from(p),
            None => {
                let me = std::env::current_exe().ok()?;
                let sibling = me.parent()?.join(SANDBOX_EXEC_NAME);
                if !sibling.is_file() && crate::helper::is_multicall() {
                    me
                } else {
                    sibling
                }
            }
        },
    };
    candidate.is_file().then_some(candidate)
}

/// Whether the local sandbox applies Landlock, and with which helper.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LandlockSetup {
    /// Every command starts through the helper, which applies the rules.
    Applied {
        /// The helper on the host (bound at [`SANDBOX_EXEC_PATH`]).
        helper: PathBuf,
        /// What the kernel enforces.
        report: LandlockReport,
    },
    /// Commands run without Landlock; why.
    NotApplied {
        /// The reason, for `explain` and the log.
        reason: String,
    },
}

impl LandlockSetup {
    /// Look the helper up ([`find_sandbox_exec`]) and run it once with
    /// `--check` (it restricts only itself, then exits) to learn what the
    /// kernel enforces.
    pub fn detect(explicit: Option<&Path>) -> LandlockSetup {
        let Some(helper) = find_sandbox_exec(explicit) else {
            return LandlockSetup::NotApplied {
                reason: format!(
                    "the helper {SANDBOX_EXEC_NAME} was not found (set {SANDBOX_EXEC_ENV} or \
                     install it next to the talon binary)"
                ),
            };
        };
        let out = match ChildCommand::new(&helper, ChildEnv::empty(), ProcessGroup::Parent)
            .args([crate::helper::MULTICALL_ARG, "--check"])
            .output()
        {
            Ok(out) => out,
            Err(e) => {
                return LandlockSetup::NotApplied {
                    reason: format!("the helper {} cannot run: {e}", helper.display()),
                };
            }
        };
        let stdout = String::from_utf8_lossy(&out.stdout);
        let report = out
            .status
            .success()
            .then(|| LandlockReport::parse(stdout.trim()))
            .flatten();
        match report {
            Some(report) if report.enforcement != Enforcement::None => {
                LandlockSetup::Applied { helper, report }
            }
            Some(_) => LandlockSetup::NotApplied {
                reason: "this kernel has no Landlock (not built in, or not enabled with lsm=)"
                    .to_owned(),
            },
            None => LandlockSetup::NotApplied {
                reason: format!(
                    "the helper {} failed its check ({}): {}",
                    helper.display(),
                    out.status,
                    String::from_utf8_lossy(&out.stderr).trim()
                ),
            },
        }
    }

    /// The `explain` line.
    pub fn detail(&self) -> String {
        match self {
            LandlockSetup::Applied { helper, report } => format!(
                "applied by {} (bound at {SANDBOX_EXEC_PATH}), {} enforcement, ABI {}: read and \
                 execute beneath the system dirs, /proc, /dev and read-only mounts; read and \
                 write beneath the writable mounts, the tmpfs dirs and the tty/null-like \
                 devices; directory listing only at /; nothing else",
                helper.display(),
                match report.enforcement {
                    Enforcement::Full => "full",
                    Enforcement::Partial => "partial (best effort on an older kernel)",
                    Enforcement::None => "no",
                },
                report.abi.as_deref().unwrap_or("none")
            ),
            LandlockSetup::NotApplied { reason } => format!(
                "not applied: {reason}; the sandbox's mount namespace is the file rule instead \
                 (only the system dirs, read-only, and the mount plan exist in it)"
            ),
        }
    }

    /// The helper, when Landlock is applied.
    pub fn helper(&self) -> Option<&Path> {
        match self {
            LandlockSetup::Applied { helper, .. } => Some(helper),
            LandlockSetup::NotApplied { .. } => None,
        }
    }

    /// Warn (once per process) that Landlock is not applied.
    pub(crate) fn warn_once(&self) {
        static WARNED: AtomicBool = AtomicBool::new(false);
        if let LandlockSetup::NotApplied { reason } = self
            && !WARNED.swap(true, Ordering::SeqCst)
        {
            tracing::warn!(
                reason = %reason,
                "local sandbox: Landlock is not applied; the mount namespace is the only file rule"
            );
        }
    }
}
