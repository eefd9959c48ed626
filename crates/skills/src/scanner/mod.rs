//! The skill security scanner (OpenClaw `src/skills/security/scanner.ts`
//! and `scan-evidence.ts`).
//!
//! Two rule families, with OpenClaw's rule ids and severities:
//!
//! - **skill-text rules** ([`scan_skill_text`]) over `SKILL.md`, other
//!   text (`.md .markdown .mdx .txt`) and every other UTF-8 file that is not
//!   a known code file (non-UTF-8 files are a blind skip): `literal-secret`,
//!   `prompt-injection-ignore-instructions`, `prompt-injection-system`,
//!   `prompt-injection-tool`, `shell-pipe-to-shell`, `secret-exfiltration`,
//!   `destructive-delete`, `unsafe-permissions`;
//! - **source rules** ([`scan_source`]) over code files, comments stripped
//!   first: `dangerous-exec`, `dynamic-code-execution`, `crypto-mining`,
//!   `suspicious-network` (line rules, one finding per rule per file) and
//!   `potential-exfiltration`, `obfuscated-code`, `env-harvesting` (source
//!   rules). JavaScript/TypeScript follow OpenClaw; `.py` and `.sh` files get
//!   the equivalent checks under the same ids (see `rules.rs`), and shell
//!   files also get `shell-pipe-to-shell`, `destructive-delete` and
//!   `unsafe-permissions`.
//!
//! On top of them, the class rules (`classes.rs`) run on every file:
//! `shell-pipe-to-shell` (incl. PowerShell and download-then-run),
//! `decoded-code-execution`, `secret-exfiltration`, `crypto-mining`,
//! `prompt-injection-ignore-instructions`,
//! `prompt-injection-weaken-controls`, `unconfined-agent` and
//! `obfuscated-code`; with `invisible-unicode` for zero-width, bidi and tag
//! characters. Every rule matches two views that keep the file's line
//! numbers (`normalize.rs`: invisible characters removed, shell spellings
//! undone), so a rule catches the class and not one spelling. Context
//! sets the severity: a warning sentence makes a destructive command
//! info, a process run without a shell is `process-spawn` (info), and test
//! code ranks one step below runtime code unless a runtime file names it.
//!
//! [`scan_skill_dir`] walks a skill directory (symlinks are followed only
//! when they stay inside it) and [`scan_proposal`] is the skill-workshop
//! gate: a proposal with any critical finding fails as a whole, and a
//! proposal the scanner could not see completely fails too (`scan-incomplete`).

use std::collections::HashSet;
use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};

use regex::{Regex, RegexBuilder};
use serde::{Deserialize, Serialize};

pub use self::rules::{scan_skill_text, scan_source};

mod classes;
mod evidence;
mod normalize;
mod rules;
mod strip;

use self::rules::{lang_for_extension, lang_from_shebang, scan_source_unranked};
use self::strip::Lang;

/// How serious a finding is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Informational.
    Info,
    /// Worth a look; does not fail a proposal.
    Warn,
    /// Fails a proposal.
    Critical,
}

/// One rule match.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Finding {
    /// OpenClaw rule id, e.g. `dangerous-exec`.
    pub rule_id: String,
    /// Severity of the rule.
    pub severity: Severity,
    /// The file, relative to the scanned directory.
    pub file: PathBuf,
    /// 1-based line number.
    pub line: usize,
    /// The trimmed line (≤ 120 characters plus `…`), or
    /// `[REDACTED CREDENTIAL]` when it holds a literal credential.
    pub excerpt: String,
}

/// The result of scanning a directory.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ScanReport {
    /// Every finding, in walk order (sorted by path).
    pub findings: Vec<Finding>,
    /// Files read and scanned.
    pub files_scanned: usize,
    /// Paths not scanned, with the reason (limits, hidden directories,
    /// symlinks leaving the directory, unreadable or non-UTF-8 files).
    pub skipped: Vec<(PathBuf, String)>,
}

impl ScanReport {
    /// Whether any finding is critical.
    pub fn has_critical(&self) -> bool {
        self.findings
            .iter()
            .any(|f| f.severity == Severity::Critical)
    }
}

