#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::*;

#[test]
fn listing_parses_and_drops_unsafe_paths() {
    let raw =
        b"f\t3\t1.5\ta.txt\0d\t0\t0\tsub\0l\t0\t0\tsub/link\0f\t1\t2\t../evil\0f\t1\t2\tx//y\0";
    let tree = parse_listing(raw);
    assert_eq!(tree.files.keys().collect::<Vec<_>>(), ["a.txt"]);
    assert_eq!(tree.files["a.txt"].size, 3);
    assert!(tree.dirs.contains("sub"));
    assert!(tree.links.contains("sub/link"));
}

#[test]
fn excludes_cover_the_path_and_below_only() {
    let ex = vec!["skills".to_owned()];
    assert!(excluded("skills", &ex));
    assert!(excluded("skills/a.md", &ex));
    assert!(!excluded("skillset/a.md", &ex));
}

#[test]
fn host_walk_skips_symlinks() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), b"abc").unwrap();
    std::fs::create_dir(dir.path().join("sub")).unwrap();
    std::fs::write(dir.path().join("sub/b.txt"), b"b").unwrap();
    std::os::unix::fs::symlink("/etc/passwd", dir.path().join("leak")).unwrap();
    let tree = walk_host(dir.path(), &[]).unwrap();
    assert_eq!(
        tree.files.keys().collect::<Vec<_>>(),
        ["a.txt", "sub/b.txt"]
    );
    assert!(tree.dirs.contains("sub"));
}
