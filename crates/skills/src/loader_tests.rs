//! Tests of discovery, containment, precedence and eligibility, on the
//! fixture tree `fixtures/skills/loader/` and on trees built in temp dirs
//! (every symlink case uses real symlinks).

use std::fs;
use std::path::{Path, PathBuf};

use pretty_assertions::assert_eq;

use super::discover::escape_reason;
use super::eligibility::{config_truthy, evaluate, has_binary};
use super::*;
use crate::types::{Eligibility, SkillFrontmatter, SkillManifest, SkillRequires};

fn md(name: &str, description: &str) -> String {
    format!("---\nname: {name}\ndescription: {description}\n---\n\n# {name}\n\nThe body.\n")
}

fn write_skill(dir: &Path, name: &str, description: &str) {
    fs::create_dir_all(dir).unwrap();
    fs::write(dir.join("SKILL.md"), md(name, description)).unwrap();
}

fn ctx() -> EligibilityContext {
    EligibilityContext {
        os: "linux".into(),
        ..EligibilityContext::default()
    }
}

fn load(roots: &SkillRoots) -> SkillSet {
    load_skills(roots, &SkillLimits::default(), &ctx())
}

fn names(set: &SkillSet) -> Vec<&str> {
    set.skills.iter().map(|s| s.name.as_str()).collect()
}

fn reasons(set: &SkillSet) -> Vec<(&str, PathBuf)> {
    set.rejected
        .iter()
        .map(|r| (r.reason.as_str(), r.location.clone()))
        .collect()
}

fn fixture_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/skills/loader")
}

fn fixture_roots() -> SkillRoots {
    let f = fixture_root();
    SkillRoots {
        extra: vec![f.join("extra")],
        bundled: Some(f.join("bundled")),
        managed: Some(f.join("managed")),
        personal: Some(f.join("personal")),
        project: Some(f.join("project")),
        workspace: Some(f.join("workspace")),
    }
}

// ---------------------------------------------------------------- precedence

#[test]
fn workspace_wins_over_all_five_other_sources() {
    let set = load(&fixture_roots());
    let shared = set.skills.iter().find(|s| s.name == "shared").unwrap();
    let f = fixture_root();
    assert_eq!(shared.source, SkillSource::Workspace);
    assert_eq!(shared.description, "The workspace copy of the shared skill");
    assert_eq!(shared.location, f.join("workspace/shared/SKILL.md"));
    let canon = |p: &str| fs::canonicalize(f.join(p)).unwrap().join("SKILL.md");
    assert_eq!(
        shared.shadows,
        vec![
            Shadowed {
                source: SkillSource::Extra,
                location: f.join("extra/shared/SKILL.md"),
            },
            Shadowed {
                source: SkillSource::Bundled,
                location: f.join("bundled/shared/SKILL.md"),
            },
            // Managed and personal report canonical paths.
            Shadowed {
                source: SkillSource::Managed,
                location: canon("managed/shared"),
            },
            Shadowed {
                source: SkillSource::AgentsPersonal,
                location: canon("personal/shared"),
            },
            Shadowed {
                source: SkillSource::AgentsProject,
                location: f.join("project/shared/SKILL.md"),
            },
        ]
    );
    let collisions: Vec<&String> = set
        .warnings
        .iter()
        .filter(|w| w.starts_with("Skill precedence collision resolved: \"shared\""))
        .collect();
    assert_eq!(collisions.len(), 5, "{:#?}", set.warnings);
    assert!(collisions[4].contains("from openclaw-workspace"));
    assert!(collisions[4].contains("overrides agents-skills-project"));
}

#[test]
fn each_later_source_beats_each_earlier_one() {
    let fixture = fixture_roots();
    // Drop sources from the top: the highest remaining one must win.
    let expected = [
        SkillSource::Workspace,
        SkillSource::AgentsProject,
        SkillSource::AgentsPersonal,
        SkillSource::Managed,
        SkillSource::Bundled,
        SkillSource::Extra,
    ];
    let mut roots = fixture.clone();
    for (i, want) in expected.iter().enumerate() {
        let set = load(&roots);
        let shared = set.skills.iter().find(|s| s.name == "shared").unwrap();
        assert_eq!(shared.source, *want);
        assert_eq!(shared.shadows.len(), 5 - i);
        match want {
            SkillSource::Workspace => roots.workspace = None,
            SkillSource::AgentsProject => roots.project = None,
            SkillSource::AgentsPersonal => roots.personal = None,
            SkillSource::Managed => roots.managed = None,
            SkillSource::Bundled => roots.bundled = None,
            SkillSource::Extra => roots.extra.clear(),
        }
    }
}

