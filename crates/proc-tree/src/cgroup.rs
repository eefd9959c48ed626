//! The cgroup side: finding this process's cgroups, creating the owner and
//! leaf directories, applying limits, killing everything inside a
//! directory tree and removing it.

use std::collections::{BTreeMap, BTreeSet};
use std::io::ErrorKind;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;

use crate::error::{ProcTreeError, io};
use crate::limits::{LimitKind, Limits};
use crate::mountinfo::{CgroupMount, Membership, cgroup_dir, parse_mountinfo, parse_proc_cgroup};
use crate::procfs;
use crate::spawn::{ChildCommand, ChildEnv, ProcessGroup};

/// The directory under this process's own cgroup that holds every owner
/// cgroup (stable across restarts, so a later process can sweep it).
pub(crate) const ROOT_NAME: &str = "talon";

/// Where one limit is enforced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum LimitHome {
    /// A cgroup2 controller enabled for the owner's children.
    Unified,
    /// The owner directory in the v1 hierarchy of the controller.
    V1 { root: PathBuf, owner: PathBuf },
}

/// The cgroup directories of one supervisor.
#[derive(Debug, Clone)]
pub(crate) struct Layout {
    /// `<own cgroup2>/talon`.
    pub(crate) v2_root: PathBuf,
    /// `<own cgroup2>/talon/owner-...`.
    pub(crate) v2_owner: PathBuf,
    /// Whether the kernel has `cgroup.kill`.
    pub(crate) cgroup_kill: bool,
    /// Where each enforceable limit is enforced.
    pub(crate) limits: BTreeMap<LimitKind, LimitHome>,
    /// Why each other limit cannot be enforced.
    pub(crate) missing: BTreeMap<LimitKind, String>,
}

/// Why cgroup containment is unavailable (the supervisor then falls back
/// to process groups and reports this as
/// [`Containment::ProcessGroup`](crate::Containment)'s reason).
#[derive(Debug, thiserror::Error)]
pub(crate) enum CgroupUnavailable {
    /// `SupervisorOptions::force_process_groups` is set.
    #[error("forced by SupervisorOptions::force_process_groups")]
    Forced,
    /// A `/proc/self` file cannot be read.
    #[error("cannot read {path}: {source}")]
    Read {
        /// The file.
        path: &'static str,
        /// The OS error.
        source: std::io::Error,
    },
    /// No cgroup2 hierarchy holds this process.
    #[error("no cgroup2 hierarchy is mounted for this process")]
    NoUnified,
    /// The `talon` directory under this process's cgroup cannot be created.
    #[error("cannot create {}: {source} (cgroup v2 delegation is unavailable)", path.display())]
    CreateRoot {
        /// The directory.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
    /// The owner or probe directory cannot be created.
    #[error("cannot create {}: {source}", path.display())]
    Create {
        /// The directory.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
    /// The probe ran but could not join a cgroup under the owner.
    #[error(
        "a process cannot join a cgroup under {} (probe exited with {status}); cgroup v2 delegation is unavailable",
        owner.display()
    )]
    JoinRefused {
        /// The owner directory.
        owner: PathBuf,
        /// How the probe exited.
        status: std::process::ExitStatus,
    },
    /// The probe could not be run.
    #[error("cannot run the cgroup probe: {source}")]
    Probe {
        /// The OS error.
        source: std::io::Error,
    },
}

/// What was found in `/proc/self/{mountinfo,cgroup}`.
#[derive(Debug, Clone)]
pub(crate) struct Hierarchies {
    /// This process's cgroup2 directory.
    pub(crate) unified: Option<PathBuf>,
    /// This process's directory in each v1 hierarchy, by controller.
    pub(crate) v1: BTreeMap<String, PathBuf>,
}

