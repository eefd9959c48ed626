#![allow(clippy::unwrap_used, clippy::expect_used)]

use pretty_assertions::assert_eq;

use super::*;
use crate::cgroup::Hierarchies;

/// This machine's layout: v1 controllers plus a controller-less cgroup2
/// at `/sys/fs/cgroup/unified`.
const HYBRID: &str = "\
31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu
35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
39 31 0:36 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids
40 31 0:37 / /sys/fs/cgroup/systemd rw,relatime - cgroup cgroup rw,xattr,name=systemd
41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
";

const HYBRID_CGROUP: &str = "\
9:name=systemd:/
8:pids:/
4:memory:/process_api/abc
1:cpu:/
0::/
";

/// A pure cgroup2 host with systemd.
const PURE_V2: &str = "\
22 1 0:20 / /sys rw,nosuid - sysfs sysfs rw
25 22 0:23 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:4 - cgroup2 cgroup2 rw,nsdelegate,memory_recursiveprot
";

#[test]
fn hybrid_mountinfo_lists_v1_controllers_and_the_unified_mount() {
    let mounts = parse_mountinfo(HYBRID);
    assert_eq!(mounts.len(), 5, "the tmpfs is not a cgroup mount");
    assert_eq!(mounts[0].controllers, vec!["cpu".to_owned()]);
    assert_eq!(mounts[3].controllers, vec!["name=systemd".to_owned()]);
    assert_eq!(
        mounts[4],
        CgroupMount {
            root: "/".to_owned(),
            mount_point: PathBuf::from("/sys/fs/cgroup/unified"),
            unified: true,
            controllers: vec![],
        }
    );
}

#[test]
fn hybrid_hierarchies_resolve_own_directories() {
    let found = Hierarchies::from_texts(HYBRID, HYBRID_CGROUP);
    assert_eq!(found.unified, Some(PathBuf::from("/sys/fs/cgroup/unified")));
    assert_eq!(
        found.v1.get("memory"),
        Some(&PathBuf::from("/sys/fs/cgroup/memory/process_api/abc"))
    );
    assert_eq!(
        found.v1.get("pids"),
        Some(&PathBuf::from("/sys/fs/cgroup/pids"))
    );
    assert_eq!(
        found.v1.get("cpu"),
        Some(&PathBuf::from("/sys/fs/cgroup/cpu"))
    );
}

#[test]
fn pure_v2_resolves_the_service_cgroup() {
    let found = Hierarchies::from_texts(PURE_V2, "0::/system.slice/talon.service\n");
    assert_eq!(
        found.unified,
        Some(PathBuf::from("/sys/fs/cgroup/system.slice/talon.service"))
    );
    assert!(found.v1.is_empty());
}

#[test]
fn no_cgroup2_mount_means_no_unified_directory() {
    let v1_only: String = HYBRID.lines().take(4).map(|l| format!("{l}\n")).collect();
    let found = Hierarchies::from_texts(&v1_only, HYBRID_CGROUP);
    assert_eq!(found.unified, None);
}

#[test]
fn a_mount_of_a_subtree_maps_paths_below_it_only() {
    let mount = CgroupMount {
        root: "/lxc/c1".to_owned(),
        mount_point: PathBuf::from("/sys/fs/cgroup"),
        unified: true,
        controllers: vec![],
    };
    assert_eq!(
        cgroup_dir(&mount, "/lxc/c1/app"),
        Some(PathBuf::from("/sys/fs/cgroup/app"))
    );
    assert_eq!(
        cgroup_dir(&mount, "/lxc/c1"),
        Some(PathBuf::from("/sys/fs/cgroup"))
    );
    assert_eq!(cgroup_dir(&mount, "/lxc/c10"), None);
    assert_eq!(cgroup_dir(&mount, "/other"), None);
    assert_eq!(cgroup_dir(&mount, "/lxc/c1/../x"), None);
}

#[test]
fn escaped_mount_points_are_decoded() {
    let line = "50 31 0:40 / /mnt/my\\040cgroups rw - cgroup2 none rw\n";
    let mounts = parse_mountinfo(line);
    assert_eq!(mounts[0].mount_point, PathBuf::from("/mnt/my cgroups"));
}

#[test]
fn optional_fields_and_garbage_lines_are_handled() {
    let text = "\
36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 shared:2 - cgroup cgroup rw,pids,memory
not a mountinfo line
37 35 98:0 / /x rw - ext4 /dev/sda1 rw
";
    let mounts = parse_mountinfo(text);
    assert_eq!(mounts.len(), 1);
    assert_eq!(mounts[0].root, "/mnt1");
    assert_eq!(
        mounts[0].controllers,
        vec!["pids".to_owned(), "memory".to_owned()]
    );
}

#[test]
fn proc_cgroup_lines_are_split() {
    let members = parse_proc_cgroup(HYBRID_CGROUP);
    assert_eq!(members.len(), 5);
    assert!(members[4].unified);
    assert_eq!(members[2].controllers, vec!["memory".to_owned()]);
    assert_eq!(members[2].path, "/process_api/abc");
}