#[test]
fn fixture_tree_loads_deterministically_in_byte_order() {
    let first = load(&fixture_roots());
    assert_eq!(
        names(&first),
        vec![
            "Alpha",
            "alpha-tools",
            "fallback-name",
            "grouped",
            "nested-one",
            "only-extra",
            "shared",
            "zeta"
        ]
    );
    for _ in 0..3 {
        assert_eq!(load(&fixture_roots()), first);
    }
    let f = fixture_root();
    assert_eq!(
        reasons(&first),
        vec![
            ("invalid-name", f.join("workspace/bad-name/SKILL.md")),
            ("missing-description", f.join("workspace/no-desc/SKILL.md")),
        ]
    );
}

#[test]
fn hidden_dirs_and_node_modules_are_skipped() {
    let set = load(&fixture_roots());
    assert!(!names(&set).contains(&"secret"));
    assert!(!names(&set).contains(&"pkg"));
}

#[test]
fn duplicate_name_within_one_source_first_path_wins() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("ws");
    write_skill(&root.join("b-second"), "same", "second");
    write_skill(&root.join("a-first"), "same", "first");
    let set = load(&SkillRoots {
        workspace: Some(root.clone()),
        ..SkillRoots::default()
    });
    assert_eq!(set.skills.len(), 1);
    assert_eq!(set.skills[0].description, "first");
    assert!(set.skills[0].shadows.is_empty());
    assert_eq!(
        reasons(&set),
        vec![("duplicate-name", root.join("b-second/SKILL.md"))]
    );
    assert_eq!(set.warnings.len(), 1);
    assert!(set.warnings[0].starts_with("duplicate skill name \"same\" in openclaw-workspace"));
}

#[test]
fn duplicate_across_extra_roots_first_root_wins() {
    let tmp = tempfile::tempdir().unwrap();
    write_skill(&tmp.path().join("one/x"), "x", "from one");
    write_skill(&tmp.path().join("two/x"), "x", "from two");
    let set = load(&SkillRoots {
        extra: vec![tmp.path().join("two"), tmp.path().join("one")],
        ..SkillRoots::default()
    });
    assert_eq!(set.skills[0].description, "from two");
    assert_eq!(set.rejected[0].reason, "duplicate-name");
}

// ---------------------------------------------------------------- skills

#[test]
fn skill_fields_name_fallback_and_version() {
    let set = load(&fixture_roots());
    let fallback = set
        .skills
        .iter()
        .find(|s| s.name == "fallback-name")
        .unwrap();
    assert_eq!(fallback.description, "Name comes from the directory");
    let bytes = fs::read(fixture_root().join("workspace/fallback-name/SKILL.md")).unwrap();
    let digest = {
        use sha2::{Digest, Sha256};
        let d = Sha256::digest(&bytes);
        d.iter().map(|b| format!("{b:02x}")).collect::<String>()
    };
    assert_eq!(fallback.version, format!("sha256:{}", &digest[..16]));
    assert_eq!(fallback.version.len(), "sha256:".len() + 16);
    assert!(fallback.eligibility.eligible);
}

#[test]
fn version_is_sha256_prefix() {
    assert_eq!(skill_version(b""), "sha256:e3b0c44298fc1c14");
    assert_eq!(skill_version(b"abc"), "sha256:ba7816bf8f01cfea");
}

#[test]
fn missing_description_is_rejected_with_a_hint() {
    let set = load(&fixture_roots());
    let r = set
        .rejected
        .iter()
        .find(|r| r.reason == "missing-description")
        .unwrap();
    assert_eq!(r.source, SkillSource::Workspace);
    assert!(
        r.message.contains("add a `description:` line"),
        "{}",
        r.message
    );
    assert!(!names(&set).contains(&"no-desc"));
}

