//! The `skills` config section, typed by `talon-config` (plain data, so the
//! config crate does not depend on this one) and re-exported here, and how
//! it narrows what was loaded.

pub use talon_config::sections::skills::{
    SkillEntryConfig, SkillsConfig, SkillsInstallConfig, SkillsLimitsConfig, SkillsLoadConfig,
};

use crate::loader::SkillLimits;
use crate::types::SkillSource;

/// The limits of `config`, defaults filled in.
pub fn config_limits(config: &SkillsConfig) -> SkillLimits {
    let d = SkillLimits::default();
    let l = config.limits.clone().unwrap_or_default();
    SkillLimits {
        max_candidates_per_root: l
            .max_candidates_per_root
            .unwrap_or(d.max_candidates_per_root),
        max_skills_loaded_per_source: l
            .max_skills_loaded_per_source
            .unwrap_or(d.max_skills_loaded_per_source),
        max_skills_in_prompt: l.max_skills_in_prompt.unwrap_or(d.max_skills_in_prompt),
        max_skills_prompt_chars: l
            .max_skills_prompt_chars
            .unwrap_or(d.max_skills_prompt_chars),
        max_skill_file_bytes: l.max_skill_file_bytes.unwrap_or(d.max_skill_file_bytes),
    }
}

/// Why `config` removes a loaded skill, if it does: a bundled skill not
/// in `allowBundled`, or `entries.<key>.enabled: false` (the key is the
/// skill's `skillKey`, else its name).
pub fn config_removes(
    config: &SkillsConfig,
    name: &str,
    skill_key: Option<&str>,
    source: SkillSource,
) -> Option<String> {
    if source == SkillSource::Bundled
        && let Some(allowed) = &config.allow_bundled
        && !allowed.iter().any(|a| a == name)
    {
        return Some(format!(
            "bundled skill not in skills.allowBundled (add \"{name}\" to load it)"
        ));
    }
    let key = skill_key.unwrap_or(name);
    if config
        .entries
        .as_ref()
        .and_then(|e| e.get(key))
        .and_then(|e| e.enabled)
        == Some(false)
    {
        return Some(format!("disabled by skills.entries.{key}.enabled"));
    }
    None
}
