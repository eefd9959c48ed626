//! Process-group mode, forced: the same tree dies, the mode says why, and
//! limits are refused by name.

use std::time::Duration;

use talon_proc_tree::{
    Containment, LimitKind, Limits, ProcTreeError, Supervisor, SupervisorOptions,
};

use super::util::{assert_all_gone, start_escaping_tree};

#[test]
fn forced_fallback_reports_its_mode_and_still_kills_the_whole_tree() {
    let supervisor = Supervisor::start(SupervisorOptions {
        force_process_groups: true,
    })
    .unwrap();
    let Containment::ProcessGroup { reason } = supervisor.containment() else {
        panic!(
            "expected the process-group path, got {:?}",
            supervisor.containment()
        );
    };
    assert!(reason.contains("force_process_groups"), "{reason}");
    assert_eq!(supervisor.containment().mode(), "process-group");
    assert!(
        nix::sys::prctl::get_child_subreaper().unwrap(),
        "fallback makes this process a subreaper"
    );
    let leaf = supervisor.leaf(&Limits::NONE).unwrap();
    assert!(!leaf.is_cgroup());
    let (mut child, seen) = start_escaping_tree(&leaf);
    let listed = leaf.pids();
    for s in &seen {
        assert!(
            listed.contains(&s.pid),
            "leaf.pids() {listed:?} misses {}",
            s.pid
        );
    }
    leaf.kill().unwrap();
    child.wait().unwrap();
    assert_all_gone(&seen, Duration::from_secs(5));
}

#[test]
fn fallback_refuses_limits_by_name() {
    let supervisor = Supervisor::start(SupervisorOptions {
        force_process_groups: true,
    })
    .unwrap();
    let err = supervisor
        .leaf(&Limits {
            pids: Some(10),
            ..Limits::NONE
        })
        .unwrap_err();
    assert!(
        matches!(
            err,
            ProcTreeError::LimitUnavailable {
                limit: LimitKind::Pids,
                ..
            }
        ),
        "{err:?}"
    );
    assert!(err.to_string().contains("pids"), "{err}");
}
