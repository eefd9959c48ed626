#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::os::unix::fs::MetadataExt;

use pretty_assertions::assert_eq;

use super::*;

struct Dirs {
    _tmp: tempfile::TempDir,
    /// Outside both workspaces: what an attacker wants copied or
    /// overwritten.
    secret: PathBuf,
    agent: PathBuf,
    sandbox: PathBuf,
}

fn dirs() -> Dirs {
    let tmp = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(tmp.path()).unwrap();
    let agent = root.join("agent-ws");
    std::fs::create_dir_all(&agent).unwrap();
    let secret = root.join("secret");
    std::fs::write(&secret, "TOP SECRET").unwrap();
    Dirs {
        _tmp: tmp,
        secret,
        agent,
        sandbox: root.join("sandboxes").join("agent-main-1234abcd"),
    }
}

fn reasons(report: &SeedReport) -> Vec<(String, SkipReason)> {
    report
        .skipped
        .iter()
        .map(|s| (s.path.clone(), s.reason.clone()))
        .collect()
}

#[test]
fn copies_present_bootstrap_files_once_and_writes_the_marker_outside() {
    let d = dirs();
    std::fs::write(d.agent.join("AGENTS.md"), "be nice").unwrap();
    std::fs::write(d.agent.join("SOUL.md"), "soul").unwrap();
    std::fs::write(d.agent.join("notes.txt"), "not a bootstrap file").unwrap();
    let report = seed_sandbox_workspace(&d.agent, &d.sandbox).unwrap();
    assert_eq!(
        report,
        SeedReport {
            already_seeded: false,
            copied: vec!["AGENTS.md".to_owned(), "SOUL.md".to_owned()],
            kept: vec![],
            skipped: vec![],
        }
    );
    assert_eq!(
        std::fs::read_to_string(d.sandbox.join("AGENTS.md")).unwrap(),
        "be nice"
    );
    assert!(!d.sandbox.join("notes.txt").exists());
    // The marker sits beside the directory, not in it.
    let marker = seed_marker_path(&d.sandbox).unwrap();
    assert_eq!(marker.parent(), d.sandbox.parent());
    assert!(marker.is_file());
    let names: Vec<_> = std::fs::read_dir(&d.sandbox)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert_eq!(names.len(), 2, "no temp files or marker left in {names:?}");
}

#[test]
fn once_only_a_deleted_file_is_not_brought_back_but_a_new_dir_is_seeded() {
    let d = dirs();
    std::fs::write(d.agent.join("AGENTS.md"), "v1").unwrap();
    seed_sandbox_workspace(&d.agent, &d.sandbox).unwrap();
    std::fs::remove_file(d.sandbox.join("AGENTS.md")).unwrap();
    std::fs::write(d.agent.join("AGENTS.md"), "v2").unwrap();
    let again = seed_sandbox_workspace(&d.agent, &d.sandbox).unwrap();
    assert!(again.already_seeded);
    assert!(again.copied.is_empty());
    assert!(!d.sandbox.join("AGENTS.md").exists());
    // `talon sandbox rm` removes the directory: a new one is seeded.
    std::fs::remove_dir_all(&d.sandbox).unwrap();
    let fresh = seed_sandbox_workspace(&d.agent, &d.sandbox).unwrap();
    assert!(!fresh.already_seeded);
    assert_eq!(fresh.copied, vec!["AGENTS.md".to_owned()]);
    assert_eq!(
        std::fs::read_to_string(d.sandbox.join("AGENTS.md")).unwrap(),
        "v2"
    );
}

#[test]
fn never_overwrites_what_the_sandbox_wrote() {
    let d = dirs();
    std::fs::write(d.agent.join("AGENTS.md"), "from the agent").unwrap();
    std::fs::write(d.agent.join("TOOLS.md"), "tools").unwrap();
    std::fs::create_dir_all(&d.sandbox).unwrap();
    std::fs::write(d.sandbox.join("AGENTS.md"), "edited in the sandbox").unwrap();
    let report = seed_sandbox_workspace(&d.agent, &d.sandbox).unwrap();
    assert_eq!(report.copied, vec!["TOOLS.md".to_owned()]);
    assert_eq!(report.kept, vec!["AGENTS.md".to_owned()]);
    assert_eq!(
        std::fs::read_to_string(d.sandbox.join("AGENTS.md")).unwrap(),
        "edited in the sandbox"
    );
}