/// Limits and switches for a directory scan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ScanOptions {
    /// Files scanned at most (default 500; at least 1).
    pub max_files: usize,
    /// Larger files are skipped (default 1 MiB; at least 1).
    pub max_file_bytes: u64,
    /// Also walk hidden directories and `node_modules`.
    pub include_hidden: bool,
    /// Skip test directories (`__fixtures__ __mocks__ __tests__ test tests`)
    /// and `*.mock.* / *.spec.* / *.test.*` files.
    pub exclude_tests: bool,
}

impl Default for ScanOptions {
    fn default() -> Self {
        ScanOptions {
            max_files: DEFAULT_MAX_FILES,
            max_file_bytes: DEFAULT_MAX_FILE_BYTES,
            include_hidden: false,
            exclude_tests: false,
        }
    }
}

/// OpenClaw `DEFAULT_MAX_SCAN_FILES`.
pub(crate) const DEFAULT_MAX_FILES: usize = 500;
/// OpenClaw `DEFAULT_MAX_FILE_BYTES`.
pub(crate) const DEFAULT_MAX_FILE_BYTES: u64 = 1024 * 1024;
/// Directory entries examined at most, so a huge tree cannot stall a scan.
pub(crate) const MAX_WALK_ENTRIES: usize = 100_000;
/// The rule id `scan_proposal` uses for parts of a proposal it could not scan.
pub(crate) const SCAN_INCOMPLETE: &str = "scan-incomplete";

const TEST_DIRECTORY_NAMES: &[&str] = &["__fixtures__", "__mocks__", "__tests__", "test", "tests"];
const TEXT_EXTENSIONS: &[&str] = &["md", "markdown", "mdx", "txt"];

/// Compiles a scanner pattern (multi-line mode). A failure is a programming
/// error: it is logged and the caller drops the rule.
///
/// Word boundaries are ASCII (`\b` becomes `(?-u:\b)`): a Unicode word
/// boundary makes the lazy DFA give up on any non-ASCII text (an em dash in
/// prose) and fall back to a far slower engine, and every keyword the
/// rules look for is ASCII.
pub(crate) fn compile_pattern(name: &str, pattern: &str) -> Option<Regex> {
    let pattern = ascii_word_boundaries(pattern);
    match RegexBuilder::new(&pattern).multi_line(true).build() {
        Ok(re) => Some(re),
        Err(err) => {
            tracing::error!(rule = name, %err, "scanner pattern failed to compile; rule disabled");
            None
        }
    }
}

/// `pattern` with each `\b` (not an escaped backslash followed by `b`)
/// written as the ASCII word boundary `(?-u:\b)`.
fn ascii_word_boundaries(pattern: &str) -> String {
    let mut out = String::with_capacity(pattern.len() + 16);
    let mut chars = pattern.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('b') => out.push_str("(?-u:\\b)"),
            Some(next) => {
                out.push('\\');
                out.push(next);
            }
            None => out.push('\\'),
        }
    }
    out
}

/// What a file is scanned as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum FileKind {
    /// A known text extension: skill-text rules.
    Text,
    /// A code file: the source rules of its language.
    Code(Lang),
    /// Anything else (a Makefile, `.ps1`, `.rb`, `.yaml`, an extensionless
    /// script): skill-text rules when it is valid UTF-8, otherwise a blind
    /// skip.
    Other,
}

/// The kind of a file: by extension, else by `#!` line, else
/// [`FileKind::Other`].
fn classify(name: &str, path: &Path) -> FileKind {
    let ext = Path::new(name).extension().and_then(|e| e.to_str());
    if let Some(ext) = ext {
        if TEXT_EXTENSIONS.contains(&ext.to_ascii_lowercase().as_str()) {
            return FileKind::Text;
        }
        if let Some(lang) = lang_for_extension(ext) {
            return FileKind::Code(lang);
        }
    }
    let mut head = Vec::with_capacity(256);
    let read = fs::File::open(path).and_then(|file| file.take(256).read_to_end(&mut head));
    match read {
        Ok(_) => lang_from_shebang(&String::from_utf8_lossy(&head))
            .map_or(FileKind::Other, FileKind::Code),
        // Unreadable: `scan_file` reports it.
        Err(_) => FileKind::Other,
    }
}

