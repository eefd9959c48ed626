//! `skills.*`: an agent's skills under the active configuration.

use std::path::{Path, PathBuf};

use serde_json::Value;
use talon_gateway_protocol::{AgentRef, RejectedSkill, SkillsListResponse, SkillsPromptResponse};

use crate::gateway::Generation;

/// `skills.list`.
pub(crate) fn list(g: &Generation, config_dir: &Path, p: &AgentRef) -> SkillsListResponse {
    let (set, _) = load(g, config_dir, p.agent_id.as_deref());
    SkillsListResponse {
        skills: set
            .skills
            .iter()
            .map(talon_skills::Skill::summary_json)
            .collect(),
        rejected: set
            .rejected
            .iter()
            .map(|r| RejectedSkill {
                location: serde_json::to_value(&r.location).unwrap_or(Value::Null),
                source: r.source.label().to_owned(),
                reason: r.message.clone(),
            })
            .collect(),
    }
}

/// `skills.prompt`.
pub(crate) fn prompt(g: &Generation, config_dir: &Path, p: &AgentRef) -> SkillsPromptResponse {
    let (set, config) = load(g, config_dir, p.agent_id.as_deref());
    let rendered =
        talon_skills::prompt::render_prompt(&set.skills, &talon_skills::config_limits(&config));
    SkillsPromptResponse(serde_json::to_value(rendered).unwrap_or(Value::Null))
}

fn load(
    g: &Generation,
    base: &Path,
    agent: Option<&str>,
) -> (talon_skills::SkillSet, talon_skills::SkillsConfig) {
    let config = &g.config;
    let agent = agent.map_or_else(|| config.default_agent_id(), |a| a.trim().to_lowercase());
    let skills_config = config.skills_config();
    let extra = skills_config.extra_dirs(base, talon_config::home_dir().as_deref());
    let state = talon_config::state_dir();
    let workspace = config.agent_workspace_dir(&agent, base, &state);
    let bundled = std::env::var_os("TALON_BUNDLED_SKILLS_DIR")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from);
    let roots = talon_skills::SkillRoots::resolve(
        Some(&workspace),
        &state,
        talon_config::home_dir().as_deref(),
        extra,
        bundled,
    );
    let json = serde_json::to_value(&**config).unwrap_or(Value::Null);
    let eligibility = talon_skills::default_eligibility_context(json);
    let set = talon_skills::load_skills_with_config(&roots, &skills_config, &eligibility);
    (set, skills_config)
}
