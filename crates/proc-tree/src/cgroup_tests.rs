#![allow(clippy::unwrap_used, clippy::expect_used)]

use pretty_assertions::assert_eq;

use super::*;

#[test]
fn owner_names_and_labels_give_pid_and_start_time() {
    assert_eq!(parse_owner("owner-12-3456-0"), Some((12, 3456)));
    assert_eq!(parse_owner("12-3456-0-7"), Some((12, 3456)));
    assert_eq!(parse_owner("owner-x-1"), None);
    assert_eq!(parse_owner("leaf-1"), None);
}

#[test]
fn limit_values_are_checked_and_rendered_per_hierarchy() {
    let limits = Limits {
        memory_bytes: Some(64 << 20),
        pids: Some(16),
        cpus: Some(0.5),
    };
    assert_eq!(
        limit_files(LimitKind::Cpus, &limits, true).unwrap(),
        vec![("cpu.max", "50000 100000".to_owned())]
    );
    assert_eq!(
        limit_files(LimitKind::Cpus, &limits, false).unwrap(),
        vec![
            ("cpu.cfs_period_us", "100000".to_owned()),
            ("cpu.cfs_quota_us", "50000".to_owned())
        ]
    );
    assert_eq!(
        limit_files(LimitKind::Memory, &limits, false).unwrap(),
        vec![("memory.limit_in_bytes", (64u64 << 20).to_string())]
    );
    let bad = Limits {
        cpus: Some(f64::NAN),
        pids: Some(0),
        ..Limits::NONE
    };
    assert!(matches!(
        limit_files(LimitKind::Cpus, &bad, true),
        Err(ProcTreeError::InvalidLimit {
            limit: LimitKind::Cpus,
            ..
        })
    ));
    assert!(matches!(
        limit_files(LimitKind::Pids, &bad, true),
        Err(ProcTreeError::InvalidLimit {
            limit: LimitKind::Pids,
            ..
        })
    ));
}