/// Whether a path (relative to the scanned directory) is test code: under
/// a test directory (`__fixtures__ __mocks__ __tests__ test tests`) or
/// named like a test (`*.test.*`, `*.spec.*`, `*.mock.*`, `*_test.*`,
/// `test_*.py`).
pub(crate) fn is_test_path(path: &Path) -> bool {
    let mut components = path.components().peekable();
    while let Some(component) = components.next() {
        let name = component.as_os_str().to_string_lossy();
        if components.peek().is_some() {
            if TEST_DIRECTORY_NAMES.contains(&&*name) {
                return true;
            }
        } else {
            let lower = name.to_ascii_lowercase();
            let stem = lower
                .rsplit_once('.')
                .map_or(lower.as_str(), |(stem, _)| stem);
            return is_test_file_name(&name)
                || (stem.ends_with("_test") && stem.len() > "_test".len())
                || (lower.ends_with(".py") && lower.starts_with("test_"));
        }
    }
    false
}

/// The severity of a finding in test code, which ranks below runtime code:
/// one step lower. A literal credential is a leak wherever it is, and
/// `scan-incomplete` is about the scan, so both keep their severity.
pub(crate) fn rank_below_runtime(rule_id: &str, severity: Severity) -> Severity {
    if rule_id == "literal-secret" || rule_id == SCAN_INCOMPLETE {
        return severity;
    }
    match severity {
        Severity::Critical => Severity::Warn,
        Severity::Warn | Severity::Info => Severity::Info,
    }
}

fn is_test_file_name(name: &str) -> bool {
    // `\.(?:mock|spec|test)\.[^.]+$`, case-insensitive.
    let lower = name.to_ascii_lowercase();
    let mut parts = lower.rsplit('.');
    let (Some(ext), Some(kind)) = (parts.next(), parts.next()) else {
        return false;
    };
    parts.next().is_some() && !ext.is_empty() && matches!(kind, "mock" | "spec" | "test")
}

/// A skipped path; `blind` marks a part of the tree the scan could not see
/// (everything except an explicit test exclusion).
#[derive(Debug)]
struct Skip {
    path: PathBuf,
    reason: String,
    blind: bool,
}

/// Whether a `package.json` line is a test script (`"test": …`,
/// `"test:unit": …`, `"pretest": …`).
fn is_test_script_entry(line: &str) -> bool {
    let Some(rest) = line.trim_start().strip_prefix('"') else {
        return false;
    };
    let Some((key, after)) = rest.split_once('"') else {
        return false;
    };
    let key = key
        .strip_prefix("pre")
        .or_else(|| key.strip_prefix("post"))
        .unwrap_or(key);
    (key == "test" || key.starts_with("test:")) && after.trim_start().starts_with(':')
}

/// Text of runtime files kept to find which test files they name; past
/// this, no test file is ranked down (the walk cannot tell).
const RUNTIME_TEXT_CAP: usize = 8 * 1024 * 1024;

#[derive(Debug, Default)]
struct Walk {
    findings: Vec<Finding>,
    files_scanned: usize,
    skipped: Vec<Skip>,
    /// Test files with findings: the path and its findings' indices.
    test_files: Vec<(PathBuf, std::ops::Range<usize>)>,
    /// The text of every runtime (non-test) file scanned, up to
    /// [`RUNTIME_TEXT_CAP`].
    runtime_text: String,
    runtime_text_overflow: bool,
}

impl Walk {
    fn skip(&mut self, path: PathBuf, reason: impl Into<String>, blind: bool) {
        let reason = reason.into();
        tracing::debug!(path = %path.display(), %reason, "skill scan skipped a path");
        self.skipped.push(Skip {
            path,
            reason,
            blind,
        });
    }

