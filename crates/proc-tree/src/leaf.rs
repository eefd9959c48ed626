//! One contained command: its cgroup (or label), the command wrapper that
//! makes the child join before it execs, and the kill that ends the whole
//! tree.

use std::collections::BTreeSet;
use std::ffi::OsStr;
use std::path::PathBuf;
use std::process::Command;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use nix::sys::wait::{WaitPidFlag, waitpid};
use nix::unistd::Pid;

use crate::cgroup;
use crate::error::ProcTreeError;
use crate::procfs::{self, LABEL_VAR};
use crate::spawn::{ChildCommand, ChildEnv, ProcessGroup};

/// The shell used for the join wrapper, the probe and the watchdog.
pub(crate) const SHELL: &str = "/bin/sh";

/// How long a kill keeps trying before it reports survivors.
const KILL_WAIT: Duration = Duration::from_secs(5);

/// Writes its own pid into every `cgroup.procs` file given before `--`,
/// then execs the rest. A failed join is exit 125 and nothing runs.
const JOIN_SCRIPT: &str = r#"while [ "$#" -gt 0 ]; do f=$1; shift; [ "$f" = -- ] && break; echo $$ > "$f" || { echo "talon-proc-tree: cannot join cgroup $f" >&2; exit 125; }; done; exec "$@""#;

/// The exit code of the join wrapper when the child could not join its
/// cgroup (the command did not run).
pub const JOIN_FAILED_EXIT: i32 = 125;

/// One contained process tree. Everything started from [`Leaf::command`]
/// and everything those processes start (including `setsid`, double forks
/// and daemons) belongs to it, and [`Leaf::kill`] ends all of it. Dropping
/// a leaf kills it too (best effort).
#[derive(Debug)]
pub struct Leaf {
    id: String,
    /// Cgroup mode: the leaf's directories, unified first. Empty in
    /// process-group mode.
    dirs: Vec<PathBuf>,
    root: OnceLock<u32>,
    finished: AtomicBool,
}

impl Leaf {
    pub(crate) fn new(id: String, dirs: Vec<PathBuf>) -> Leaf {
        Leaf {
            id,
            dirs,
            root: OnceLock::new(),
            finished: AtomicBool::new(false),
        }
    }

    /// The leaf's id (also the value of the `TALON_PROC_LEAF` label its
    /// processes carry).
    pub fn id(&self) -> &str {
        &self.id
    }

    /// Whether this leaf is a cgroup (else it is found by label and
    /// process tree).
    pub fn is_cgroup(&self) -> bool {
        !self.dirs.is_empty()
    }

    /// The leaf's cgroup directories (unified first); empty in
    /// process-group mode.
    pub fn cgroup_dirs(&self) -> &[PathBuf] {
        &self.dirs
    }

    /// A command that runs `program args` inside this leaf with exactly
    /// the environment `env` (plus the leaf label), in a new process group.
    ///
    /// In cgroup mode the program is started through `/bin/sh -c`, which
    /// writes its own pid into each of the leaf's `cgroup.procs` and then
    /// `exec`s the program, so the program and all its descendants are in
    /// the leaf before any of them runs; a failed join exits with
    /// [`JOIN_FAILED_EXIT`] without running anything. `program` is looked
    /// up in `env`'s `PATH` by the shell (a missing one is exit 127, not a
    /// spawn error: resolve it first to report it), and must not start with
    /// `-` (the shell's `exec` would read it as an option).
    ///
    /// It is built by [`ChildCommand::new`] (standard input `/dev/null`
    /// until set). Set the working directory and stdio on the result; do not call
    /// `env_clear` on it (that would drop the label). After spawning, tell
    /// the leaf the child's pid with [`Leaf::set_root_pid`].
    pub fn command<A, E, K, V>(&self, program: impl AsRef<OsStr>, args: A, env: E) -> Command
    where
        A: IntoIterator,
        A::Item: AsRef<OsStr>,
        E: IntoIterator<Item = (K, V)>,
        K: AsRef<OsStr>,
        V: AsRef<OsStr>,
    {
        let env = ChildEnv::exact(env);
        let mut cmd = if self.dirs.is_empty() {
            ChildCommand::new(program, env, ProcessGroup::Own)
        } else {
            let mut cmd = ChildCommand::new(SHELL, env, ProcessGroup::Own);
            cmd.arg("-c").arg(JOIN_SCRIPT).arg("talon-leaf");
            cmd.args(self.dirs.iter().map(|d| d.join("cgroup.procs")));
            cmd.arg("--").arg(program);
            cmd
        };
        cmd.args(args).env(LABEL_VAR, &self.id);
        cmd.into_std()
    }

