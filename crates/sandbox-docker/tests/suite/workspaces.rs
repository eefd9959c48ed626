//! Sandbox workspaces against the real engine: with `workspaceAccess`
//! `none` and `ro`, `/workspace` is the scope's own scratch copy (seeded
//! from the agent's bootstrap files, writable, never the agent's files),
//! `ro` shows the agent workspace read-only at `/agent`, and the agent's
//! eligible skills are visible read-only in every mode. Checked through
//! `exec` inside the container and through the file bridge.

use super::common;

use std::path::Path;

use common::{Cleanup, IMAGE, QUICK, backend, workspace};
use talon_fs_bridge::{FsErrorCode, WriteOptions};
use talon_sandbox_core::{
    ExitStatus, MirrorLimits, ResolvedSandboxConfig, SandboxBackend, SandboxConfig, SandboxHandle,
    SandboxInputs, SandboxRequest, SkillDir, WorkspaceAccess, materialized_skills_root,
    mirror_skills,
};

async fn sh(handle: &dyn SandboxHandle, script: &str) -> (String, String, ExitStatus) {
    let out = handle.run_script(script, &[], None, QUICK).await.unwrap();
    (
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
        out.status,
    )
}

/// An agent workspace (owned by 1000:1000) with bootstrap files and a
/// skill, the skill mirrored, and the request for `access`.
fn request(access: WorkspaceAccess, state: &Path, agent_ws: &Path, tag: &str) -> SandboxRequest {
    std::fs::write(agent_ws.join("AGENTS.md"), "agent rules\n").unwrap();
    std::fs::write(agent_ws.join("SOUL.md"), "agent soul\n").unwrap();
    let skill = agent_ws.join("skills").join("pdf");
    std::fs::create_dir_all(&skill).unwrap();
    std::fs::write(
        skill.join("SKILL.md"),
        "---\nname: pdf\ndescription: d\n---\n",
    )
    .unwrap();
    let defaults = SandboxConfig {
        mode: Some(talon_tool_policy::SandboxMode::All),
        workspace_access: Some(access),
        docker: Some(talon_sandbox_core::DockerConfig {
            image: Some(IMAGE.to_owned()),
            ..Default::default()
        }),
        ..Default::default()
    };
    let tools = talon_tool_policy::config::ToolsConfig::default();
    let agent_id = format!("ws{tag}{}", std::process::id());
    let resolved = ResolvedSandboxConfig::resolve(&SandboxInputs {
        agent_id: &agent_id,
        defaults: Some(&defaults),
        agent: None,
        agent_key: None,
        state_dir: state,
        home: None,
        tools: &tools,
        agent_tools: None,
    });
    let scope_key = format!("agent:{agent_id}");
    let root = materialized_skills_root(state, resolved.scope, &scope_key);
    let report =
        mirror_skills(&root, &[SkillDir { dir: skill }], &MirrorLimits::default()).unwrap();
    assert_eq!(report.skills, vec!["pdf".to_owned()]);
    let request = SandboxRequest::new(resolved, "main", agent_ws, Some(&root));
    assert_eq!(request.scope_key, scope_key);
    request
}

/// What `none` and `ro` share: the seeded, writable scratch workspace and
/// the read-only skills.
async fn check_scratch_workspace_and_skills(
    handle: &dyn SandboxHandle,
    request: &SandboxRequest,
    agent_ws: &Path,
) {
    let (out, err, status) = sh(handle, "cat /workspace/AGENTS.md /workspace/SOUL.md").await;
    assert!(status.success(), "{err}");
    assert_eq!(out, "agent rules\nagent soul\n");

    // Writable scratch, and the agent's real workspace never sees it.
    let (_, err, status) = sh(
        handle,
        "echo scratch > /workspace/x && echo edited >> /workspace/AGENTS.md",
    )
    .await;
    assert!(status.success(), "{err}");
    assert!(!agent_ws.join("x").exists());
    assert_eq!(
        std::fs::read_to_string(agent_ws.join("AGENTS.md")).unwrap(),
        "agent rules\n"
    );
    assert_eq!(
        std::fs::read_to_string(request.workspace_dir.join("x")).unwrap(),
        "scratch\n"
    );

    // The skills are there, read-only.
    let skills = "/workspace/.talon/sandbox-skills/skills";
    let (out, _, status) = sh(handle, &format!("cat {skills}/pdf/SKILL.md")).await;
    assert!(status.success());
    assert!(out.contains("name: pdf"), "{out}");
    let (_, err, status) = sh(handle, &format!("echo x > {skills}/pdf/SKILL.md")).await;
    assert_ne!(status, ExitStatus::Code(0));
    assert!(err.contains("Read-only file system"), "{err}");

    // The file bridge agrees.
    let bridge = handle.fs_bridge().unwrap();
    bridge
        .write("/workspace/y", b"from the bridge", WriteOptions::default())
        .await
        .unwrap();
    assert_eq!(sh(handle, "cat /workspace/y").await.0, "from the bridge");
    assert!(!agent_ws.join("y").exists());
    let read = bridge.read("AGENTS.md", None).await.unwrap();
    assert_eq!(read.bytes, b"agent rules\nedited\n");
    let err = bridge
        .write(
            &format!("{skills}/pdf/SKILL.md"),
            b"x",
            WriteOptions::default(),
        )
        .await
        .unwrap_err();
    assert_eq!(err.code, FsErrorCode::ReadOnly);
}