    fn scan_file(&mut self, real: &Path, rel: PathBuf, kind: FileKind, max_bytes: u64) {
        let size = match fs::metadata(real) {
            Ok(meta) => meta.len(),
            Err(err) => return self.skip(rel, format!("cannot read file: {err}"), true),
        };
        if size > max_bytes {
            return self.skip(
                rel,
                format!("file is {size} bytes, over the {max_bytes}-byte limit"),
                true,
            );
        }
        let mut bytes = Vec::new();
        let read = fs::File::open(real).and_then(|f| f.take(max_bytes + 1).read_to_end(&mut bytes));
        if let Err(err) = read {
            return self.skip(rel, format!("cannot read file: {err}"), true);
        }
        if bytes.len() as u64 > max_bytes {
            return self.skip(
                rel,
                format!("file grew over the {max_bytes}-byte limit"),
                true,
            );
        }
        if kind == FileKind::Other && std::str::from_utf8(&bytes).is_err() {
            return self.skip(rel, "not UTF-8 text (binary file); not scanned", true);
        }
        let text = String::from_utf8_lossy(&bytes);
        let found = match kind {
            FileKind::Text | FileKind::Other => scan_skill_text(&rel, &text),
            FileKind::Code(lang) => scan_source_unranked(lang, &rel, &text),
        };
        let start = self.findings.len();
        self.findings.extend(found);
        self.files_scanned += 1;
        if is_test_path(&rel) {
            if self.findings.len() > start {
                self.test_files.push((rel, start..self.findings.len()));
            }
        } else if self.runtime_text.len() + text.len() <= RUNTIME_TEXT_CAP {
            let manifest = rel.file_name().is_some_and(|n| n == "package.json");
            for line in text.split('\n') {
                // `"test": "node a.test.js"` runs tests, not the skill.
                if manifest && is_test_script_entry(line) {
                    continue;
                }
                self.runtime_text.push_str(line);
                self.runtime_text.push('\n');
            }
        } else {
            self.runtime_text_overflow = true;
        }
    }

    /// Test code ranks below runtime code ([`rank_below_runtime`]), unless
    /// a runtime file names it (`SKILL.md` telling the agent to run
    /// `tests/setup.sh` makes it runtime code), or the walk kept too little
    /// runtime text to tell.
    fn rank_test_code(&mut self) {
        if self.runtime_text_overflow {
            return;
        }
        for (rel, range) in &self.test_files {
            let slash_path = rel
                .components()
                .map(|c| c.as_os_str().to_string_lossy())
                .collect::<Vec<_>>()
                .join("/");
            let name = rel
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            let named = self.runtime_text.contains(&slash_path)
                || (!name.is_empty() && self.runtime_text.contains(&name));
            if named {
                continue;
            }
            if let Some(findings) = self.findings.get_mut(range.clone()) {
                for f in findings {
                    f.severity = rank_below_runtime(&f.rule_id, f.severity);
                }
            }
        }
    }
}

fn walk(dir: &Path, opts: &ScanOptions) -> Walk {
    let mut walk = Walk::default();
    let root = match fs::canonicalize(dir) {
        Ok(root) if root.is_dir() => root,
        Ok(_) => {
            walk.skip(PathBuf::from("."), "not a directory", true);
            return walk;
        }
        Err(err) => {
            walk.skip(
                PathBuf::from("."),
                format!("cannot open directory: {err}"),
                true,
            );
            return walk;
        }
    };
    let max_files = opts.max_files.max(1);
    let max_bytes = opts.max_file_bytes.max(1);
    let mut visited: HashSet<PathBuf> = HashSet::from([root.clone()]);
    // (real path, path relative to the scanned directory)
    let mut stack: Vec<(PathBuf, PathBuf)> = vec![(root.clone(), PathBuf::new())];
    let mut candidates = 0usize;
    let mut entries_seen = 0usize;

    'walk: while let Some((real_dir, rel_dir)) = stack.pop() {
        let shown_dir = if rel_dir.as_os_str().is_empty() {
            PathBuf::from(".")
        } else {
            rel_dir.clone()
        };
        let mut entries: Vec<fs::DirEntry> = match fs::read_dir(&real_dir) {
            Ok(rd) => rd.filter_map(Result::ok).collect(),
            Err(err) => {
                walk.skip(shown_dir, format!("cannot read directory: {err}"), true);
                continue;
            }
        };
        entries.sort_by_key(fs::DirEntry::file_name);
        let mut subdirs = Vec::new();
        for entry in entries {
            entries_seen += 1;
            if entries_seen > MAX_WALK_ENTRIES {
                walk.skip(
                    shown_dir,
                    format!("directory entry limit of {MAX_WALK_ENTRIES} reached; the rest was not scanned"),
                    true,
                );
                break 'walk;
            }
            let name = entry.file_name();
            let name = name.to_string_lossy();
            let rel = rel_dir.join(&*name);
            let Ok(file_type) = entry.file_type() else {
                walk.skip(rel, "cannot stat entry", true);
                continue;
            };
            let (real, is_dir) = if file_type.is_symlink() {
                match fs::canonicalize(entry.path()) {
                    Ok(target) if target.starts_with(&root) => {
                        let is_dir = target.is_dir();
                        if !is_dir && !target.is_file() {
                            continue;
                        }
                        (target, is_dir)
                    }
                    Ok(_) => {
                        walk.skip(
                            rel,
                            "symlink points outside the scanned directory; not followed",
                            true,
                        );
                        continue;
                    }
                    Err(err) => {
                        walk.skip(rel, format!("broken symlink: {err}"), true);
                        continue;
                    }
                }
            } else if file_type.is_dir() {
                (entry.path(), true)
            } else if file_type.is_file() {
                (entry.path(), false)
            } else {
                continue;
            };

            if is_dir {
                if !opts.include_hidden && name.starts_with('.') {
                    walk.skip(rel, "hidden directory", true);
                    continue;
                }
                if !opts.include_hidden && name == "node_modules" {
                    walk.skip(rel, "node_modules directory", true);
                    continue;
                }
                if opts.exclude_tests && TEST_DIRECTORY_NAMES.contains(&&*name) {
                    walk.skip(rel, "test directory excluded", false);
                    continue;
                }
                if !visited.insert(real.clone()) {
                    walk.skip(
                        rel,
                        "directory already scanned (symlink loop or alias)",
                        false,
                    );
                    continue;
                }
                subdirs.push((real, rel));
                continue;
            }

            if opts.exclude_tests && is_test_file_name(&name) {
                walk.skip(rel, "test file excluded", false);
                continue;
            }
            if candidates >= max_files {
                walk.skip(
                    rel,
                    format!("file limit of {max_files} reached; this and any further files were not scanned"),
                    true,
                );
                break 'walk;
            }
            candidates += 1;
            let kind = classify(&name, &real);
            walk.scan_file(&real, rel, kind, max_bytes);
        }
        stack.extend(subdirs.into_iter().rev());
    }
    walk.rank_test_code();
    walk
}

