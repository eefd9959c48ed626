//! Cgroup mode: a kill ends setsid'd, double-forked and daemonised
//! descendants, and the leaf directory goes away.

use std::time::Duration;

use talon_proc_tree::{Containment, Limits, Supervisor};

use super::util::{assert_all_gone, expect_cgroups, start_escaping_tree};

#[test]
fn killing_a_leaf_ends_setsid_and_double_forked_descendants() {
    let supervisor = Supervisor::shared().unwrap();
    if expect_cgroups() {
        assert!(
            matches!(supervisor.containment(), Containment::Cgroup { .. }),
            "expected cgroup containment on this machine, got {:?}",
            supervisor.containment()
        );
    }
    let leaf = supervisor.leaf(&Limits::NONE).unwrap();
    let (mut child, seen) = start_escaping_tree(&leaf);
    let mut listed = leaf.pids();
    listed.sort_unstable();
    for s in &seen {
        assert!(s.alive(), "{} should be running before the kill", s.pid);
        assert!(
            listed.contains(&s.pid),
            "leaf.pids() {listed:?} misses {}",
            s.pid
        );
    }
    leaf.kill().unwrap();
    let status = child.wait().unwrap();
    assert!(!status.success(), "the root was killed: {status:?}");
    assert_all_gone(&seen, Duration::from_secs(5));
    for dir in leaf.cgroup_dirs() {
        assert!(!dir.exists(), "{} was not removed", dir.display());
    }
    assert!(leaf.pids().is_empty());
}

#[test]
fn dropping_a_leaf_kills_its_tree() {
    let supervisor = Supervisor::shared().unwrap();
    let leaf = supervisor.leaf(&Limits::NONE).unwrap();
    let (mut child, seen) = start_escaping_tree(&leaf);
    let dirs = leaf.cgroup_dirs().to_vec();
    drop(leaf);
    child.wait().unwrap();
    assert_all_gone(&seen, Duration::from_secs(5));
    for dir in dirs {
        assert!(!dir.exists(), "{} was not removed", dir.display());
    }
}

#[test]
fn a_command_that_exits_leaves_its_daemon_until_the_leaf_is_killed() {
    let supervisor = Supervisor::shared().unwrap();
    let leaf = supervisor.leaf(&Limits::NONE).unwrap();
    let mut child = leaf
        .command(
            "/bin/sh",
            ["-c", "setsid sleep 300 >/dev/null 2>&1 & echo $!"],
            [("PATH", "/usr/bin:/bin")],
        )
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    leaf.set_root_pid(child.id());
    let out = {
        let mut s = String::new();
        std::io::Read::read_to_string(child.stdout.as_mut().unwrap(), &mut s).unwrap();
        s
    };
    assert!(child.wait().unwrap().success());
    let daemon = super::util::Seen::new(out.trim().parse().unwrap());
    assert!(
        daemon.alive(),
        "the daemon outlives its parent until the kill"
    );
    assert_eq!(leaf.pids(), vec![daemon.pid]);
    leaf.kill().unwrap();
    assert_all_gone(&[daemon], Duration::from_secs(5));
}

#[test]
fn a_missing_program_fails_inside_the_wrapper_without_running_anything() {
    let supervisor = Supervisor::shared().unwrap();
    let leaf = supervisor.leaf(&Limits::NONE).unwrap();
    let status = leaf
        .command(
            "/definitely/not/here",
            Vec::<String>::new(),
            [("PATH", "/usr/bin:/bin")],
        )
        .stderr(std::process::Stdio::null())
        .status();
    match status {
        // Process-group mode spawns the program directly.
        Err(e) => assert_eq!(e.kind(), std::io::ErrorKind::NotFound),
        Ok(status) => assert_eq!(status.code(), Some(127)),
    }
}
