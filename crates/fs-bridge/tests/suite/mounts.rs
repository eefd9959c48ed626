//! The mount table (validation, de-duplication, longest-prefix lookup,
//! nested read-only overlays) and host mode.

use super::common;

use std::os::unix::fs::symlink;

use common::{MODES, fixture};
use talon_fs_bridge::{Access, FsBridge, FsErrorCode, Mount, MountBridge, WriteOptions};

#[test]
fn invalid_mount_tables_are_refused_with_a_reason() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("d");
    std::fs::create_dir(&dir).unwrap();
    std::fs::write(tmp.path().join("f"), b"f").unwrap();
    let cases: Vec<(Vec<Mount>, &str, FsErrorCode)> = vec![
        (vec![], "/workspace", FsErrorCode::InvalidPath),
        (
            vec![Mount::writable("workspace", &dir)],
            "/workspace",
            FsErrorCode::InvalidPath,
        ),
        (
            vec![Mount::writable("/workspace/../etc", &dir)],
            "/workspace",
            FsErrorCode::InvalidPath,
        ),
        (
            vec![Mount::writable("/workspace", "relative/dir")],
            "/workspace",
            FsErrorCode::InvalidPath,
        ),
        (
            vec![Mount::writable("/workspace", tmp.path().join("missing"))],
            "/workspace",
            FsErrorCode::NotFound,
        ),
        (
            vec![Mount::writable("/workspace", tmp.path().join("f"))],
            "/workspace",
            FsErrorCode::NotADirectory,
        ),
        (
            vec![
                Mount::writable("/workspace", &dir),
                Mount::writable("/workspace/", tmp.path()),
            ],
            "/workspace",
            FsErrorCode::InvalidPath,
        ),
        (
            vec![Mount::writable("/workspace", &dir)],
            "/elsewhere",
            FsErrorCode::OutsideMounts,
        ),
    ];
    for (mounts, cwd, code) in cases {
        let shown = format!("{mounts:?} cwd={cwd}");
        let err = MountBridge::new(mounts, cwd).unwrap_err();
        assert_eq!(err.code, code, "{shown}: {err}");
        assert!(!err.message.is_empty());
    }
}

#[test]
fn mounts_are_deduplicated_sorted_and_the_stricter_access_wins() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().canonicalize().unwrap();
    for d in ["ws", "agent"] {
        std::fs::create_dir(root.join(d)).unwrap();
    }
    let bridge = MountBridge::new(
        vec![
            Mount::writable("/workspace", root.join("ws")),
            Mount::writable("/agent/", root.join("agent")),
            Mount::read_only("//workspace/.", root.join("ws/../ws")),
        ],
        "/workspace/sub/..",
    )
    .unwrap();
    assert_eq!(
        bridge.mounts(),
        vec![
            Mount::writable("/agent", root.join("agent")),
            Mount::read_only("/workspace", root.join("ws")),
        ]
    );
    assert_eq!(bridge.cwd(), "/workspace");
}

#[tokio::test]
async fn longest_prefix_selects_the_nested_read_only_overlay() {
    for kernel in MODES {
        let fx = fixture(kernel);
        let b = &fx.bridge;
        // /workspace/skills is the overlay, not the host copy under ws/.
        let read = b.read("/workspace/skills/SKILL.md", None).await.unwrap();
        assert_eq!(read.bytes, b"skill source");
        let r = b.resolve("skills/SKILL.md", Access::Read).await.unwrap();
        assert_eq!(r.mount, "/workspace/skills");
        assert!(r.read_only);
        assert_eq!(r.host_path.unwrap(), fx.root().join("skills_src/SKILL.md"));
        let w = WriteOptions::default();
        for path in [
            "/workspace/skills/SKILL.md",
            "skills/new.md",
            "/workspace/x/../skills/SKILL.md",
            // Through a symlink in the writable mount into the overlay.
            "to_skills/SKILL.md",
            "to_skills/new.md",
        ] {
            let err = b.write(path, b"pwned", w).await.unwrap_err();
            assert_eq!(
                err.code,
                FsErrorCode::ReadOnly,
                "kernel={kernel} {path}: {err}"
            );
        }
        assert_eq!(
            b.read("to_skills/SKILL.md", None).await.unwrap().bytes,
            b"skill source"
        );
        assert_eq!(
            b.remove("/workspace/skills", true).await.unwrap_err().code,
            FsErrorCode::MountRoot
        );
        // `skillsX` is not under `skills`.
        b.write("/workspace/skillsX/y", b"ok", w).await.unwrap();
        assert!(fx.ws().join("skillsX/y").is_file());
        assert_eq!(
            std::fs::read(fx.ws().join("skills/SKILL.md")).unwrap(),
            b"host copy"
        );
        assert_eq!(
            std::fs::read(fx.root().join("skills_src/SKILL.md")).unwrap(),
            b"skill source"
        );
        assert!(!fx.root().join("skills_src/new.md").exists());
        assert!(!fx.ws().join("skills/new.md").exists());
    }
}

#[tokio::test]
async fn a_directory_holding_a_mount_cannot_be_removed_or_renamed() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().canonicalize().unwrap();
    std::fs::create_dir_all(root.join("ws/.cfg/skills")).unwrap();
    std::fs::create_dir_all(root.join("skills")).unwrap();
    let bridge = MountBridge::new(
        vec![
            Mount::writable("/workspace", root.join("ws")),
            Mount::read_only("/workspace/.cfg/skills", root.join("skills")),
        ],
        "/workspace",
    )
    .unwrap();
    let err = bridge.remove(".cfg", true).await.unwrap_err();
    assert_eq!(err.code, FsErrorCode::InvalidPath, "{err}");
    let err = bridge.rename(".cfg", "elsewhere", false).await.unwrap_err();
    assert_eq!(err.code, FsErrorCode::InvalidPath, "{err}");
    assert!(root.join("ws/.cfg/skills").is_dir());
}

