//! Watching and snapshot reuse, on the real file system with real `notify`
//! watchers. Versions are polled with a deadline, never waited for with a
//! fixed sleep (except to check that nothing *more* happens).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::fs;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use super::*;
use crate::loader::{EligibilityContext, SkillLimits, SkillRoots};

const DEBOUNCE: Duration = Duration::from_millis(60);
const DEADLINE: Duration = Duration::from_secs(3);

/// Poll `cond` every 5 ms until it holds or the deadline passes.
fn eventually(cond: impl Fn() -> bool) -> bool {
    let start = Instant::now();
    while start.elapsed() < DEADLINE {
        if cond() {
            return true;
        }
        thread::sleep(Duration::from_millis(5));
    }
    cond()
}

/// Long enough for any pending batch to have been delivered (a change is
/// delivered within two debounce times).
fn settle() {
    thread::sleep(DEBOUNCE * 4);
}

fn write_skill(root: &Path, name: &str) {
    let dir = root.join(name);
    fs::create_dir_all(&dir).unwrap();
    fs::write(
        dir.join("SKILL.md"),
        format!("---\nname: {name}\ndescription: The {name} skill\n---\nBody.\n"),
    )
    .unwrap();
}

#[test]
fn a_file_change_bumps_the_version() {
    let tmp = tempfile::tempdir().unwrap();
    write_skill(tmp.path(), "alpha");
    let registry = WatchRegistry::new(DEBOUNCE);
    let watch = registry.watch(tmp.path()).unwrap();
    assert!(watch.exists());
    assert_eq!(watch.version(), 0);

    fs::write(
        tmp.path().join("alpha/SKILL.md"),
        "---\ndescription: changed\n---\n",
    )
    .unwrap();
    assert!(eventually(|| watch.version() >= 1), "no bump after a write");

    // A new skill in a new sub-directory (watched recursively).
    let v = watch.version();
    write_skill(tmp.path(), "beta");
    assert!(eventually(|| watch.version() > v), "no bump after a create");

    // A rename and a removal.
    settle();
    let v = watch.version();
    fs::rename(tmp.path().join("beta"), tmp.path().join("gamma")).unwrap();
    assert!(eventually(|| watch.version() > v), "no bump after a rename");
    settle();
    let v = watch.version();
    fs::remove_dir_all(tmp.path().join("gamma")).unwrap();
    assert!(
        eventually(|| watch.version() > v),
        "no bump after a removal"
    );
}

#[test]
fn reading_files_does_not_bump_the_version() {
    let tmp = tempfile::tempdir().unwrap();
    write_skill(tmp.path(), "alpha");
    let registry = WatchRegistry::new(DEBOUNCE);
    let watch = registry.watch(tmp.path()).unwrap();
    for _ in 0..10 {
        let _ = fs::read_to_string(tmp.path().join("alpha/SKILL.md")).unwrap();
        let _ = fs::read_dir(tmp.path()).unwrap().count();
    }
    settle();
    assert_eq!(watch.version(), 0, "opening and reading is not a change");
}

/// 50 writes well inside one debounce window are one burst. The debouncer
/// delivers events one debounce time after they happened and checks once
/// per tick (tick = debounce), so a burst shorter than the debounce time is
/// delivered in one batch, or two when it straddles a tick: at most two
/// bumps.
#[test]
fn a_burst_of_writes_is_coalesced() {
    let tmp = tempfile::tempdir().unwrap();
    write_skill(tmp.path(), "alpha");
    let debounce = Duration::from_millis(150);
    let registry = WatchRegistry::new(debounce);
    let watch = registry.watch(tmp.path()).unwrap();
    assert_eq!(watch.version(), 0);

    let start = Instant::now();
    for i in 0..50 {
        // New files and rewrites of one file, mixed.
        let path = if i % 2 == 0 {
            tmp.path().join(format!("alpha/file-{i}.txt"))
        } else {
            tmp.path().join("alpha/SKILL.md")
        };
        fs::write(path, format!("---\ndescription: v{i}\n---\n")).unwrap();
    }
    let burst = start.elapsed();
    assert!(
        eventually(|| watch.version() >= 1),
        "no bump after the burst"
    );
    thread::sleep(debounce * 4);
    let bumps = watch.version();
    // A burst longer than the debounce time (a very slow machine) may
    // straddle one more tick per debounce time it lasted.
    let allowed = 2 + (burst.as_millis() / debounce.as_millis()) as u64;
    assert!(
        (1..=allowed).contains(&bumps),
        "{bumps} bumps for one burst of 50 writes in {burst:?}"
    );
}

