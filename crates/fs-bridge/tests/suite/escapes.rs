//! Every escape class against every operation, with each resolution
//! strategy: nothing outside the mounts is read, written, listed, created,
//! removed or renamed, and the refusal carries the right code.

use super::common;

use common::{CONFIGS, Fixture, SECRET, fixture_cfg};
use talon_fs_bridge::{Access, FsBridge, FsError, FsErrorCode, WriteOptions};

/// A way out: a path to a file beyond the boundary, a path to a directory
/// beyond it, and the code the refusal must carry.
struct Case {
    label: &'static str,
    file: String,
    dir: String,
    code: FsErrorCode,
}

fn cases(fx: &Fixture) -> Vec<Case> {
    let outside = fx.outside().display().to_string();
    use FsErrorCode::{Escape, OutsideMounts};
    vec![
        Case {
            label: "dotdot relative",
            file: "../outside/secret.txt".into(),
            dir: "../outside".into(),
            code: OutsideMounts,
        },
        Case {
            label: "dotdot through the mount",
            file: "/workspace/sub/../../outside/secret.txt".into(),
            dir: "/workspace/../outside".into(),
            code: OutsideMounts,
        },
        Case {
            label: "absolute host path",
            file: format!("{outside}/secret.txt"),
            dir: outside.clone(),
            code: OutsideMounts,
        },
        Case {
            label: "absolute system path",
            file: "/etc/passwd".into(),
            dir: "/etc".into(),
            code: OutsideMounts,
        },
        Case {
            label: "symlink to outside file/dir, absolute target",
            file: "esc_file_abs".into(),
            dir: "esc_dir_abs".into(),
            code: Escape,
        },
        Case {
            label: "symlink to outside file/dir, relative target",
            file: "esc_file_rel".into(),
            dir: "esc_dir_rel".into(),
            code: Escape,
        },
        Case {
            label: "file inside a symlinked outside dir",
            file: "esc_dir_abs/secret.txt".into(),
            dir: "esc_dir_rel/sub".into(),
            code: Escape,
        },
        Case {
            label: "relative symlink climbing two levels",
            file: "deep/esc_dir_rel2/secret.txt".into(),
            dir: "deep/esc_dir_rel2".into(),
            code: Escape,
        },
        Case {
            label: "symlink chains",
            file: "chain_a".into(),
            dir: "dchain_a".into(),
            code: Escape,
        },
        Case {
            label: "lexical dotdot then a symlink",
            file: "sub/../esc_dir_rel/secret.txt".into(),
            dir: "sub/../dchain_a/sub".into(),
            code: Escape,
        },
        Case {
            label: "symlink to /proc/self/root",
            file: "magic/etc/passwd".into(),
            dir: "magic/etc".into(),
            code: Escape,
        },
    ]
}

fn assert_refused<T: std::fmt::Debug>(result: Result<T, FsError>, code: FsErrorCode, what: &str) {
    match result {
        Ok(v) => panic!("{what}: expected {code}, got Ok({v:?})"),
        Err(e) => {
            assert_eq!(e.code, code, "{what}: {e}");
            assert!(!e.message.is_empty());
        }
    }
}

