//! The backend over a real sshd: upload, sync back, conflicts, read-only
//! access modes, skills, marker-owned list and remove.

use super::common;

use std::path::Path;
use std::time::Duration;

use common::{Sshd, host_dir};
use talon_fs_bridge::{FsErrorCode, WriteOptions};
use talon_sandbox_core::{SandboxBackend, SandboxErrorKind, SandboxHandle, WorkspaceAccess};
use talon_sandbox_ssh::{CONFLICT_SUFFIX, SshBackend};

fn seed(ws: &Path) {
    std::fs::write(ws.join("a.txt"), b"host a").unwrap();
    std::fs::create_dir_all(ws.join("sub")).unwrap();
    std::fs::write(ws.join("sub/b.txt"), b"host b").unwrap();
    std::fs::create_dir_all(ws.join("skills/tool")).unwrap();
    std::fs::write(ws.join("skills/tool/SKILL.md"), b"skill text").unwrap();
}

async fn sh(sandbox: &dyn SandboxHandle, script: &str) -> String {
    let out = sandbox
        .run_script(script, &[], None, Duration::from_secs(20))
        .await
        .unwrap();
    assert!(
        out.status.success(),
        "{script}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[tokio::test]
async fn rw_uploads_syncs_back_and_keeps_both_sides_of_a_conflict() {
    let sshd = Sshd::start();
    let host = tempfile::tempdir().unwrap();
    let ws = host_dir(host.path(), "ws");
    seed(&ws);
    let request = sshd.request(WorkspaceAccess::Rw, &ws, &host.path().join("state"));
    let backend = SshBackend::new(None);
    assert_eq!(
        backend.workdir(&request),
        format!("{}/{}/workspace", sshd.remote_root(), request.sandbox_name)
    );
    let sandbox = backend.ensure_sandbox(&request).await.unwrap();
    let remote_ws = Path::new(sandbox.workdir()).to_path_buf();
    assert_eq!(sandbox.workdir(), backend.workdir(&request));
    assert_eq!(
        std::fs::read(remote_ws.join("sub/b.txt")).unwrap(),
        b"host b"
    );
    assert_eq!(sh(&*sandbox, "pwd").await.trim(), sandbox.workdir());

    // The sandbox changes and creates files; they come back to the host.
    sh(
        &*sandbox,
        "printf 'remote a' > a.txt; mkdir -p gen; printf new > gen/n.txt; rm sub/b.txt",
    )
    .await;
    assert_eq!(std::fs::read(ws.join("a.txt")).unwrap(), b"remote a");
    assert_eq!(std::fs::read(ws.join("gen/n.txt")).unwrap(), b"new");
    assert!(!ws.join("sub/b.txt").exists());

    // A host change goes up before the next command.
    std::fs::write(ws.join("sub/up.txt"), b"from host").unwrap();
    assert_eq!(sh(&*sandbox, "cat sub/up.txt").await, "from host");

    // Both sides change the same file: the host copy wins, the remote
    // version is saved beside it, nothing is lost.
    std::fs::write(ws.join("a.txt"), b"host edit, longer").unwrap();
    std::fs::write(remote_ws.join("a.txt"), b"remote edit").unwrap();
    let report = sandbox.sync().await.unwrap();
    assert_eq!(report.conflicts.len(), 1, "{report:?}");
    assert_eq!(report.conflicts[0].host_path, ws.join("a.txt"));
    assert_eq!(
        std::fs::read(ws.join("a.txt")).unwrap(),
        b"host edit, longer"
    );
    assert_eq!(
        std::fs::read(ws.join(format!("a.txt{CONFLICT_SUFFIX}"))).unwrap(),
        b"remote edit"
    );
    assert_eq!(
        std::fs::read(remote_ws.join("a.txt")).unwrap(),
        b"host edit, longer"
    );
    // Settled: the next sync has nothing to do.
    let report = sandbox.sync().await.unwrap();
    assert_eq!(
        (report.uploaded, report.downloaded, report.conflicts.len()),
        (1, 0, 0),
        "{report:?}"
    );
    let report = sandbox.sync().await.unwrap();
    assert_eq!((report.uploaded, report.downloaded), (0, 0), "{report:?}");

    // The file tools write on the remote copy and the change comes back.
    let bridge = sandbox.fs_bridge().unwrap();
    bridge
        .write("notes.md", b"via bridge", WriteOptions::default())
        .await
        .unwrap();
    assert_eq!(
        std::fs::read(remote_ws.join("notes.md")).unwrap(),
        b"via bridge"
    );
    assert_eq!(std::fs::read(ws.join("notes.md")).unwrap(), b"via bridge");

    // Skills are read-only: refused through the bridge, and a change made
    // by a command never reaches the host (the host copy is put back).
    let err = bridge
        .write(
            "skills/tool/SKILL.md",
            b"rewritten",
            WriteOptions::default(),
        )
        .await
        .unwrap_err();
    assert_eq!(err.code, FsErrorCode::ReadOnly);
    sh(
        &*sandbox,
        "chmod u+w skills/tool/SKILL.md; printf hacked > skills/tool/SKILL.md",
    )
    .await;
    assert_eq!(
        std::fs::read(ws.join("skills/tool/SKILL.md")).unwrap(),
        b"skill text"
    );
    assert_eq!(
        sh(&*sandbox, "cat skills/tool/SKILL.md").await,
        "skill text"
    );

    // A symlink made remotely is never followed back to the host.
    sh(&*sandbox, "ln -s /etc/hostname leak").await;
    assert!(std::fs::symlink_metadata(ws.join("leak")).is_err());
}

#[tokio::test]
async fn ro_never_writes_back_to_the_agent_workspace_and_the_host_copy_wins() {
    let sshd = Sshd::start();
    let host = tempfile::tempdir().unwrap();
    let ws = host_dir(host.path(), "ws");
    seed(&ws);
    let request = sshd.request(WorkspaceAccess::Ro, &ws, &host.path().join("state"));
    let backend = SshBackend::new(None);
    let sandbox = backend.ensure_sandbox(&request).await.unwrap();
    let agent_remote = format!("{}/agent", sandbox.remote_dir());
    assert_eq!(
        std::fs::read(Path::new(&agent_remote).join("a.txt")).unwrap(),
        b"host a"
    );
    // A command changes the remote copy; the host never sees it, and the
    // next sync restores the host version.
    sh(
        &*sandbox,
        &format!("printf changed > {agent_remote}/a.txt; printf build > out.bin"),
    )
    .await;
    assert_eq!(std::fs::read(ws.join("a.txt")).unwrap(), b"host a");
    sandbox.sync().await.unwrap();
    assert_eq!(
        std::fs::read(Path::new(&agent_remote).join("a.txt")).unwrap(),
        b"host a"
    );
    // Output in the workspace (the scope's scratch copy) stays remote and
    // comes back only to the scratch copy, never to the agent workspace.
    assert!(Path::new(sandbox.workdir()).join("out.bin").exists());
    assert_eq!(
        std::fs::read(request.workspace_dir.join("out.bin")).unwrap(),
        b"build"
    );
    assert!(!ws.join("out.bin").exists());
    // The bridge refuses writes to the read-only agent copy and accepts
    // them in the scratch workspace.
    let bridge = sandbox.fs_bridge().unwrap();
    let err = bridge
        .write(
            &format!("{agent_remote}/a.txt"),
            b"x",
            WriteOptions::default(),
        )
        .await
        .unwrap_err();
    assert_eq!(err.code, FsErrorCode::ReadOnly);
    bridge
        .write("x.txt", b"x", WriteOptions::default())
        .await
        .unwrap();
    assert!(!ws.join("x.txt").exists());
    assert_eq!(
        bridge
            .read(&format!("{agent_remote}/sub/b.txt"), None)
            .await
            .unwrap()
            .bytes,
        b"host b"
    );
    // A host-side deletion of a tracked file is mirrored.
    std::fs::remove_file(ws.join("sub/b.txt")).unwrap();
    let report = sandbox.sync().await.unwrap();
    assert_eq!(report.removed_remote, 1);
    assert!(!Path::new(&agent_remote).join("sub/b.txt").exists());
}

#[tokio::test]
async fn ls_and_rm_touch_only_marked_directories() {
    let sshd = Sshd::start();
    let host = tempfile::tempdir().unwrap();
    let ws = host_dir(host.path(), "ws");
    seed(&ws);
    let request = sshd.request(WorkspaceAccess::None, &ws, &host.path().join("state"));
    let backend = SshBackend::new(None);
    let sandbox = backend.ensure(&request).await.unwrap();
    let name = sandbox.name().to_owned();
    let root = Path::new(&sshd.remote_root()).to_path_buf();
    // A directory Talon did not make: not listed, not removed, not reused.
    std::fs::create_dir_all(root.join("foreign/data")).unwrap();
    std::fs::write(root.join("foreign/data/keep.txt"), b"keep").unwrap();

    let target = sshd.target();
    let listed = backend.list_on(&target).await.unwrap();
    let names: Vec<&str> = listed.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, [name.as_str()]);
    assert_eq!(
        listed[0].scope_key.as_deref(),
        Some(request.scope_key.as_str())
    );
    assert_eq!(
        listed[0].config_hash.as_deref(),
        Some(request.config_hash.as_str())
    );

    let err = backend.remove_on(&target, "foreign").await.unwrap_err();
    assert!(err.kind() == SandboxErrorKind::Config, "{err}");
    assert!(root.join("foreign/data/keep.txt").exists());
    for bad in ["..", "a/b", "", "-rf"] {
        if bad == "-rf" {
            // A plain name that does not exist.
            assert!(!backend.remove_on(&target, bad).await.unwrap());
        } else {
            assert!(backend.remove_on(&target, bad).await.is_err(), "{bad}");
        }
    }
    assert!(root.exists());

    let mut foreign = request.clone();
    foreign.sandbox_name = "foreign".into();
    let err = backend.ensure(&foreign).await.unwrap_err();
    assert!(err.to_string().contains("did not create"), "{err}");

    backend.remove(&name).await.unwrap();
    assert!(!root.join(&name).exists());
    assert!(backend.list_owned().await.unwrap().is_empty());
    assert!(root.join("foreign/data/keep.txt").exists());
}

#[tokio::test]
async fn a_dropped_connection_during_use_is_replaced_for_sync_exec_and_files() {
    let sshd = Sshd::start();
    let host = tempfile::tempdir().unwrap();
    let ws = host_dir(host.path(), "ws");
    seed(&ws);
    let request = sshd.request(WorkspaceAccess::Rw, &ws, &host.path().join("state"));
    let backend = SshBackend::new(None);
    let sandbox = backend.ensure_sandbox(&request).await.unwrap();
    let socket = sandbox
        .connection()
        .session()
        .await
        .unwrap()
        .control_socket()
        .to_path_buf();
    let pid = common::master_pid(&socket);
    std::process::Command::new("kill")
        .args(["-9", &pid.to_string()])
        .status()
        .unwrap();
    // Files, then commands (and their syncs) work on a new connection.
    std::fs::write(ws.join("after.txt"), b"after the drop").unwrap();
    let bridge = sandbox.fs_bridge().unwrap();
    assert_eq!(
        bridge.read("after.txt", None).await.unwrap().bytes,
        b"after the drop"
    );
    assert_eq!(sh(&*sandbox, "cat after.txt").await, "after the drop");
    // Host keys are still checked on the new connection: swap the
    // known-hosts entry and drop the master again.
    std::fs::write(
        sshd.dir().join("known_hosts"),
        sshd.known_hosts_line("other_host_ed25519.pub").unwrap(),
    )
    .unwrap();
    let socket = sandbox
        .connection()
        .session()
        .await
        .unwrap()
        .control_socket()
        .to_path_buf();
    std::process::Command::new("kill")
        .args(["-9", &common::master_pid(&socket).to_string()])
        .status()
        .unwrap();
    let err = sandbox
        .run_script("true", &[], None, Duration::from_secs(10))
        .await
        .unwrap_err();
    assert!(err.to_string().to_lowercase().contains("host key"), "{err}");
}