impl Hierarchies {
    /// Reads this process's hierarchies.
    pub(crate) fn of_self() -> Result<Hierarchies, CgroupUnavailable> {
        let read = |path: &'static str| {
            std::fs::read_to_string(path).map_err(|source| CgroupUnavailable::Read { path, source })
        };
        let mountinfo = read("/proc/self/mountinfo")?;
        let cgroup = read("/proc/self/cgroup")?;
        Ok(Hierarchies::from_texts(&mountinfo, &cgroup))
    }

    /// Joins mounts and memberships.
    pub(crate) fn from_texts(mountinfo: &str, cgroup: &str) -> Hierarchies {
        let mounts = parse_mountinfo(mountinfo);
        let members = parse_proc_cgroup(cgroup);
        let unified = members
            .iter()
            .find(|m| m.unified)
            .and_then(|m| first_dir(&mounts, m, |mount| mount.unified));
        let mut v1 = BTreeMap::new();
        for member in members.iter().filter(|m| !m.unified) {
            for controller in &member.controllers {
                let dir = first_dir(&mounts, member, |mount| {
                    !mount.unified && mount.controllers.iter().any(|c| c == controller)
                });
                if let Some(dir) = dir {
                    v1.insert(controller.clone(), dir);
                }
            }
        }
        Hierarchies { unified, v1 }
    }
}

fn first_dir(
    mounts: &[CgroupMount],
    member: &Membership,
    wanted: impl Fn(&CgroupMount) -> bool,
) -> Option<PathBuf> {
    mounts
        .iter()
        .filter(|m| wanted(m))
        .find_map(|m| cgroup_dir(m, &member.path))
}

impl Layout {
    /// Creates `<own>/talon/<owner_name>` in the unified hierarchy (and in
    /// each v1 hierarchy a limit needs), probes that a process can join a
    /// child of it, and works out where each limit is enforced. `Err` is
    /// the reason cgroup containment is unavailable.
    pub(crate) fn create(
        found: &Hierarchies,
        owner_name: &str,
    ) -> Result<Layout, CgroupUnavailable> {
        let own = found.unified.clone().ok_or(CgroupUnavailable::NoUnified)?;
        let v2_root = own.join(ROOT_NAME);
        std::fs::create_dir_all(&v2_root).map_err(|source| CgroupUnavailable::CreateRoot {
            path: v2_root.clone(),
            source,
        })?;
        let v2_owner = v2_root.join(owner_name);
        std::fs::create_dir(&v2_owner).map_err(|source| CgroupUnavailable::Create {
            path: v2_owner.clone(),
            source,
        })?;
        if let Err(reason) = probe_join(&v2_owner) {
            let _ = std::fs::remove_dir(&v2_owner);
            return Err(reason);
        }
        let cgroup_kill = v2_owner.join("cgroup.kill").exists();
        let mut layout = Layout {
            v2_root,
            v2_owner,
            cgroup_kill,
            limits: BTreeMap::new(),
            missing: BTreeMap::new(),
        };
        let available = std::fs::read_to_string(own.join("cgroup.controllers")).unwrap_or_default();
        for kind in LimitKind::ALL {
            let controller = kind.controller();
            let mut why = Vec::new();
            if available.split_whitespace().any(|c| c == controller) {
                match enable_unified(&own, &layout.v2_root, &layout.v2_owner, controller) {
                    Ok(()) => {
                        layout.limits.insert(kind, LimitHome::Unified);
                        continue;
                    }
                    Err(e) => why.push(format!("cgroup2: {e}")),
                }
            } else {
                why.push(format!(
                    "cgroup2: controller `{controller}` is not available in {}",
                    own.display()
                ));
            }
            // The v1 owner directory is created with the first leaf that
            // needs it, so a supervisor that never limits anything leaves
            // the v1 hierarchies untouched.
            match found.v1.get(controller) {
                Some(dir) if dir.is_dir() => {
                    let root = dir.join(ROOT_NAME);
                    let owner = root.join(owner_name);
                    layout.limits.insert(kind, LimitHome::V1 { root, owner });
                    continue;
                }
                Some(dir) => why.push(format!("cgroup v1: {} is not a directory", dir.display())),
                None => why.push(format!("cgroup v1: no `{controller}` hierarchy is mounted")),
            }
            layout.missing.insert(kind, why.join("; "));
        }
        Ok(layout)
    }

