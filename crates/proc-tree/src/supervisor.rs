//! The supervisor: one per process that spawns children. It picks the
//! containment mode, sweeps dead owners' leftovers, keeps the watchdog and
//! hands out leaves.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use crate::cgroup::{self, CgroupUnavailable, Hierarchies, Layout, LimitHome};
use crate::error::{ProcTreeError, io};
use crate::leaf::Leaf;
use crate::limits::{LimitKind, Limits};
use crate::procfs::{self, LABEL_VAR};
use crate::watchdog::Watchdog;

/// How a [`Supervisor`] starts.
#[derive(Debug, Clone, Default)]
pub struct SupervisorOptions {
    /// Use process groups plus labels even where cgroup v2 works (tests,
    /// or hosts where the cgroup tree must not be touched).
    pub force_process_groups: bool,
}

/// How a supervisor contains its process trees.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Containment {
    /// Each leaf is a cgroup under `owner`; killing it kills every process
    /// in it, whatever they did to their session or parentage.
    Cgroup {
        /// The owner cgroup (`<own cgroup2>/talon/owner-<pid>-<starttime>-<n>`).
        owner: PathBuf,
        /// Whether the kernel has `cgroup.kill` (else: freeze, kill each
        /// pid, thaw).
        cgroup_kill: bool,
        /// The limits that can be enforced, with where (`cgroup2` or the
        /// v1 hierarchy's directory).
        limits: BTreeMap<LimitKind, String>,
    },
    /// No usable cgroup v2: each leaf is a process group whose processes
    /// carry the `TALON_PROC_LEAF` label in their environment, and this
    /// process is a child subreaper so orphans stay below it. A process
    /// that clears its environment after its parent exited escapes.
    ProcessGroup {
        /// Why cgroups are not used.
        reason: String,
    },
}

impl Containment {
    /// `cgroup` or `process-group`, for health output and metrics.
    pub fn mode(&self) -> &'static str {
        match self {
            Containment::Cgroup { .. } => "cgroup",
            Containment::ProcessGroup { .. } => "process-group",
        }
    }
}

/// What the startup sweep ended.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SweepReport {
    /// Owner cgroups of dead owners that were killed and removed.
    pub owner_cgroups: Vec<String>,
    /// Labelled processes of dead owners that were killed.
    pub labelled_pids: Vec<u32>,
}

#[derive(Debug)]
enum Mode {
    Cgroup(Layout),
    ProcessGroup,
}

/// Owns every process tree this process starts. See the crate docs.
#[derive(Debug)]
pub struct Supervisor {
    /// `<pid>-<starttime>-<instance>`: owner directory suffix and label
    /// prefix.
    tag: String,
    mode: Mode,
    containment: Containment,
    next_leaf: AtomicU64,
    watchdog: Mutex<Option<Watchdog>>,
    swept: SweepReport,
}

static INSTANCE: AtomicU64 = AtomicU64::new(0);
static SHARED: OnceLock<Result<Arc<Supervisor>, Arc<ProcTreeError>>> = OnceLock::new();