    /// Records the pid of the process spawned from [`Leaf::command`]. Its
    /// spawner reaps it; the leaf reaps only orphans it adopted (in
    /// process-group mode, where this process is a child subreaper). Later
    /// calls are ignored.
    pub fn set_root_pid(&self, pid: u32) {
        let _ = self.root.set(pid);
    }

    /// The pids of the leaf's live processes.
    pub fn pids(&self) -> Vec<u32> {
        if let Some(dir) = self.dirs.first() {
            let mut pids: BTreeSet<u32> = cgroup::procs_in_tree(dir)
                .into_iter()
                .filter(|p| procfs::alive(*p))
                .collect();
            for extra in &self.dirs[1..] {
                pids.extend(
                    cgroup::procs_in_tree(extra)
                        .into_iter()
                        .filter(|p| procfs::alive(*p)),
                );
            }
            pids.into_iter().collect()
        } else {
            self.labelled().into_iter().collect()
        }
    }

    /// The live processes carrying this leaf's label, plus every live
    /// descendant of the root and of those (a process that cleared its
    /// environment is still found through its parent).
    fn labelled(&self) -> BTreeSet<u32> {
        let mut stats = Vec::new();
        let mut found = BTreeSet::new();
        for pid in procfs::all_pids() {
            let Some(stat) = procfs::stat(pid) else {
                continue;
            };
            if stat.state == 'Z' || stat.state == 'X' {
                continue;
            }
            if procfs::label_of(pid).as_deref() == Some(self.id.as_str()) {
                found.insert(pid);
            }
            stats.push((pid, stat.ppid));
        }
        if let Some(root) = self.root.get()
            && procfs::alive(*root)
        {
            found.insert(*root);
        }
        loop {
            let before = found.len();
            for (pid, ppid) in &stats {
                if found.contains(ppid) {
                    found.insert(*pid);
                }
            }
            if found.len() == before {
                return found;
            }
        }
    }

    /// Ends the whole tree: in cgroup mode `cgroup.kill` (or freeze, kill
    /// every pid, thaw) until the cgroup is empty, then removes its
    /// directories; in process-group mode SIGKILL to every labelled
    /// process and descendant until none is left, and reaps the orphans
    /// this process adopted. Bounded (a few seconds); idempotent.
    pub fn kill(&self) -> Result<(), ProcTreeError> {
        if self.finished.swap(true, Ordering::SeqCst) {
            return Ok(());
        }
        let deadline = Instant::now() + KILL_WAIT;
        let remaining = if self.dirs.is_empty() {
            self.kill_labelled(deadline)
        } else {
            let remaining = cgroup::kill_trees(&self.dirs, deadline);
            for dir in &self.dirs {
                cgroup::remove_tree(dir, deadline);
            }
            remaining
        };
        if remaining.is_empty() {
            Ok(())
        } else {
            Err(ProcTreeError::KillTimeout {
                leaf: self.id.clone(),
                remaining,
                waited: KILL_WAIT,
            })
        }
    }

    fn kill_labelled(&self, deadline: Instant) -> Vec<u32> {
        let mut killed = BTreeSet::new();
        let remaining = loop {
            let live = self.labelled();
            if live.is_empty() || Instant::now() >= deadline {
                break live;
            }
            for pid in &live {
                cgroup::sigkill(*pid);
            }
            killed.extend(live);
            std::thread::sleep(Duration::from_millis(2));
        };
        let me = std::process::id();
        let root = self.root.get().copied();
        for pid in killed {
            if Some(pid) == root {
                continue;
            }
            if procfs::stat(pid).is_some_and(|s| s.ppid == me)
                && let Ok(raw) = i32::try_from(pid)
            {
                let _ = waitpid(Pid::from_raw(raw), Some(WaitPidFlag::WNOHANG));
            }
        }
        remaining.into_iter().collect()
    }
}

impl Drop for Leaf {
    fn drop(&mut self) {
        if let Err(e) = self.kill() {
            tracing::warn!(error = %e, "a contained process tree outlived its handle");
        }
    }
}
