#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::*;

fn table(paths: &[(&str, bool)]) -> (tempfile::TempDir, MountTable) {
    let tmp = tempfile::tempdir().unwrap();
    let mounts = paths
        .iter()
        .enumerate()
        .map(|(i, (p, ro))| {
            let dir = tmp.path().join(format!("m{i}"));
            std::fs::create_dir(&dir).unwrap();
            Mount {
                container_path: (*p).to_owned(),
                host_root: dir,
                read_only: *ro,
            }
        })
        .collect();
    let t = MountTable::open(mounts).unwrap();
    (tmp, t)
}

fn found(t: &MountTable, path: &str) -> Option<(String, String)> {
    t.lookup(path)
        .map(|(i, rel)| (t.mounts[i].container_path.clone(), rel.to_owned()))
}

#[test]
fn longest_prefix_wins_and_matches_whole_components() {
    let (_tmp, t) = table(&[
        ("/workspace", false),
        ("/workspace/skills", true),
        ("/agent", false),
    ]);
    let got = |p| found(&t, p);
    assert_eq!(got("/workspace"), Some(("/workspace".into(), "".into())));
    assert_eq!(
        got("/workspace/a/b"),
        Some(("/workspace".into(), "a/b".into()))
    );
    assert_eq!(
        got("/workspace/skills/x/SKILL.md"),
        Some(("/workspace/skills".into(), "x/SKILL.md".into()))
    );
    assert_eq!(
        got("/workspace/skills"),
        Some(("/workspace/skills".into(), "".into()))
    );
    assert_eq!(
        got("/workspace/skillsX"),
        Some(("/workspace".into(), "skillsX".into()))
    );
    assert_eq!(got("/workspace2/a"), None);
    assert_eq!(got("/agentx"), None);
    assert_eq!(got("/"), None);
    let nested: Vec<bool> = t.mounts.iter().map(|m| m.has_nested).collect();
    // Sorted: /agent, /workspace, /workspace/skills.
    assert_eq!(nested, vec![false, true, false]);
}

#[test]
fn a_root_mount_holds_everything_not_claimed_by_a_longer_one() {
    let (_tmp, t) = table(&[("/", true), ("/data", false)]);
    assert_eq!(found(&t, "/etc/x"), Some(("/".into(), "etc/x".into())));
    assert_eq!(found(&t, "/"), Some(("/".into(), "".into())));
    assert_eq!(found(&t, "/data/f"), Some(("/data".into(), "f".into())));
}

#[test]
fn parent_and_join_helpers() {
    assert_eq!(parent_of("/a/b"), "/a");
    assert_eq!(parent_of("/a"), "/");
    assert_eq!(parent_of("/"), "/");
    assert_eq!(join_absolute::<&str>(&[]), "/");
    assert_eq!(join_absolute(&["a", "b"]), "/a/b");
    assert!(is_under("/a/b", "/a"));
    assert!(is_under("/a", "/a"));
    assert!(!is_under("/ab", "/a"));
    assert!(is_under("/anything", "/"));
}