#[tokio::test]
async fn every_escape_class_is_refused_by_every_operation() {
    for (kernel, nested) in CONFIGS {
        let fx = fixture_cfg(kernel, nested);
        let before = fx.outside_snapshot();
        let b = &fx.bridge;
        for case in cases(&fx) {
            let what =
                |op: &str| format!("[kernel={kernel} nested={nested}] {} / {op}", case.label);
            let (file, dir, code) = (case.file.as_str(), case.dir.as_str(), case.code);
            assert_refused(b.read(file, None).await, code, &what("read"));
            assert_refused(b.stat(file).await, code, &what("stat"));
            assert_refused(b.stat(dir).await, code, &what("stat dir"));
            assert_refused(b.resolve(file, Access::Read).await, code, &what("resolve"));
            assert_refused(
                b.resolve(dir, Access::Write).await,
                code,
                &what("resolve dir"),
            );
            assert_refused(
                b.write(file, b"pwned", WriteOptions::default()).await,
                code,
                &what("write"),
            );
            assert_refused(
                b.write(&format!("{dir}/new.txt"), b"pwned", WriteOptions::default())
                    .await,
                code,
                &what("write new in dir"),
            );
            assert_refused(
                b.write(
                    &format!("{dir}/a/b/new.txt"),
                    b"pwned",
                    WriteOptions::default(),
                )
                .await,
                code,
                &what("write under missing parents"),
            );
            assert_refused(
                b.edit(file, &|_: &[u8]| Ok(b"pwned".to_vec())).await,
                code,
                &what("edit"),
            );
            assert_refused(b.list(dir).await, code, &what("list"));
            assert_refused(
                b.mkdir(&format!("{dir}/newdir"), false).await,
                code,
                &what("mkdir"),
            );
            assert_refused(
                b.mkdir(&format!("{dir}/x/y"), true).await,
                code,
                &what("mkdir -p"),
            );
            assert_refused(
                b.remove(&format!("{dir}/secret.txt"), false).await,
                code,
                &what("remove"),
            );
            assert_refused(
                b.remove(&format!("{dir}/sub"), true).await,
                code,
                &what("remove -r"),
            );
            assert_refused(
                b.rename(&format!("{dir}/secret.txt"), "stolen.txt", false)
                    .await,
                code,
                &what("rename out"),
            );
            assert_refused(
                b.rename("inside.txt", &format!("{dir}/planted.txt"), true)
                    .await,
                code,
                &what("rename in"),
            );
        }
        assert_eq!(
            fx.outside_snapshot(),
            before,
            "kernel={kernel} nested={nested}"
        );
        assert_eq!(
            std::fs::read(fx.outside().join("secret.txt")).unwrap(),
            SECRET
        );
        assert_eq!(
            std::fs::read(fx.ws().join("inside.txt")).unwrap(),
            b"inside"
        );
        assert!(!fx.ws().join("stolen.txt").exists());
    }
}

#[tokio::test]
async fn creating_through_a_dangling_symlink_to_outside_is_an_escape() {
    for (kernel, nested) in CONFIGS {
        let fx = fixture_cfg(kernel, nested);
        let b = &fx.bridge;
        let err = b
            .write("dangling_out/f.txt", b"x", WriteOptions::default())
            .await
            .unwrap_err();
        assert_eq!(err.code, FsErrorCode::Escape);
        let err = b.mkdir("dangling_out/a/b", true).await.unwrap_err();
        assert_eq!(err.code, FsErrorCode::Escape);
        let err = b
            .write("dangling_out", b"x", WriteOptions::default())
            .await
            .unwrap_err();
        assert_eq!(err.code, FsErrorCode::Escape);
        assert!(!fx.outside().join("missing").exists());
        // A dangling link whose target climbs with `..` past a missing
        // directory: nothing is created anywhere.
        std::os::unix::fs::symlink("nothere/../../outside", fx.ws().join("dl_dotdot")).unwrap();
        let err = b
            .write("dl_dotdot/f.txt", b"x", WriteOptions::default())
            .await
            .unwrap_err();
        assert_eq!(err.code, FsErrorCode::InvalidPath, "{err}");
        let err = b.mkdir("dl_dotdot/a", true).await.unwrap_err();
        assert_eq!(err.code, FsErrorCode::InvalidPath, "{err}");
        let err = b
            .resolve("dl_dotdot/f.txt", Access::Read)
            .await
            .unwrap_err();
        assert_eq!(err.code, FsErrorCode::InvalidPath, "{err}");
        assert!(!fx.ws().join("nothere").exists());
        assert!(!fx.outside().join("f.txt").exists());
        std::fs::remove_file(fx.ws().join("dl_dotdot")).unwrap();
    }
}

#[tokio::test]
async fn removing_a_symlink_to_outside_removes_only_the_link() {
    for (kernel, nested) in CONFIGS {
        let fx = fixture_cfg(kernel, nested);
        fx.bridge.remove("esc_file_abs", false).await.unwrap();
        fx.bridge.remove("esc_dir_rel", true).await.unwrap();
        assert!(std::fs::symlink_metadata(fx.ws().join("esc_file_abs")).is_err());
        assert!(std::fs::symlink_metadata(fx.ws().join("esc_dir_rel")).is_err());
        assert_eq!(
            std::fs::read(fx.outside().join("secret.txt")).unwrap(),
            SECRET
        );
        assert!(fx.outside().join("sub/deeper.txt").exists());
    }
}