#[test]
fn path_like_names_are_rejected() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("ws");
    let bad = ["../../etc/evil", "a/b", "a\\\\b", "..", "x..y"];
    for (i, name) in bad.iter().enumerate() {
        let dir = root.join(format!("bad{i}"));
        fs::create_dir_all(&dir).unwrap();
        fs::write(
            dir.join("SKILL.md"),
            format!("---\nname: {name}\ndescription: d\n---\n"),
        )
        .unwrap();
    }
    let set = load(&SkillRoots {
        workspace: Some(root.clone()),
        ..SkillRoots::default()
    });
    assert!(set.skills.is_empty(), "{:#?}", set.skills);
    assert_eq!(set.rejected.len(), bad.len());
    assert!(set.rejected.iter().all(|r| r.reason == "invalid-name"));
    // Nothing was created outside the root.
    assert!(!tmp.path().join("etc").exists());
}

#[test]
fn invalid_name_rules() {
    for name in [
        "", "   ", "a/b", "a\\b", "..", "a..b", "a\0b", "a\nb", "\u{7f}",
    ] {
        assert!(invalid_name_reason(name).is_some(), "{name:?}");
    }
    for name in ["pdf", "Alpha Tools", "a.b", "日本語", "x-y_z"] {
        assert_eq!(invalid_name_reason(name), None, "{name:?}");
    }
}

#[test]
fn oversized_skill_md_is_rejected_without_loading() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("ws");
    write_skill(&root.join("small"), "small", "fits");
    let big = root.join("big");
    fs::create_dir_all(&big).unwrap();
    fs::write(
        big.join("SKILL.md"),
        format!("{}{}", md("big", "too big"), "x".repeat(500)),
    )
    .unwrap();
    let limits = SkillLimits {
        max_skill_file_bytes: 200,
        ..SkillLimits::default()
    };
    let set = load_skills(
        &SkillRoots {
            workspace: Some(root.clone()),
            ..SkillRoots::default()
        },
        &limits,
        &ctx(),
    );
    assert_eq!(names(&set), vec!["small"]);
    assert_eq!(
        reasons(&set),
        vec![("too-large", root.join("big/SKILL.md"))]
    );
    assert!(set.rejected[0].message.contains("maxSkillFileBytes"));
}

#[test]
fn root_that_is_itself_a_skill_loads_that_skill() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("single");
    write_skill(&root, "single", "the root is the skill");
    write_skill(&root.join("child"), "child", "not scanned");
    let set = load(&SkillRoots {
        extra: vec![root.clone()],
        ..SkillRoots::default()
    });
    assert_eq!(names(&set), vec!["single"]);
    assert_eq!(set.skills[0].location, root.join("SKILL.md"));
}

// ---------------------------------------------------------------- discovery

#[test]
fn nested_skills_root_is_detected() {
    let set = load(&fixture_roots());
    let nested = set.skills.iter().find(|s| s.name == "nested-one").unwrap();
    assert_eq!(nested.source, SkillSource::Managed);
}

#[test]
fn depth_limits_six_and_two_for_extra() {
    let tmp = tempfile::tempdir().unwrap();
    let ws = tmp.path().join("ws");
    write_skill(&ws.join("1/2/3/4/5/six"), "six", "depth 6");
    write_skill(&ws.join("1/2/3/4/5/6/seven"), "seven", "depth 7");
    let extra = tmp.path().join("extra");
    write_skill(&extra.join("a/two"), "two", "depth 2");
    write_skill(&extra.join("a/b/three"), "three", "depth 3");
    // Under a nested `skills/` an extra root gets the full depth.
    write_skill(&extra.join("skills/a/b/c/nested-four"), "nested-four", "d");
    let set = load(&SkillRoots {
        extra: vec![extra],
        workspace: Some(ws),
        ..SkillRoots::default()
    });
    assert_eq!(names(&set), vec!["nested-four", "six", "two"]);
}

#[test]
fn extra_root_named_skills_gets_full_depth() {
    let tmp = tempfile::tempdir().unwrap();
    let extra = tmp.path().join("skills");
    write_skill(&extra.join("a/b/c/deep"), "deep", "depth 4");
    let set = load(&SkillRoots {
        extra: vec![extra],
        ..SkillRoots::default()
    });
    assert_eq!(names(&set), vec!["deep"]);
}

