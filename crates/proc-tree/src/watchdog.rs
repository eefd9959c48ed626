//! The parent-death watchdog: a small `/bin/sh` whose stdin is a pipe only
//! the supervisor holds. When the supervisor's process dies for any reason
//! (including SIGKILL) the kernel closes the pipe, `read` returns, and the
//! watchdog kills the owner's processes and removes its cgroups (and the
//! `talon` directories above them when no other owner uses them). It runs
//! in its own process group and ignores the terminal signals, so a signal
//! sent to the owner's group does not take it down with the owner.

use std::path::PathBuf;
use std::process::{Child, ChildStdin, Stdio};
use std::time::{Duration, Instant};

use crate::error::ProcTreeError;
use crate::procfs::LABEL_VAR;
use crate::spawn::{ChildCommand, ChildEnv, ProcessGroup};

/// Cgroup mode. Arguments: the unified owner directory, then the v1 ones.
const CGROUP_SCRIPT: &str = r#"trap '' HUP INT TERM QUIT PIPE
read -r _
i=0
while [ "$i" -lt 200 ]; do
  i=$((i + 1))
  [ -e "$1/cgroup.kill" ] && echo 1 > "$1/cgroup.kill" 2>/dev/null
  busy=
  for d; do
    for f in "$d"/cgroup.procs "$d"/*/cgroup.procs; do
      [ -r "$f" ] || continue
      while read -r p; do busy=1; kill -9 "$p" 2>/dev/null; done < "$f"
    done
  done
  [ -z "$busy" ] && break
  sleep 0.05
done
for d; do
  for l in "$d"/*/; do [ -d "$l" ] && rmdir "$l" 2>/dev/null; done
  rmdir "$d" 2>/dev/null
  rmdir "${d%/*}" 2>/dev/null
done
exit 0
"#;

/// Process-group mode. Argument: the label prefix (`<owner tag>-`).
const LABEL_SCRIPT: &str = r#"trap '' HUP INT TERM QUIT PIPE
read -r _
i=0
while [ "$i" -lt 50 ]; do
  i=$((i + 1))
  busy=
  for e in /proc/[0-9]*/environ; do
    p=${e#/proc/}; p=${p%/environ}
    [ "$p" = "$$" ] && continue
    if tr '\0' '\n' < "$e" 2>/dev/null | grep -q "^$2=$1"; then
      busy=1; kill -9 "$p" 2>/dev/null
    fi
  done
  [ -z "$busy" ] && break
  sleep 0.1
done
exit 0
"#;

/// A running watchdog.
#[derive(Debug)]
pub(crate) struct Watchdog {
    child: Child,
    /// Never written: its closing (when this process dies) is the signal.
    stdin: Option<ChildStdin>,
}

impl Watchdog {
    /// Starts the cgroup-mode watchdog for `dirs` (unified owner first).
    pub(crate) fn for_cgroups(dirs: &[PathBuf]) -> Result<Watchdog, ProcTreeError> {
        let mut cmd = base(CGROUP_SCRIPT);
        cmd.args(dirs);
        spawn(cmd)
    }

    /// Starts the process-group-mode watchdog for labels starting with
    /// `prefix`.
    pub(crate) fn for_labels(prefix: &str) -> Result<Watchdog, ProcTreeError> {
        let mut cmd = base(LABEL_SCRIPT);
        cmd.arg(prefix).arg(LABEL_VAR);
        spawn(cmd)
    }

    /// The watchdog's pid.
    pub(crate) fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Whether it is still waiting.
    pub(crate) fn running(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }

    /// Stops it (the owner cleaned up itself) and reaps it.
    pub(crate) fn stop(&mut self) {
        let _ = self.child.kill();
        self.stdin = None;
        let deadline = Instant::now() + Duration::from_secs(2);
        while Instant::now() < deadline {
            match self.child.try_wait() {
                Ok(Some(_)) | Err(_) => return,
                Ok(None) => std::thread::sleep(Duration::from_millis(2)),
            }
        }
    }
}

fn base(script: &str) -> ChildCommand {
    let mut cmd = ChildCommand::new(
        crate::leaf::SHELL,
        ChildEnv::exact([("PATH", "/usr/sbin:/usr/bin:/sbin:/bin")]),
        ProcessGroup::Own,
    );
    cmd.arg("-c")
        .arg(script)
        .arg("talon-proc-tree-watchdog")
        .current_dir("/")
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    cmd
}

fn spawn(mut cmd: ChildCommand) -> Result<Watchdog, ProcTreeError> {
    let mut child = cmd.spawn().map_err(|e| ProcTreeError::Watchdog {
        source: e.into_io_error(),
    })?;
    let stdin = child.stdin.take();
    Ok(Watchdog { child, stdin })
}
