//! Discovery and loading across the six sources.
//!
//! [`load_skills`] scans every root of a [`SkillRoots`] (lowest precedence
//! first: extra, bundled, managed, personal, project, workspace), turns
//! each directory holding a `SKILL.md` into a [`Skill`] or a [`Rejected`],
//! checks eligibility against an [`EligibilityContext`], and merges by
//! name: a later source replaces an earlier skill of the same name (the
//! winner's `shadows` lists what it replaced, and a precedence-collision
//! warning is recorded). Within one source the first skill by path order
//! wins. The result is sorted by name in byte order (OpenClaw uses
//! `localeCompare(…, "en")`; byte order is deterministic and
//! locale-independent).
//!
//! Nothing here reads process state except [`default_eligibility_context`];
//! a skill's name is never used to build a path.

use std::collections::BTreeMap;
use std::collections::HashMap;
use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::frontmatter::parse_skill_md;
use crate::types::{Rejected, Shadowed, Skill, SkillSource};

mod discover;
mod eligibility;

use discover::{Candidate, scan_root};
use eligibility::evaluate;

/// The root directory of each source; `None` / empty skips the source.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SkillRoots {
    /// `skills.load.extraDirs` (and plugin skill dirs).
    pub extra: Vec<PathBuf>,
    /// The bundled skills directory.
    pub bundled: Option<PathBuf>,
    /// `<state dir>/skills`.
    pub managed: Option<PathBuf>,
    /// `~/.agents/skills`.
    pub personal: Option<PathBuf>,
    /// `<workspace>/.agents/skills`.
    pub project: Option<PathBuf>,
    /// `<workspace>/skills`.
    pub workspace: Option<PathBuf>,
}

impl SkillRoots {
    /// The standard layout: managed `<state_dir>/skills`, personal
    /// `<home>/.agents/skills`, project `<workspace>/.agents/skills`,
    /// workspace `<workspace>/skills`, plus the given extra and bundled
    /// roots. Without a workspace the project and workspace sources are
    /// skipped; without a home the personal source is.
    pub fn resolve(
        workspace: Option<&Path>,
        state_dir: &Path,
        home: Option<&Path>,
        extra: Vec<PathBuf>,
        bundled: Option<PathBuf>,
    ) -> SkillRoots {
        SkillRoots {
            extra,
            bundled,
            managed: Some(state_dir.join("skills")),
            personal: home.map(|h| h.join(".agents").join("skills")),
            project: workspace.map(|w| w.join(".agents").join("skills")),
            workspace: workspace.map(|w| w.join("skills")),
        }
    }

    /// The roots of one source, in scan order.
    pub(crate) fn roots_of(&self, source: SkillSource) -> Vec<&Path> {
        match source {
            SkillSource::Extra => self.extra.iter().map(PathBuf::as_path).collect(),
            SkillSource::Bundled => self.bundled.as_deref().into_iter().collect(),
            SkillSource::Managed => self.managed.as_deref().into_iter().collect(),
            SkillSource::AgentsPersonal => self.personal.as_deref().into_iter().collect(),
            SkillSource::AgentsProject => self.project.as_deref().into_iter().collect(),
            SkillSource::Workspace => self.workspace.as_deref().into_iter().collect(),
        }
    }
}

/// OpenClaw's limits (`skills.limits.*`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SkillLimits {
    /// Candidate directories looked at per root.
    pub max_candidates_per_root: usize,
    /// Skills loaded per source.
    pub max_skills_loaded_per_source: usize,
    /// Skills in the prompt index.
    pub max_skills_in_prompt: usize,
    /// Characters of the prompt index.
    pub max_skills_prompt_chars: usize,
    /// Size of one `SKILL.md`.
    pub max_skill_file_bytes: u64,
}

impl Default for SkillLimits {
    fn default() -> Self {
        SkillLimits {
            max_candidates_per_root: 300,
            max_skills_loaded_per_source: 200,
            max_skills_in_prompt: 150,
            max_skills_prompt_chars: 18_000,
            max_skill_file_bytes: 256_000,
        }
    }
}

/// What eligibility is checked against.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct EligibilityContext {
    /// The OS as OpenClaw names it (`linux`, `darwin`, `win32`).
    pub os: String,
    /// The directories of `PATH`.
    pub path_dirs: Vec<PathBuf>,
    /// The environment (only names and emptiness are looked at).
    pub env: BTreeMap<String, String>,
    /// The configuration, as JSON (dotted keys are looked up in it).
    pub config: serde_json::Value,
}

/// Everything loaded from the sources.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SkillSet {
    /// The winning skill of each name, sorted by name.
    pub skills: Vec<Skill>,
    /// Directories that are not skills, with why.
    pub rejected: Vec<Rejected>,
    /// Warnings (precedence collisions, limits reached, …).
    pub warnings: Vec<String>,
}