#[test]
fn agents_sharing_a_root_share_one_watcher() {
    let tmp = tempfile::tempdir().unwrap();
    let shared = tmp.path().join("shared");
    fs::create_dir_all(shared.join("sub")).unwrap();
    let registry = WatchRegistry::new(DEBOUNCE);

    let a = registry.watch(&shared).unwrap();
    let b = registry.watch(&shared.join("sub/..")).unwrap();
    let c = registry.watch(&shared.join(".")).unwrap();
    assert!(a.same_watcher(&b) && a.same_watcher(&c));
    assert_eq!(registry.watcher_count(), 1);
    assert_eq!(a.handle_count(), 3);

    #[cfg(unix)]
    {
        std::os::unix::fs::symlink(&shared, tmp.path().join("link")).unwrap();
        let d = registry.watch(&tmp.path().join("link")).unwrap();
        assert!(a.same_watcher(&d));
        assert_eq!(registry.watcher_count(), 1);
    }

    // Ten agents, each with a workspace of its own but the same three
    // shared roots: watchers grow with directories, not with agents.
    let managed = tmp.path().join("state/skills");
    let personal = tmp.path().join("home/.agents/skills");
    fs::create_dir_all(&managed).unwrap();
    fs::create_dir_all(&personal).unwrap();
    let agents: Vec<_> = (0..10)
        .map(|i| {
            let ws = tmp.path().join(format!("ws{i}"));
            fs::create_dir_all(ws.join("skills")).unwrap();
            let roots = SkillRoots {
                extra: vec![shared.clone()],
                bundled: None,
                managed: Some(managed.clone()),
                personal: Some(personal.clone()),
                project: Some(ws.join(".agents/skills")),
                workspace: Some(ws.join("skills")),
            };
            SkillsSnapshotter::new(
                &registry,
                roots,
                SkillLimits::default(),
                EligibilityContext::default(),
            )
            .unwrap()
        })
        .collect();
    assert_eq!(registry.watcher_count(), 3 + 2 * 10);
    assert!(agents[0].watches()[0].same_watcher(&agents[9].watches()[0]));
    assert!(agents[0].watches()[1].same_watcher(&agents[9].watches()[1]));
    assert!(!agents[0].watches()[4].same_watcher(&agents[9].watches()[4]));

    // One change to the shared root is seen by every agent.
    fs::write(shared.join("note.txt"), "x").unwrap();
    assert!(eventually(|| agents.iter().all(|a| a.versions()[0] >= 1)));

    drop(agents);
    assert_eq!(registry.watcher_count(), 1, "only a, b and c are left");
    drop((a, b, c));
    assert_eq!(registry.watcher_count(), 0);
}

#[test]
fn dropping_the_last_handle_stops_the_watcher() {
    let tmp = tempfile::tempdir().unwrap();
    let registry = WatchRegistry::new(DEBOUNCE);
    let a = registry.watch(tmp.path()).unwrap();
    let b = a.clone();
    assert_eq!(registry.watcher_count(), 1);
    drop(a);
    assert_eq!(registry.watcher_count(), 1);
    assert_eq!(registry.watched_roots(), vec![b.root().to_path_buf()]);
    drop(b);
    assert_eq!(registry.watcher_count(), 0);
    assert!(registry.watched_roots().is_empty());

    // A fresh watch starts a new watcher, at version 0.
    let c = registry.watch(tmp.path()).unwrap();
    assert_eq!(c.version(), 0);
    assert_eq!(registry.watcher_count(), 1);
}

