//! Lexical normalisation: examples and properties.

use proptest::prelude::*;
use talon_fs_bridge::{FsErrorCode, normalize_path};

#[test]
fn examples() {
    let cases = [
        ("a/b", "/workspace", "/workspace/a/b"),
        ("./a//b/", "/workspace", "/workspace/a/b"),
        ("../x", "/workspace", "/x"),
        ("/workspace/a/../../../etc", "/ignored", "/etc"),
        ("..", "/", "/"),
        ("/", "/workspace", "/"),
        (".", "/workspace/sub", "/workspace/sub"),
        ("a/./b/../c", "/w", "/w/a/c"),
        ("...", "/w", "/w/..."),
    ];
    for (path, cwd, want) in cases {
        assert_eq!(normalize_path(path, cwd).unwrap(), want, "{path} in {cwd}");
    }
    assert_eq!(
        normalize_path("", "/w").unwrap_err().code,
        FsErrorCode::InvalidPath
    );
    assert_eq!(
        normalize_path("a\0b", "/w").unwrap_err().code,
        FsErrorCode::InvalidPath
    );
}

fn segment() -> impl Strategy<Value = String> {
    prop_oneof![
        Just(String::new()),
        Just(".".to_owned()),
        Just("..".to_owned()),
        Just("...".to_owned()),
        "[a-z]{1,3}",
        "[a-z.]{1,4}",
    ]
}

fn path() -> impl Strategy<Value = String> {
    (any::<bool>(), prop::collection::vec(segment(), 0..10)).prop_map(|(abs, segs)| {
        let body = segs.join("/");
        if abs { format!("/{body}") } else { body }
    })
}

proptest! {
    #[test]
    fn normalised_paths_are_absolute_clean_and_stable(p in path(), cwd in path()) {
        prop_assume!(!p.is_empty());
        let cwd = format!("/{cwd}");
        let n = normalize_path(&p, &cwd).unwrap();
        prop_assert!(n.starts_with('/'));
        prop_assert!(n == "/" || !n.ends_with('/'));
        prop_assert!(!n.contains("//"));
        for seg in n.split('/').skip(1) {
            prop_assert!(seg != ".." && seg != ".", "{} has a dot segment", n);
            prop_assert!(n == "/" || !seg.is_empty());
        }
        // Idempotent, whatever the cwd.
        prop_assert_eq!(normalize_path(&n, "/elsewhere").unwrap(), n.clone());
        prop_assert_eq!(normalize_path(&n, &cwd).unwrap(), n.clone());
        // An absolute path ignores the cwd.
        if p.starts_with('/') {
            prop_assert_eq!(normalize_path(&p, "/other/dir").unwrap(), n);
        }
    }
}
