//! Skills benchmarks: loading and rendering 1,000 skills spread across the
//! six sources, reusing a snapshot when nothing changed, and rebuilding
//! after one file changed.
//!
//! The skill tree is written once into a temporary directory (about 167
//! skills per source, every name distinct, each `SKILL.md` with a short
//! frontmatter and body), so the figures include the file system reads of
//! a warm page cache, not of a cold disk.
//!
//! - `skills_load_1000`: `load_skills` over the six roots plus
//!   `prompt::render_prompt` with the default limits (150 skills in the
//!   index, 18,000 characters, so the compact fallback runs).
//! - `skills_snapshot_reuse`: `SkillsSnapshotter::snapshot` when no version,
//!   prompt format version or filter changed: reads six atomics, builds the
//!   key, compares it with the cached one and clones an `Arc`. No stat, no
//!   read; the bench checks afterwards that nothing was rebuilt.
//! - `skills_rebuild_after_change`: rewrite one `SKILL.md`, poll the
//!   workspace root's version until the watcher bumps it, then take the
//!   snapshot (a full reload and render). The figure is dominated by the
//!   watcher's latency, between one and two debounce times (20 ms here),
//!   plus one `skills_load_1000`.

// A panic here is a benchmark setup failure, never a measured path.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::fs;
use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::thread;
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use talon_skills::prompt::{PROMPT_FORMAT_VERSION, RenderedPrompt, render_prompt};
use talon_skills::watch::{SkillsSnapshotter, WatchRegistry};
use talon_skills::{EligibilityContext, SkillLimits, SkillRoots, SkillSet, load_skills};

const SKILLS: usize = 1_000;
const DEBOUNCE: Duration = Duration::from_millis(20);

fn write_skill(root: &Path, name: &str, revision: usize) {
    let dir = root.join(name);
    fs::create_dir_all(&dir).unwrap();
    fs::write(
        dir.join("SKILL.md"),
        format!(
            "---\nname: {name}\ndescription: Does {name} things when the user asks for \
             {name} (revision {revision}).\nmetadata: {{\"openclaw\": {{\"emoji\": \"🔧\"}}}}\n\
             ---\n\n# {name}\n\nRun `{name} --help` first, then follow the steps.\n"
        ),
    )
    .unwrap();
}

/// Six roots under `base` with `SKILLS` skills spread across them.
fn build_tree(base: &Path) -> SkillRoots {
    let dirs: Vec<PathBuf> = [
        "extra",
        "bundled",
        "state/skills",
        "home/.agents/skills",
        "ws/.agents/skills",
        "ws/skills",
    ]
    .iter()
    .map(|d| base.join(d))
    .collect();
    for i in 0..SKILLS {
        write_skill(&dirs[i % dirs.len()], &format!("skill-{i:04}"), 0);
    }
    SkillRoots {
        extra: vec![dirs[0].clone()],
        bundled: Some(dirs[1].clone()),
        managed: Some(dirs[2].clone()),
        personal: Some(dirs[3].clone()),
        project: Some(dirs[4].clone()),
        workspace: Some(dirs[5].clone()),
    }
}

fn eligibility() -> EligibilityContext {
    EligibilityContext {
        os: "linux".to_owned(),
        ..EligibilityContext::default()
    }
}

fn load_and_render(roots: &SkillRoots, limits: &SkillLimits) -> (SkillSet, RenderedPrompt) {
    let set = load_skills(roots, limits, &eligibility());
    let prompt = render_prompt(&set.skills, limits);
    (set, prompt)
}

fn bench(c: &mut Criterion) {
    let tmp = tempfile::tempdir().unwrap();
    let roots = build_tree(tmp.path());
    let limits = SkillLimits::default();

    let (set, prompt) = load_and_render(&roots, &limits);
    assert_eq!(set.skills.len(), SKILLS, "warnings: {:?}", set.warnings);
    assert!(prompt.included > 0);

    // 1. Load and render from scratch.
    c.bench_function("skills_load_1000", |b| {
        b.iter(|| black_box(load_and_render(black_box(&roots), &limits)));
    });

    // Same-run baseline: walking the same six roots and reading every
    // SKILL.md with raw std::fs, parsing nothing.
    let all_roots: Vec<PathBuf> = roots
        .extra
        .iter()
        .chain(roots.bundled.iter())
        .chain(roots.managed.iter())
        .chain(roots.personal.iter())
        .chain(roots.project.iter())
        .chain(roots.workspace.iter())
        .cloned()
        .collect();
    c.bench_function("baseline_read_1000_skill_files", |b| {
        b.iter(|| {
            let mut bytes = 0usize;
            for root in &all_roots {
                let mut entries: Vec<_> = fs::read_dir(root)
                    .unwrap()
                    .map(|e| e.unwrap().path())
                    .collect();
                entries.sort();
                for dir in entries {
                    bytes += fs::read(dir.join("SKILL.md")).unwrap().len();
                }
            }
            black_box(bytes)
        });
    });

    let registry = WatchRegistry::new(DEBOUNCE);
    let snapshotter = SkillsSnapshotter::with_renderer(
        &registry,
        roots.clone(),
        limits,
        eligibility(),
        move |set, _key| render_prompt(&set.skills, &limits),
    )
    .unwrap();
    let first = snapshotter.snapshot(PROMPT_FORMAT_VERSION, None);
    assert_eq!(first.skills.skills.len(), SKILLS);

    // 2. Nothing changed: the cached snapshot is reused.
    let builds = snapshotter.builds();
    c.bench_function("skills_snapshot_reuse", |b| {
        b.iter(|| black_box(snapshotter.snapshot(black_box(PROMPT_FORMAT_VERSION), None)));
    });
    assert_eq!(snapshotter.builds(), builds, "a reuse rebuilt the snapshot");
}

/// Its own group: each iteration waits for the watcher, so fewer samples.
fn bench_rebuild(c: &mut Criterion) {
    let tmp = tempfile::tempdir().unwrap();
    let roots = build_tree(tmp.path());
    let limits = SkillLimits::default();
    let registry = WatchRegistry::new(DEBOUNCE);
    let snapshotter = SkillsSnapshotter::with_renderer(
        &registry,
        roots.clone(),
        limits,
        eligibility(),
        move |set, _key| render_prompt(&set.skills, &limits),
    )
    .unwrap();
    let _ = snapshotter.snapshot(PROMPT_FORMAT_VERSION, None);

    // 3. One file changes: wait for the bump, rebuild.
    let workspace = roots.workspace.clone().unwrap();
    let changed = fs::read_dir(&workspace)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .file_name()
        .into_string()
        .unwrap();
    let watch = snapshotter.watches().last().unwrap().clone();
    let mut revision = 0;
    c.bench_function("skills_rebuild_after_change", |b| {
        b.iter(|| {
            revision += 1;
            let before = watch.version();
            let builds = snapshotter.builds();
            write_skill(&workspace, &changed, revision);
            let deadline = Instant::now() + Duration::from_secs(5);
            while watch.version() == before {
                assert!(Instant::now() < deadline, "the watcher missed a change");
                thread::sleep(Duration::from_micros(200));
            }
            let snapshot = snapshotter.snapshot(PROMPT_FORMAT_VERSION, None);
            assert!(snapshotter.builds() > builds);
            black_box(snapshot)
        });
    });
}

criterion_group!(benches, bench);
criterion_group! {
    name = rebuild;
    config = Criterion::default().sample_size(10);
    targets = bench_rebuild
}
criterion_main!(benches, rebuild);
