#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::os::unix::fs::MetadataExt;

use pretty_assertions::assert_eq;

use super::*;

struct Fixture {
    _tmp: tempfile::TempDir,
    secret: PathBuf,
    src: PathBuf,
    root: PathBuf,
}

fn fixture() -> Fixture {
    let tmp = tempfile::tempdir().unwrap();
    let base = std::fs::canonicalize(tmp.path()).unwrap();
    let secret = base.join("secret");
    std::fs::write(&secret, "TOP SECRET").unwrap();
    let src = base.join("skills-src");
    let pdf = src.join("pdf");
    std::fs::create_dir_all(pdf.join("scripts/deep")).unwrap();
    std::fs::write(
        pdf.join("SKILL.md"),
        "---\nname: pdf\ndescription: d\n---\n",
    )
    .unwrap();
    std::fs::write(pdf.join("scripts/fill.sh"), "#!/bin/sh\n").unwrap();
    std::fs::set_permissions(
        pdf.join("scripts/fill.sh"),
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    std::fs::write(pdf.join("scripts/deep/data.txt"), "data").unwrap();
    Fixture {
        _tmp: tmp,
        secret,
        src,
        root: base.join("state/sandbox/skills-workspaces/x/.talon/sandbox-skills"),
    }
}

fn dirs(f: &Fixture, names: &[&str]) -> Vec<SkillDir> {
    names
        .iter()
        .map(|n| SkillDir { dir: f.src.join(n) })
        .collect()
}

fn tree(dir: &Path) -> Vec<String> {
    fn walk(dir: &Path, prefix: &str, out: &mut Vec<String>) {
        let mut entries: Vec<_> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap())
            .collect();
        entries.sort_by_key(|e| e.file_name());
        for e in entries {
            let name = format!("{prefix}{}", e.file_name().to_string_lossy());
            let ft = e.file_type().unwrap();
            if ft.is_dir() {
                out.push(format!("{name}/"));
                walk(&e.path(), &format!("{name}/"), out);
            } else if ft.is_symlink() {
                out.push(format!("{name}@"));
            } else {
                out.push(name);
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, "", &mut out);
    out
}

#[test]
fn copies_the_tree_keeping_the_executable_bit() {
    let f = fixture();
    let report = mirror_skills(&f.root, &dirs(&f, &["pdf"]), &MirrorLimits::default()).unwrap();
    assert_eq!(report.skills, vec!["pdf".to_owned()]);
    assert_eq!(report.copied, vec!["pdf".to_owned()]);
    assert!(report.skipped.is_empty(), "{:?}", report.skipped);
    let skills = f.root.join("skills");
    assert_eq!(
        tree(&skills),
        vec![
            "pdf/",
            "pdf/SKILL.md",
            "pdf/scripts/",
            "pdf/scripts/deep/",
            "pdf/scripts/deep/data.txt",
            "pdf/scripts/fill.sh",
        ]
    );
    let mode = std::fs::metadata(skills.join("pdf/scripts/fill.sh"))
        .unwrap()
        .mode();
    assert_eq!(mode & 0o777, 0o755);
    // The manifest is outside the mounted `skills/`.
    assert!(f.root.join(SKILLS_MIRROR_MANIFEST).is_file());
}

#[test]
fn hostile_entries_are_skipped_and_reported() {
    let f = fixture();
    let pdf = f.src.join("pdf");
    std::os::unix::fs::symlink(&f.secret, pdf.join("key.pem")).unwrap();
    std::os::unix::fs::symlink(f.secret.parent().unwrap(), pdf.join("up")).unwrap();
    std::fs::hard_link(&f.secret, pdf.join("linked.txt")).unwrap();
    rustix::fs::mknodat(
        rustix::fs::CWD,
        pdf.join("pipe").as_path(),
        rustix::fs::FileType::Fifo,
        rustix::fs::Mode::from_raw_mode(0o644),
        0,
    )
    .unwrap();
    std::fs::write(pdf.join(".env"), "API_KEY=1").unwrap();
    std::fs::create_dir(pdf.join(".git")).unwrap();
    std::fs::write(pdf.join("big.bin"), vec![0u8; 2048]).unwrap();
    let limits = MirrorLimits {
        max_file_bytes: 1024,
        ..MirrorLimits::default()
    };
    let report = mirror_skills(&f.root, &dirs(&f, &["pdf"]), &limits).unwrap();
    let mut skipped: Vec<(String, SkipReason)> = report
        .skipped
        .iter()
        .map(|s| (s.path.clone(), s.reason.clone()))
        .collect();
    skipped.sort_by(|a, b| a.0.cmp(&b.0));
    assert_eq!(
        skipped,
        vec![
            (
                "pdf/big.bin".to_owned(),
                SkipReason::TooLarge {
                    bytes: 2048,
                    limit: 1024
                }
            ),
            ("pdf/key.pem".to_owned(), SkipReason::Symlink),
            (
                "pdf/linked.txt".to_owned(),
                SkipReason::HardLinked { links: 2 }
            ),
            (
                "pdf/pipe".to_owned(),
                SkipReason::NotRegular {
                    file_type: "FIFO".to_owned()
                }
            ),
            ("pdf/up".to_owned(), SkipReason::Symlink),
        ]
    );
    let copied = tree(&f.root.join("skills"));
    assert!(copied.iter().all(|p| !p.contains("key.pem")
        && !p.contains(".env")
        && !p.contains(".git")
        && !p.contains("up")
        && !p.contains("pipe")
        && !p.contains("linked")));
    assert!(copied.contains(&"pdf/SKILL.md".to_owned()));
}

#[test]
fn file_count_and_depth_limits_cut_a_skill_short() {
    let f = fixture();
    let limits = MirrorLimits {
        max_files_per_skill: 2,
        max_depth: 1,
        ..MirrorLimits::default()
    };
    let report = mirror_skills(&f.root, &dirs(&f, &["pdf"]), &limits).unwrap();
    let reasons: Vec<(String, SkipReason)> = report
        .skipped
        .iter()
        .map(|s| (s.path.clone(), s.reason.clone()))
        .collect();
    assert_eq!(
        reasons,
        vec![(
            "pdf/scripts/deep".to_owned(),
            SkipReason::Limit {
                limit: "depth".to_owned()
            }
        )]
    );
    let limits = MirrorLimits {
        max_files_per_skill: 1,
        ..MirrorLimits::default()
    };
    let f = fixture();
    let report = mirror_skills(&f.root, &dirs(&f, &["pdf"]), &limits).unwrap();
    assert_eq!(report.skipped.len(), 2, "{:?}", report.skipped);
    assert!(report.skipped.iter().all(|s| s.reason
        == SkipReason::Limit {
            limit: "files per skill".to_owned()
        }));
}

#[test]
fn refresh_copies_only_changes_and_keeps_the_mounted_directory() {
    let f = fixture();
    let limits = MirrorLimits::default();
    mirror_skills(&f.root, &dirs(&f, &["pdf"]), &limits).unwrap();
    let skills = f.root.join("skills");
    let inode = std::fs::metadata(&skills).unwrap().ino();

    let again = mirror_skills(&f.root, &dirs(&f, &["pdf"]), &limits).unwrap();
    assert!(
        again.copied.is_empty() && again.removed.is_empty(),
        "{again:?}"
    );

    std::fs::write(
        f.src.join("pdf/SKILL.md"),
        "---\nname: pdf\ndescription: new\n---\n",
    )
    .unwrap();
    let web = f.src.join("web");
    std::fs::create_dir_all(&web).unwrap();
    std::fs::write(web.join("SKILL.md"), "web").unwrap();
    let changed = mirror_skills(&f.root, &dirs(&f, &["pdf", "web"]), &limits).unwrap();
    assert_eq!(changed.copied, vec!["pdf".to_owned(), "web".to_owned()]);
    assert!(
        std::fs::read_to_string(skills.join("pdf/SKILL.md"))
            .unwrap()
            .contains("new")
    );

    let dropped = mirror_skills(&f.root, &dirs(&f, &["web"]), &limits).unwrap();
    assert_eq!(dropped.removed, vec!["pdf".to_owned()]);
    assert_eq!(tree(&skills), vec!["web/", "web/SKILL.md"]);
    // A running container's bind mount still points at the same directory.
    assert_eq!(std::fs::metadata(&skills).unwrap().ino(), inode);
}

#[test]
fn same_directory_names_from_two_roots_get_distinct_mirror_names() {
    let f = fixture();
    let other = f.src.join("other/pdf");
    std::fs::create_dir_all(&other).unwrap();
    std::fs::write(other.join("SKILL.md"), "second").unwrap();
    let skills = vec![
        SkillDir {
            dir: f.src.join("pdf"),
        },
        SkillDir { dir: other },
    ];
    let report = mirror_skills(&f.root, &skills, &MirrorLimits::default()).unwrap();
    assert_eq!(report.skills, vec!["pdf".to_owned(), "pdf-2".to_owned()]);
    assert_eq!(
        std::fs::read_to_string(f.root.join("skills/pdf-2/SKILL.md")).unwrap(),
        "second"
    );
}

#[test]
fn materialized_root_layout() {
    let root = materialized_skills_root(Path::new("/state"), SandboxScope::Agent, "agent:main");
    let slug = crate::scope::slugify_scope_key("agent:main");
    assert_eq!(
        root,
        PathBuf::from(format!(
            "/state/sandbox/skills-workspaces/{slug}/.talon/sandbox-skills"
        ))
    );
}

#[test]
fn a_hidden_or_unusable_skill_directory_is_skipped_and_reported() {
    let f = fixture();
    let hidden = f.src.join(".hidden");
    std::fs::create_dir_all(&hidden).unwrap();
    std::fs::write(hidden.join("SKILL.md"), "x").unwrap();
    let skills = vec![
        SkillDir { dir: hidden },
        SkillDir {
            dir: f.src.join("pdf"),
        },
    ];
    let report = mirror_skills(&f.root, &skills, &MirrorLimits::default()).unwrap();
    assert_eq!(report.skills, vec!["pdf".to_owned()]);
    assert_eq!(report.skipped.len(), 1);
    assert_eq!(report.skipped[0].reason, SkipReason::UnusableName);
}

#[test]
fn a_symlink_in_place_of_the_mirrored_skills_dir_is_refused() {
    let f = fixture();
    let elsewhere = f.secret.with_file_name("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    std::fs::create_dir_all(&f.root).unwrap();
    std::os::unix::fs::symlink(&elsewhere, f.root.join("skills")).unwrap();
    let err = mirror_skills(&f.root, &dirs(&f, &["pdf"]), &MirrorLimits::default()).unwrap_err();
    assert!(matches!(err, WorkspaceError::NotADirectory { .. }), "{err}");
    assert_eq!(std::fs::read_dir(&elsewhere).unwrap().count(), 0);
}

#[test]
fn concurrent_mirrors_of_one_root_both_succeed() {
    let f = fixture();
    let web = f.src.join("web");
    std::fs::create_dir_all(&web).unwrap();
    std::fs::write(web.join("SKILL.md"), "web").unwrap();
    let skills = dirs(&f, &["pdf", "web"]);
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..4)
            .map(|_| s.spawn(|| mirror_skills(&f.root, &skills, &MirrorLimits::default())))
            .collect();
        for h in handles {
            let report = h.join().unwrap().unwrap();
            assert_eq!(report.skills, vec!["pdf".to_owned(), "web".to_owned()]);
        }
    });
    assert_eq!(
        tree(&f.root.join("skills")),
        vec![
            "pdf/",
            "pdf/SKILL.md",
            "pdf/scripts/",
            "pdf/scripts/deep/",
            "pdf/scripts/deep/data.txt",
            "pdf/scripts/fill.sh",
            "web/",
            "web/SKILL.md",
        ]
    );
}
