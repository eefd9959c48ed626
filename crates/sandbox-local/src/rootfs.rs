//! What a local sandbox sees of the host: the read-only system directories
//! ([`SYSTEM_DIRS`]) and nothing else of the host's file system except the
//! run's mount plan.
//!
//! Why a list of directories rather than `--ro-bind / /` (as Codex does):
//! the sandbox then never sees home directories (`~/.ssh`, `~/.aws`, the
//! Talon state dir with its databases and tokens), `/root`, `/var`, `/srv`,
//! `/opt`, `/mnt`, `/run` (sockets) or the host's `/tmp`, whatever new
//! directory appears at the root later. Commands still find their programs
//! and libraries (`/usr`, `/bin`, `/lib*`) and the configuration they read
//! (`/etc`), minus the secrets in [`ETC_MASKED`], which are hidden behind
//! an empty file or directory.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use serde::Serialize;

/// Host directories bound read-only at the same path (a symlink among them,
/// as `/bin -> usr/bin` on merged-`/usr` systems, is recreated as the same
/// symlink).
pub const SYSTEM_DIRS: &[&str] = &[
    "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc",
];

/// Paths under `/etc` hidden from the sandbox (an empty file over a file,
/// an empty directory over a directory), plus every host private key
/// `/etc/ssh/ssh_host_*_key`.
pub const ETC_MASKED: &[&str] = &[
    "/etc/shadow",
    "/etc/shadow-",
    "/etc/gshadow",
    "/etc/gshadow-",
    "/etc/sudoers",
    "/etc/sudoers.d",
    "/etc/ssl/private",
    "/etc/security/opasswd",
    "/etc/credstore",
    "/etc/credstore.encrypted",
    "/etc/docker",
    "/etc/containerd",
    "/etc/wireguard",
    "/etc/NetworkManager/system-connections",
    "/etc/openvpn",
    "/etc/ipsec.secrets",
    "/etc/krb5.keytab",
    "/etc/talon",
];

/// One host path as the sandbox's root shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase", tag = "kind")]
pub enum RootEntry {
    /// A directory bound read-only at the same path.
    ReadOnlyDir {
        /// The path.
        path: PathBuf,
    },
    /// A symlink recreated with the same target.
    Symlink {
        /// The path.
        path: PathBuf,
        /// Its target as written.
        target: PathBuf,
    },
    /// A file hidden behind an empty one.
    MaskedFile {
        /// The path.
        path: PathBuf,
    },
    /// A directory hidden behind an empty one.
    MaskedDir {
        /// The path.
        path: PathBuf,
    },
}

/// The host's system directories and masks, looked up once.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct HostRoot {
    /// In bind order: directories and symlinks, then the masks.
    pub entries: Vec<RootEntry>,
}

impl HostRoot {
    /// Look the system directories and the secrets to mask up on this host
    /// (missing ones are left out).
    pub fn detect() -> HostRoot {
        let mut entries = Vec::new();
        for dir in SYSTEM_DIRS {
            let path = PathBuf::from(dir);
            let Ok(meta) = std::fs::symlink_metadata(&path) else {
                continue;
            };
            if meta.file_type().is_symlink() {
                if let Ok(target) = std::fs::read_link(&path) {
                    entries.push(RootEntry::Symlink { path, target });
                }
            } else if meta.is_dir() {
                entries.push(RootEntry::ReadOnlyDir { path });
            }
        }
        let mut masked: Vec<PathBuf> = ETC_MASKED.iter().map(PathBuf::from).collect();
        if let Ok(dir) = std::fs::read_dir("/etc/ssh") {
            let mut keys: Vec<PathBuf> = dir
                .flatten()
                .map(|e| e.path())
                .filter(|p| {
                    p.file_name()
                        .and_then(|n| n.to_str())
                        .is_some_and(|n| n.starts_with("ssh_host_") && n.ends_with("_key"))
                })
                .collect();
            keys.sort();
            masked.extend(keys);
        }
        for path in masked {
            // A symlink is masked as what it points to; a dangling one
            // shows nothing anyway.
            match std::fs::metadata(&path) {
                Ok(meta) if meta.is_dir() => entries.push(RootEntry::MaskedDir { path }),
                Ok(_) => entries.push(RootEntry::MaskedFile { path }),
                Err(_) => {}
            }
        }
        HostRoot { entries }
    }

    /// Whether `path` lies in a directory the sandbox sees read-only from
    /// the host (so a state dir there would be readable).
    pub fn exposes(&self, path: &Path) -> bool {
        self.entries.iter().any(|e| match e {
            RootEntry::ReadOnlyDir { path: dir } => path.starts_with(dir),
            RootEntry::Symlink { .. }
            | RootEntry::MaskedFile { .. }
            | RootEntry::MaskedDir { .. } => false,
        })
    }

    /// The bubblewrap arguments that lay this root out.
    pub(crate) fn bwrap_args(&self, out: &mut Vec<OsString>) {
        for entry in &self.entries {
            match entry {
                RootEntry::ReadOnlyDir { path } => {
                    push(out, ["--ro-bind"]);
                    out.push(path.clone().into());
                    out.push(path.clone().into());
                }
                RootEntry::Symlink { path, target } => {
                    push(out, ["--symlink"]);
                    out.push(target.clone().into());
                    out.push(path.clone().into());
                }
                RootEntry::MaskedFile { path } => {
                    push(out, ["--ro-bind", "/dev/null"]);
                    out.push(path.clone().into());
                }
                RootEntry::MaskedDir { path } => {
                    push(out, ["--tmpfs"]);
                    out.push(path.clone().into());
                    push(out, ["--remount-ro"]);
                    out.push(path.clone().into());
                }
            }
        }
    }
}

pub(crate) fn push<const N: usize>(out: &mut Vec<OsString>, args: [&str; N]) {
    out.extend(args.iter().map(OsString::from));
}