#[tokio::test]
async fn renaming_a_symlink_to_outside_moves_the_link_not_the_target() {
    for (kernel, nested) in CONFIGS {
        let fx = fixture_cfg(kernel, nested);
        fx.bridge
            .rename("esc_file_abs", "sub/moved_link", false)
            .await
            .unwrap();
        let meta = std::fs::symlink_metadata(fx.ws().join("sub/moved_link")).unwrap();
        assert!(meta.file_type().is_symlink());
        assert_eq!(
            std::fs::read(fx.outside().join("secret.txt")).unwrap(),
            SECRET
        );
        // And reading through the moved link is still refused.
        let err = fx.bridge.read("sub/moved_link", None).await.unwrap_err();
        assert_eq!(err.code, FsErrorCode::Escape);
    }
}

#[tokio::test]
async fn symlinks_that_stay_inside_are_followed() {
    for (kernel, nested) in CONFIGS {
        let fx = fixture_cfg(kernel, nested);
        let b = &fx.bridge;
        for path in [
            "link_in",
            "link_in_abs",
            "chain_in_a",
            "link_dir_in/file.txt",
        ] {
            let read = b.read(path, None).await.unwrap();
            assert_eq!(read.bytes, b"sub file", "{path}");
            let resolved = b.resolve(path, Access::Write).await.unwrap();
            assert_eq!(
                resolved.host_path.unwrap(),
                fx.ws().join("sub/file.txt"),
                "{path}"
            );
        }
        let listed = b.list("link_dir_in").await.unwrap();
        assert_eq!(listed.len(), 1);
        assert_eq!(listed[0].name, "file.txt");
        // Writing through a final symlink replaces the real target and
        // keeps the link.
        b.write("link_in_abs", b"via abs link", WriteOptions::default())
            .await
            .unwrap();
        assert_eq!(
            std::fs::read(fx.ws().join("sub/file.txt")).unwrap(),
            b"via abs link"
        );
        b.edit("chain_in_a", &|old: &[u8]| {
            let mut v = old.to_vec();
            v.extend_from_slice(b" + edit");
            Ok(v)
        })
        .await
        .unwrap();
        assert_eq!(
            std::fs::read(fx.ws().join("sub/file.txt")).unwrap(),
            b"via abs link + edit"
        );
        for link in ["link_in", "link_in_abs", "chain_in_a", "chain_in_b"] {
            assert!(
                std::fs::symlink_metadata(fx.ws().join(link))
                    .unwrap()
                    .file_type()
                    .is_symlink(),
                "{link}"
            );
        }
        b.write("link_dir_in/new/file2.txt", b"n", WriteOptions::default())
            .await
            .unwrap();
        assert_eq!(
            std::fs::read(fx.ws().join("sub/new/file2.txt")).unwrap(),
            b"n"
        );
    }
}

#[tokio::test]
async fn real_magic_links_are_refused() {
    // A mount over this process's /proc entry: `root`, `cwd` and `fd/N`
    // there are magic links, which must never be followed.
    let tmp = tempfile::tempdir().unwrap();
    std::fs::create_dir(tmp.path().join("ws")).unwrap();
    for kernel in [true, false] {
        let bridge = talon_fs_bridge::MountBridge::new(
            vec![
                talon_fs_bridge::Mount::read_only("/p", "/proc/self"),
                talon_fs_bridge::Mount::writable("/workspace", tmp.path().join("ws")),
            ],
            "/workspace",
        )
        .unwrap();
        bridge.set_kernel_resolution(kernel);
        for path in ["/p/root/etc/passwd", "/p/cwd/Cargo.toml", "/p/exe"] {
            let err = bridge.read(path, None).await.unwrap_err();
            assert_eq!(
                err.code,
                FsErrorCode::Escape,
                "kernel={kernel} {path}: {err}"
            );
        }
        let err = bridge.list("/p/root").await.unwrap_err();
        assert_eq!(err.code, FsErrorCode::Escape);
        let err = bridge.stat("/p/root/etc").await.unwrap_err();
        assert_eq!(err.code, FsErrorCode::Escape);
    }
}
