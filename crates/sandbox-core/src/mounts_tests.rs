#![allow(clippy::unwrap_used, clippy::expect_used)]

use pretty_assertions::assert_eq;

use super::*;

struct Dirs {
    _tmp: tempfile::TempDir,
    agent: PathBuf,
    sandbox: PathBuf,
    materialized: PathBuf,
}

fn dirs() -> Dirs {
    let tmp = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(tmp.path()).unwrap();
    let agent = root.join("agent-ws");
    let sandbox = root.join("sandboxes/agent-main-x");
    let materialized = root.join("mat");
    for d in [&agent, &sandbox, &materialized] {
        std::fs::create_dir_all(d).unwrap();
    }
    Dirs {
        _tmp: tmp,
        agent,
        sandbox,
        materialized,
    }
}

fn plan(d: &Dirs, access: WorkspaceAccess, binds: &[String]) -> MountPlan {
    MountPlan::build(&MountPlanInputs {
        access,
        workdir: "/workspace",
        sandbox_workspace_dir: &d.sandbox,
        agent_workspace_dir: &d.agent,
        materialized_skills_root: Some(&d.materialized),
        binds,
    })
}

fn summary(p: &MountPlan) -> Vec<(String, String, bool, MountKind)> {
    p.entries
        .iter()
        .map(|e| {
            (
                e.host_path.display().to_string(),
                e.container_path.clone(),
                e.read_only,
                e.kind,
            )
        })
        .collect()
}

#[test]
fn none_mounts_the_sandbox_workspace_writable_with_read_only_skills_and_no_agent_dir() {
    let d = dirs();
    // The agent's own skill dirs are not overlaid outside `rw`; the
    // materialised ones are.
    std::fs::create_dir_all(d.agent.join("skills")).unwrap();
    std::fs::create_dir_all(d.materialized.join("skills")).unwrap();
    let p = plan(&d, WorkspaceAccess::None, &[]);
    assert_eq!(
        summary(&p),
        vec![
            (
                d.sandbox.display().to_string(),
                "/workspace".to_owned(),
                false,
                MountKind::Workspace
            ),
            (
                d.materialized.join("skills").display().to_string(),
                "/workspace/.talon/sandbox-skills/skills".to_owned(),
                true,
                MountKind::Skills
            ),
        ]
    );
    assert_eq!(
        p.docker_binds(),
        vec![
            format!("{}:/workspace:z", d.sandbox.display()),
            format!(
                "{}:/workspace/.talon/sandbox-skills/skills:ro,z",
                d.materialized.join("skills").display()
            ),
        ]
    );
}

#[test]
fn ro_mounts_the_sandbox_workspace_writable_and_the_agent_dir_read_only() {
    let d = dirs();
    let p = plan(&d, WorkspaceAccess::Ro, &[]);
    assert_eq!(
        summary(&p),
        vec![
            (
                d.sandbox.display().to_string(),
                "/workspace".to_owned(),
                false,
                MountKind::Workspace
            ),
            (
                d.agent.display().to_string(),
                "/agent".to_owned(),
                true,
                MountKind::Agent
            ),
        ]
    );
    assert_eq!(
        p.docker_binds()[1],
        format!("{}:/agent:ro,z", d.agent.display())
    );
}

#[test]
fn ro_bridge_accepts_workspace_writes_and_refuses_agent_writes() {
    let d = dirs();
    std::fs::write(d.agent.join("AGENTS.md"), "a").unwrap();
    std::fs::create_dir_all(d.materialized.join("skills")).unwrap();
    let p = plan(&d, WorkspaceAccess::Ro, &[]);
    let bridge = p.mount_bridge("/workspace").unwrap();
    let ok = bridge
        .resolve_blocking("/workspace/x", talon_fs_bridge::Access::Write)
        .unwrap();
    assert_eq!(ok.host_path, Some(d.sandbox.join("x")));
    for refused in [
        "/agent/AGENTS.md",
        "/agent/new.txt",
        "/workspace/.talon/sandbox-skills/skills/x",
    ] {
        let err = bridge
            .resolve_blocking(refused, talon_fs_bridge::Access::Write)
            .unwrap_err();
        assert_eq!(
            err.code,
            talon_fs_bridge::FsErrorCode::ReadOnly,
            "{refused}"
        );
    }
    let read = bridge
        .resolve_blocking("/agent/AGENTS.md", talon_fs_bridge::Access::Read)
        .unwrap();
    assert_eq!(read.host_path, Some(d.agent.join("AGENTS.md")));
}

