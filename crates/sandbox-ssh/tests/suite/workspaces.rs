//! Sandbox workspaces over a real sshd, as in the Docker backend: with
//! `none` and `ro` the remote workspace is the scope's scratch copy,
//! seeded from the agent's bootstrap files and writable, and what the
//! sandbox writes never reaches the agent workspace; `ro` adds the agent
//! workspace read-only; the mirrored skills are read-only in every mode.

use super::common;

use std::path::Path;
use std::time::Duration;

use common::{Sshd, host_dir};
use talon_fs_bridge::{FsErrorCode, WriteOptions};
use talon_sandbox_core::{
    MirrorLimits, SandboxHandle, SandboxRequest, SkillDir, WorkspaceAccess,
    materialized_skills_root, mirror_skills,
};
use talon_sandbox_ssh::SshBackend;

async fn sh(sandbox: &dyn SandboxHandle, script: &str) -> (String, bool) {
    let out = sandbox
        .run_script(script, &[], None, Duration::from_secs(20))
        .await
        .unwrap();
    (String::from_utf8(out.stdout).unwrap(), out.status.success())
}

/// The agent workspace's bootstrap files and one skill, mirrored, and the
/// request for `access` with the materialised skills.
fn request(sshd: &Sshd, access: WorkspaceAccess, ws: &Path, state: &Path) -> SandboxRequest {
    std::fs::write(ws.join("AGENTS.md"), b"agent rules\n").unwrap();
    std::fs::write(ws.join("USER.md"), b"the user\n").unwrap();
    std::fs::write(ws.join("other.txt"), b"not a bootstrap file").unwrap();
    let skill = ws.join("skills/pdf");
    std::fs::create_dir_all(&skill).unwrap();
    std::fs::write(skill.join("SKILL.md"), b"pdf skill\n").unwrap();
    let base = sshd.request(access, ws, state);
    let root = materialized_skills_root(state, base.config.scope, &base.scope_key);
    mirror_skills(&root, &[SkillDir { dir: skill }], &MirrorLimits::default()).unwrap();
    SandboxRequest::new(base.config, &base.session_key, ws, Some(&root))
}

async fn check_scratch_and_skills(
    sandbox: &dyn SandboxHandle,
    request: &SandboxRequest,
    ws: &Path,
) {
    let (out, ok) = sh(
        sandbox,
        "cat AGENTS.md USER.md; test -e other.txt || echo no-other",
    )
    .await;
    assert!(ok);
    assert_eq!(out, "agent rules\nthe user\nno-other\n");

    // Writable scratch: by a command and through the bridge; it comes back
    // to the scope's scratch copy, never to the agent workspace.
    let (_, ok) = sh(sandbox, "printf scratch > x; printf more >> AGENTS.md").await;
    assert!(ok);
    let bridge = sandbox.fs_bridge().unwrap();
    bridge
        .write("y", b"via bridge", WriteOptions::default())
        .await
        .unwrap();
    assert_eq!(
        std::fs::read(request.workspace_dir.join("x")).unwrap(),
        b"scratch"
    );
    assert_eq!(
        std::fs::read(request.workspace_dir.join("y")).unwrap(),
        b"via bridge"
    );
    assert_eq!(
        std::fs::read(request.workspace_dir.join("AGENTS.md")).unwrap(),
        b"agent rules\nmore"
    );
    assert!(!ws.join("x").exists() && !ws.join("y").exists());
    assert_eq!(
        std::fs::read(ws.join("AGENTS.md")).unwrap(),
        b"agent rules\n"
    );

    // Skills: readable, refused by the bridge, and a command's change is
    // undone by the next sync and never reaches the mirror.
    let skill = ".talon/sandbox-skills/skills/pdf/SKILL.md";
    assert_eq!(sh(sandbox, &format!("cat {skill}")).await.0, "pdf skill\n");
    let err = bridge
        .write(skill, b"rewritten", WriteOptions::default())
        .await
        .unwrap_err();
    assert_eq!(err.code, FsErrorCode::ReadOnly);
    sh(
        sandbox,
        &format!("chmod u+w {skill}; printf hacked > {skill}"),
    )
    .await;
    assert_eq!(sh(sandbox, &format!("cat {skill}")).await.0, "pdf skill\n");
}

