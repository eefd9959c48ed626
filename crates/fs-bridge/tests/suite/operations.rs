//! What each operation does inside the mounts: read limits, atomic writes
//! that keep permissions, edits that fail cleanly, listing, mkdir, remove,
//! rename, resolve and read-only refusals.

use super::common;

use std::os::unix::fs::PermissionsExt;

use common::{MODES, fixture};
use talon_fs_bridge::{Access, FileKind, FsBridge, FsError, FsErrorCode, WriteOptions};

fn names_in(dir: &std::path::Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

#[tokio::test]
async fn read_caps_at_max_bytes_and_refuses_directories() {
    for kernel in MODES {
        let fx = fixture(kernel);
        let b = &fx.bridge;
        let all = b.read("inside.txt", None).await.unwrap();
        assert_eq!(all.bytes, b"inside");
        assert_eq!(all.total_size, 6);
        assert!(!all.truncated);
        let cut = b.read("/workspace/inside.txt", Some(3)).await.unwrap();
        assert_eq!(cut.bytes, b"ins");
        assert_eq!(cut.total_size, 6);
        assert!(cut.truncated);
        let exact = b.read("inside.txt", Some(6)).await.unwrap();
        assert!(!exact.truncated);
        assert_eq!(
            b.read("sub", None).await.unwrap_err().code,
            FsErrorCode::NotAFile
        );
        assert_eq!(
            b.read("/workspace", None).await.unwrap_err().code,
            FsErrorCode::NotAFile
        );
        assert_eq!(
            b.read("nope.txt", None).await.unwrap_err().code,
            FsErrorCode::NotFound
        );
        assert_eq!(
            b.read("inside.txt/x", None).await.unwrap_err().code,
            FsErrorCode::NotADirectory
        );
    }
}

#[tokio::test]
async fn read_refuses_a_fifo_without_blocking() {
    let fx = fixture(true);
    let status = std::process::Command::new("mkfifo")
        .arg(fx.ws().join("pipe"))
        .status()
        .unwrap();
    assert!(status.success());
    let err = fx.bridge.read("pipe", None).await.unwrap_err();
    assert_eq!(err.code, FsErrorCode::NotAFile);
}

#[tokio::test]
async fn write_is_atomic_and_keeps_permissions() {
    for kernel in MODES {
        let fx = fixture(kernel);
        let b = &fx.bridge;
        for mode in [0o600, 0o755, 0o640] {
            let path = fx.ws().join(format!("m{mode:o}.sh"));
            std::fs::write(&path, b"old").unwrap();
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).unwrap();
            let report = b
                .write(
                    &format!("m{mode:o}.sh"),
                    b"new contents",
                    WriteOptions::default(),
                )
                .await
                .unwrap();
            assert!(!report.created);
            assert_eq!(report.bytes, 12);
            assert_eq!(std::fs::read(&path).unwrap(), b"new contents");
            let got = std::fs::metadata(&path).unwrap().permissions().mode() & 0o7777;
            assert_eq!(got, mode, "mode of m{mode:o}.sh after replace");
        }
        let created = b
            .write("fresh.txt", b"x", WriteOptions::default())
            .await
            .unwrap();
        assert!(created.created);
        let mode = std::fs::metadata(fx.ws().join("fresh.txt"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o700, 0o600, "owner can read and write a new file");
        assert_eq!(mode & 0o111, 0, "a new file is not executable");
        // No temp file is left behind.
        assert!(names_in(&fx.ws()).iter().all(|n| !n.contains("talon-tmp")));
    }
}

#[tokio::test]
async fn write_replaces_the_file_not_its_hard_link_partner_inode() {
    // Atomic replace = a new inode: an old open handle keeps the old bytes.
    let fx = fixture(true);
    let path = fx.ws().join("inside.txt");
    let mut old = std::fs::File::open(&path).unwrap();
    fx.bridge
        .write("inside.txt", b"replaced", WriteOptions::default())
        .await
        .unwrap();
    let mut seen = String::new();
    std::io::Read::read_to_string(&mut old, &mut seen).unwrap();
    assert_eq!(seen, "inside");
    assert_eq!(std::fs::read(&path).unwrap(), b"replaced");
}

#[tokio::test]
async fn write_options_create_new_and_create_parents() {
    for kernel in MODES {
        let fx = fixture(kernel);
        let b = &fx.bridge;
        let no_parents = WriteOptions {
            create_parents: false,
            create_new: false,
        };
        let err = b.write("a/b/c.txt", b"x", no_parents).await.unwrap_err();
        assert_eq!(err.code, FsErrorCode::NotFound);
        assert!(!fx.ws().join("a").exists());
        b.write("a/b/c.txt", b"x", WriteOptions::default())
            .await
            .unwrap();
        assert_eq!(std::fs::read(fx.ws().join("a/b/c.txt")).unwrap(), b"x");
        let create_new = WriteOptions {
            create_parents: true,
            create_new: true,
        };
        let err = b.write("a/b/c.txt", b"y", create_new).await.unwrap_err();
        assert_eq!(err.code, FsErrorCode::AlreadyExists);
        assert_eq!(std::fs::read(fx.ws().join("a/b/c.txt")).unwrap(), b"x");
        assert_eq!(names_in(&fx.ws().join("a/b")), vec!["c.txt".to_owned()]);
        b.write("a/b/d.txt", b"d", create_new).await.unwrap();
        let err = b
            .write("sub", b"x", WriteOptions::default())
            .await
            .unwrap_err();
        assert_eq!(err.code, FsErrorCode::NotAFile);
        assert!(fx.ws().join("sub").is_dir());
        let err = b
            .write("inside.txt/child", b"x", WriteOptions::default())
            .await
            .unwrap_err();
        assert_eq!(err.code, FsErrorCode::NotADirectory);
    }
}

#[tokio::test]
async fn a_refused_edit_changes_nothing_and_leaves_no_temp_file() {
    for kernel in MODES {
        let fx = fixture(kernel);
        let b = &fx.bridge;
        let before = names_in(&fx.ws().join("sub"));
        let err = b
            .edit("sub/file.txt", &|_: &[u8]| {
                Err(FsError::rejected("sub/file.txt", "old text not found"))
            })
            .await
            .unwrap_err();
        assert_eq!(err.code, FsErrorCode::Rejected);
        assert_eq!(err.message, "old text not found");
        assert_eq!(
            std::fs::read(fx.ws().join("sub/file.txt")).unwrap(),
            b"sub file"
        );
        assert_eq!(names_in(&fx.ws().join("sub")), before);

        std::fs::set_permissions(
            fx.ws().join("sub/file.txt"),
            std::fs::Permissions::from_mode(0o751),
        )
        .unwrap();
        let report = b
            .edit("sub/file.txt", &|old: &[u8]| Ok(old.to_ascii_uppercase()))
            .await
            .unwrap();
        assert!(!report.created);
        assert_eq!(report.container_path, "/workspace/sub/file.txt");
        assert_eq!(
            std::fs::read(fx.ws().join("sub/file.txt")).unwrap(),
            b"SUB FILE"
        );
        let mode = std::fs::metadata(fx.ws().join("sub/file.txt"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o7777, 0o751);
        assert_eq!(names_in(&fx.ws().join("sub")), before);

        assert_eq!(
            b.edit("missing.txt", &|o: &[u8]| Ok(o.to_vec()))
                .await
                .unwrap_err()
                .code,
            FsErrorCode::NotFound
        );
        assert_eq!(
            b.edit("sub", &|o: &[u8]| Ok(o.to_vec()))
                .await
                .unwrap_err()
                .code,
            FsErrorCode::NotAFile
        );
    }
}

#[tokio::test]
async fn a_replace_that_fails_after_the_temp_file_was_written_cleans_it_up() {
    for kernel in MODES {
        let fx = fixture(kernel);
        let target = fx.ws().join("sub/file.txt");
        // The callback turns the target into a non-empty directory, so the
        // final rename fails after the temp file was created and written.
        let err = fx
            .bridge
            .edit("sub/file.txt", &|_: &[u8]| {
                std::fs::remove_file(&target).unwrap();
                std::fs::create_dir(&target).unwrap();
                std::fs::write(target.join("keep"), b"k").unwrap();
                Ok(b"new".to_vec())
            })
            .await
            .unwrap_err();
        assert_eq!(err.code, FsErrorCode::NotAFile, "{err}");
        assert_eq!(names_in(&fx.ws().join("sub")), vec!["file.txt".to_owned()]);
        assert_eq!(std::fs::read(target.join("keep")).unwrap(), b"k");
    }
}

#[tokio::test]
async fn list_is_sorted_and_reports_symlinks_as_symlinks() {
    for kernel in MODES {
        let fx = fixture(kernel);
        let entries = fx.bridge.list("/workspace").await.unwrap();
        let names: Vec<&str> = entries.iter().map(|e| e.name.as_str()).collect();
        let mut sorted = names.clone();
        sorted.sort();
        assert_eq!(names, sorted);
        assert_eq!(names, names_in(&fx.ws()));
        let kind = |n: &str| entries.iter().find(|e| e.name == n).unwrap().kind;
        assert_eq!(kind("inside.txt"), FileKind::File);
        assert_eq!(kind("sub"), FileKind::Directory);
        assert_eq!(kind("esc_dir_abs"), FileKind::Symlink);
        assert_eq!(kind("link_in"), FileKind::Symlink);
        let inside = entries.iter().find(|e| e.name == "inside.txt").unwrap();
        assert_eq!(inside.size, 6);
        assert_eq!(
            fx.bridge.list("inside.txt").await.unwrap_err().code,
            FsErrorCode::NotADirectory
        );
        assert_eq!(
            fx.bridge.list("nope").await.unwrap_err().code,
            FsErrorCode::NotFound
        );
    }
}

#[tokio::test]
async fn symlink_loops_end_with_an_error() {
    for kernel in MODES {
        let fx = fixture(kernel);
        std::os::unix::fs::symlink("loop_b", fx.ws().join("loop_a")).unwrap();
        std::os::unix::fs::symlink("loop_a", fx.ws().join("loop_b")).unwrap();
        std::os::unix::fs::symlink("self_dir/x", fx.ws().join("self_dir")).unwrap();
        for path in ["loop_a", "loop_b/x", "self_dir/y"] {
            let err = fx.bridge.read(path, None).await.unwrap_err();
            assert_eq!(err.code, FsErrorCode::Io, "{path}: {err}");
            assert!(err.message.contains("symbolic links"), "{err}");
            let err = fx
                .bridge
                .write(path, b"x", WriteOptions::default())
                .await
                .unwrap_err();
            assert_eq!(err.code, FsErrorCode::Io, "{path}: {err}");
        }
    }
}

#[tokio::test]
async fn stat_follows_inside_links_and_reports_kind_size_mode() {
    for kernel in MODES {
        let fx = fixture(kernel);
        let st = fx.bridge.stat("link_in").await.unwrap();
        assert_eq!(st.kind, FileKind::File);
        assert_eq!(st.size, 8);
        assert!(st.modified.is_some());
        let dir = fx.bridge.stat("/workspace").await.unwrap();
        assert_eq!(dir.kind, FileKind::Directory);
        let real = std::fs::metadata(fx.ws().join("inside.txt")).unwrap();
        let st = fx.bridge.stat("inside.txt").await.unwrap();
        assert_eq!(st.mode, real.permissions().mode() & 0o7777);
        assert_eq!(st.modified.unwrap(), real.modified().unwrap());
    }
}

#[tokio::test]
async fn mkdir_plain_recursive_and_existing() {
    for kernel in MODES {
        let fx = fixture(kernel);
        let b = &fx.bridge;
        b.mkdir("newdir", false).await.unwrap();
        assert!(fx.ws().join("newdir").is_dir());
        assert_eq!(
            b.mkdir("newdir", false).await.unwrap_err().code,
            FsErrorCode::AlreadyExists
        );
        b.mkdir("newdir", true).await.unwrap();
        assert_eq!(
            b.mkdir("x/y/z", false).await.unwrap_err().code,
            FsErrorCode::NotFound
        );
        assert!(!fx.ws().join("x").exists());
        b.mkdir("x/y/z/", true).await.unwrap();
        assert!(fx.ws().join("x/y/z").is_dir());
        assert_eq!(
            b.mkdir("inside.txt", true).await.unwrap_err().code,
            FsErrorCode::AlreadyExists
        );
        b.mkdir("link_dir_in/through_link", false).await.unwrap();
        assert!(fx.ws().join("sub/through_link").is_dir());
    }
}

#[tokio::test]
async fn remove_files_links_and_trees() {
    for kernel in MODES {
        let fx = fixture(kernel);
        let b = &fx.bridge;
        b.remove("link_in", false).await.unwrap();
        assert!(std::fs::symlink_metadata(fx.ws().join("link_in")).is_err());
        assert!(fx.ws().join("sub/file.txt").exists(), "link target kept");
        b.remove("link_dir_in", false).await.unwrap();
        assert!(fx.ws().join("sub").is_dir());
        std::fs::create_dir_all(fx.ws().join("tree/a/b")).unwrap();
        std::fs::write(fx.ws().join("tree/a/b/f"), b"f").unwrap();
        std::os::unix::fs::symlink(fx.outside(), fx.ws().join("tree/a/out")).unwrap();
        let err = b.remove("tree", false).await.unwrap_err();
        assert!(err.message.contains("not empty"), "{err}");
        assert!(fx.ws().join("tree/a/b/f").exists());
        b.remove("tree", true).await.unwrap();
        assert!(!fx.ws().join("tree").exists());
        assert!(fx.outside().join("secret.txt").exists());
        assert!(fx.outside().join("sub/deeper.txt").exists());
        b.mkdir("empty", false).await.unwrap();
        b.remove("empty", false).await.unwrap();
        assert!(!fx.ws().join("empty").exists());
        assert_eq!(
            b.remove("nope", false).await.unwrap_err().code,
            FsErrorCode::NotFound
        );
        assert_eq!(
            b.remove("/workspace", true).await.unwrap_err().code,
            FsErrorCode::MountRoot
        );
        assert!(fx.ws().exists());
    }
}

#[tokio::test]
async fn rename_within_a_mount() {
    for kernel in MODES {
        let fx = fixture(kernel);
        let b = &fx.bridge;
        b.rename("inside.txt", "sub/moved.txt", false)
            .await
            .unwrap();
        assert!(!fx.ws().join("inside.txt").exists());
        assert_eq!(
            std::fs::read(fx.ws().join("sub/moved.txt")).unwrap(),
            b"inside"
        );
        let err = b
            .rename("sub/moved.txt", "sub/file.txt", false)
            .await
            .unwrap_err();
        assert_eq!(err.code, FsErrorCode::AlreadyExists);
        assert_eq!(
            std::fs::read(fx.ws().join("sub/file.txt")).unwrap(),
            b"sub file"
        );
        b.rename("sub/moved.txt", "sub/file.txt", true)
            .await
            .unwrap();
        assert_eq!(
            std::fs::read(fx.ws().join("sub/file.txt")).unwrap(),
            b"inside"
        );
        assert_eq!(
            b.rename("nope", "x", false).await.unwrap_err().code,
            FsErrorCode::NotFound
        );
        assert_eq!(
            b.rename("sub/file.txt", "no/such/dir/f", false)
                .await
                .unwrap_err()
                .code,
            FsErrorCode::NotFound
        );
        let err = b.rename("sub", "sub/inner", false).await.unwrap_err();
        assert_eq!(err.code, FsErrorCode::InvalidPath, "{err}");
        // Through an inside directory link: the file moves, the link stays.
        b.rename("link_dir_in/file.txt", "renamed.txt", false)
            .await
            .unwrap();
        assert!(fx.ws().join("renamed.txt").is_file());
    }
}

#[tokio::test]
async fn read_only_mounts_refuse_every_mutation() {
    for kernel in MODES {
        let fx = fixture(kernel);
        let b = &fx.bridge;
        let ro = FsErrorCode::ReadOnly;
        let w = WriteOptions::default();
        assert_eq!(b.write("/agent/n.md", b"x", w).await.unwrap_err().code, ro);
        assert_eq!(
            b.write("/agent/notes.md", b"x", w).await.unwrap_err().code,
            ro
        );
        assert_eq!(
            b.edit("/agent/notes.md", &|o: &[u8]| Ok(o.to_vec()))
                .await
                .unwrap_err()
                .code,
            ro
        );
        assert_eq!(b.mkdir("/agent/d", true).await.unwrap_err().code, ro);
        assert_eq!(
            b.remove("/agent/notes.md", false).await.unwrap_err().code,
            ro
        );
        assert_eq!(
            b.rename("/agent/notes.md", "/agent/n2.md", true)
                .await
                .unwrap_err()
                .code,
            ro
        );
        assert_eq!(
            b.resolve("/agent/notes.md", Access::Write)
                .await
                .unwrap_err()
                .code,
            ro
        );
        let err = b.write("/agent/n.md", b"x", w).await.unwrap_err();
        assert!(
            err.message.contains("/workspace"),
            "says where to write: {err}"
        );
        // Reads work.
        assert_eq!(
            b.read("/agent/notes.md", None).await.unwrap().bytes,
            b"notes"
        );
        let resolved = b.resolve("/agent/notes.md", Access::Read).await.unwrap();
        assert!(resolved.read_only);
        assert_eq!(resolved.mount, "/agent");
        assert_eq!(
            std::fs::read(fx.root().join("agent/notes.md")).unwrap(),
            b"notes"
        );
        assert_eq!(
            names_in(&fx.root().join("agent")),
            vec!["notes.md".to_owned()]
        );
    }
}

#[tokio::test]
async fn rename_across_mounts_is_refused_clearly() {
    let fx = fixture(true);
    let err = fx
        .bridge
        .rename("inside.txt", "/agent/inside.txt", false)
        .await
        .unwrap_err();
    assert_eq!(err.code, FsErrorCode::ReadOnly);
    let tmp = tempfile::tempdir().unwrap();
    std::fs::create_dir(tmp.path().join("a")).unwrap();
    std::fs::create_dir(tmp.path().join("b")).unwrap();
    std::fs::write(tmp.path().join("a/f"), b"f").unwrap();
    let bridge = talon_fs_bridge::MountBridge::new(
        vec![
            talon_fs_bridge::Mount::writable("/a", tmp.path().join("a")),
            talon_fs_bridge::Mount::writable("/b", tmp.path().join("b")),
        ],
        "/a",
    )
    .unwrap();
    let err = bridge.rename("/a/f", "/b/f", false).await.unwrap_err();
    assert_eq!(err.code, FsErrorCode::InvalidPath);
    assert!(err.message.contains("different mounts"), "{err}");
    assert!(tmp.path().join("a/f").exists());
    assert!(!tmp.path().join("b/f").exists());
}

#[tokio::test]
async fn entry_names_that_name_nothing_are_invalid() {
    let fx = fixture(true);
    let b = &fx.bridge;
    let w = WriteOptions::default();
    for path in ["sub/", ".", "sub/..", "/", "sub/."] {
        let code = |e: talon_fs_bridge::FsError| e.code;
        // A directory (or nothing) where write and edit need a file.
        let want = if path == "/" || path == "." || path == "sub/.." {
            FsErrorCode::InvalidPath
        } else {
            FsErrorCode::NotAFile
        };
        assert_eq!(
            code(b.write(path, b"x", w).await.unwrap_err()),
            want,
            "write {path}"
        );
        assert_eq!(
            code(b.edit(path, &|o: &[u8]| Ok(o.to_vec())).await.unwrap_err()),
            want,
            "edit {path}"
        );
        // `.` and `sub/..` are the workspace mount root: never removed.
        let want = if path == "." || path == "sub/.." {
            FsErrorCode::MountRoot
        } else {
            FsErrorCode::InvalidPath
        };
        assert_eq!(
            code(b.remove(path, true).await.unwrap_err()),
            want,
            "remove {path}"
        );
        assert_eq!(
            code(b.rename(path, "x", true).await.unwrap_err()),
            want,
            "rename from {path}"
        );
        assert_eq!(
            code(b.rename("inside.txt", path, true).await.unwrap_err()),
            want,
            "rename to {path}"
        );
    }
    for path in ["", "a\0b"] {
        assert_eq!(
            b.read(path, None).await.unwrap_err().code,
            FsErrorCode::InvalidPath
        );
        assert_eq!(
            b.write(path, b"x", w).await.unwrap_err().code,
            FsErrorCode::InvalidPath
        );
        assert_eq!(
            b.remove(path, true).await.unwrap_err().code,
            FsErrorCode::InvalidPath
        );
    }
    assert!(fx.ws().join("sub").is_dir());
    assert!(fx.ws().join("inside.txt").is_file());
}

#[tokio::test]
async fn resolve_reports_host_path_and_existence() {
    for kernel in MODES {
        let fx = fixture(kernel);
        let b = &fx.bridge;
        let r = b.resolve("sub/file.txt", Access::Read).await.unwrap();
        assert_eq!(r.container_path, "/workspace/sub/file.txt");
        assert_eq!(r.host_path.unwrap(), fx.ws().join("sub/file.txt"));
        assert_eq!(r.mount, "/workspace");
        assert!(r.exists);
        assert!(!r.read_only);
        let r = b
            .resolve("link_dir_in/a/b.txt", Access::Write)
            .await
            .unwrap();
        assert!(!r.exists);
        assert_eq!(r.container_path, "/workspace/link_dir_in/a/b.txt");
        assert_eq!(r.host_path.unwrap(), fx.ws().join("sub/a/b.txt"));
        assert!(!fx.ws().join("sub/a").exists(), "resolve creates nothing");
        let r = b.resolve("/workspace", Access::Read).await.unwrap();
        assert_eq!(r.host_path.unwrap(), fx.ws());
        assert!(r.exists);
        assert_eq!(b.cwd(), "/workspace");
    }
}
