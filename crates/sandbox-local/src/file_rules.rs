//! [`FileRules`]: the Landlock ruleset `talon-sandbox-exec` applies inside
//! the sandbox before it becomes the command, its command line, and the
//! status line it reports.
//!
//! Landlock restricts the calling process and everything it starts, and a
//! restricted process can no longer mount, so it has to be applied inside
//! the sandbox, after bubblewrap has laid the mounts out and before the
//! command runs. Doing that in our own process between `fork` and `exec`
//! needs `unsafe`; the helper binary does it with the `landlock` crate's
//! safe API and then `exec`s the command.

use std::ffi::OsString;
use std::path::PathBuf;

use landlock::{
    ABI, Access, AccessFs, CompatLevel, Compatible, LandlockStatus, Ruleset, RulesetAttr,
    RulesetCreatedAttr, RulesetStatus, path_beneath_rules,
};

/// Where the helper is bound (read-only) inside every sandbox.
pub const SANDBOX_EXEC_PATH: &str = "/.talon/sandbox-exec";
/// The helper's file name, looked for next to the running executable.
pub const SANDBOX_EXEC_NAME: &str = "talon-sandbox-exec";
/// The variable naming the helper explicitly.
pub const SANDBOX_EXEC_ENV: &str = "TALON_SANDBOX_EXEC";

/// The newest Landlock ABI whose file-system rights the rules handle; an
/// older kernel gets what it supports (best effort), a kernel without
/// Landlock gets none.
const TARGET_ABI: ABI = ABI::V7;

/// Devices a command may read and write (`/dev` itself is read-only).
pub const DEVICES_RW: &[&str] = &[
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/random",
    "/dev/urandom",
    "/dev/tty",
    "/dev/ptmx",
    "/dev/pts",
];

/// A helper command line or ruleset that cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum FileRulesError {
    /// The arguments are not `[--check] [--require] (--ro|--rw|--list PATH)... [--egress SOCKET] -- ARGV`.
    #[error(
        "talon-sandbox-exec: {0}; usage: talon-sandbox-exec [--require] [--ro PATH]... [--rw PATH]... [--list PATH]... [--egress SOCKET] (--check | -- COMMAND [ARG]...)"
    )]
    Usage(String),
    /// The kernel refused the ruleset (or a rule).
    #[error("talon-sandbox-exec: cannot apply the Landlock ruleset")]
    Ruleset(#[source] landlock::RulesetError),
    /// `--require` was given and this kernel enforces no Landlock rule.
    #[error(
        "talon-sandbox-exec: Landlock was required but is not enforced here ({0}); the command \
         was not run"
    )]
    NotEnforced(String),
}

/// What the helper was asked to do.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FileRules {
    /// Read and execute beneath these paths.
    pub read_only: Vec<PathBuf>,
    /// Every file-system right beneath these paths.
    pub read_write: Vec<PathBuf>,
    /// Only list these directories (not read their files).
    pub list_only: Vec<PathBuf>,
    /// Refuse to run the command when the kernel enforces nothing.
    pub require: bool,
    /// Apply the rules, print the status line and exit (no command).
    pub check: bool,
    /// Start the egress forwarder to this proxy socket before the command
    /// (see [`crate::start_forwarder`]).
    pub egress: Option<PathBuf>,
    /// The command.
    pub argv: Vec<OsString>,
}

impl FileRules {
    /// Parse the helper's arguments (without the program name).
    pub fn parse(args: impl IntoIterator<Item = OsString>) -> Result<FileRules, FileRulesError> {
        let mut rules = FileRules::default();
        let mut args = args.into_iter();
        while let Some(arg) = args.next() {
            let mut path = |flag: &str| {
                args.next()
                    .map(PathBuf::from)
                    .ok_or_else(|| FileRulesError::Usage(format!("{flag} needs a path after it")))
            };
            match arg.to_str() {
                Some("--ro") => rules.read_only.push(path("--ro")?),
                Some("--rw") => rules.read_write.push(path("--rw")?),
                Some("--list") => rules.list_only.push(path("--list")?),
                Some("--egress") => rules.egress = Some(path("--egress")?),
                Some("--require") => rules.require = true,
                Some("--check") => rules.check = true,
                Some("--") => {
                    rules.argv = args.collect();
                    break;
                }
                _ => {
                    return Err(FileRulesError::Usage(format!("unknown argument {arg:?}")));
                }
            }
        }
        for p in rules
            .read_only
            .iter()
            .chain(&rules.read_write)
            .chain(&rules.list_only)
            .chain(&rules.egress)
        {
            if !p.is_absolute() {
                return Err(FileRulesError::Usage(format!(
                    "rule path {} is not absolute",
                    p.display()
                )));
            }
        }
        match (rules.check, rules.argv.is_empty()) {
            (true, false) => Err(FileRulesError::Usage("--check takes no command".to_owned())),
            (false, true) => Err(FileRulesError::Usage("no command after --".to_owned())),
            _ => Ok(rules),
        }
    }

