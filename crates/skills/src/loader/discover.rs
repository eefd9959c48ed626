//! Finding skill directories under one root, with per-source containment.
//!
//! The walk is breadth-first, reads every directory's entries in sorted
//! (byte) order, skips hidden entries and `node_modules`, and stops at the
//! depth and candidate limits. Symlinks are resolved with
//! [`std::fs::canonicalize`]; for sources that must stay inside their root
//! a resolved path outside the root is rejected and never descended into.
//! Every real directory is descended into at most once, so symlink loops
//! end.

use std::collections::{HashSet, VecDeque};
use std::ffi::OsString;
use std::fs;
use std::path::{Path, PathBuf};

use crate::loader::SkillLimits;
use crate::types::{Rejected, SkillSource};

/// Maximum depth of a grouped scan (OpenClaw `MAX_GROUPED_SKILL_SCAN_DEPTH`).
const MAX_DEPTH: usize = 6;
/// Maximum depth under a configured extra root that is not a `skills`
/// directory.
const MAX_EXTRA_DEPTH: usize = 2;
/// Bounds on the raw entries read from one directory.
const MIN_RAW_ENTRIES: usize = 1_000;
/// See [`MIN_RAW_ENTRIES`].
const MAX_RAW_ENTRIES: usize = 10_000;

/// A directory holding a `SKILL.md`, with its paths checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Candidate {
    /// The directory as reached from the root (root path + names).
    pub(crate) dir: PathBuf,
    /// Its canonical path.
    pub(crate) dir_real: PathBuf,
    /// The canonical path of its `SKILL.md` (inside `dir_real`).
    pub(crate) skill_md_real: PathBuf,
    /// Path order key: the names from the root, joined with `/`.
    pub(crate) rel: String,
}

impl Candidate {
    /// The `SKILL.md` path reported for this candidate: under the root as
    /// given for sources confined to their root; the canonical path for
    /// sources whose skills may live elsewhere (as OpenClaw does).
    pub(crate) fn location(&self, source: SkillSource) -> PathBuf {
        if source.may_follow_symlinks_out() {
            self.dir_real.join("SKILL.md")
        } else {
            self.dir.join("SKILL.md")
        }
    }

    /// The directory's own name (the fallback skill name).
    pub(crate) fn dir_name(&self) -> String {
        self.dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default()
    }
}

/// What scanning one root found.
#[derive(Debug, Default)]
pub(crate) struct RootScan {
    /// Skill directories, sorted by path order.
    pub(crate) candidates: Vec<Candidate>,
    /// Directories refused (escapes, unresolvable symlinks).
    pub(crate) rejected: Vec<Rejected>,
    /// Warnings (unreadable directories, limits).
    pub(crate) warnings: Vec<String>,
}

/// The reason code for a path that resolves outside its root.
pub(crate) fn escape_reason(source: SkillSource, is_symlink: bool) -> &'static str {
    match (source, is_symlink) {
        (SkillSource::Bundled, true) => "bundled-symlink-escape",
        (SkillSource::Bundled, false) => "bundled-root-escape",
        (_, true) => "symlink-escape",
        (_, false) => "path-escape",
    }
}

/// One directory waiting to be looked at.
struct Pending {
    dir: PathBuf,
    real: PathBuf,
    rel: String,
    depth: usize,
    /// Under a nested `skills/` root (extra roots then get the full depth).
    nested: bool,
}

/// The walk's state for one root.
struct Walk<'a> {
    source: SkillSource,
    root_real: PathBuf,
    limits: &'a SkillLimits,
    extra_depth_limited: bool,
    visited: HashSet<PathBuf>,
    examined: usize,
    candidate_limit_hit: bool,
    out: RootScan,
}