#[test]
fn a_pre_planted_symlink_in_the_sandbox_workspace_is_not_written_through() {
    let d = dirs();
    std::fs::write(d.agent.join("AGENTS.md"), "payload").unwrap();
    std::fs::create_dir_all(&d.sandbox).unwrap();
    std::os::unix::fs::symlink(&d.secret, d.sandbox.join("AGENTS.md")).unwrap();
    // A dangling one too: following it would create the target.
    std::fs::write(d.agent.join("SOUL.md"), "payload").unwrap();
    let dangling = d.secret.with_file_name("created-through-link");
    std::os::unix::fs::symlink(&dangling, d.sandbox.join("SOUL.md")).unwrap();
    let report = seed_sandbox_workspace(&d.agent, &d.sandbox).unwrap();
    assert_eq!(
        report.kept,
        vec!["AGENTS.md".to_owned(), "SOUL.md".to_owned()]
    );
    assert_eq!(std::fs::read_to_string(&d.secret).unwrap(), "TOP SECRET");
    assert!(!dangling.exists());
    assert!(
        std::fs::symlink_metadata(d.sandbox.join("AGENTS.md"))
            .unwrap()
            .file_type()
            .is_symlink()
    );
}

#[test]
fn hostile_bootstrap_files_are_skipped_and_reported() {
    let d = dirs();
    // A symlink to a secret, a dangling symlink, a FIFO, a device, a hard
    // link to a file outside, a huge (sparse) file, a directory.
    std::os::unix::fs::symlink(&d.secret, d.agent.join("AGENTS.md")).unwrap();
    std::os::unix::fs::symlink("/nonexistent", d.agent.join("BOOTSTRAP.md")).unwrap();
    rustix::fs::mknodat(
        rustix::fs::CWD,
        d.agent.join("SOUL.md").as_path(),
        rustix::fs::FileType::Fifo,
        rustix::fs::Mode::from_raw_mode(0o644),
        0,
    )
    .unwrap();
    // /dev/null's numbers (1, 3): needs root, which the test machines are.
    rustix::fs::mknodat(
        rustix::fs::CWD,
        d.agent.join("TOOLS.md").as_path(),
        rustix::fs::FileType::CharacterDevice,
        rustix::fs::Mode::from_raw_mode(0o644),
        rustix::fs::makedev(1, 3),
    )
    .expect("creating a device node needs root (the test machines run as root)");
    std::fs::hard_link(&d.secret, d.agent.join("USER.md")).unwrap();
    let huge = std::fs::File::create(d.agent.join("MEMORY.md")).unwrap();
    huge.set_len(MAX_BOOTSTRAP_FILE_BYTES + 1).unwrap();
    std::fs::create_dir(d.agent.join("HEARTBEAT.md")).unwrap();
    std::fs::write(d.agent.join("IDENTITY.md"), "me").unwrap();

    let report = seed_sandbox_workspace(&d.agent, &d.sandbox).unwrap();
    assert_eq!(report.copied, vec!["IDENTITY.md".to_owned()]);
    assert_eq!(
        reasons(&report),
        vec![
            ("AGENTS.md".to_owned(), SkipReason::Symlink),
            (
                "SOUL.md".to_owned(),
                SkipReason::NotRegular {
                    file_type: "FIFO".to_owned()
                }
            ),
            (
                "TOOLS.md".to_owned(),
                SkipReason::NotRegular {
                    file_type: "character device".to_owned()
                }
            ),
            ("USER.md".to_owned(), SkipReason::HardLinked { links: 2 }),
            (
                "HEARTBEAT.md".to_owned(),
                SkipReason::NotRegular {
                    file_type: "directory".to_owned()
                }
            ),
            ("BOOTSTRAP.md".to_owned(), SkipReason::Symlink),
            (
                "MEMORY.md".to_owned(),
                SkipReason::TooLarge {
                    bytes: MAX_BOOTSTRAP_FILE_BYTES + 1,
                    limit: MAX_BOOTSTRAP_FILE_BYTES
                }
            ),
        ]
    );
    let present: Vec<_> = std::fs::read_dir(&d.sandbox)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert_eq!(present, vec!["IDENTITY.md".to_owned()]);
    // The secret still has exactly its two names (nothing linked it in).
    assert_eq!(std::fs::metadata(&d.secret).unwrap().nlink(), 2);
}

