//! The `skills` config section (OpenClaw's keys). How it narrows what was
//! loaded is `talon-skills`' business.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// `skills`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SkillsConfig {
    /// Only these bundled skills are loaded (absent: all of them).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allow_bundled: Option<Vec<String>>,
    /// Where skills are loaded from and how they are watched.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub load: Option<SkillsLoadConfig>,
    /// How installers are run (accepted for OpenClaw compatibility; Talon
    /// does not install skills).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub install: Option<SkillsInstallConfig>,
    /// Per-skill settings, keyed by the skill's `skillKey` or name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub entries: Option<BTreeMap<String, SkillEntryConfig>>,
    /// Loading and prompt limits.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limits: Option<SkillsLimitsConfig>,
}

/// `skills.load`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SkillsLoadConfig {
    /// Extra skill roots (lowest precedence); relative paths resolve
    /// against the config file's directory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extra_dirs: Option<Vec<String>>,
    /// Watch the roots and refresh on change (default true).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub watch: Option<bool>,
    /// Debounce of the watcher in ms (default 250).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub watch_debounce_ms: Option<u64>,
}

/// `skills.install` (accepted, not used).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SkillsInstallConfig {
    /// Prefer Homebrew.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prefer_brew: Option<bool>,
    /// `npm`, `pnpm`, `yarn` or `bun`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_manager: Option<String>,
}

/// `skills.entries.<key>`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SkillEntryConfig {
    /// `false` removes the skill.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enabled: Option<bool>,
    /// Environment the skill expects; its keys count as set for the
    /// skill's `requires.env`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub env: Option<BTreeMap<String, String>>,
    /// The skill's main credential (stands in for its `primaryEnv`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_key: Option<String>,
    /// Free-form settings for the skill.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config: Option<Value>,
}

/// `skills.limits`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SkillsLimitsConfig {
    /// Candidate directories per root (default 300).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_candidates_per_root: Option<usize>,
    /// Skills loaded per source (default 200).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_skills_loaded_per_source: Option<usize>,
    /// Skills in the prompt index (default 150).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_skills_in_prompt: Option<usize>,
    /// Characters of the prompt index (default 18 000).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_skills_prompt_chars: Option<usize>,
    /// Bytes of one `SKILL.md` (default 256 000).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_skill_file_bytes: Option<u64>,
}

impl SkillsConfig {
    /// `skills.load.extraDirs` as directories: `~/x` is under `home`, an
    /// absolute path stays as it is, a relative one is under `base` (the
    /// config file's directory). The one reading of these paths, for every
    /// front end that loads skills.
    pub fn extra_dirs(&self, base: &Path, home: Option<&Path>) -> Vec<PathBuf> {
        self.load
            .as_ref()
            .and_then(|l| l.extra_dirs.as_ref())
            .into_iter()
            .flatten()
            .map(|raw| {
                let raw = raw.trim();
                match raw.strip_prefix("~/").zip(home) {
                    Some((rest, home)) => home.join(rest),
                    None => base.join(raw),
                }
            })
            .collect()
    }

    /// Every problem, as `(key path below skills, message)`.
    pub fn validate(&self) -> Vec<(String, String)> {
        let mut out = Vec::new();
        if let Some(l) = &self.limits {
            for (key, v) in [
                ("maxCandidatesPerRoot", l.max_candidates_per_root),
                ("maxSkillsLoadedPerSource", l.max_skills_loaded_per_source),
                ("maxSkillsInPrompt", l.max_skills_in_prompt),
                ("maxSkillsPromptChars", l.max_skills_prompt_chars),
            ] {
                if v == Some(0) {
                    out.push((format!("limits.{key}"), "must be at least 1".to_owned()));
                }
            }
            if l.max_skill_file_bytes == Some(0) {
                out.push((
                    "limits.maxSkillFileBytes".into(),
                    "must be at least 1".into(),
                ));
            }
        }
        if let Some(dirs) = self.load.as_ref().and_then(|l| l.extra_dirs.as_ref()) {
            for (i, d) in dirs.iter().enumerate() {
                if d.trim().is_empty() || d.contains('\0') {
                    out.push((
                        format!("load.extraDirs[{i}]"),
                        "must be a directory path".into(),
                    ));
                }
            }
        }
        out
    }
}

#[cfg(test)]
#[path = "skills_tests.rs"]
mod tests;
