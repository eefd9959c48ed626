//! Attacks on the bridge's robustness, on the sandbox mount table and on the
//! host-mode bridge, with both resolution strategies: paths past PATH_MAX,
//! NAME_MAX and the depth cap (as given, through symbolic links into deep
//! trees, and by renaming a deep tree deeper), trailing slashes on files,
//! and mount roots under every spelling.

use super::common;

use std::path::{Path, PathBuf};

use common::{CONFIGS, MODES, fixture_cfg, snapshot};
use talon_fs_bridge::{
    Access, FsBridge, FsError, FsErrorCode, MAX_NAME_BYTES, MAX_PATH_BYTES, MAX_PATH_DEPTH,
    MountBridge, WriteOptions,
};

const W: WriteOptions = WriteOptions {
    create_parents: true,
    create_new: false,
};

fn code<T: std::fmt::Debug>(r: Result<T, FsError>) -> FsErrorCode {
    r.unwrap_err().code
}

/// `n` components `a/a/…/a`.
fn chain(n: usize) -> String {
    vec!["a"; n].join("/")
}

/// Depth of the deepest directory below `dir`.
fn depth_below(dir: &Path) -> usize {
    let mut deepest = 0;
    let mut todo = vec![(dir.to_path_buf(), 0usize)];
    while let Some((d, n)) = todo.pop() {
        deepest = deepest.max(n);
        for e in std::fs::read_dir(&d).unwrap() {
            let e = e.unwrap();
            if e.file_type().unwrap().is_dir() {
                todo.push((e.path(), n + 1));
            }
        }
    }
    deepest
}

/// A host-mode bridge over a fresh temp workspace.
fn host_bridge(kernel: bool) -> (tempfile::TempDir, PathBuf, MountBridge) {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().canonicalize().unwrap();
    std::fs::write(root.join("f.txt"), b"file").unwrap();
    let b = MountBridge::host(&root).unwrap();
    b.set_kernel_resolution(kernel);
    (tmp, root, b)
}

#[tokio::test]
async fn paths_past_path_max_name_max_or_the_depth_cap_are_refused_before_anything_is_touched() {
    for (kernel, nested) in CONFIGS {
        let fx = fixture_cfg(kernel, nested);
        let (_host_tmp, host_root, host) = host_bridge(kernel);
        let bridges: [(&MountBridge, PathBuf); 2] = [(&fx.bridge, fx.ws()), (&host, host_root)];
        for (b, root) in bridges {
            let before = snapshot(&root);
            let long = "x".repeat(MAX_PATH_BYTES + 1);
            let long_name = format!("{}.txt", "n".repeat(MAX_NAME_BYTES));
            let too_deep = chain(MAX_PATH_DEPTH + 1);
            let ten_thousand = chain(10_000);
            let dotted = format!("{}a", "./".repeat(MAX_PATH_BYTES));
            for path in [&long, &long_name, &too_deep, &ten_thousand, &dotted] {
                let shown = &path[..16];
                assert_eq!(
                    code(b.write(path, b"x", W).await),
                    FsErrorCode::PathTooLong,
                    "write {shown}"
                );
                assert_eq!(
                    code(b.mkdir(path, true).await),
                    FsErrorCode::PathTooLong,
                    "mkdir {shown}"
                );
                assert_eq!(
                    code(b.read(path, None).await),
                    FsErrorCode::PathTooLong,
                    "read {shown}"
                );
                assert_eq!(
                    code(b.stat(path).await),
                    FsErrorCode::PathTooLong,
                    "stat {shown}"
                );
                assert_eq!(
                    code(b.remove(path, true).await),
                    FsErrorCode::PathTooLong,
                    "remove {shown}"
                );
                assert_eq!(
                    code(b.rename("f.txt", path, false).await),
                    FsErrorCode::PathTooLong,
                    "rename to {shown}"
                );
                assert_eq!(
                    code(b.resolve(path, Access::Write).await),
                    FsErrorCode::PathTooLong,
                    "resolve {shown}"
                );
                let err = b.write(path, b"x", W).await.unwrap_err();
                assert!(
                    err.path.len() < 200,
                    "the error quotes a bounded prefix: {}",
                    err.path.len()
                );
                assert!(err.message.len() < 600, "{}", err.message);
            }
            assert_eq!(
                snapshot(&root),
                before,
                "kernel={kernel} nested={nested}: nothing changed"
            );
            // A name of exactly NAME_MAX bytes is fine.
            let ok_name = "m".repeat(MAX_NAME_BYTES);
            b.write(&ok_name, b"ok", W).await.unwrap();
            assert_eq!(b.read(&ok_name, None).await.unwrap().bytes, b"ok");
        }
    }
}