/// The eligibility context of this process: the real `PATH`, environment
/// and OS (as OpenClaw names it: `darwin`, `linux`, `win32`, …), with the
/// given configuration. The only function of the loader that reads
/// process state.
pub fn default_eligibility_context(config: serde_json::Value) -> EligibilityContext {
    let os = match std::env::consts::OS {
        "macos" => "darwin",
        "windows" => "win32",
        other => other,
    };
    let path_dirs = std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).collect())
        .unwrap_or_default();
    let env = std::env::vars_os()
        .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)))
        .collect();
    EligibilityContext {
        os: os.to_owned(),
        path_dirs,
        env,
        config,
    }
}

/// Load every source: discover, parse, check eligibility, merge by
/// precedence, sort by name (byte order). Never fails: problems become
/// [`Rejected`] entries or warnings.
pub fn load_skills(
    roots: &SkillRoots,
    limits: &SkillLimits,
    eligibility: &EligibilityContext,
) -> SkillSet {
    let mut set = SkillSet::default();
    let mut merged: BTreeMap<String, Skill> = BTreeMap::new();
    for source in SkillSource::ALL {
        let loaded = load_source(
            source,
            &roots.roots_of(source),
            limits,
            eligibility,
            &mut set,
        );
        for skill in loaded {
            merge(&mut merged, skill, &mut set.warnings);
        }
    }
    // BTreeMap iteration is byte order of the names.
    set.skills = merged.into_values().collect();
    set
}

/// Insert `skill` (from a higher-precedence source than anything already
/// in `merged`), recording what it replaces.
fn merge(merged: &mut BTreeMap<String, Skill>, mut skill: Skill, warnings: &mut Vec<String>) {
    if let Some(loser) = merged.remove(&skill.name) {
        warnings.push(format!(
            "Skill precedence collision resolved: {} from {} ({}) overrides {} ({})",
            quoted_name(&skill.name),
            skill.source.label(),
            skill.location.display(),
            loser.source.label(),
            loser.location.display(),
        ));
        let mut shadows = loser.shadows;
        shadows.push(Shadowed {
            source: loser.source,
            location: loser.location,
        });
        skill.shadows = shadows;
    }
    merged.insert(skill.name.clone(), skill);
}

/// Scan and load every root of one source; within the source the first
/// skill of a name (roots in order, then path order) wins.
fn load_source(
    source: SkillSource,
    roots: &[&Path],
    limits: &SkillLimits,
    ctx: &EligibilityContext,
    set: &mut SkillSet,
) -> Vec<Skill> {
    let mut loaded: Vec<Skill> = Vec::new();
    let mut by_name: HashMap<String, usize> = HashMap::new();
    let mut over_limit = 0usize;
    for root in roots {
        let scan = scan_root(source, root, limits);
        set.rejected.extend(scan.rejected);
        set.warnings.extend(scan.warnings);
        for candidate in scan.candidates {
            if loaded.len() >= limits.max_skills_loaded_per_source {
                over_limit += 1;
                set.rejected.push(Rejected {
                    source,
                    location: candidate.location(source),
                    reason: "limit".into(),
                    message: format!(
                        "not loaded: {} already has {} skills \
                         (skills.limits.maxSkillsLoadedPerSource)",
                        source.label(),
                        limits.max_skills_loaded_per_source
                    ),
                });
                continue;
            }
            match load_candidate(source, &candidate, limits, ctx) {
                Ok(skill) => {
                    if let Some(&first) = by_name.get(&skill.name) {
                        let winner = &loaded[first];
                        set.warnings.push(format!(
                            "duplicate skill name {} in {}: {} wins over {}",
                            quoted_name(&skill.name),
                            source.label(),
                            winner.location.display(),
                            skill.location.display()
                        ));
                        set.rejected.push(Rejected {
                            source,
                            location: skill.location,
                            reason: "duplicate-name".into(),
                            message: format!(
                                "another skill of {} has the same name and comes first: {}",
                                source.label(),
                                winner.location.display()
                            ),
                        });
                        continue;
                    }
                    by_name.insert(skill.name.clone(), loaded.len());
                    loaded.push(skill);
                }
                Err(rejected) => set.rejected.push(rejected),
            }
        }
    }
    if over_limit > 0 {
        set.warnings.push(format!(
            "{}: skills limit reached ({} loaded, {} more not loaded; \
             skills.limits.maxSkillsLoadedPerSource)",
            source.label(),
            loaded.len(),
            over_limit
        ));
    }
    loaded
}