#[test]
fn a_root_created_after_watching_started_is_picked_up() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("ws/.agents/skills");
    let registry = WatchRegistry::new(DEBOUNCE);
    let watch = registry.watch(&root).unwrap();
    assert!(!watch.exists());
    assert_eq!(watch.version(), 0);
    assert_eq!(
        watch.root(),
        fs::canonicalize(tmp.path())
            .unwrap()
            .join("ws/.agents/skills")
    );

    // Unrelated changes next to the missing root are not changes of it.
    fs::write(tmp.path().join("unrelated.txt"), "x").unwrap();
    settle();
    assert_eq!(watch.version(), 0);

    // `mkdir -p` creates three levels at once.
    fs::create_dir_all(&root).unwrap();
    assert!(eventually(|| watch.exists() && watch.version() >= 1));

    // Now the root itself is watched, recursively.
    settle();
    let v = watch.version();
    write_skill(&root, "late");
    assert!(
        eventually(|| watch.version() > v),
        "no bump inside the new root"
    );

    // Removed: back to watching the ancestor; recreated: noticed again.
    settle();
    let v = watch.version();
    fs::remove_dir_all(&root).unwrap();
    assert!(eventually(|| !watch.exists() && watch.version() > v));
    settle();
    let v = watch.version();
    write_skill(&root, "again");
    assert!(eventually(|| watch.exists() && watch.version() > v));
}

#[test]
fn the_missing_part_of_a_root_is_normalised() {
    let tmp = tempfile::tempdir().unwrap();
    let registry = WatchRegistry::new(DEBOUNCE);
    let a = registry.watch(&tmp.path().join("x/../y/./skills")).unwrap();
    let b = registry.watch(&tmp.path().join("y/skills")).unwrap();
    assert!(a.same_watcher(&b));
    assert!(a.root().ends_with("y/skills"));
}

fn key(versions: &[u64], format: u32, filter: Option<&[&str]>) -> SnapshotKey {
    let filter: Option<Vec<String>> = filter.map(|f| f.iter().map(|s| s.to_string()).collect());
    SnapshotKey::new(versions.to_vec(), format, filter.as_deref())
}

#[test]
fn the_cache_rebuilds_only_when_the_key_changes() {
    let cache = SnapshotCache::new();
    let calls = AtomicUsize::new(0);
    let build = |v: u32| {
        calls.fetch_add(1, Ordering::SeqCst);
        v
    };

    let k = key(&[1, 2], 1, None);
    assert_eq!(*cache.get_or_build(&k, || build(1)), 1);
    assert_eq!(*cache.get_or_build(&k, || build(99)), 1, "reused");
    assert_eq!(calls.load(Ordering::SeqCst), 1);

    // A version changed.
    assert_eq!(*cache.get_or_build(&key(&[1, 3], 1, None), || build(2)), 2);
    // The prompt format version changed.
    assert_eq!(*cache.get_or_build(&key(&[1, 3], 2, None), || build(3)), 3);
    // The filter changed: from none to some, then to another.
    assert_eq!(
        *cache.get_or_build(&key(&[1, 3], 2, Some(&["a", "b"])), || build(4)),
        4
    );
    // The same filter in another order, with a duplicate: the same key.
    assert_eq!(
        *cache.get_or_build(&key(&[1, 3], 2, Some(&["b", "a", "b"])), || build(98)),
        4
    );
    assert_eq!(
        *cache.get_or_build(&key(&[1, 3], 2, Some(&["a"])), || build(5)),
        5
    );
    // An empty filter is not "no filter".
    assert_eq!(
        *cache.get_or_build(&key(&[1, 3], 2, Some(&[])), || build(6)),
        6
    );
    assert_eq!(*cache.get_or_build(&key(&[1, 3], 2, None), || build(7)), 7);
    assert_eq!(calls.load(Ordering::SeqCst), 7);
    assert_eq!(cache.builds(), 7);

    cache.invalidate();
    assert_eq!(*cache.get_or_build(&key(&[1, 3], 2, None), || build(8)), 8);
    assert_eq!(cache.builds(), 8);
}

