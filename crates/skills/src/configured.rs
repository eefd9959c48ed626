//! Loading with the `skills` config applied: `allowBundled`,
//! `entries.<key>.enabled`, and per-skill `env` / `apiKey` counting towards
//! the skill's `requires.env`.

use crate::config::{SkillsConfig, config_limits, config_removes};
use crate::loader::{EligibilityContext, SkillRoots, SkillSet, load_skills};
use crate::types::Rejected;

/// The prefix of an eligibility reason for a missing environment
/// variable (the loader's wording).
const MISSING_ENV: &str = "missing env: ";

/// [`load_skills`] with `config`'s limits, then its narrowing: a bundled
/// skill outside `allowBundled` or an entry with `enabled: false` moves to
/// `rejected` (reason `disabled`), and a skill's own `entries.<key>.env`
/// keys (and `apiKey` for its `primaryEnv`) satisfy its `requires.env`.
pub fn load_skills_with_config(
    roots: &SkillRoots,
    config: &SkillsConfig,
    eligibility: &EligibilityContext,
) -> SkillSet {
    let mut set = load_skills(roots, &config_limits(config), eligibility);
    let mut kept = Vec::with_capacity(set.skills.len());
    for mut skill in std::mem::take(&mut set.skills) {
        let manifest = skill.frontmatter.manifest.as_ref();
        let key = manifest.and_then(|m| m.skill_key.as_deref());
        if let Some(message) = config_removes(config, &skill.name, key, skill.source) {
            set.rejected.push(Rejected {
                source: skill.source,
                location: skill.location.clone(),
                reason: "disabled".into(),
                message,
            });
            continue;
        }
        let entry_key = key.unwrap_or(&skill.name).to_owned();
        if let Some(entry) = config.entries.as_ref().and_then(|e| e.get(&entry_key)) {
            let primary = manifest.and_then(|m| m.primary_env.clone());
            let provided = |var: &str| {
                entry
                    .env
                    .as_ref()
                    .is_some_and(|env| env.get(var).is_some_and(|v| !v.is_empty()))
                    || (entry.api_key.as_deref().is_some_and(|k| !k.is_empty())
                        && primary.as_deref() == Some(var))
            };
            skill.eligibility.reasons.retain(|r| {
                r.strip_prefix(MISSING_ENV)
                    .is_none_or(|var| !provided(var.trim()))
            });
            if skill.eligibility.reasons.is_empty() {
                skill.eligibility.eligible = true;
            }
        }
        kept.push(skill);
    }
    set.skills = kept;
    set
}