#[test]
fn max_candidates_per_root_is_enforced_with_a_warning() {
    let tmp = tempfile::tempdir().unwrap();
    let ws = tmp.path().join("ws");
    for n in ["a", "b", "c", "d", "e"] {
        write_skill(&ws.join(n), n, "d");
    }
    let limits = SkillLimits {
        max_candidates_per_root: 3,
        ..SkillLimits::default()
    };
    let set = load_skills(
        &SkillRoots {
            workspace: Some(ws),
            ..SkillRoots::default()
        },
        &limits,
        &ctx(),
    );
    assert_eq!(names(&set), vec!["a", "b", "c"]);
    assert_eq!(set.warnings.len(), 1);
    assert!(set.warnings[0].contains("maxCandidatesPerRoot"));
}

#[test]
fn max_skills_loaded_per_source_is_enforced_with_a_warning() {
    let tmp = tempfile::tempdir().unwrap();
    let ws = tmp.path().join("ws");
    for n in ["a", "b", "c", "d"] {
        write_skill(&ws.join(n), n, "d");
    }
    let managed = tmp.path().join("managed");
    write_skill(
        &managed.join("m"),
        "m",
        "other sources have their own count",
    );
    let limits = SkillLimits {
        max_skills_loaded_per_source: 2,
        ..SkillLimits::default()
    };
    let set = load_skills(
        &SkillRoots {
            managed: Some(managed),
            workspace: Some(ws.clone()),
            ..SkillRoots::default()
        },
        &limits,
        &ctx(),
    );
    assert_eq!(names(&set), vec!["a", "b", "m"]);
    assert_eq!(
        reasons(&set),
        vec![
            ("limit", ws.join("c/SKILL.md")),
            ("limit", ws.join("d/SKILL.md"))
        ]
    );
    assert_eq!(set.warnings.len(), 1);
    assert!(set.warnings[0].contains("maxSkillsLoadedPerSource"));
}

#[test]
fn missing_root_is_silent_and_a_file_root_warns() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("file");
    fs::write(&file, "not a dir").unwrap();
    let set = load(&SkillRoots {
        managed: Some(tmp.path().join("does-not-exist")),
        workspace: Some(file),
        ..SkillRoots::default()
    });
    assert_eq!(
        set,
        SkillSet {
            warnings: set.warnings.clone(),
            ..SkillSet::default()
        }
    );
    assert_eq!(set.warnings.len(), 1);
    assert!(set.warnings[0].contains("is not a directory"));
}

#[cfg(unix)]
#[test]
fn unreadable_root_is_a_warning() {
    use std::os::unix::fs::PermissionsExt;
    let tmp = tempfile::tempdir().unwrap();
    let ws = tmp.path().join("ws");
    write_skill(&ws.join("a"), "a", "d");
    fs::set_permissions(&ws, fs::Permissions::from_mode(0o000)).unwrap();
    let privileged = fs::read_dir(&ws).is_ok();
    let set = load(&SkillRoots {
        workspace: Some(ws.clone()),
        ..SkillRoots::default()
    });
    fs::set_permissions(&ws, fs::Permissions::from_mode(0o755)).unwrap();
    if privileged {
        // Running as root: permissions are not enforced, the skill loads.
        assert_eq!(names(&set), vec!["a"]);
    } else {
        assert!(set.skills.is_empty());
        assert_eq!(set.warnings.len(), 1, "{:#?}", set.warnings);
        assert!(set.warnings[0].contains("cannot read"));
    }
}

// ---------------------------------------------------------------- symlinks

#[cfg(unix)]
mod symlinks {
    use std::os::unix::fs::symlink;

    use pretty_assertions::assert_eq;

    use super::*;

    /// A temp dir with `outside/ext` (a skill named `ext`) and a root per
    /// source whose `link` entry points at it.
    fn escaping_tree() -> (tempfile::TempDir, SkillRoots) {
        let tmp = tempfile::tempdir().unwrap();
        let outside = tmp.path().join("outside/ext");
        write_skill(&outside, "ext", "lives outside every root");
        let root = |name: &str| {
            let r = tmp.path().join(name);
            fs::create_dir_all(&r).unwrap();
            symlink(&outside, r.join("link")).unwrap();
            r
        };
        let roots = SkillRoots {
            extra: vec![root("extra")],
            bundled: Some(root("bundled")),
            managed: Some(root("managed")),
            personal: Some(root("personal")),
            project: Some(root("project")),
            workspace: Some(root("workspace")),
        };
        (tmp, roots)
    }