    /// Every owner directory (unified first).
    pub(crate) fn owner_dirs(&self) -> Vec<PathBuf> {
        let mut dirs = vec![self.v2_owner.clone()];
        dirs.extend(self.limits.values().filter_map(|home| match home {
            LimitHome::V1 { owner, .. } => Some(owner.clone()),
            LimitHome::Unified => None,
        }));
        dirs.dedup();
        dirs
    }

    /// Creates the leaf directories for `limits` and writes the limits.
    /// Returns the directories (unified first); on error nothing is left.
    pub(crate) fn create_leaf(
        &self,
        name: &str,
        limits: &Limits,
    ) -> Result<Vec<PathBuf>, ProcTreeError> {
        let mut dirs = vec![self.v2_owner.join(name)];
        let mut v1_dirs: BTreeSet<PathBuf> = BTreeSet::new();
        let requested = [
            (LimitKind::Memory, limits.memory_bytes.is_some()),
            (LimitKind::Pids, limits.pids.is_some()),
            (LimitKind::Cpus, limits.cpus.is_some()),
        ];
        let mut plan: Vec<(PathBuf, &'static str, String)> = Vec::new();
        for (kind, set) in requested {
            if !set {
                continue;
            }
            let home = self
                .limits
                .get(&kind)
                .ok_or_else(|| ProcTreeError::LimitUnavailable {
                    limit: kind,
                    reason: self
                        .missing
                        .get(&kind)
                        .cloned()
                        .unwrap_or_else(|| "no controller found".to_owned()),
                })?;
            let dir = match home {
                LimitHome::Unified => dirs[0].clone(),
                LimitHome::V1 { owner, .. } => {
                    std::fs::create_dir_all(owner).map_err(|e| {
                        ProcTreeError::LimitUnavailable {
                            limit: kind,
                            reason: format!("cgroup v1: cannot create {}: {e}", owner.display()),
                        }
                    })?;
                    let dir = owner.join(name);
                    v1_dirs.insert(dir.clone());
                    dir
                }
            };
            let unified = matches!(home, LimitHome::Unified);
            for (file, content) in limit_files(kind, limits, unified)? {
                plan.push((dir.clone(), file, content));
            }
        }
        dirs.extend(v1_dirs);
        let mut made = Vec::new();
        for dir in &dirs {
            if let Err(e) = std::fs::create_dir(dir) {
                remove_dirs(&made);
                return Err(io("create cgroup", dir.clone())(e));
            }
            made.push(dir.clone());
        }
        for (dir, file, content) in plan {
            let path = dir.join(file);
            if let Err(e) = std::fs::write(&path, &content) {
                remove_dirs(&made);
                return Err(io("write limit", path)(e));
            }
        }
        Ok(dirs)
    }
}

/// The files and values that set one limit.
fn limit_files(
    kind: LimitKind,
    limits: &Limits,
    unified: bool,
) -> Result<Vec<(&'static str, String)>, ProcTreeError> {
    const PERIOD_US: u64 = 100_000;
    Ok(match kind {
        LimitKind::Memory => {
            let bytes = limits.memory_bytes.unwrap_or(0);
            if bytes == 0 {
                return Err(ProcTreeError::InvalidLimit {
                    limit: kind,
                    reason: "must be at least 1 byte".to_owned(),
                });
            }
            let file = if unified {
                "memory.max"
            } else {
                "memory.limit_in_bytes"
            };
            vec![(file, bytes.to_string())]
        }
        LimitKind::Pids => {
            let pids = limits.pids.unwrap_or(0);
            if pids == 0 {
                return Err(ProcTreeError::InvalidLimit {
                    limit: kind,
                    reason: "must be at least 1".to_owned(),
                });
            }
            vec![("pids.max", pids.to_string())]
        }
        LimitKind::Cpus => {
            let cpus = limits.cpus.unwrap_or(0.0);
            if !cpus.is_finite() || !(0.01..=4096.0).contains(&cpus) {
                return Err(ProcTreeError::InvalidLimit {
                    limit: kind,
                    reason: format!("{cpus} is not between 0.01 and 4096 CPUs"),
                });
            }
            // Bounded above, so the cast cannot overflow.
            let quota = (cpus * PERIOD_US as f64).round() as u64;
            if unified {
                vec![("cpu.max", format!("{quota} {PERIOD_US}"))]
            } else {
                vec![
                    ("cpu.cfs_period_us", PERIOD_US.to_string()),
                    ("cpu.cfs_quota_us", quota.to_string()),
                ]
            }
        }
    })
}

/// Enables `controller` from this process's cgroup down to the owner's
/// children.
fn enable_unified(own: &Path, root: &Path, owner: &Path, controller: &str) -> std::io::Result<()> {
    let line = format!("+{controller}");
    for dir in [own, root, owner] {
        let path = dir.join("cgroup.subtree_control");
        let current = std::fs::read_to_string(&path)?;
        if current.split_whitespace().any(|c| c == controller) {
            continue;
        }
        std::fs::write(&path, &line)?;
    }
    Ok(())
}

/// Proves that a child process can join a cgroup under `owner` (creation
/// rights are not enough: moving needs write access to the common
/// ancestor's `cgroup.procs`).
fn probe_join(owner: &Path) -> Result<(), CgroupUnavailable> {
    let probe = owner.join("probe");
    std::fs::create_dir(&probe).map_err(|source| CgroupUnavailable::Create {
        path: probe.clone(),
        source,
    })?;
    let procs = probe.join("cgroup.procs");
    let status = ChildCommand::new(crate::leaf::SHELL, ChildEnv::empty(), ProcessGroup::Parent)
        .arg("-c")
        .arg("echo $$ > \"$1\"")
        .arg("talon-proc-tree-probe")
        .arg(&procs)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status();
    let result = match status {
        Ok(s) if s.success() => Ok(()),
        Ok(status) => Err(CgroupUnavailable::JoinRefused {
            owner: owner.to_path_buf(),
            status,
        }),
        Err(e) => Err(CgroupUnavailable::Probe {
            source: e.into_io_error(),
        }),
    };
    remove_tree(&probe, Instant::now() + Duration::from_secs(2));
    result
}

/// Every pid in the cgroup tree at `dir` (its own `cgroup.procs` and every
/// descendant's).
pub(crate) fn procs_in_tree(dir: &Path) -> Vec<u32> {
    let mut out = procfs::read_procs(&dir.join("cgroup.procs"));
    for sub in subdirs(dir) {
        out.extend(procs_in_tree(&sub));
    }
    out
}

fn subdirs(dir: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
                .map(|e| e.path())
                .collect()
        })
        .unwrap_or_default()
}