/// Scans a skill directory: skill-text rules on `.md .markdown .mdx .txt`
/// files (including `SKILL.md`), source rules on code files (`.js .ts .mjs
/// .cjs .mts .cts .jsx .tsx .py .sh .bash .zsh`, and other files with a
/// `#!` line naming node, python or a shell), and skill-text rules on every
/// other regular file that is valid UTF-8 (a Makefile, `.ps1`, `.yaml`, an
/// extensionless script). A file that is not UTF-8 is not scanned and is
/// recorded in [`ScanReport::skipped`].
///
/// The walk is sorted and deterministic; it never leaves `dir` (a symlink
/// is followed only when its target is inside `dir`), skips hidden
/// directories and `node_modules` unless [`ScanOptions::include_hidden`],
/// and records every limit it hits in [`ScanReport::skipped`].
pub fn scan_skill_dir(dir: &Path, opts: &ScanOptions) -> ScanReport {
    let walk = walk(dir, opts);
    ScanReport {
        findings: walk.findings,
        files_scanned: walk.files_scanned,
        skipped: walk
            .skipped
            .into_iter()
            .map(|s| (s.path, s.reason))
            .collect(),
    }
}

/// The skill-workshop gate: scans a proposal directory and returns `Err`
/// when any finding is critical — the proposal fails as a whole.
///
/// It fails closed: every part of the proposal the scan could not see
/// (an oversized, unreadable or non-UTF-8 file, the file limit, a hidden
/// directory or
/// `node_modules` when not included, a symlink leaving the directory) is
/// added as a critical `scan-incomplete` finding. Explicit test exclusions
/// are not.
pub fn scan_proposal(dir: &Path, opts: &ScanOptions) -> Result<ScanReport, ScanReport> {
    let walk = walk(dir, opts);
    let mut report = ScanReport {
        findings: walk.findings,
        files_scanned: walk.files_scanned,
        skipped: Vec::with_capacity(walk.skipped.len()),
    };
    for skip in walk.skipped {
        if skip.blind {
            report.findings.push(Finding {
                rule_id: SCAN_INCOMPLETE.to_owned(),
                severity: Severity::Critical,
                file: skip.path.clone(),
                line: 1,
                excerpt: skip.reason.clone(),
            });
        }
        report.skipped.push((skip.path, skip.reason));
    }
    if report.has_critical() {
        Err(report)
    } else {
        Ok(report)
    }
}

#[cfg(test)]
#[path = "mod_tests.rs"]
mod tests;
