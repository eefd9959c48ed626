//! Discovery and loading across the six sources (being written).

use std::collections::BTreeMap;
use std::path::PathBuf;

use crate::types::{Rejected, Skill};

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

/// Load every source (stub: loads nothing).
pub fn load_skills(
    _roots: &SkillRoots,
    _limits: &SkillLimits,
    _eligibility: &EligibilityContext,
) -> SkillSet {
    SkillSet::default()
}