#[tokio::test]
async fn mkdir_parents_stops_at_the_depth_cap_exactly() {
    for kernel in MODES {
        let fx = fixture_cfg(kernel, false);
        let b = &fx.bridge;
        // `/workspace` is one level; the cap counts namespace components.
        let at_cap = chain(MAX_PATH_DEPTH - 1);
        b.mkdir(&at_cap, true).await.unwrap();
        assert_eq!(depth_below(&fx.ws().join("a")), MAX_PATH_DEPTH - 2);
        let one_more = format!("{at_cap}/a");
        assert_eq!(
            code(b.mkdir(&one_more, true).await),
            FsErrorCode::PathTooLong
        );
        assert_eq!(
            code(b.write(&format!("{one_more}/f"), b"x", W).await),
            FsErrorCode::PathTooLong
        );
        assert_eq!(
            depth_below(&fx.ws().join("a")),
            MAX_PATH_DEPTH - 2,
            "kernel={kernel}"
        );
        // Writing a file at the deepest allowed level works.
        let deepest_file = format!("{}/f", chain(MAX_PATH_DEPTH - 2));
        b.write(&deepest_file, b"deep", W).await.unwrap();
    }
}

#[tokio::test]
async fn a_symlink_into_a_deep_tree_cannot_extend_it_past_the_cap() {
    for (kernel, nested) in CONFIGS {
        let fx = fixture_cfg(kernel, nested);
        let b = &fx.bridge;
        // Something in the sandbox built a tree 200 levels deep and linked
        // to its bottom from the top: the namespace path stays short.
        let deep = fx.ws().join(chain(200));
        std::fs::create_dir_all(&deep).unwrap();
        std::os::unix::fs::symlink(chain(200), fx.ws().join("bottom")).unwrap();
        std::os::unix::fs::symlink(
            format!("/workspace/{}", chain(200)),
            fx.ws().join("bottom_ns"),
        )
        .unwrap();
        for link in ["bottom", "bottom_ns"] {
            let past = format!("{link}/{}/f.txt", chain(60));
            let err = b.write(&past, b"x", W).await.unwrap_err();
            assert_eq!(
                err.code,
                FsErrorCode::PathTooLong,
                "kernel={kernel} nested={nested} {link}: {err}"
            );
            assert_eq!(
                code(b.mkdir(&format!("{link}/{}", chain(60)), true).await),
                FsErrorCode::PathTooLong
            );
            assert!(
                !deep.join(chain(51)).exists(),
                "nothing was created past the cap"
            );
            // Within the cap it works, through the same link.
            b.write(&format!("{link}/{}/g.txt", chain(50)), b"ok", W)
                .await
                .unwrap();
        }
        assert_eq!(depth_below(&fx.ws().join("a")), 249);
    }
}

#[tokio::test]
async fn the_walker_refuses_to_descend_past_the_cap() {
    let fx = fixture_cfg(false, false);
    let deep = fx.ws().join(chain(MAX_PATH_DEPTH + 10));
    std::fs::create_dir_all(&deep).unwrap();
    std::fs::write(deep.join("f.txt"), b"deep").unwrap();
    // A link whose target is the whole chain, spelled relative.
    std::os::unix::fs::symlink(chain(MAX_PATH_DEPTH + 10), fx.ws().join("down")).unwrap();
    let err = fx.bridge.read("down/f.txt", None).await.unwrap_err();
    assert_eq!(err.code, FsErrorCode::PathTooLong, "{err}");
}

