//! Process-tree containment for every child Talon starts on the host.
//!
//! A command started on the host can escape a process-group kill: it can
//! call `setsid`, double-fork, or daemonise, and when the process that
//! started it dies (even by SIGKILL) its children are orphaned. This crate
//! makes the whole tree one unit:
//!
//! - [`Supervisor`]: one per process that spawns children (the gateway, the
//!   CLI, an embedder; [`Supervisor::shared`] is the process-wide one). At
//!   start it reads `/proc/self/mountinfo` and `/proc/self/cgroup`, creates
//!   an owner cgroup `<own cgroup2>/talon/owner-<pid>-<starttime>-<n>` (a
//!   later process can tell from the name whether its owner still lives),
//!   kills and removes the owner cgroups and labelled processes of dead
//!   owners (the startup sweep), and starts a watchdog: a tiny `/bin/sh`
//!   whose stdin is a pipe only the supervisor holds, so when this process
//!   dies for any reason the pipe closes and the watchdog kills the owner's
//!   trees. Its [`Containment`] says which mode runs.
//! - [`Leaf`]: one contained tree ([`Supervisor::leaf`]), with [`Limits`]
//!   (memory, pids, cpus) applied through cgroup2 controllers where they
//!   are enabled, else the cgroup v1 hierarchies; a limit that cannot be
//!   applied is an error naming it. [`Leaf::command`] builds a command whose
//!   child joins the leaf *before* it execs the program (a `/bin/sh`
//!   wrapper writes its pid into each `cgroup.procs`; no `pre_exec`, no
//!   `unsafe`), [`Leaf::kill`] ends every process in it (`cgroup.kill`, or
//!   freeze and kill each pid) and removes its directories, and dropping
//!   the leaf does the same.
//! - [`ChildCommand`] ([`spawn`]): the one way Talon builds any child
//!   process, contained or not: the environment is exactly what the caller
//!   passes ([`ChildEnv`]), stdin is `/dev/null` unless set, the
//!   [`ProcessGroup`] is chosen at construction, and a missing or
//!   non-executable program is a [`SpawnError`] naming it. Clippy refuses
//!   `Command::new` everywhere else.
//!
//! Without a writable cgroup v2 hierarchy (no cgroup2 mount, no
//! delegation, or [`SupervisorOptions::force_process_groups`]) the
//! supervisor says so once (a `warn` log) and falls back to
//! [`Containment::ProcessGroup`]: each leaf's processes carry the
//! `TALON_PROC_LEAF=<leaf id>` environment label, this process becomes a
//! child subreaper, and a kill walks `/proc` for the label and for
//! descendants. That mode cannot enforce limits and misses a process that
//! clears its environment after its parent exited.
//!
//! ```
//! use talon_proc_tree::{Limits, Supervisor};
//!
//! let supervisor = Supervisor::shared()?;
//! println!("containment: {}", supervisor.containment().mode());
//! let leaf = supervisor.leaf(&Limits::NONE)?;
//! let env = [("PATH", "/usr/bin:/bin")];
//! let mut child = leaf
//!     .command("sh", ["-c", "setsid sleep 300 & exit 0"], env)
//!     .spawn()?;
//! leaf.set_root_pid(child.id());
//! child.wait()?;
//! leaf.kill()?; // the setsid'd sleep is gone too
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

#![deny(missing_docs)]

pub use crate::error::{ProcTreeError, Result};
pub use crate::leaf::{JOIN_FAILED_EXIT, Leaf};
pub use crate::limits::{LimitKind, Limits};
pub use crate::spawn::{ChildCommand, ChildEnv, ProcessGroup, SpawnError, SpawnErrorKind};
pub use crate::supervisor::{Containment, Supervisor, SupervisorOptions, SweepReport};

/// The environment variable that labels a leaf's processes.
pub const LABEL_VAR: &str = procfs::LABEL_VAR;

mod cgroup;
mod error;
mod leaf;
mod limits;
mod mountinfo;
mod procfs;
pub mod spawn;
mod supervisor;
mod watchdog;