impl Supervisor {
    /// Starts a supervisor: detects cgroup v2 from `/proc/self/mountinfo`,
    /// creates this owner's cgroup (or falls back to process groups, with
    /// one warning saying why), kills and removes what dead owners left
    /// behind, and starts the parent-death watchdog. Everything is done
    /// when this returns, so call it before serving.
    pub fn start(options: SupervisorOptions) -> Result<Arc<Supervisor>, ProcTreeError> {
        let pid = std::process::id();
        let starttime = procfs::stat(pid).map(|s| s.starttime).ok_or_else(|| {
            io("read", format!("/proc/{pid}/stat"))(std::io::Error::other(
                "cannot read this process's start time",
            ))
        })?;
        let instance = INSTANCE.fetch_add(1, Ordering::SeqCst);
        let tag = format!("{pid}-{starttime}-{instance}");
        let owner_name = format!("owner-{tag}");
        let (found, layout) = match Hierarchies::of_self() {
            Ok(found) => {
                let layout = if options.force_process_groups {
                    Err(CgroupUnavailable::Forced)
                } else {
                    Layout::create(&found, &owner_name)
                };
                (Some(found), layout)
            }
            Err(_) if options.force_process_groups => (None, Err(CgroupUnavailable::Forced)),
            Err(e) => (None, Err(e)),
        };
        let mut swept = SweepReport::default();
        if let Some(found) = &found {
            // Sweep even when this run falls back: a previous run may have
            // had cgroups.
            if let Some(unified) = &found.unified {
                let v1_roots: Vec<PathBuf> = LimitKind::ALL
                    .iter()
                    .filter_map(|k| found.v1.get(k.controller()))
                    .map(|d| d.join(cgroup::ROOT_NAME))
                    .collect();
                swept.owner_cgroups =
                    cgroup::sweep_dead_owners(&unified.join(cgroup::ROOT_NAME), &v1_roots);
                // An empty v1 `talon` directory is created again with the
                // first limited leaf.
                for root in &v1_roots {
                    let _ = std::fs::remove_dir(root);
                }
            }
        }
        swept.labelled_pids = sweep_dead_labels();
        if !swept.owner_cgroups.is_empty() || !swept.labelled_pids.is_empty() {
            tracing::warn!(
                owners = ?swept.owner_cgroups,
                pids = ?swept.labelled_pids,
                "killed process trees left behind by a dead owner"
            );
        }
        let (mode, containment, watchdog) = match layout {
            Ok(layout) => {
                let watchdog = match Watchdog::for_cgroups(&layout.owner_dirs()) {
                    Ok(w) => w,
                    Err(e) => {
                        remove_owner(&layout);
                        return Err(e);
                    }
                };
                let limits = layout
                    .limits
                    .iter()
                    .map(|(kind, home)| {
                        let place = match home {
                            LimitHome::Unified => "cgroup2".to_owned(),
                            LimitHome::V1 { owner, .. } => owner.display().to_string(),
                        };
                        (*kind, place)
                    })
                    .collect();
                let containment = Containment::Cgroup {
                    owner: layout.v2_owner.clone(),
                    cgroup_kill: layout.cgroup_kill,
                    limits,
                };
                tracing::info!(owner = %layout.v2_owner.display(), cgroup_kill = layout.cgroup_kill, "process trees are contained in cgroups");
                (Mode::Cgroup(layout), containment, watchdog)
            }
            Err(reason) => {
                if !options.force_process_groups {
                    tracing::warn!(
                        %reason,
                        "cgroup v2 containment is unavailable; process trees are contained by process groups, labels and a child subreaper (a process that clears its environment after its parent exits can escape)"
                    );
                }
                if let Err(e) = nix::sys::prctl::set_child_subreaper(true) {
                    tracing::warn!(error = %e, "cannot become a child subreaper");
                }
                let watchdog = Watchdog::for_labels(&format!("{tag}-"))?;
                (
                    Mode::ProcessGroup,
                    Containment::ProcessGroup {
                        reason: reason.to_string(),
                    },
                    watchdog,
                )
            }
        };
        Ok(Arc::new(Supervisor {
            tag,
            mode,
            containment,
            next_leaf: AtomicU64::new(0),
            watchdog: Mutex::new(Some(watchdog)),
            swept,
        }))
    }

    /// The process-wide supervisor, started with default options on first
    /// use. A gateway calls this before serving so the sweep runs first.
    /// A failed start is remembered and returned on every call.
    pub fn shared() -> Result<Arc<Supervisor>, ProcTreeError> {
        SHARED
            .get_or_init(|| Supervisor::start(SupervisorOptions::default()).map_err(Arc::new))
            .clone()
            .map_err(ProcTreeError::Shared)
    }

    /// The process-wide supervisor if [`Supervisor::shared`] started it
    /// successfully; never starts one (for health reports).
    pub fn shared_if_started() -> Option<Arc<Supervisor>> {
        SHARED.get()?.as_ref().ok().cloned()
    }

    /// How process trees are contained.
    pub fn containment(&self) -> &Containment {
        &self.containment
    }

    /// What the startup sweep ended.
    pub fn swept(&self) -> &SweepReport {
        &self.swept
    }

    /// This owner's tag (`<pid>-<starttime>-<instance>`), the prefix of its
    /// leaves' ids.
    pub fn tag(&self) -> &str {
        &self.tag
    }

