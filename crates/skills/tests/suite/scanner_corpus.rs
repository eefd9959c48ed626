//! The scanner measured on corpora: every labelled malicious variant is
//! caught, and real public skills raise no critical finding.

use std::fs;
use std::path::{Path, PathBuf};

use talon_skills::scanner::{Finding, ScanOptions, Severity, scan_proposal, scan_skill_dir};
use tempfile::TempDir;

fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus")
}

/// Every variant file: `variants/<expected rule id>/<file>`.
fn variants() -> Vec<(String, PathBuf)> {
    let mut out = Vec::new();
    let root = corpus_dir().join("variants");
    let mut classes: Vec<_> = fs::read_dir(&root)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    classes.sort();
    for class in classes {
        if !class.is_dir() {
            continue;
        }
        let id = class.file_name().unwrap().to_string_lossy().into_owned();
        let mut files: Vec<_> = fs::read_dir(&class)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        files.sort();
        out.extend(files.into_iter().map(|f| (id.clone(), f)));
    }
    out
}

/// Scans one variant as the only file of a skill directory, under its own
/// name (so the walk classifies it as it would in a real skill).
fn scan_variant(file: &Path) -> (Vec<Finding>, bool) {
    let dir = TempDir::new().unwrap();
    let name = file.file_name().unwrap();
    fs::copy(file, dir.path().join(name)).unwrap();
    let report = scan_skill_dir(dir.path(), &ScanOptions::default());
    let gate_fails = scan_proposal(dir.path(), &ScanOptions::default()).is_err();
    (report.findings, gate_fails)
}

/// The severity each class is reported at. Every variant of a class must
/// be found at least at this severity, and a critical class must also fail
/// the proposal gate. `invisible-unicode` is a warning for zero-width
/// characters and critical for bidi controls and tag characters.
const CLASS_SEVERITY: &[(&str, Severity)] = &[
    ("crypto-mining", Severity::Critical),
    ("decoded-code-execution", Severity::Critical),
    ("invisible-unicode", Severity::Warn),
    ("obfuscated-code", Severity::Warn),
    ("prompt-injection-ignore-instructions", Severity::Critical),
    ("prompt-injection-weaken-controls", Severity::Critical),
    ("secret-exfiltration", Severity::Critical),
    ("shell-pipe-to-shell", Severity::Critical),
    ("unconfined-agent", Severity::Warn),
];

/// Variants of each class at least: a class is many spellings, not one.
const MIN_VARIANTS_PER_CLASS: usize = 5;

#[test]
fn every_labelled_variant_is_detected() {
    let variants = variants();
    let mut missed = Vec::new();
    let mut per_class: std::collections::BTreeMap<String, (usize, usize)> = Default::default();
    for (id, file) in &variants {
        let Some(&(_, expected)) = CLASS_SEVERITY.iter().find(|(c, _)| c == id) else {
            panic!("{}: variants/{id} is not a known class", file.display());
        };
        let (findings, gate_fails) = scan_variant(file);
        let detected = findings
            .iter()
            .any(|f| &f.rule_id == id && f.severity >= expected);
        let gated = expected < Severity::Critical || gate_fails;
        let entry = per_class.entry(id.clone()).or_default();
        entry.1 += 1;
        if detected && gated {
            entry.0 += 1;
        } else {
            missed.push(format!(
                "{}: expected {id} at {expected:?}{}, got {:?}",
                file.display(),
                if gated { "" } else { " failing the gate" },
                findings
                    .iter()
                    .map(|f| format!("{}:{:?}", f.rule_id, f.severity))
                    .collect::<Vec<_>>()
            ));
        }
    }
    for (id, (hit, total)) in &per_class {
        eprintln!("{id}: {hit}/{total}");
    }
    for (class, _) in CLASS_SEVERITY {
        let total = per_class.get(*class).map_or(0, |(_, t)| *t);
        assert!(
            total >= MIN_VARIANTS_PER_CLASS,
            "variants/{class} has {total} variants, fewer than {MIN_VARIANTS_PER_CLASS}"
        );
    }
    // The detection rate: every variant, at its class's severity.
    assert!(
        missed.is_empty(),
        "{} of {} variants missed:\n{}",
        missed.len(),
        variants.len(),
        missed.join("\n")
    );
}

/// The benign look-alikes and the most severe finding each may raise:
/// prose that warns against a command is at most info, a process run
/// without a shell is only `process-spawn` (info), test code ranks below
/// runtime code, a coding agent launched without approvals is a warning.
const BENIGN_MAX: &[(&str, Option<Severity>)] = &[
    ("agent-orchestration", Some(Severity::Warn)),
    ("api-usage", None),
    ("data-uri", None),
    ("download-data-then-run", None),
    ("emoji-and-rtl", None),
    ("exec-without-shell", Some(Severity::Info)),
    ("fixed-command", Some(Severity::Warn)),
    ("install-from-registry", None),
    ("multilingual", None),
    ("negated-advice", None),
    ("prose-warning", Some(Severity::Info)),
    ("system-prompt-docs", None),
    ("tests-rank-lower", Some(Severity::Warn)),
    ("warning-before-fence", Some(Severity::Info)),
];