    fn only(roots: &SkillRoots, source: SkillSource) -> SkillRoots {
        let mut out = SkillRoots::default();
        match source {
            SkillSource::Extra => out.extra = roots.extra.clone(),
            SkillSource::Bundled => out.bundled = roots.bundled.clone(),
            SkillSource::Managed => out.managed = roots.managed.clone(),
            SkillSource::AgentsPersonal => out.personal = roots.personal.clone(),
            SkillSource::AgentsProject => out.project = roots.project.clone(),
            SkillSource::Workspace => out.workspace = roots.workspace.clone(),
        }
        out
    }

    #[test]
    fn escaping_dir_symlink_is_rejected_for_confined_sources() {
        let (_tmp, roots) = escaping_tree();
        for (source, reason) in [
            (SkillSource::Extra, "symlink-escape"),
            (SkillSource::AgentsProject, "symlink-escape"),
            (SkillSource::Workspace, "symlink-escape"),
            (SkillSource::Bundled, "bundled-symlink-escape"),
        ] {
            let one = only(&roots, source);
            let set = load(&one);
            assert!(set.skills.is_empty(), "{source:?}: {:#?}", set.skills);
            let root = one.roots_of(source)[0].to_path_buf();
            assert_eq!(
                set.rejected,
                vec![Rejected {
                    source,
                    location: root.join("link"),
                    reason: reason.into(),
                    message: set.rejected[0].message.clone(),
                }]
            );
            assert!(
                set.rejected[0]
                    .message
                    .contains("outside its configured root")
            );
        }
    }

    #[test]
    fn escaping_dir_symlink_is_followed_for_managed_and_personal() {
        let (tmp, roots) = escaping_tree();
        let real = fs::canonicalize(tmp.path().join("outside/ext"))
            .unwrap()
            .join("SKILL.md");
        for source in [SkillSource::Managed, SkillSource::AgentsPersonal] {
            let set = load(&only(&roots, source));
            assert!(set.rejected.is_empty(), "{:#?}", set.rejected);
            assert_eq!(names(&set), vec!["ext"]);
            assert_eq!(set.skills[0].source, source);
            assert_eq!(set.skills[0].location, real);
        }
    }

    #[test]
    fn all_six_with_escaping_links() {
        let (_tmp, roots) = escaping_tree();
        let set = load(&roots);
        // Personal (the higher of the two allowed) wins over managed.
        assert_eq!(names(&set), vec!["ext"]);
        assert_eq!(set.skills[0].source, SkillSource::AgentsPersonal);
        assert_eq!(set.skills[0].shadows.len(), 1);
        let mut got: Vec<&str> = set.rejected.iter().map(|r| r.reason.as_str()).collect();
        got.sort_unstable();
        assert_eq!(
            got,
            vec![
                "bundled-symlink-escape",
                "symlink-escape",
                "symlink-escape",
                "symlink-escape"
            ]
        );
    }

    #[test]
    fn symlink_inside_the_root_is_allowed() {
        let tmp = tempfile::tempdir().unwrap();
        let ws = tmp.path().join("ws");
        write_skill(&ws.join("group/real"), "real", "d");
        symlink(ws.join("group/real"), ws.join("alias")).unwrap();
        let set = load(&SkillRoots {
            workspace: Some(ws.clone()),
            ..SkillRoots::default()
        });
        // Both paths reach the same skill: the first by path order wins.
        assert_eq!(names(&set), vec!["real"]);
        assert_eq!(set.skills[0].location, ws.join("alias/SKILL.md"));
        assert_eq!(
            reasons(&set),
            vec![("duplicate-name", ws.join("group/real/SKILL.md"))]
        );
    }

    #[test]
    fn escaping_skill_md_symlink_is_rejected_even_for_managed() {
        let tmp = tempfile::tempdir().unwrap();
        let secret = tmp.path().join("secret.md");
        fs::write(&secret, md("stolen", "reads a file outside")).unwrap();
        for (field, reason) in [
            ("workspace", "symlink-escape"),
            ("managed", "symlink-escape"),
            ("bundled", "bundled-symlink-escape"),
        ] {
            let root = tmp.path().join(field);
            fs::create_dir_all(root.join("s")).unwrap();
            symlink(&secret, root.join("s/SKILL.md")).unwrap();
            let mut roots = SkillRoots::default();
            match field {
                "workspace" => roots.workspace = Some(root.clone()),
                "managed" => roots.managed = Some(root.clone()),
                _ => roots.bundled = Some(root.clone()),
            }
            let set = load(&roots);
            assert!(set.skills.is_empty(), "{field}");
            assert_eq!(reasons(&set), vec![(reason, root.join("s/SKILL.md"))]);
        }
    }