#[tokio::test]
async fn none_gives_a_seeded_writable_scratch_workspace_and_read_only_skills() {
    let backend = backend().await;
    let state = tempfile::tempdir().unwrap();
    let agent_ws = workspace();
    // A bootstrap file that is a symlink to a host secret is not copied.
    let secret = state.path().join("host-secret");
    std::fs::write(&secret, "TOP SECRET\n").unwrap();
    std::os::unix::fs::symlink(&secret, agent_ws.path().join("TOOLS.md")).unwrap();
    let request = request(WorkspaceAccess::None, state.path(), agent_ws.path(), "n");
    let _cleanup = Cleanup(vec![request.sandbox_name.clone()]);
    let handle = SandboxBackend::ensure(&backend, &request).await.unwrap();
    check_scratch_workspace_and_skills(&*handle, &request, agent_ws.path()).await;
    let (out, _, _) = sh(&*handle, "ls -A /workspace").await;
    assert!(!out.contains("TOOLS.md"), "{out}");
    let (_, _, status) = sh(&*handle, "grep -r 'TOP SECRET' /workspace").await;
    assert_eq!(status, ExitStatus::Code(1));
    // No `/agent` mount with `none` (the test image has an empty dir).
    let (out, _, _) = sh(&*handle, "grep -c ' /agent ' /proc/mounts; ls -A /agent").await;
    assert_eq!(out, "0\n");
    // Ensured again (a reused container): not re-seeded, the edit stays.
    std::fs::remove_file(request.workspace_dir.join("SOUL.md")).unwrap();
    let again = SandboxBackend::ensure(&backend, &request).await.unwrap();
    let (_, _, status) = sh(&*again, "test -e /workspace/SOUL.md").await;
    assert_eq!(status, ExitStatus::Code(1));
    assert_eq!(
        sh(&*again, "cat /workspace/AGENTS.md").await.0,
        "agent rules\nedited\n"
    );
}

#[tokio::test]
async fn ro_shows_the_agent_workspace_read_only_at_agent() {
    let backend = backend().await;
    let state = tempfile::tempdir().unwrap();
    let agent_ws = workspace();
    let request = request(WorkspaceAccess::Ro, state.path(), agent_ws.path(), "r");
    let _cleanup = Cleanup(vec![request.sandbox_name.clone()]);
    let handle = SandboxBackend::ensure(&backend, &request).await.unwrap();
    check_scratch_workspace_and_skills(&*handle, &request, agent_ws.path()).await;

    let (out, _, status) = sh(&*handle, "cat /agent/AGENTS.md").await;
    assert!(status.success());
    assert_eq!(out, "agent rules\n");
    let (_, err, status) = sh(&*handle, "echo x > /agent/AGENTS.md").await;
    assert_ne!(status, ExitStatus::Code(0));
    assert!(err.contains("Read-only file system"), "{err}");
    let (_, err, status) = sh(&*handle, "touch /agent/new").await;
    assert_ne!(status, ExitStatus::Code(0));
    assert!(err.contains("Read-only file system"), "{err}");

    let bridge = handle.fs_bridge().unwrap();
    for path in ["/agent/AGENTS.md", "/agent/new"] {
        let err = bridge
            .write(path, b"x", WriteOptions::default())
            .await
            .unwrap_err();
        assert_eq!(err.code, FsErrorCode::ReadOnly, "{path}");
    }
    let read = bridge.read("/agent/AGENTS.md", None).await.unwrap();
    assert_eq!(read.bytes, b"agent rules\n");
    assert_eq!(
        std::fs::read_to_string(agent_ws.path().join("AGENTS.md")).unwrap(),
        "agent rules\n"
    );
    assert!(!agent_ws.path().join("new").exists());
}