/// Kills every process in the cgroup trees `dirs` (the first is the
/// unified one, which gets `cgroup.kill` when the kernel has it; otherwise
/// the tree is frozen, every pid is SIGKILLed and it is thawed), until none
/// is alive or `deadline` passes. Returns the pids still alive.
pub(crate) fn kill_trees(dirs: &[PathBuf], deadline: Instant) -> Vec<u32> {
    loop {
        let mut frozen = Vec::new();
        for (i, dir) in dirs.iter().enumerate() {
            if !dir.exists() {
                continue;
            }
            let kill_file = dir.join("cgroup.kill");
            if i == 0 && kill_file.exists() && std::fs::write(&kill_file, "1").is_ok() {
                continue;
            }
            let freeze = dir.join("cgroup.freeze");
            if i == 0 && freeze.exists() && std::fs::write(&freeze, "1").is_ok() {
                frozen.push(freeze);
            }
            for pid in procs_in_tree(dir) {
                sigkill(pid);
            }
        }
        for freeze in frozen {
            let _ = std::fs::write(freeze, "0");
        }
        let remaining: Vec<u32> = dirs
            .iter()
            .flat_map(|d| procs_in_tree(d))
            .filter(|pid| procfs::alive(*pid))
            .collect();
        if remaining.is_empty() || Instant::now() >= deadline {
            return remaining;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
}

pub(crate) fn sigkill(pid: u32) {
    if let Ok(raw) = i32::try_from(pid)
        && raw > 1
    {
        let _ = kill(Pid::from_raw(raw), Signal::SIGKILL);
    }
}

/// Removes a cgroup directory and every cgroup below it, deepest first,
/// retrying while the kernel still counts exiting tasks, until `deadline`.
/// Returns whether it is gone.
pub(crate) fn remove_tree(dir: &Path, deadline: Instant) -> bool {
    loop {
        for sub in subdirs(dir) {
            remove_tree(&sub, deadline);
        }
        match std::fs::remove_dir(dir) {
            Ok(()) => return true,
            Err(e) if e.kind() == ErrorKind::NotFound => return true,
            Err(_) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(2)),
            Err(e) => {
                tracing::warn!(dir = %dir.display(), error = %e, "cannot remove a cgroup");
                return false;
            }
        }
    }
}

/// Removes the `talon` directories above `owners` when they are empty
/// (another live owner keeps them; that is not an error).
pub(crate) fn remove_empty_roots(owners: &[PathBuf]) {
    for owner in owners {
        if let Some(root) = owner.parent()
            && root.file_name().is_some_and(|n| n == ROOT_NAME)
        {
            let _ = std::fs::remove_dir(root);
        }
    }
}

fn remove_dirs(dirs: &[PathBuf]) {
    let deadline = Instant::now() + Duration::from_secs(1);
    for dir in dirs.iter().rev() {
        remove_tree(dir, deadline);
    }
}

/// The pid and start time an owner directory or label names.
pub(crate) fn parse_owner(name: &str) -> Option<(u32, u64)> {
    let rest = name.strip_prefix("owner-").unwrap_or(name);
    let mut parts = rest.split('-');
    let pid = parts.next()?.parse().ok()?;
    let start = parts.next()?.parse().ok()?;
    Some((pid, start))
}

/// Kills and removes every owner directory under `roots` whose owner is no
/// longer alive. Returns the names swept.
pub(crate) fn sweep_dead_owners(v2_root: &Path, v1_roots: &[PathBuf]) -> Vec<String> {
    let mut swept = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(5);
    let Ok(entries) = std::fs::read_dir(v2_root) else {
        return swept;
    };
    let mut names: Vec<String> = entries
        .filter_map(Result::ok)
        .filter_map(|e| e.file_name().into_string().ok())
        .collect();
    for root in v1_roots {
        if let Ok(entries) = std::fs::read_dir(root) {
            names.extend(
                entries
                    .filter_map(Result::ok)
                    .filter_map(|e| e.file_name().into_string().ok()),
            );
        }
    }
    names.sort();
    names.dedup();
    for name in names {
        let Some((pid, start)) = parse_owner(&name) else {
            continue;
        };
        if !name.starts_with("owner-") || procfs::alive_since(pid, start) {
            continue;
        }
        let mut dirs = vec![v2_root.join(&name)];
        dirs.extend(v1_roots.iter().map(|r| r.join(&name)));
        let remaining = kill_trees(&dirs, deadline);
        if !remaining.is_empty() {
            tracing::warn!(owner = %name, ?remaining, "leftover processes of a dead owner survived the sweep");
        }
        for dir in &dirs {
            remove_tree(dir, deadline);
        }
        swept.push(name);
    }
    swept
}

#[cfg(test)]
#[path = "cgroup_tests.rs"]
mod tests;