    #[test]
    fn bundled_root_that_is_itself_a_symlink_loads() {
        // OpenClaw resolves the root first and checks containment against
        // the resolved root, so a symlinked root is not an escape.
        let tmp = tempfile::tempdir().unwrap();
        let real = tmp.path().join("real-bundled");
        write_skill(&real.join("b"), "b", "d");
        let link = tmp.path().join("bundled");
        symlink(&real, &link).unwrap();
        let set = load(&SkillRoots {
            bundled: Some(link.clone()),
            ..SkillRoots::default()
        });
        assert_eq!(names(&set), vec!["b"]);
        assert!(set.rejected.is_empty());
        assert_eq!(set.skills[0].location, link.join("b/SKILL.md"));
    }

    #[test]
    fn escape_reasons() {
        assert_eq!(
            escape_reason(SkillSource::Bundled, true),
            "bundled-symlink-escape"
        );
        assert_eq!(
            escape_reason(SkillSource::Bundled, false),
            "bundled-root-escape"
        );
        assert_eq!(
            escape_reason(SkillSource::Workspace, true),
            "symlink-escape"
        );
        assert_eq!(escape_reason(SkillSource::Workspace, false), "path-escape");
        assert_eq!(escape_reason(SkillSource::Extra, false), "path-escape");
    }

    #[test]
    fn symlink_loops_terminate() {
        let tmp = tempfile::tempdir().unwrap();
        for field in ["workspace", "managed"] {
            let root = tmp.path().join(field);
            write_skill(&root.join("ok"), "ok", "d");
            // A two-link cycle (unresolvable) and links back to the root
            // and to its parent (resolvable, already visited / walked once).
            symlink(root.join("loop-b"), root.join("loop-a")).unwrap();
            symlink(root.join("loop-a"), root.join("loop-b")).unwrap();
            symlink(&root, root.join("self")).unwrap();
            symlink("..", root.join("ok/up")).unwrap();
        }
        let set = load(&SkillRoots {
            managed: Some(tmp.path().join("managed")),
            workspace: Some(tmp.path().join("workspace")),
            ..SkillRoots::default()
        });
        assert_eq!(names(&set), vec!["ok"]);
        assert_eq!(set.skills[0].source, SkillSource::Workspace);
        let unresolvable = set
            .rejected
            .iter()
            .filter(|r| r.reason == "unresolvable")
            .count();
        assert_eq!(unresolvable, 4, "{:#?}", set.rejected);
    }

    #[test]
    fn managed_link_to_an_ancestor_is_bounded() {
        let tmp = tempfile::tempdir().unwrap();
        let managed = tmp.path().join("a/b/managed");
        write_skill(&managed.join("ok"), "ok", "d");
        symlink(tmp.path(), managed.join("top")).unwrap();
        let set = load(&SkillRoots {
            managed: Some(managed),
            ..SkillRoots::default()
        });
        // `ok` is reached directly and again through `top/a/b/managed/ok`.
        assert_eq!(names(&set), vec!["ok"]);
    }
}

// ---------------------------------------------------------------- eligibility

fn with_manifest(manifest: SkillManifest) -> SkillFrontmatter {
    SkillFrontmatter {
        manifest: Some(manifest),
        ..SkillFrontmatter::default()
    }
}

fn requires(r: SkillRequires) -> SkillFrontmatter {
    with_manifest(SkillManifest {
        requires: r,
        ..SkillManifest::default()
    })
}

fn strings(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| (*s).to_owned()).collect()
}

#[test]
fn no_manifest_is_eligible() {
    assert_eq!(
        evaluate(&SkillFrontmatter::default(), &ctx()),
        Eligibility {
            eligible: true,
            reasons: vec![],
        }
    );
}