#[test]
fn a_symlink_in_place_of_the_sandbox_workspace_is_refused() {
    let d = dirs();
    std::fs::write(d.agent.join("AGENTS.md"), "payload").unwrap();
    let elsewhere = d.secret.with_file_name("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    std::fs::create_dir_all(d.sandbox.parent().unwrap()).unwrap();
    std::os::unix::fs::symlink(&elsewhere, &d.sandbox).unwrap();
    let err = seed_sandbox_workspace(&d.agent, &d.sandbox).unwrap_err();
    assert!(matches!(err, WorkspaceError::NotADirectory { .. }), "{err}");
    assert!(err.to_string().contains("not a plain directory"), "{err}");
    assert_eq!(std::fs::read_dir(&elsewhere).unwrap().count(), 0);
}

#[test]
fn a_missing_agent_workspace_seeds_nothing() {
    let d = dirs();
    let report = seed_sandbox_workspace(&d.agent.join("missing"), &d.sandbox).unwrap();
    assert_eq!(report, SeedReport::default());
    assert!(d.sandbox.is_dir());
}

fn request(d: &Dirs, access: WorkspaceAccess) -> SandboxRequest {
    use crate::resolved::{ResolvedSandboxConfig, SandboxInputs};
    use crate::sandbox_config::SandboxConfig;
    let sandboxes = d.sandbox.parent().unwrap().to_path_buf();
    let defaults = SandboxConfig {
        mode: Some(talon_tool_policy::SandboxMode::All),
        workspace_access: Some(access),
        workspace_root: Some(sandboxes.to_string_lossy().into_owned()),
        ..Default::default()
    };
    let tools = talon_tool_policy::config::ToolsConfig::default();
    let resolved = ResolvedSandboxConfig::resolve(&SandboxInputs {
        agent_id: "main",
        defaults: Some(&defaults),
        agent: None,
        agent_key: None,
        state_dir: sandboxes.parent().unwrap(),
        home: None,
        tools: &tools,
        agent_tools: None,
    });
    SandboxRequest::new(resolved, "main", &d.agent, None)
}

#[test]
fn prepare_seeds_for_none_and_ro_and_leaves_rw_alone() {
    for access in [WorkspaceAccess::None, WorkspaceAccess::Ro] {
        let d = dirs();
        std::fs::write(d.agent.join("AGENTS.md"), "hi").unwrap();
        let req = request(&d, access);
        let report = prepare_sandbox_workspace(&req).unwrap();
        let seed = report.seed.unwrap();
        assert_eq!(seed.copied, vec!["AGENTS.md".to_owned()], "{access:?}");
        assert_eq!(
            std::fs::read_to_string(req.workspace_dir.join("AGENTS.md")).unwrap(),
            "hi"
        );
    }
    let d = dirs();
    std::fs::write(d.agent.join("AGENTS.md"), "hi").unwrap();
    let req = request(&d, WorkspaceAccess::Rw);
    assert_eq!(prepare_sandbox_workspace(&req).unwrap().seed, None);
    assert!(!req.workspace_dir.exists());
}

#[test]
fn the_scratch_copy_belongs_to_the_agent_workspace_owner() {
    let d = dirs();
    std::fs::write(d.agent.join("AGENTS.md"), "x").unwrap();
    std::os::unix::fs::chown(&d.agent, Some(1000), Some(1000)).unwrap();
    seed_sandbox_workspace(&d.agent, &d.sandbox).unwrap();
    for path in [d.sandbox.clone(), d.sandbox.join("AGENTS.md")] {
        let meta = std::fs::metadata(&path).unwrap();
        assert_eq!((meta.uid(), meta.gid()), (1000, 1000), "{}", path.display());
    }
}