#[tokio::test]
async fn renaming_a_deep_tree_deeper_is_refused() {
    for kernel in MODES {
        let fx = fixture_cfg(kernel, false);
        let b = &fx.bridge;
        b.mkdir(&format!("t/{}", chain(150)), true).await.unwrap();
        b.mkdir(&format!("u/{}", chain(150)), true).await.unwrap();
        let into = format!("u/{}/t", chain(150));
        let err = b.rename("t", &into, false).await.unwrap_err();
        assert_eq!(err.code, FsErrorCode::PathTooLong, "kernel={kernel}: {err}");
        assert!(fx.ws().join("t").is_dir(), "the source stayed");
        assert_eq!(depth_below(&fx.ws().join("u")), 150);
        // Moving the same tree sideways (no deeper) is fine.
        b.rename("t", "t2", false).await.unwrap();
        assert_eq!(depth_below(&fx.ws().join("t2")), 150);
    }
}

#[tokio::test]
async fn a_host_path_past_path_max_is_not_created_even_when_the_namespace_path_fits() {
    let fx = fixture_cfg(true, false);
    let b = &fx.bridge;
    // 16 names (15 of NAME_MAX) filling the namespace path to PATH_MAX
    // exactly under `/workspace/`; the host root in front of them is longer
    // than `/workspace`, so the host path would not fit.
    let name = "d".repeat(MAX_NAME_BYTES);
    let rel_len = MAX_PATH_BYTES - "/workspace/".len();
    let last = "e".repeat(rel_len - 15 * (MAX_NAME_BYTES + 1));
    let mut parts = vec![name.as_str(); 15];
    parts.push(&last);
    let ns = parts.join("/");
    assert_eq!(ns.len(), rel_len);
    assert!(fx.ws().as_os_str().len() > "/workspace".len());
    let err = b.write(&ns, b"x", W).await.unwrap_err();
    assert_eq!(err.code, FsErrorCode::PathTooLong, "{err}");
    assert!(!fx.ws().join(&name).exists());
    parts.truncate(12);
    b.write(&parts.join("/"), b"x", W).await.unwrap();
}

#[tokio::test]
async fn a_trailing_slash_on_a_file_is_not_a_directory() {
    for (kernel, nested) in CONFIGS {
        let fx = fixture_cfg(kernel, nested);
        let (_host_tmp, host_root, host) = host_bridge(kernel);
        let cases: [(&MountBridge, PathBuf, &str); 3] = [
            (&fx.bridge, fx.ws(), "inside.txt"),
            (&fx.bridge, fx.ws(), "link_in"),
            (&host, host_root, "f.txt"),
        ];
        for (b, root, file) in cases {
            let before = snapshot(&root);
            for path in [format!("{file}/"), format!("{file}//"), format!("{file}/.")] {
                let ctx = format!("kernel={kernel} nested={nested} {path}");
                let nd = FsErrorCode::NotADirectory;
                assert_eq!(code(b.read(&path, None).await), nd, "read {ctx}");
                assert_eq!(code(b.write(&path, b"new", W).await), nd, "write {ctx}");
                assert_eq!(
                    code(b.edit(&path, &|_: &[u8]| Ok(b"new".to_vec())).await),
                    nd,
                    "edit {ctx}"
                );
                assert_eq!(code(b.stat(&path).await), nd, "stat {ctx}");
                assert_eq!(code(b.list(&path).await), nd, "list {ctx}");
                assert_eq!(
                    code(b.resolve(&path, Access::Read).await),
                    nd,
                    "resolve {ctx}"
                );
                assert_eq!(code(b.remove(&path, false).await), nd, "remove {ctx}");
                assert_eq!(
                    code(b.rename(&path, "moved", false).await),
                    nd,
                    "rename {ctx}"
                );
                let err = b.read(&path, None).await.unwrap_err();
                assert!(err.message.contains("drop the trailing `/`"), "{err}");
            }
            // A new name with a trailing slash creates no file and no directory.
            assert_eq!(
                code(b.write("fresh.txt/", b"x", W).await),
                FsErrorCode::NotADirectory
            );
            assert_eq!(snapshot(&root), before, "nothing changed");
            // The spelling without the slash still works.
            b.read(file, None).await.unwrap();
        }
        // A directory with a trailing slash stays a directory.
        let b = &fx.bridge;
        assert_eq!(code(b.read("sub/", None).await), FsErrorCode::NotAFile);
        assert_eq!(
            code(b.write("link_dir_in/", b"x", W).await),
            FsErrorCode::NotAFile
        );
        assert_eq!(b.list("link_dir_in/").await.unwrap().len(), 1);
        assert!(b.stat("sub/").await.is_ok());
    }
}