#[test]
fn os_requirement() {
    let fm = with_manifest(SkillManifest {
        os: strings(&["darwin"]),
        ..SkillManifest::default()
    });
    assert_eq!(
        evaluate(&fm, &ctx()).reasons,
        vec!["os darwin only (this is linux)"]
    );
    let mac = EligibilityContext {
        os: "darwin".into(),
        ..ctx()
    };
    assert!(evaluate(&fm, &mac).eligible);
    let two = with_manifest(SkillManifest {
        os: strings(&["darwin", "win32"]),
        ..SkillManifest::default()
    });
    assert_eq!(
        evaluate(&two, &ctx()).reasons,
        vec!["os darwin, win32 only (this is linux)"]
    );
}

#[cfg(unix)]
#[test]
fn bins_and_any_bins() {
    use std::os::unix::fs::PermissionsExt;
    let tmp = tempfile::tempdir().unwrap();
    let bin = tmp.path().join("bin");
    fs::create_dir_all(&bin).unwrap();
    fs::write(bin.join("ffmpeg"), "#!/bin/sh\n").unwrap();
    fs::set_permissions(bin.join("ffmpeg"), fs::Permissions::from_mode(0o755)).unwrap();
    fs::write(bin.join("noexec"), "data").unwrap();
    fs::set_permissions(bin.join("noexec"), fs::Permissions::from_mode(0o644)).unwrap();
    fs::create_dir_all(bin.join("adir")).unwrap();
    let c = EligibilityContext {
        path_dirs: vec![tmp.path().join("empty"), bin.clone()],
        ..ctx()
    };
    assert!(has_binary(&c.path_dirs, "ffmpeg"));
    assert!(!has_binary(&c.path_dirs, "noexec"));
    assert!(!has_binary(&c.path_dirs, "adir"));
    // Never joined as a path.
    assert!(!has_binary(&c.path_dirs, "../bin/ffmpeg"));
    assert!(!has_binary(&[tmp.path().to_path_buf()], "bin/ffmpeg"));
    assert!(!has_binary(&c.path_dirs, ""));

    let fm = requires(SkillRequires {
        bins: strings(&["ffmpeg", "yt-dlp", "noexec"]),
        ..SkillRequires::default()
    });
    assert_eq!(
        evaluate(&fm, &c).reasons,
        vec!["missing binary: yt-dlp", "missing binary: noexec"]
    );
    let any_ok = requires(SkillRequires {
        any_bins: strings(&["nope", "ffmpeg"]),
        ..SkillRequires::default()
    });
    assert!(evaluate(&any_ok, &c).eligible);
    let any_missing = requires(SkillRequires {
        any_bins: strings(&["nope", "nada"]),
        ..SkillRequires::default()
    });
    assert_eq!(
        evaluate(&any_missing, &c).reasons,
        vec!["missing binary (any of): nope, nada"]
    );
}

#[test]
fn env_requirement() {
    let fm = requires(SkillRequires {
        env: strings(&["OPENAI_API_KEY", "EMPTY", "SET"]),
        ..SkillRequires::default()
    });
    let c = EligibilityContext {
        env: [("EMPTY", ""), ("SET", "x")]
            .into_iter()
            .map(|(k, v)| (k.to_owned(), v.to_owned()))
            .collect(),
        ..ctx()
    };
    assert_eq!(
        evaluate(&fm, &c),
        Eligibility {
            eligible: false,
            reasons: strings(&["missing env: OPENAI_API_KEY", "missing env: EMPTY"]),
        }
    );
}

#[test]
fn config_requirement() {
    let config = serde_json::json!({
        "browser": {"enabled": true, "off": false, "zero": 0, "name": "", "list": []},
        "n": 2
    });
    for (key, want) in [
        ("browser.enabled", true),
        ("browser.list", true),
        ("n", true),
        ("browser.off", false),
        ("browser.zero", false),
        ("browser.name", false),
        ("browser.missing", false),
        ("browser.enabled.deeper", false),
        ("", false),
    ] {
        assert_eq!(config_truthy(&config, key), want, "{key}");
    }
    let fm = requires(SkillRequires {
        config: strings(&["browser.enabled", "browser.off"]),
        ..SkillRequires::default()
    });
    let c = EligibilityContext { config, ..ctx() };
    assert_eq!(
        evaluate(&fm, &c).reasons,
        vec!["config not set: browser.off"]
    );
}

