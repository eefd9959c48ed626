//! Parent death: an owner process that is SIGKILLed leaves nothing alive;
//! its watchdog kills the tree and removes its cgroup.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::Duration;

use talon_proc_tree::{Containment, Limits, Supervisor, SupervisorOptions};

use super::util::{Seen, assert_all_gone, start_escaping_tree, wait_until};

const ROLE_VAR: &str = "TALON_PROC_TREE_TEST_ROLE";

/// Not a test on its own: run by `owner_death_*` in a child process,
/// where it starts a supervisor and an escaping tree, prints the pids and
/// waits to be killed.
#[test]
fn owner_role() {
    let Ok(role) = std::env::var(ROLE_VAR) else {
        return;
    };
    let supervisor = Supervisor::start(SupervisorOptions {
        force_process_groups: role == "fallback",
    })
    .unwrap();
    let leaf = supervisor.leaf(&Limits::NONE).unwrap();
    let (_child, seen) = start_escaping_tree(&leaf);
    let owner = match supervisor.containment() {
        Containment::Cgroup { owner, .. } => owner.display().to_string(),
        _ => "-".to_owned(),
    };
    let pids: Vec<String> = seen.iter().map(|s| s.pid.to_string()).collect();
    println!(
        "OWNER {} {} {owner} {}",
        supervisor.containment().mode(),
        supervisor.watchdog_pid().unwrap(),
        pids.join(" ")
    );
    std::thread::sleep(Duration::from_secs(60));
}

fn owner_death(role: &str) {
    let mut owner = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "suite::watchdog::owner_role",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(ROLE_VAR, role)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let stdout = owner.stdout.take().unwrap();
    let line = BufReader::new(stdout)
        .lines()
        .map(Result::unwrap)
        .find_map(|l| l.split_once("OWNER ").map(|(_, rest)| rest.to_owned()))
        .expect("the owner printed its tree");
    // libtest prints the test name on the same line, before our output.
    let fields: Vec<&str> = std::iter::once("OWNER")
        .chain(line.split_whitespace())
        .collect();
    let mode = fields[1];
    let watchdog = Seen::new(fields[2].parse().unwrap());
    let owner_dir = fields[3];
    let seen: Vec<Seen> = fields[4..]
        .iter()
        .map(|p| Seen::new(p.parse().unwrap()))
        .collect();
    assert_eq!(seen.len(), 3);
    if role == "fallback" {
        assert_eq!(mode, "process-group");
    }
    assert!(seen.iter().all(Seen::alive));
    owner.kill().unwrap(); // SIGKILL: no destructor runs
    owner.wait().unwrap();
    assert_all_gone(&seen, Duration::from_secs(20));
    assert_all_gone(&[watchdog], Duration::from_secs(20));
    if owner_dir != "-" {
        wait_until(
            "the owner cgroup is removed",
            Duration::from_secs(5),
            || !std::path::Path::new(owner_dir).exists(),
        );
    }
}

#[test]
fn owner_death_kills_the_tree_in_cgroup_mode() {
    owner_death("cgroup");
}

#[test]
fn owner_death_kills_the_tree_in_process_group_mode() {
    owner_death("fallback");
}
