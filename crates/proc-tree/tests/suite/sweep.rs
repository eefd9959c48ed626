//! The startup sweep: leftovers of a dead owner are killed and removed
//! before `Supervisor::start` returns.

use std::process::{Command, Stdio};
use std::time::Duration;

use talon_proc_tree::{LABEL_VAR, Supervisor, SupervisorOptions};

use super::util::{Seen, assert_all_gone, expect_cgroups};

/// A pid that no live process has (above the kernel's pid limit).
const DEAD_PID: u32 = 999_999_999;

#[test]
fn start_sweeps_a_dead_owners_cgroup_and_labelled_processes() {
    // The shared supervisor's own start must not be the sweep under test.
    let shared = Supervisor::shared().unwrap();
    // A leftover labelled process (the process-group mode's trace).
    let mut labelled = Command::new("/bin/sleep")
        .arg("300")
        .env(LABEL_VAR, format!("{DEAD_PID}-1-0-0"))
        .stdin(Stdio::null())
        .spawn()
        .unwrap();
    let labelled_seen = Seen::new(labelled.id());
    // A leftover owner cgroup with a process in it.
    let mut in_cgroup = None;
    let owner_dir = if expect_cgroups() {
        let talon_root = match shared.containment() {
            talon_proc_tree::Containment::Cgroup { owner, .. } => {
                owner.parent().unwrap().to_path_buf()
            }
            other => panic!("expected cgroups, got {other:?}"),
        };
        let dir = talon_root.join(format!("owner-{DEAD_PID}-1-0"));
        let leaf = dir.join("leaf-0");
        let child = Command::new("/bin/sleep")
            .arg("301")
            .stdin(Stdio::null())
            .spawn()
            .unwrap();
        // A supervisor starting in another test process may sweep the
        // leftover between its creation and the move; make it again.
        let mut placed = false;
        for _ in 0..50 {
            std::fs::create_dir_all(&leaf).unwrap();
            match std::fs::write(leaf.join("cgroup.procs"), child.id().to_string()) {
                Ok(()) => {
                    placed = true;
                    break;
                }
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                Err(e) => panic!("cannot move the leftover into its cgroup: {e}"),
            }
        }
        assert!(placed, "the leftover cgroup kept being swept away");
        in_cgroup = Some(child);
        Some(dir)
    } else {
        None
    };
    // Any process starting a supervisor sweeps dead owners' leftovers; one
    // that another test process swept first is gone already.
    let supervisor = Supervisor::start(SupervisorOptions::default()).unwrap();
    let swept = supervisor.swept();
    // Ours swept it, or another test process's supervisor did between our
    // spawn and our start (the sweep is machine-wide by design, and that
    // kill may still be landing); either way it must be gone within the
    // bound `assert_all_gone` gives below, never left running.
    if !swept.labelled_pids.contains(&labelled_seen.pid) {
        eprintln!("the labelled leftover was swept by another process: {swept:?}");
    }
    labelled.wait().unwrap();
    assert_all_gone(&[labelled_seen], Duration::from_secs(1));
    if let (Some(dir), Some(mut child)) = (owner_dir, in_cgroup) {
        let name = dir.file_name().unwrap().to_str().unwrap().to_owned();
        // Another test process may have swept it first; either way it is gone.
        assert!(!dir.exists(), "{} was not removed", dir.display());
        let status = child.wait().unwrap();
        assert!(
            !status.success(),
            "the leftover was killed: {status:?} ({name})"
        );
    }
}