#[tokio::test]
async fn mount_roots_are_never_removed_or_renamed_under_any_spelling() {
    for (kernel, nested) in CONFIGS {
        let fx = fixture_cfg(kernel, nested);
        let b = &fx.bridge;
        let before = snapshot(&fx.root());
        let mut roots = vec![
            "/workspace",
            "/workspace/",
            "/workspace//",
            ".",
            "./",
            "sub/..",
            "link_dir_in/..",
            "/workspace/sub/../.",
            "/agent",
            "/agent/",
        ];
        if nested {
            roots.extend(["/workspace/skills", "skills", "skills/", "skills/x/.."]);
        }
        for root in roots {
            for recursive in [false, true] {
                let err = b.remove(root, recursive).await.unwrap_err();
                assert_eq!(err.code, FsErrorCode::MountRoot, "remove {root}: {err}");
                assert!(err.message.contains("mount root"), "{err}");
            }
            assert_eq!(
                code(b.rename(root, "elsewhere", true).await),
                FsErrorCode::MountRoot,
                "rename {root}"
            );
            assert_eq!(
                code(b.rename("inside.txt", root, true).await),
                FsErrorCode::MountRoot,
                "rename onto {root}"
            );
            assert_eq!(
                code(b.rename("sub", root, true).await),
                FsErrorCode::MountRoot,
                "rename dir onto {root}"
            );
        }
        if nested {
            // Reached through a symbolic link: resolution lands on the
            // nested mount's root, which is refused as well.
            for path in ["to_skills/", "/workspace/deep/../to_skills/."] {
                assert_eq!(
                    code(b.remove(path, true).await),
                    FsErrorCode::MountRoot,
                    "{path}"
                );
                assert_eq!(
                    code(b.rename(path, "x", true).await),
                    FsErrorCode::MountRoot,
                    "{path}"
                );
            }
        }
        assert_eq!(
            snapshot(&fx.root()),
            before,
            "kernel={kernel} nested={nested}"
        );
    }
    for kernel in MODES {
        let (_tmp, root, b) = host_bridge(kernel);
        let before = snapshot(&root);
        let spelled = root.to_str().unwrap().to_owned();
        for path in [spelled.as_str(), &format!("{spelled}/"), ".", "./", "x/.."] {
            assert_eq!(
                code(b.remove(path, true).await),
                FsErrorCode::MountRoot,
                "host remove {path}"
            );
            assert_eq!(
                code(b.rename(path, "y", true).await),
                FsErrorCode::MountRoot,
                "host rename {path}"
            );
            assert_eq!(
                code(b.rename("f.txt", path, true).await),
                FsErrorCode::MountRoot,
                "host rename onto {path}"
            );
        }
        assert_eq!(snapshot(&root), before);
        assert!(root.is_dir());
    }
}
