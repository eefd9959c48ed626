//! Limits through the controllers this machine has (here the cgroup v1
//! hierarchies; cgroup2 controllers where they are enabled).

use std::time::Duration;

use talon_proc_tree::{Containment, LimitKind, Limits, Supervisor};

use super::util::expect_cgroups;

#[test]
fn a_pids_limit_stops_a_fork_loop_and_memory_and_cpu_are_written() {
    let supervisor = Supervisor::shared().unwrap();
    let Containment::Cgroup { limits, .. } = supervisor.containment() else {
        assert!(!expect_cgroups(), "this machine should have cgroups");
        return;
    };
    for kind in [LimitKind::Pids, LimitKind::Memory, LimitKind::Cpus] {
        assert!(
            limits.contains_key(&kind),
            "{kind} cannot be enforced here: {limits:?}"
        );
    }
    let leaf = supervisor
        .leaf(&Limits {
            memory_bytes: Some(256 << 20),
            pids: Some(4),
            cpus: Some(0.5),
        })
        .unwrap();
    // The shell itself is one task; at most three more sleeps fit.
    let out = leaf
        .command(
            "/bin/sh",
            [
                "-c",
                "n=0; for i in 1 2 3 4 5 6 7 8; do sleep 30 >/dev/null 2>&1 & [ $? -eq 0 ] && n=$((n+1)); done 2>/dev/null; echo $n",
            ],
            [("PATH", "/usr/bin:/bin")],
        )
        .output()
        .unwrap();
    let started: u32 = String::from_utf8_lossy(&out.stdout)
        .trim()
        .parse()
        .unwrap_or(0);
    assert!(
        started < 8,
        "pids.max=4 should stop some of the 8 forks, {started} started"
    );
    let dirs = leaf.cgroup_dirs().to_vec();
    let read = |file: &str| {
        dirs.iter()
            .map(|d| d.join(file))
            .find(|p| p.exists())
            .map(|p| std::fs::read_to_string(p).unwrap().trim().to_owned())
    };
    assert_eq!(read("pids.max").as_deref(), Some("4"));
    let memory = read("memory.max")
        .or_else(|| read("memory.limit_in_bytes"))
        .unwrap();
    assert_eq!(memory, (256u64 << 20).to_string());
    let cpu = read("cpu.max")
        .or_else(|| read("cpu.cfs_quota_us"))
        .unwrap();
    assert!(cpu.starts_with("50000"), "{cpu}");
    leaf.kill().unwrap();
    for dir in &dirs {
        super::util::wait_until("the leaf is removed", Duration::from_secs(5), || {
            !dir.exists()
        });
    }
}
