#![allow(clippy::unwrap_used, clippy::expect_used)]

use pretty_assertions::assert_eq;

use super::*;

#[test]
fn parse_specs() {
    let b = BindSpec::parse(" /a/b:/c:ro,z ").unwrap();
    assert_eq!(
        (b.source.as_str(), b.target.as_str(), b.options.as_deref()),
        ("/a/b", "/c", Some("ro,z"))
    );
    assert!(b.read_only());
    let b = BindSpec::parse("/a:/c").unwrap();
    assert_eq!(b.options, None);
    assert!(!b.read_only());
    assert!(!BindSpec::parse("/a:/c:rw,z").unwrap().read_only());
    assert!(BindSpec::parse("/a:/c:RO").unwrap().read_only());
    // Windows drive letters stay in the source.
    let b = BindSpec::parse("C:\\Users\\x:/data").unwrap();
    assert_eq!(b.source, "C:\\Users\\x");
    assert_eq!(b.target, "/data");
    // No target: not a bind.
    assert_eq!(BindSpec::parse("/only-source"), None);
    assert_eq!(BindSpec::parse("/a:"), None);
}

#[test]
fn normalize() {
    assert_eq!(
        normalize_absolute("/a//b/./c/../d/").unwrap(),
        PathBuf::from("/a/b/d")
    );
    assert_eq!(normalize_absolute("/../..").unwrap(), PathBuf::from("/"));
    assert_eq!(
        normalize_absolute("/etc/../etc").unwrap(),
        PathBuf::from("/etc")
    );
    assert_eq!(normalize_absolute("rel/x"), None);
}

#[test]
fn realpath_resolves_through_the_deepest_existing_ancestor() {
    let tmp = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(tmp.path()).unwrap();
    std::fs::create_dir(root.join("real")).unwrap();
    std::os::unix::fs::symlink(root.join("real"), root.join("link")).unwrap();
    assert_eq!(
        realpath_through_existing(&root.join("link/missing/leaf")),
        root.join("real/missing/leaf")
    );
    // A dangling link is followed to its target.
    std::os::unix::fs::symlink("/etc/talon-does-not-exist", root.join("dangling")).unwrap();
    assert_eq!(
        realpath_through_existing(&root.join("dangling/x")),
        PathBuf::from("/etc/talon-does-not-exist/x")
    );
    // A relative dangling link resolves against its directory.
    std::os::unix::fs::symlink("real/nothing", root.join("rel")).unwrap();
    assert_eq!(
        realpath_through_existing(&root.join("rel")),
        root.join("real/nothing")
    );
    // `..` climbs from the link's target, not lexically.
    std::fs::create_dir_all(root.join("real/deep")).unwrap();
    std::os::unix::fs::symlink(root.join("real/deep"), root.join("deeplink")).unwrap();
    assert_eq!(
        realpath_through_existing(&root.join("deeplink/../x")),
        root.join("real/x")
    );
    assert_eq!(
        realpath_through_existing(Path::new("/etc/../tmp/./a")),
        PathBuf::from("/tmp/a")
    );
    // A loop ends (bounded), yielding some path rather than hanging.
    std::os::unix::fs::symlink(root.join("loop2"), root.join("loop1")).unwrap();
    std::os::unix::fs::symlink(root.join("loop1"), root.join("loop2")).unwrap();
    let _ = realpath_through_existing(&root.join("loop1/x"));
}
