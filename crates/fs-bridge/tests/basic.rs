//! Everyday operations through `MountBridge` on real temp directories.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::os::unix::fs::PermissionsExt;

use talon_fs_bridge::{Access, FileKind, FsBridge, FsErrorCode, Mount, MountBridge, WriteOptions};

fn sandbox() -> (tempfile::TempDir, MountBridge) {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::create_dir(tmp.path().join("ws")).unwrap();
    std::fs::create_dir(tmp.path().join("agent")).unwrap();
    let bridge = MountBridge::new(
        vec![
            Mount::writable("/workspace", tmp.path().join("ws")),
            Mount::read_only("/agent", tmp.path().join("agent")),
        ],
        "/workspace",
    )
    .unwrap();
    (tmp, bridge)
}

#[tokio::test]
async fn write_read_stat_list_round_trip() {
    let (tmp, bridge) = sandbox();
    let report = bridge
        .write("src/deep/a.txt", b"hello", WriteOptions::default())
        .await
        .unwrap();
    assert!(report.created);
    assert_eq!(report.container_path, "/workspace/src/deep/a.txt");
    assert_eq!(
        std::fs::read(tmp.path().join("ws/src/deep/a.txt")).unwrap(),
        b"hello"
    );
    let read = bridge
        .read("/workspace/src/deep/a.txt", None)
        .await
        .unwrap();
    assert_eq!(read.bytes, b"hello");
    assert!(!read.truncated);
    let cut = bridge.read("src/deep/a.txt", Some(2)).await.unwrap();
    assert_eq!(cut.bytes, b"he");
    assert!(cut.truncated);
    assert_eq!(cut.total_size, 5);
    let st = bridge.stat("src/deep/a.txt").await.unwrap();
    assert_eq!(st.kind, FileKind::File);
    assert_eq!(st.size, 5);
    let again = bridge
        .write("src/deep/a.txt", b"bye", WriteOptions::default())
        .await
        .unwrap();
    assert!(!again.created);
    let entries = bridge.list("src/deep").await.unwrap();
    assert_eq!(entries.len(), 1);
    assert_eq!(entries[0].name, "a.txt");
    assert_eq!(entries[0].size, 3);
    let resolved = bridge
        .resolve("src/deep/a.txt", Access::Write)
        .await
        .unwrap();
    assert_eq!(
        resolved.host_path.unwrap(),
        tmp.path().canonicalize().unwrap().join("ws/src/deep/a.txt")
    );
    assert!(resolved.exists);
    let err = bridge
        .write("/agent/x", b"x", WriteOptions::default())
        .await
        .unwrap_err();
    assert_eq!(err.code, FsErrorCode::ReadOnly);
    assert!(!tmp.path().join("agent/x").exists());
    bridge.remove("src", true).await.unwrap();
    assert!(!tmp.path().join("ws/src").exists());
    let _ = std::fs::metadata(tmp.path()).unwrap().permissions().mode();
}