/// The name in quotes, at most 128 characters, control characters escaped.
fn quoted_name(name: &str) -> String {
    let short: String = name.chars().take(128).collect();
    format!("{short:?}")
}

/// Whether `name` could act as a path or break a line-based format.
pub(crate) fn invalid_name_reason(name: &str) -> Option<&'static str> {
    if name.trim().is_empty() {
        Some("is empty")
    } else if name.contains('/') || name.contains('\\') {
        Some("contains a path separator")
    } else if name.contains("..") {
        Some("contains `..`")
    } else if name.contains('\0') {
        Some("contains a NUL character")
    } else if name.chars().any(char::is_control) {
        Some("contains a control character")
    } else if name.trim() == "." {
        Some("is `.`")
    } else if name.chars().any(|c| {
        matches!(c, '\u{200B}'..='\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2060}'..='\u{2069}' | '\u{FEFF}')
    }) {
        Some("contains an invisible or bidi formatting character")
    } else {
        None
    }
}

/// `sha256:` + the first 16 hex digits of the SHA-256 of `bytes`.
pub(crate) fn skill_version(bytes: &[u8]) -> String {
    let digest = Sha256::digest(bytes);
    let hex: String = digest.iter().take(8).map(|b| format!("{b:02x}")).collect();
    format!("sha256:{hex}")
}

/// Read, parse and check one candidate.
fn load_candidate(
    source: SkillSource,
    candidate: &Candidate,
    limits: &SkillLimits,
    ctx: &EligibilityContext,
) -> Result<Skill, Rejected> {
    let location = candidate.location(source);
    let reject = |reason: &str, message: String| Rejected {
        source,
        location: location.clone(),
        reason: reason.to_owned(),
        message,
    };
    let max = limits.max_skill_file_bytes;
    let too_large = |size: String| {
        reject(
            "too-large",
            format!(
                "SKILL.md is {size} bytes; the limit is {max} \
                 (skills.limits.maxSkillFileBytes)"
            ),
        )
    };
    // Open without following a final symlink and without blocking (a FIFO
    // swapped in after discovery must not hang the loader), then check the
    // open handle, not the path: no window between the check and the read.
    let file = {
        use std::os::unix::fs::OpenOptionsExt;
        fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
            .open(&candidate.skill_md_real)
            .map_err(|e| reject("unreadable", format!("cannot open SKILL.md: {e}")))?
    };
    let meta = file
        .metadata()
        .map_err(|e| reject("unreadable", format!("cannot stat SKILL.md: {e}")))?;
    if !meta.is_file() {
        return Err(reject(
            "unreadable",
            "SKILL.md is not a regular file".to_owned(),
        ));
    }
    if meta.len() > max {
        return Err(too_large(meta.len().to_string()));
    }
    let mut bytes = Vec::new();
    file.take(max.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|e| reject("unreadable", format!("cannot read SKILL.md: {e}")))?;
    if u64::try_from(bytes.len()).map_or(true, |n| n > max) {
        // The file grew between the stat and the read.
        return Err(too_large(format!("more than {max}")));
    }
    let version = skill_version(&bytes);
    let mut warnings = Vec::new();
    let text = match String::from_utf8(bytes) {
        Ok(text) => text,
        Err(e) => {
            warnings.push("SKILL.md is not valid UTF-8; invalid bytes were replaced".to_owned());
            String::from_utf8_lossy(e.as_bytes()).into_owned()
        }
    };
    let parsed = parse_skill_md(&text);
    warnings.extend(parsed.warnings);
    let frontmatter = parsed.frontmatter;

    let description = frontmatter
        .description
        .as_deref()
        .map(str::trim)
        .unwrap_or_default()
        .to_owned();
    if description.is_empty() {
        return Err(reject(
            "missing-description",
            "SKILL.md has no description: add a `description:` line to its frontmatter \
             (between the `---` fences) saying what the skill does and when to use it"
                .to_owned(),
        ));
    }
    let name = match frontmatter.name.as_deref().map(str::trim) {
        Some(n) if !n.is_empty() => n.to_owned(),
        _ => candidate.dir_name(),
    };
    if let Some(why) = invalid_name_reason(&name) {
        return Err(reject(
            "invalid-name",
            format!(
                "skill name {} {why}; a name must not be usable as a path \
                 (no `/`, `\\`, `..`, NUL or control characters, not empty)",
                quoted_name(&name)
            ),
        ));
    }
    let eligibility = evaluate(&frontmatter, ctx);
    Ok(Skill {
        name,
        description,
        source,
        location,
        version,
        frontmatter,
        eligibility,
        shadows: Vec::new(),
        warnings,
    })
}

#[cfg(test)]
#[path = "loader_tests.rs"]
mod tests;