#[tokio::test]
async fn none_gives_a_seeded_writable_scratch_workspace_and_read_only_skills() {
    let sshd = Sshd::start();
    let host = tempfile::tempdir().unwrap();
    let ws = host_dir(host.path(), "ws");
    let request = request(
        &sshd,
        WorkspaceAccess::None,
        &ws,
        &host.path().join("state"),
    );
    let backend = SshBackend::new(None);
    let sandbox = backend.ensure_sandbox(&request).await.unwrap();
    check_scratch_and_skills(&*sandbox, &request, &ws).await;
    // No agent copy with `none`.
    assert!(!Path::new(&format!("{}/agent", sandbox.remote_dir())).exists());
}

#[tokio::test]
async fn ro_adds_the_agent_workspace_read_only() {
    let sshd = Sshd::start();
    let host = tempfile::tempdir().unwrap();
    let ws = host_dir(host.path(), "ws");
    let request = request(&sshd, WorkspaceAccess::Ro, &ws, &host.path().join("state"));
    let backend = SshBackend::new(None);
    let sandbox = backend.ensure_sandbox(&request).await.unwrap();
    check_scratch_and_skills(&*sandbox, &request, &ws).await;

    let agent = format!("{}/agent", sandbox.remote_dir());
    assert_eq!(
        sh(
            &*sandbox,
            &format!("cat {agent}/AGENTS.md {agent}/other.txt")
        )
        .await
        .0,
        "agent rules\nnot a bootstrap file"
    );
    let bridge = sandbox.fs_bridge().unwrap();
    for path in [format!("{agent}/AGENTS.md"), format!("{agent}/new")] {
        let err = bridge
            .write(&path, b"x", WriteOptions::default())
            .await
            .unwrap_err();
        assert_eq!(err.code, FsErrorCode::ReadOnly, "{path}");
    }
    // A command can scribble on the remote copy (the remote user's rights
    // are the sandbox's), but the agent workspace never sees it and the
    // next sync puts the host version back.
    sh(
        &*sandbox,
        &format!("printf changed > {agent}/AGENTS.md; printf n > {agent}/new"),
    )
    .await;
    sandbox.sync().await.unwrap();
    assert_eq!(
        std::fs::read(ws.join("AGENTS.md")).unwrap(),
        b"agent rules\n"
    );
    assert!(!ws.join("new").exists());
    assert_eq!(
        sh(&*sandbox, &format!("cat {agent}/AGENTS.md")).await.0,
        "agent rules\n"
    );
}

/// A workspace that is a home holding `.ssh` is never copied to the
/// remote host: the sandbox is refused before anything remote happens.
#[tokio::test]
async fn a_workspace_that_is_a_home_holding_ssh_is_refused_before_any_copy() {
    let sshd = Sshd::start();
    let host = tempfile::tempdir().unwrap();
    let home = host_dir(host.path(), "home-u");
    std::fs::create_dir_all(home.join(".ssh")).unwrap();
    std::fs::write(home.join(".ssh/id_ed25519"), b"key").unwrap();
    for (backend, code) in [
        (SshBackend::new(Some(home.clone())), "[workspace-home-dir]"),
        (SshBackend::new(None), "[workspace-holds-credentials]"),
    ] {
        for access in [WorkspaceAccess::Rw, WorkspaceAccess::Ro] {
            let request = sshd.request(access, &home, &host.path().join("state"));
            let err = backend.ensure_sandbox(&request).await.unwrap_err();
            assert!(err.to_string().contains(code), "{access:?}: {err}");
            let remote = format!("{}/{}", sshd.remote_root(), request.sandbox_name);
            assert!(!Path::new(&remote).exists(), "nothing may reach {remote}");
        }
    }
}