    /// The helper arguments for these rules, up to and including `--`
    /// (the command follows).
    pub fn to_args(&self) -> Vec<OsString> {
        let mut out = Vec::new();
        if self.require {
            out.push("--require".into());
        }
        for (flag, paths) in [
            ("--ro", &self.read_only),
            ("--rw", &self.read_write),
            ("--list", &self.list_only),
        ] {
            for p in paths {
                out.push(flag.into());
                out.push(p.clone().into());
            }
        }
        if let Some(socket) = &self.egress {
            out.push("--egress".into());
            out.push(socket.clone().into());
        }
        if self.check {
            out.push("--check".into());
        } else {
            out.push("--".into());
        }
        out
    }

    /// Whether any Landlock rule was given (`--require` counts): without
    /// one the helper only starts the forwarder and runs the command.
    pub fn has_rules(&self) -> bool {
        self.require
            || !self.read_only.is_empty()
            || !self.read_write.is_empty()
            || !self.list_only.is_empty()
    }

    /// Restrict this process (and everything it will start) to the rules;
    /// paths that do not exist are skipped (they grant nothing).
    pub fn restrict_self(&self) -> Result<LandlockReport, FileRulesError> {
        let abi = TARGET_ABI;
        let status = Ruleset::default()
            .set_compatibility(CompatLevel::BestEffort)
            .handle_access(AccessFs::from_all(abi))
            .and_then(|r| r.create())
            .and_then(|r| {
                r.add_rules(path_beneath_rules(
                    &self.read_only,
                    AccessFs::from_read(abi),
                ))
            })
            .and_then(|r| {
                r.add_rules(path_beneath_rules(
                    &self.read_write,
                    AccessFs::from_all(abi),
                ))
            })
            .and_then(|r| r.add_rules(path_beneath_rules(&self.list_only, AccessFs::ReadDir)))
            .and_then(|r| r.restrict_self())
            .map_err(FileRulesError::Ruleset)?;
        let abi = match status.landlock {
            LandlockStatus::Available { effective_abi, .. } => Some(effective_abi.to_string()),
            LandlockStatus::NotEnabled | LandlockStatus::NotImplemented => None,
        };
        let report = LandlockReport {
            enforcement: match status.ruleset {
                RulesetStatus::FullyEnforced => Enforcement::Full,
                RulesetStatus::PartiallyEnforced => Enforcement::Partial,
                RulesetStatus::NotEnforced => Enforcement::None,
            },
            abi,
        };
        if self.require && report.enforcement == Enforcement::None {
            return Err(FileRulesError::NotEnforced(report.to_string()));
        }
        Ok(report)
    }
}

/// How much of the ruleset the kernel enforces.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub enum Enforcement {
    /// Every handled right.
    Full,
    /// The rights an older kernel knows (best effort).
    Partial,
    /// Nothing: the kernel has no Landlock (or it is switched off).
    None,
}

/// The helper's status line (`--check`): `landlock=full abi=7`.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LandlockReport {
    /// How much is enforced.
    pub enforcement: Enforcement,
    /// The Landlock ABI in effect, when the kernel has Landlock.
    pub abi: Option<String>,
}

impl std::fmt::Display for LandlockReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let e = match self.enforcement {
            Enforcement::Full => "full",
            Enforcement::Partial => "partial",
            Enforcement::None => "none",
        };
        write!(
            f,
            "landlock={e} abi={}",
            self.abi.as_deref().unwrap_or("none")
        )
    }
}

impl LandlockReport {
    /// Parse a status line written by [`Display`](std::fmt::Display).
    pub fn parse(line: &str) -> Option<LandlockReport> {
        let mut words = line.split_whitespace();
        let enforcement = match words.next()?.strip_prefix("landlock=")? {
            "full" => Enforcement::Full,
            "partial" => Enforcement::Partial,
            "none" => Enforcement::None,
            _ => return None,
        };
        let abi = match words.next()?.strip_prefix("abi=")? {
            "none" => None,
            v if !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit()) => Some(v.to_owned()),
            _ => return None,
        };
        words
            .next()
            .is_none()
            .then_some(LandlockReport { enforcement, abi })
    }
}

#[cfg(test)]
#[path = "file_rules_tests.rs"]
mod tests;