    /// The watchdog's pid while it is running.
    pub fn watchdog_pid(&self) -> Option<u32> {
        let mut guard = self.watchdog.lock().ok()?;
        let watchdog = guard.as_mut()?;
        watchdog.running().then(|| watchdog.pid())
    }

    /// A new leaf with `limits`. Every set limit is applied or this fails
    /// with [`ProcTreeError::LimitUnavailable`] naming it (in process-group
    /// mode every limit is unavailable).
    pub fn leaf(&self, limits: &Limits) -> Result<Leaf, ProcTreeError> {
        let n = self.next_leaf.fetch_add(1, Ordering::SeqCst);
        let id = format!("{}-{n}", self.tag);
        match &self.mode {
            Mode::Cgroup(layout) => {
                let dirs = layout.create_leaf(&format!("leaf-{n}"), limits)?;
                Ok(Leaf::new(id, dirs))
            }
            Mode::ProcessGroup => {
                let requested = [
                    (LimitKind::Memory, limits.memory_bytes.is_some()),
                    (LimitKind::Pids, limits.pids.is_some()),
                    (LimitKind::Cpus, limits.cpus.is_some()),
                ];
                if let Some((kind, _)) = requested.into_iter().find(|(_, set)| *set) {
                    let reason = match &self.containment {
                        Containment::ProcessGroup { reason } => reason.as_str(),
                        Containment::Cgroup { .. } => "no cgroup",
                    };
                    return Err(ProcTreeError::LimitUnavailable {
                        limit: kind,
                        reason: format!("no cgroup containment here ({reason})"),
                    });
                }
                Ok(Leaf::new(id, Vec::new()))
            }
        }
    }
}

impl Drop for Supervisor {
    fn drop(&mut self) {
        match &self.mode {
            Mode::Cgroup(layout) => remove_owner(layout),
            Mode::ProcessGroup => {
                kill_labels(
                    &format!("{}-", self.tag),
                    Instant::now() + Duration::from_secs(5),
                );
            }
        }
        if let Ok(mut guard) = self.watchdog.lock()
            && let Some(mut watchdog) = guard.take()
        {
            watchdog.stop();
        }
    }
}

fn remove_owner(layout: &Layout) {
    let deadline = Instant::now() + Duration::from_secs(5);
    let dirs = layout.owner_dirs();
    let remaining = cgroup::kill_trees(&dirs, deadline);
    if !remaining.is_empty() {
        tracing::warn!(?remaining, "processes survived the owner's kill");
    }
    for dir in &dirs {
        cgroup::remove_tree(dir, deadline);
    }
    cgroup::remove_empty_roots(&dirs);
}

/// Kills every live process whose label starts with `prefix`, until none
/// is left or `deadline`. Returns the pids killed.
fn kill_labels(prefix: &str, deadline: Instant) -> Vec<u32> {
    kill_matching(|label| label.starts_with(prefix), deadline)
}

fn kill_matching(wanted: impl Fn(&str) -> bool, deadline: Instant) -> Vec<u32> {
    let mut killed = Vec::new();
    loop {
        let live: Vec<u32> = procfs::all_pids()
            .into_iter()
            .filter(|p| procfs::alive(*p))
            .filter(|p| procfs::label_of(*p).is_some_and(|l| wanted(&l)))
            .collect();
        if live.is_empty() || Instant::now() >= deadline {
            return killed;
        }
        for pid in &live {
            cgroup::sigkill(*pid);
        }
        killed.extend(live);
        std::thread::sleep(Duration::from_millis(2));
    }
}

/// Kills labelled processes whose owner (named by the label) is dead.
fn sweep_dead_labels() -> Vec<u32> {
    let mut killed = kill_matching(
        |label| {
            cgroup::parse_owner(label).is_some_and(|(pid, start)| !procfs::alive_since(pid, start))
        },
        Instant::now() + Duration::from_secs(5),
    );
    killed.sort_unstable();
    killed.dedup();
    if !killed.is_empty() {
        tracing::debug!(
            count = killed.len(),
            var = LABEL_VAR,
            "swept labelled processes"
        );
    }
    killed
}