#[test]
fn benign_look_alikes_stay_at_their_severity() {
    let root = corpus_dir().join("benign");
    let mut entries: Vec<_> = fs::read_dir(&root)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    assert_eq!(
        entries.len(),
        BENIGN_MAX.len(),
        "every benign skill needs a row in BENIGN_MAX"
    );
    let mut over = Vec::new();
    for skill in entries {
        let name = skill.file_name().unwrap().to_string_lossy().into_owned();
        let Some(&(_, max)) = BENIGN_MAX.iter().find(|(n, _)| *n == name) else {
            panic!("benign/{name} has no row in BENIGN_MAX");
        };
        let report = scan_skill_dir(&skill, &ScanOptions::default());
        assert!(report.files_scanned > 0, "{}", skill.display());
        over.extend(
            report
                .findings
                .iter()
                .filter(|f| max.is_none_or(|m| f.severity > m))
                .map(|f| format!("benign/{name}: over {max:?}: {f:?}")),
        );
        // Warnings about a command are still reported, at info.
        if max == Some(Severity::Info) && name != "exec-without-shell" {
            assert!(
                !report.findings.is_empty(),
                "benign/{name}: the warning itself was not reported"
            );
        }
    }
    assert!(over.is_empty(), "{}", over.join("\n"));
}

/// The skill directories `tests/corpus/public/SOURCES.md` lists (the
/// first column of its table).
fn public_manifest() -> Vec<String> {
    let text = fs::read_to_string(corpus_dir().join("public/SOURCES.md")).unwrap();
    text.lines()
        .filter_map(|line| line.strip_prefix("| "))
        .filter_map(|row| row.split(" | ").next())
        .map(str::trim)
        .filter(|dir| dir.contains('/'))
        .map(str::to_owned)
        .collect()
}

#[test]
fn public_manifest_lists_enough_skills() {
    let dirs = public_manifest();
    assert!(dirs.len() >= 20, "only {} skills in SOURCES.md", dirs.len());
    let unique: std::collections::BTreeSet<_> = dirs.iter().collect();
    assert_eq!(unique.len(), dirs.len(), "a skill is listed twice");
}

/// Where the copies of the public skills are: `TALON_PUBLIC_SKILLS_DIR`,
/// else `skill-corpus/public` in the `shared/` directory beside the
/// project (the one place the copies may live), if it exists.
fn public_skills_dir() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("TALON_PUBLIC_SKILLS_DIR") {
        return Some(PathBuf::from(dir));
    }
    let shared = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/skill-corpus/public");
    shared.is_dir().then_some(shared)
}

/// Real public skills (`tests/corpus/public/SOURCES.md` lists them and
/// says how to assemble the directory): no critical finding in any of
/// them. The skills are not committed, so this runs only when a copy is
/// found (see [`public_skills_dir`]).
#[test]
fn public_skills_have_no_critical_finding() {
    let Some(root) = public_skills_dir() else {
        assert!(
            std::env::var_os("TALON_REQUIRE_PUBLIC_SKILLS").is_none(),
            "TALON_REQUIRE_PUBLIC_SKILLS is set but no copy of the public skills was found"
        );
        eprintln!(
            "public skill corpus not run: set TALON_PUBLIC_SKILLS_DIR (tests/corpus/public/SOURCES.md)"
        );
        return;
    };
    let skills: Vec<PathBuf> = public_manifest().iter().map(|d| root.join(d)).collect();
    let missing: Vec<_> = skills
        .iter()
        .filter(|s| !s.join("SKILL.md").is_file())
        .map(|s| s.display().to_string())
        .collect();
    assert!(
        missing.is_empty(),
        "skills listed in SOURCES.md are missing:\n{}",
        missing.join("\n")
    );
    let opts = ScanOptions {
        include_hidden: true,
        ..ScanOptions::default()
    };
    let mut critical = Vec::new();
    let mut files = 0;
    let mut by_severity = [0usize; 3];
    for skill in &skills {
        let report = scan_skill_dir(skill, &opts);
        files += report.files_scanned;
        for f in &report.findings {
            by_severity[f.severity as usize] += 1;
            eprintln!(
                "{}/{}:{} {:?} {} {}",
                skill.display(),
                f.file.display(),
                f.line,
                f.severity,
                f.rule_id,
                f.excerpt
            );
            if f.severity == Severity::Critical {
                critical.push(format!("{}: {f:?}", skill.display()));
            }
        }
    }
    eprintln!(
        "{} skills, {files} files: {} info, {} warn, {} critical",
        skills.len(),
        by_severity[0],
        by_severity[1],
        by_severity[2]
    );
    assert!(critical.is_empty(), "{}", critical.join("\n"));
}
