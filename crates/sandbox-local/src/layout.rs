//! [`SandboxLayout`]: the bubblewrap command line of one sandbox, everything
//! but the command.

use std::ffi::OsString;
use std::path::PathBuf;
use std::sync::Arc;

use talon_sandbox_core::{MountEntry, PinnedSource, shell_single_quote};

use crate::egress::EGRESS_SOCKET_PATH;
use crate::file_rules::{DEVICES_RW, FileRules, SANDBOX_EXEC_PATH};
use crate::rootfs::{HostRoot, RootEntry, push};

/// The file descriptors the launcher maps the two seccomp filters
/// on (see [`crate::seccomp`]).
pub(crate) const SECCOMP_FDS: [&str; 2] = ["3", "4"];
/// The child descriptor of the first pinned mount source; mount `i` is
/// handed to bubblewrap as `MOUNT_FD_BASE + i` (`--bind-fd` /
/// `--ro-bind-fd`).
pub(crate) const MOUNT_FD_BASE: i32 = 5;
/// The exit status of a command refused because a mount target inside
/// the sandbox is not its pinned source.
pub const MOUNT_CHECK_EXIT: i32 = 125;

/// The namespace and privilege flags every local sandbox gets.
pub const ISOLATION_FLAGS: &[&str] = &[
    "--unshare-pid",
    "--unshare-ipc",
    "--unshare-uts",
    "--unshare-net",
    "--unshare-cgroup-try",
    "--die-with-parent",
    "--new-session",
    "--cap-drop",
    "ALL",
];

/// One sandbox's file system and namespaces, as bubblewrap arguments.
#[derive(Debug, Clone)]
pub(crate) struct SandboxLayout {
    /// The host's system directories and masks.
    pub(crate) root: Arc<HostRoot>,
    /// The run's mount plan, in order, each source its canonical path.
    pub(crate) mounts: Vec<MountEntry>,
    /// The sources as pinned at `ensure`, one per mount, or empty (then
    /// the sources are paths bubblewrap resolves itself). When pinned,
    /// each is handed over as a descriptor the launcher opens and checks
    /// for every launch (`--bind-fd` / `--ro-bind-fd` at
    /// [`MOUNT_FD_BASE`] + index), and, because bubblewrap turns that
    /// descriptor back into a path before it mounts it, every command is
    /// preceded by a check inside the sandbox that each mount target is
    /// the pinned file (device and inode); a mismatch exits with
    /// [`MOUNT_CHECK_EXIT`] before the command runs.
    pub(crate) pinned: Vec<PinnedSource>,
    /// tmpfs mount points (`docker.tmpfs`).
    pub(crate) tmpfs: Vec<String>,
    /// The sandbox's host name (its name).
    pub(crate) hostname: String,
    /// Remount the sandbox's root read-only once everything is mounted.
    pub(crate) read_only_root: bool,
    /// The host's `talon-sandbox-exec`, bound read-only at
    /// [`SANDBOX_EXEC_PATH`] when Landlock is applied or the sandbox has
    /// egress.
    pub(crate) sandbox_exec: Option<PathBuf>,
    /// Whether the helper applies the Landlock rules.
    pub(crate) landlock: bool,
    /// The host's egress proxy socket, bound read-only at
    /// [`EGRESS_SOCKET_PATH`] (`network: "bridge"`).
    pub(crate) egress_socket: Option<PathBuf>,
}

impl SandboxLayout {
    /// `bwrap` arguments up to (not including) `--chdir` and the command.
    pub(crate) fn args(&self) -> Vec<OsString> {
        let mut out: Vec<OsString> = Vec::with_capacity(64);
        push(&mut out, ["--add-seccomp-fd", SECCOMP_FDS[0]]);
        push(&mut out, ["--add-seccomp-fd", SECCOMP_FDS[1]]);
        out.extend(ISOLATION_FLAGS.iter().map(OsString::from));
        push(&mut out, ["--hostname"]);
        out.push(self.hostname.clone().into());
        self.root.bwrap_args(&mut out);
        push(&mut out, ["--dev", "/dev", "--proc", "/proc"]);
        for dir in &self.tmpfs {
            push(&mut out, ["--tmpfs"]);
            out.push(dir.into());
        }
        for (index, mount) in self.mounts.iter().enumerate() {
            // `--ro-bind` and `--ro-bind-fd` make every submount beneath
            // the bind read-only too (bubblewrap remounts each one).
            let source: OsString = if !self.pinned.is_empty() {
                let fd = MOUNT_FD_BASE + i32::try_from(index).unwrap_or(i32::MAX - MOUNT_FD_BASE);
                push(
                    &mut out,
                    [if mount.read_only {
                        "--ro-bind-fd"
                    } else {
                        "--bind-fd"
                    }],
                );
                fd.to_string().into()
            } else {
                push(
                    &mut out,
                    [if mount.read_only {
                        "--ro-bind"
                    } else {
                        "--bind"
                    }],
                );
                mount.host_path.clone().into()
            };
            out.push(source);
            out.push(mount.container_path.clone().into());
        }
        if let Some(helper) = &self.sandbox_exec {
            push(&mut out, ["--ro-bind"]);
            out.push(helper.clone().into());
            out.push(SANDBOX_EXEC_PATH.into());
        }
        if let Some(socket) = &self.egress_socket {
            push(&mut out, ["--ro-bind"]);
            out.push(socket.clone().into());
            out.push(EGRESS_SOCKET_PATH.into());
        }
        if self.read_only_root {
            push(&mut out, ["--remount-ro", "/"]);
        }
        out
    }