#[test]
fn always_skips_every_check_and_reasons_accumulate_otherwise() {
    let manifest = SkillManifest {
        os: strings(&["win32"]),
        requires: SkillRequires {
            bins: strings(&["nope"]),
            any_bins: strings(&["nada"]),
            env: strings(&["TOKEN"]),
            config: strings(&["x.y"]),
        },
        ..SkillManifest::default()
    };
    assert_eq!(
        evaluate(&with_manifest(manifest.clone()), &ctx()).reasons,
        vec![
            "os win32 only (this is linux)",
            "missing binary: nope",
            "missing binary (any of): nada",
            "missing env: TOKEN",
            "config not set: x.y",
        ]
    );
    let always = with_manifest(SkillManifest {
        always: true,
        ..manifest
    });
    assert!(evaluate(&always, &ctx()).eligible);
}

// ---------------------------------------------------------------- roots

#[test]
fn resolve_builds_the_standard_layout() {
    let roots = SkillRoots::resolve(
        Some(Path::new("/w")),
        Path::new("/state"),
        Some(Path::new("/home/u")),
        vec![PathBuf::from("/x")],
        Some(PathBuf::from("/b")),
    );
    assert_eq!(
        roots,
        SkillRoots {
            extra: vec![PathBuf::from("/x")],
            bundled: Some(PathBuf::from("/b")),
            managed: Some(PathBuf::from("/state/skills")),
            personal: Some(PathBuf::from("/home/u/.agents/skills")),
            project: Some(PathBuf::from("/w/.agents/skills")),
            workspace: Some(PathBuf::from("/w/skills")),
        }
    );
    let bare = SkillRoots::resolve(None, Path::new("/state"), None, vec![], None);
    assert_eq!(
        bare,
        SkillRoots {
            managed: Some(PathBuf::from("/state/skills")),
            ..SkillRoots::default()
        }
    );
}

#[test]
fn default_context_reads_this_process() {
    let c = default_eligibility_context(serde_json::json!({"a": 1}));
    assert!(!c.os.is_empty());
    assert_ne!(c.os, "macos");
    assert_ne!(c.os, "windows");
    assert_eq!(c.config, serde_json::json!({"a": 1}));
}

// ---------------------------------------------------------------- wiring

#[test]
fn parser_warnings_and_eligibility_are_attached() {
    let tmp = tempfile::tempdir().unwrap();
    let ws = tmp.path().join("ws");
    let dir = ws.join("needs-token");
    fs::create_dir_all(&dir).unwrap();
    let text = "---\nname: needs-token\ndescription: d\n\
                metadata: {\"openclaw\": {\"requires\": {\"env\": [\"NEEDED_TOKEN\"]}}}\n---\nbody\n";
    fs::write(dir.join("SKILL.md"), text).unwrap();
    let set = load(&SkillRoots {
        workspace: Some(ws),
        ..SkillRoots::default()
    });
    let skill = &set.skills[0];
    let parsed = crate::frontmatter::parse_skill_md(text);
    assert_eq!(skill.warnings, parsed.warnings);
    assert_eq!(skill.frontmatter, parsed.frontmatter);
    assert_eq!(skill.eligibility, evaluate(&parsed.frontmatter, &ctx()));
    if skill.frontmatter.manifest.is_some() {
        // With the full parser the requirement is read and unmet.
        assert_eq!(skill.eligibility.reasons, vec!["missing env: NEEDED_TOKEN"]);
    }
}

#[test]
fn invalid_utf8_is_loaded_with_a_warning() {
    let tmp = tempfile::tempdir().unwrap();
    let ws = tmp.path().join("ws");
    let dir = ws.join("latin1");
    fs::create_dir_all(&dir).unwrap();
    let mut bytes = md("latin1", "caf\u{e9}").into_bytes();
    bytes.extend_from_slice(b"\xff\xfe body");
    fs::write(dir.join("SKILL.md"), &bytes).unwrap();
    let set = load(&SkillRoots {
        workspace: Some(ws),
        ..SkillRoots::default()
    });
    assert_eq!(set.skills[0].version, skill_version(&bytes));
    assert!(
        set.skills[0]
            .warnings
            .iter()
            .any(|w| w.contains("not valid UTF-8"))
    );
}