#[test]
fn rw_mounts_the_agent_workspace_writable_with_read_only_skills() {
    let d = dirs();
    std::fs::create_dir_all(d.agent.join("skills/a")).unwrap();
    std::fs::create_dir_all(d.agent.join(".agents/skills")).unwrap();
    std::fs::create_dir_all(d.materialized.join("skills")).unwrap();
    let binds = vec!["/srv/data:/data:ro".to_owned(), "/srv/rw:/rw".to_owned()];
    let p = plan(&d, WorkspaceAccess::Rw, &binds);
    assert_eq!(
        summary(&p),
        vec![
            (
                d.agent.display().to_string(),
                "/workspace".to_owned(),
                false,
                MountKind::Workspace
            ),
            (
                d.agent.join("skills").display().to_string(),
                "/workspace/skills".to_owned(),
                true,
                MountKind::Skills
            ),
            (
                d.agent.join(".agents/skills").display().to_string(),
                "/workspace/.agents/skills".to_owned(),
                true,
                MountKind::Skills
            ),
            (
                d.materialized.join("skills").display().to_string(),
                "/workspace/.talon/sandbox-skills/skills".to_owned(),
                true,
                MountKind::Skills
            ),
            (
                "/srv/data".to_owned(),
                "/data".to_owned(),
                true,
                MountKind::Bind
            ),
            (
                "/srv/rw".to_owned(),
                "/rw".to_owned(),
                false,
                MountKind::Bind
            ),
        ]
    );
    let binds = p.docker_binds();
    assert_eq!(binds[0], format!("{}:/workspace:z", d.agent.display()));
    assert_eq!(
        binds[1],
        format!(
            "{}:/workspace/skills:ro,z",
            d.agent.join("skills").display()
        )
    );
    assert_eq!(binds[4], "/srv/data:/data:ro");
    assert_eq!(binds[5], "/srv/rw:/rw");
    assert_eq!(p.read_only_skill_mounts().len(), 3);
    assert!(p.read_only_skill_mounts()[0].ends_with(":/workspace/skills:ro"));
}

#[test]
fn symlinked_or_missing_skill_roots_are_not_overlaid() {
    let d = dirs();
    // `skills` is a symlink to a directory outside the workspace.
    let outside = d.materialized.join("elsewhere");
    std::fs::create_dir_all(&outside).unwrap();
    std::os::unix::fs::symlink(&outside, d.agent.join("skills")).unwrap();
    // `.agents/skills` is a file.
    std::fs::create_dir_all(d.agent.join(".agents")).unwrap();
    std::fs::write(d.agent.join(".agents/skills"), "x").unwrap();
    let p = plan(&d, WorkspaceAccess::Rw, &[]);
    assert!(p.entries.iter().all(|e| e.kind != MountKind::Skills));
}

#[test]
fn bridge_mounts_and_mount_bridge() {
    let d = dirs();
    std::fs::create_dir_all(d.agent.join("skills")).unwrap();
    std::fs::write(d.agent.join("file.txt"), "x").unwrap();
    let binds = vec![
        format!("{}:/single-file:ro", d.agent.join("file.txt").display()),
        format!("{}:/mat", d.materialized.display()),
    ];
    let p = plan(&d, WorkspaceAccess::Rw, &binds);
    let mounts = p.fs_bridge_mounts();
    let paths: Vec<(&str, bool)> = mounts
        .iter()
        .map(|m| (m.container_path.as_str(), m.read_only))
        .collect();
    // The single-file bind is not a bridge mount.
    assert_eq!(
        paths,
        vec![
            ("/workspace", false),
            ("/workspace/skills", true),
            ("/mat", false)
        ]
    );
    let bridge = p.mount_bridge("/workspace").unwrap();
    let r = bridge
        .resolve_blocking("/workspace/skills/x", talon_fs_bridge::Access::Write)
        .unwrap_err();
    assert_eq!(r.code, talon_fs_bridge::FsErrorCode::ReadOnly);
    let ok = bridge
        .resolve_blocking("file.txt", talon_fs_bridge::Access::Write)
        .unwrap();
    assert_eq!(ok.host_path, Some(d.agent.join("file.txt")));
}