    /// The Landlock rules of this layout: read and execute beneath the
    /// system dirs, `/proc`, `/dev` and the read-only mounts; everything
    /// beneath the writable mounts, the tmpfs dirs and [`DEVICES_RW`];
    /// only listing at `/`.
    pub(crate) fn file_rules(&self) -> FileRules {
        let mut rules = FileRules {
            require: true,
            ..FileRules::default()
        };
        for entry in &self.root.entries {
            if let RootEntry::ReadOnlyDir { path } = entry {
                rules.read_only.push(path.clone());
            }
        }
        rules.read_only.extend(["/proc", "/dev"].map(PathBuf::from));
        for mount in &self.mounts {
            let list = if mount.read_only {
                &mut rules.read_only
            } else {
                &mut rules.read_write
            };
            list.push(PathBuf::from(&mount.container_path));
        }
        rules
            .read_write
            .extend(self.tmpfs.iter().map(PathBuf::from));
        rules
            .read_write
            .extend(DEVICES_RW.iter().map(PathBuf::from));
        rules.list_only.push(PathBuf::from("/"));
        if self.egress_socket.is_some() {
            // The helper starts the forwarder from its own file after the
            // rules apply.
            rules.read_only.push(PathBuf::from(SANDBOX_EXEC_PATH));
        }
        rules
    }

    /// What goes before the command: the helper with its rules (when
    /// Landlock is applied) and `--egress` (when the sandbox has egress),
    /// else nothing.
    pub(crate) fn command_prefix(&self) -> Vec<OsString> {
        if self.sandbox_exec.is_none() {
            return self.mount_check();
        }
        let mut rules = if self.landlock {
            self.file_rules()
        } else {
            FileRules::default()
        };
        if self.egress_socket.is_some() {
            rules.egress = Some(PathBuf::from(EGRESS_SOCKET_PATH));
        }
        let mut out = vec![
            OsString::from(SANDBOX_EXEC_PATH),
            OsString::from(crate::helper::MULTICALL_ARG),
        ];
        out.extend(rules.to_args());
        out.extend(self.mount_check());
        out
    }

    /// `/bin/sh -c CHECK talon-mount-check` before the command when the
    /// sources are pinned: each mount target must be the pinned file
    /// (`stat -c '%d %i'`), else it says which and exits
    /// [`MOUNT_CHECK_EXIT`]; then it `exec`s the command unchanged.
    pub(crate) fn mount_check(&self) -> Vec<OsString> {
        if self.pinned.is_empty() {
            return Vec::new();
        }
        let mut script = String::new();
        for (index, (mount, pin)) in self.mounts.iter().zip(&self.pinned).enumerate() {
            // The target is single-quoted; the message names the mount by
            // its index only, so no configured text is ever interpolated
            // into a double-quoted string.
            let target = shell_single_quote(&mount.container_path);
            script.push_str(&format!(
                "[ \"$(stat -c '%d %i' -- {target} 2>/dev/null)\" = '{} {}' ] || {{ echo 'talon: mount {index} of the sandbox is not its validated source; the command did not run' >&2; exit {MOUNT_CHECK_EXIT}; }}; ",
                pin.dev, pin.ino
            ));
        }
        script.push_str("exec \"$@\"");
        vec![
            OsString::from("/bin/sh"),
            OsString::from("-c"),
            OsString::from(script),
            OsString::from("talon-mount-check"),
        ]
    }
}

#[cfg(test)]
#[path = "layout_tests.rs"]
mod tests;