#[tokio::test]
async fn relative_symlink_climbing_out_of_a_nested_mount_lands_in_the_parent_mount() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().canonicalize().unwrap();
    std::fs::create_dir_all(root.join("ws")).unwrap();
    std::fs::create_dir_all(root.join("skills")).unwrap();
    std::fs::write(root.join("ws/top.txt"), b"top").unwrap();
    // Inside the container /workspace/skills/up -> ../top.txt is /workspace/top.txt.
    symlink("../top.txt", root.join("skills/up")).unwrap();
    symlink("../../secret", root.join("skills/out")).unwrap();
    let bridge = MountBridge::new(
        vec![
            Mount::writable("/workspace", root.join("ws")),
            Mount::read_only("/workspace/skills", root.join("skills")),
        ],
        "/workspace",
    )
    .unwrap();
    for kernel in MODES {
        bridge.set_kernel_resolution(kernel);
        assert_eq!(bridge.read("skills/up", None).await.unwrap().bytes, b"top");
        let err = bridge.read("skills/out", None).await.unwrap_err();
        assert_eq!(err.code, FsErrorCode::Escape);
    }
}

#[tokio::test]
async fn host_mode_confines_to_the_workspace_root() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().canonicalize().unwrap();
    let ws = root.join("ws");
    std::fs::create_dir_all(ws.join("src")).unwrap();
    std::fs::create_dir_all(root.join("outside")).unwrap();
    std::fs::write(root.join("outside/secret"), b"s").unwrap();
    std::fs::write(ws.join("src/main.rs"), b"fn main() {}").unwrap();
    symlink(ws.join("src/main.rs"), ws.join("abs_inside")).unwrap();
    symlink(root.join("outside/secret"), ws.join("abs_outside")).unwrap();
    let ws_str = ws.to_str().unwrap().to_owned();
    for kernel in MODES {
        let bridge = MountBridge::host(&ws).unwrap();
        bridge.set_kernel_resolution(kernel);
        assert_eq!(bridge.cwd(), ws_str);
        assert_eq!(
            bridge.read("src/main.rs", None).await.unwrap().bytes,
            b"fn main() {}"
        );
        let abs = format!("{ws_str}/src/main.rs");
        assert_eq!(
            bridge.read(&abs, None).await.unwrap().bytes,
            b"fn main() {}"
        );
        // An absolute symlink is a host path here: inside is fine.
        assert_eq!(
            bridge.read("abs_inside", None).await.unwrap().bytes,
            b"fn main() {}"
        );
        let err = bridge.read("abs_outside", None).await.unwrap_err();
        assert_eq!(err.code, FsErrorCode::Escape);
        let err = bridge.read("../outside/secret", None).await.unwrap_err();
        assert_eq!(err.code, FsErrorCode::OutsideMounts);
        assert_eq!(
            err.message,
            format!(
                "`../outside/secret` resolves outside the workspace root {ws_str}; use a path inside it"
            )
        );
        let err = bridge.read("/etc/hostname", None).await.unwrap_err();
        assert_eq!(err.code, FsErrorCode::OutsideMounts);
        let err = bridge
            .write(
                &format!("{}/outside/new", root.display()),
                b"x",
                WriteOptions::default(),
            )
            .await
            .unwrap_err();
        assert_eq!(err.code, FsErrorCode::OutsideMounts);
        assert!(!root.join("outside/new").exists());
        let report = bridge
            .write("src/lib.rs", b"//", WriteOptions::default())
            .await
            .unwrap();
        assert_eq!(report.container_path, format!("{ws_str}/src/lib.rs"));
        assert!(ws.join("src/lib.rs").is_file());
        let r = bridge.resolve("src", Access::Write).await.unwrap();
        assert_eq!(r.host_path.unwrap(), ws.join("src"));
        assert_eq!(r.mount, ws_str);
        std::fs::remove_file(ws.join("src/lib.rs")).unwrap();
    }
}

#[tokio::test]
async fn host_mode_accepts_the_root_as_given_through_a_symlink() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().canonicalize().unwrap();
    std::fs::create_dir_all(root.join("real/ws")).unwrap();
    std::fs::write(root.join("real/ws/a.txt"), b"a").unwrap();
    symlink(root.join("real"), root.join("alias")).unwrap();
    let bridge = MountBridge::host(root.join("alias/ws")).unwrap();
    assert_eq!(bridge.cwd(), root.join("real/ws").to_str().unwrap());
    let via_alias = format!("{}/alias/ws/a.txt", root.display());
    assert_eq!(bridge.read(&via_alias, None).await.unwrap().bytes, b"a");
    let via_real = format!("{}/real/ws/a.txt", root.display());
    assert_eq!(bridge.read(&via_real, None).await.unwrap().bytes, b"a");
    bridge
        .rename(
            &via_alias,
            &format!("{}/real/ws/b.txt", root.display()),
            false,
        )
        .await
        .unwrap();
    assert!(root.join("real/ws/b.txt").is_file());
    let err = bridge
        .read(&format!("{}/alias/other", root.display()), None)
        .await
        .unwrap_err();
    assert_eq!(err.code, FsErrorCode::OutsideMounts);
    assert_eq!(
        MountBridge::host(root.join("missing")).unwrap_err().code,
        FsErrorCode::NotFound
    );
}