/// Scan one root. A missing root is skipped silently; an unreadable one
/// is a warning.
pub(crate) fn scan_root(source: SkillSource, root: &Path, limits: &SkillLimits) -> RootScan {
    let mut out = RootScan::default();
    match fs::metadata(root) {
        Ok(meta) if meta.is_dir() => {}
        Ok(_) => {
            out.warnings.push(format!(
                "{}: skills root {} is not a directory; skipped",
                source.label(),
                root.display()
            ));
            return out;
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return out,
        Err(e) => {
            out.warnings.push(format!(
                "{}: cannot read skills root {}: {e}",
                source.label(),
                root.display()
            ));
            return out;
        }
    }
    let root_real = match fs::canonicalize(root) {
        Ok(real) => real,
        Err(e) => {
            out.warnings.push(format!(
                "{}: cannot resolve skills root {}: {e}",
                source.label(),
                root.display()
            ));
            return out;
        }
    };
    let root_is_skills_dir = root.file_name().is_some_and(|n| n == "skills");
    let mut walk = Walk {
        source,
        root_real: root_real.clone(),
        limits,
        extra_depth_limited: source == SkillSource::Extra && !root_is_skills_dir,
        visited: HashSet::from([root_real.clone()]),
        examined: 0,
        candidate_limit_hit: false,
        out,
    };
    let root_pending = Pending {
        dir: root.to_path_buf(),
        real: root_real,
        rel: String::new(),
        depth: 0,
        nested: false,
    };
    // A root that is itself a skill directory is that one skill.
    if !walk.take_if_skill(&root_pending) {
        walk.run(root_pending);
    }
    let mut out = walk.out;
    out.candidates.sort_by(|a, b| a.rel.cmp(&b.rel));
    out
}

impl Walk<'_> {
    /// Breadth-first walk from `start`.
    fn run(&mut self, start: Pending) {
        let mut queue = VecDeque::from([start]);
        while let Some(pending) = queue.pop_front() {
            for name in self.list_children(&pending) {
                if self.examined >= self.limits.max_candidates_per_root {
                    if !self.candidate_limit_hit {
                        self.candidate_limit_hit = true;
                        self.out.warnings.push(format!(
                            "{}: skills root {} has more than {} candidate directories; \
                             discovery truncated (skills.limits.maxCandidatesPerRoot)",
                            self.source.label(),
                            self.root_display(),
                            self.limits.max_candidates_per_root
                        ));
                    }
                    return;
                }
                if let Some(child) = self.child(&pending, &name) {
                    self.examined += 1;
                    if self.take_if_skill(&child) {
                        continue;
                    }
                    let max = if self.extra_depth_limited && !child.nested {
                        MAX_EXTRA_DEPTH
                    } else {
                        MAX_DEPTH
                    };
                    if child.depth < max && self.visited.insert(child.real.clone()) {
                        queue.push_back(child);
                    }
                }
            }
        }
    }

    /// The root as given, for messages.
    fn root_display(&self) -> String {
        self.root_real.display().to_string()
    }

    /// The sorted names of the directory's visible entries.
    fn list_children(&mut self, pending: &Pending) -> Vec<OsString> {
        let raw_limit = self
            .limits
            .max_candidates_per_root
            .saturating_mul(10)
            .clamp(MIN_RAW_ENTRIES, MAX_RAW_ENTRIES);
        let entries = match fs::read_dir(&pending.real) {
            Ok(entries) => entries,
            Err(e) => {
                self.out.warnings.push(format!(
                    "{}: cannot read directory {}: {e}",
                    self.source.label(),
                    pending.dir.display()
                ));
                return Vec::new();
            }
        };
        let mut names = Vec::new();
        for (index, entry) in entries.enumerate() {
            if index >= raw_limit {
                self.out.warnings.push(format!(
                    "{}: directory {} has more than {raw_limit} entries; discovery truncated",
                    self.source.label(),
                    pending.dir.display()
                ));
                break;
            }
            let Ok(entry) = entry else { continue };
            let name = entry.file_name();
            let hidden = name.to_string_lossy().starts_with('.');
            if hidden || name == "node_modules" {
                continue;
            }
            names.push(name);
        }
        names.sort();
        names
    }

    /// Resolve one entry of `parent`; `None` for files, vanished entries
    /// and refused paths (recorded).
    fn child(&mut self, parent: &Pending, name: &OsString) -> Option<Pending> {
        let dir = parent.dir.join(name);
        let lexical_real = parent.real.join(name);
        let lmeta = fs::symlink_metadata(&lexical_real).ok()?;
        let is_symlink = lmeta.file_type().is_symlink();
        let real = if is_symlink {
            match fs::canonicalize(&lexical_real) {
                Ok(real) => real,
                Err(e) => {
                    self.reject(
                        &dir,
                        "unresolvable",
                        format!("symlink cannot be resolved (dangling or a loop): {e}"),
                    );
                    return None;
                }
            }
        } else if lmeta.is_dir() {
            lexical_real
        } else {
            return None;
        };
        if !fs::metadata(&real).ok()?.is_dir() {
            return None;
        }
        if !self.source.may_follow_symlinks_out() && !real.starts_with(&self.root_real) {
            self.reject_escape(&dir, &real, is_symlink);
            return None;
        }
        let rel = if parent.rel.is_empty() {
            name.to_string_lossy().into_owned()
        } else {
            format!("{}/{}", parent.rel, name.to_string_lossy())
        };
        // A `skills/` directory at the top of a root is a nested skills
        // root: it does not use up depth and lifts the extra-root limit.
        let nested_root = parent.depth == 0 && name == "skills";
        let has_skill_md = fs::symlink_metadata(real.join("SKILL.md")).is_ok();
        let (depth, nested) = if nested_root && !has_skill_md {
            (0, true)
        } else {
            (parent.depth + 1, parent.nested)
        };
        Some(Pending {
            dir,
            real,
            rel,
            depth,
            nested,
        })
    }

    /// If `pending` holds a `SKILL.md`, record it (or its rejection) and
    /// return true.
    fn take_if_skill(&mut self, pending: &Pending) -> bool {
        let skill_md = pending.real.join("SKILL.md");
        let Ok(lmeta) = fs::symlink_metadata(&skill_md) else {
            return false;
        };
        let skill_md_real = if lmeta.file_type().is_symlink() {
            match fs::canonicalize(&skill_md) {
                Ok(real) => real,
                Err(e) => {
                    self.reject(
                        &pending.dir,
                        "unresolvable",
                        format!("SKILL.md symlink cannot be resolved (dangling or a loop): {e}"),
                    );
                    return true;
                }
            }
        } else {
            skill_md
        };
        // SKILL.md must stay inside its own skill directory, for every
        // source.
        if !skill_md_real.starts_with(&pending.real) {
            let reason = escape_reason(self.source, lmeta.file_type().is_symlink());
            self.reject(
                &pending.dir.join("SKILL.md"),
                reason,
                format!(
                    "SKILL.md resolves to {}, outside its skill directory {}",
                    skill_md_real.display(),
                    pending.real.display()
                ),
            );
            return true;
        }
        let rel = if pending.rel.is_empty() {
            pending
                .dir
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default()
        } else {
            pending.rel.clone()
        };
        self.out.candidates.push(Candidate {
            dir: pending.dir.clone(),
            dir_real: pending.real.clone(),
            skill_md_real,
            rel,
        });
        true
    }

    /// Record a path that resolved outside the root.
    fn reject_escape(&mut self, dir: &Path, real: &Path, is_symlink: bool) {
        let reason = escape_reason(self.source, is_symlink);
        let hint = if self.source == SkillSource::Bundled {
            " (likely a stray local symlink or a modified checkout)"
        } else {
            ""
        };
        let message = format!(
            "skipping escaped skill path outside its configured root: root={} resolved={}{hint}",
            self.root_display(),
            real.display()
        );
        self.reject(dir, reason, message);
    }

    /// Record a rejection.
    fn reject(&mut self, location: &Path, reason: &str, message: String) {
        self.out.rejected.push(Rejected {
            source: self.source,
            location: location.to_path_buf(),
            reason: reason.to_owned(),
            message,
        });
    }
}