#[test]
fn concurrent_callers_with_one_key_build_once() {
    let cache = SnapshotCache::new();
    let calls = AtomicUsize::new(0);
    let k = key(&[7], 1, None);
    thread::scope(|s| {
        for _ in 0..8 {
            s.spawn(|| {
                let v = cache.get_or_build(&k, || {
                    calls.fetch_add(1, Ordering::SeqCst);
                    thread::sleep(Duration::from_millis(20));
                    42
                });
                assert_eq!(*v, 42);
            });
        }
    });
    assert_eq!(calls.load(Ordering::SeqCst), 1);
}

#[test]
fn the_snapshotter_reuses_until_something_changes() {
    let tmp = tempfile::tempdir().unwrap();
    let ws = tmp.path().join("ws/skills");
    write_skill(&ws, "alpha");
    write_skill(&ws, "beta");
    let roots = SkillRoots {
        managed: Some(tmp.path().join("state/skills")),
        workspace: Some(ws.clone()),
        ..SkillRoots::default()
    };
    let registry = WatchRegistry::new(DEBOUNCE);
    let renders = std::sync::Arc::new(AtomicUsize::new(0));
    let counted = std::sync::Arc::clone(&renders);
    let snap = SkillsSnapshotter::with_renderer(
        &registry,
        roots,
        SkillLimits::default(),
        EligibilityContext::default(),
        move |set, key| {
            counted.fetch_add(1, Ordering::SeqCst);
            format!(
                "format {} with {} skills",
                key.prompt_format_version,
                set.skills.len()
            )
        },
    )
    .unwrap();
    assert_eq!(snap.watches().len(), 2);

    let first = snap.snapshot(1, None);
    assert_eq!(snap.builds(), 1);
    assert_eq!(first.skills.skills.len(), 2);
    for _ in 0..100 {
        let again = snap.snapshot(1, None);
        assert!(std::sync::Arc::ptr_eq(&first, &again));
    }
    assert_eq!(snap.builds(), 1, "nothing changed: no rebuild");
    assert_eq!(renders.load(Ordering::SeqCst), 1);
    assert!(snap.hits() >= 100);

    // A file changes: rebuilt once, then reused again.
    fs::write(ws.join("alpha/SKILL.md"), "---\ndescription: new\n---\n").unwrap();
    assert!(eventually(|| snap.versions()[1] >= 1));
    let second = snap.snapshot(1, None);
    assert!(!std::sync::Arc::ptr_eq(&first, &second));
    assert_eq!(snap.builds(), 2);
    assert_eq!(second.key.versions, snap.versions());
    let _ = snap.snapshot(1, None);
    assert_eq!(snap.builds(), 2);

    // The filter changes.
    let only_alpha = vec!["alpha".to_string()];
    let filtered = snap.snapshot(1, Some(&only_alpha));
    assert_eq!(snap.builds(), 3);
    let names: Vec<&str> = filtered
        .skills
        .skills
        .iter()
        .map(|s| s.name.as_str())
        .collect();
    assert_eq!(names, ["alpha"]);
    let _ = snap.skills(1, Some(&only_alpha));
    assert_eq!(snap.builds(), 3);

    // The prompt format version changes.
    let reformatted = snap.snapshot(2, Some(&only_alpha));
    assert_eq!(snap.builds(), 4);
    assert!(reformatted.prompt.starts_with("format 2"));
    assert_eq!(renders.load(Ordering::SeqCst), 4);

    // The managed root appears later: picked up as a change of its own.
    let v = snap.versions();
    write_skill(&tmp.path().join("state/skills"), "gamma");
    assert!(eventually(|| snap.versions()[0] > v[0]));
    let _ = snap.snapshot(2, Some(&only_alpha));
    assert_eq!(snap.builds(), 5);
}
