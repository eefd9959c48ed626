//! Skill command dispatch: a skill declaring `command-dispatch: tool`
//! turns its slash command into a tool call. The tool is resolved through
//! the full policy pipeline (every layer), never around it — the fix class
//! of OpenClaw's GHSA-mhm4-93fw-4qr2, where dispatch used the raw tool set.

use serde_json::{Map, Value};
use talon_tool_catalog::normalize_tool_name;
use talon_tool_policy::{PolicyEngine, RemovedBy, RunContext, ToolUniverse};

use crate::types::Skill;

/// The tool call a slash command turns into. Run it through the same
/// gate as any model call (`talon_runtime::ToolTable::invoke`).
#[derive(Debug, Clone, PartialEq)]
pub struct DispatchCall {
    /// The (normalised) tool.
    pub tool: String,
    /// `{command: <raw args>, commandName: <slash command>, skillName}`,
    /// as OpenClaw passes them.
    pub params: Map<String, Value>,
}

/// Why a slash command cannot be dispatched.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum DispatchError {
    /// The skill does not declare `command-dispatch: tool`.
    #[error("skill `{skill}` does not dispatch to a tool (no `command-dispatch: tool`)")]
    NotDispatching {
        /// The skill.
        skill: String,
    },
    /// The skill is not user-invocable.
    #[error("skill `{skill}` is not user-invocable (`user-invocable: false`)")]
    NotUserInvocable {
        /// The skill.
        skill: String,
    },
    /// `command-tool` is missing.
    #[error("skill `{skill}` declares `command-dispatch: tool` but no `command-tool`")]
    MissingTool {
        /// The skill.
        skill: String,
    },
    /// `command-arg-mode` is not `raw`.
    #[error("skill `{skill}`: unsupported command-arg-mode `{mode}` (only `raw` is supported)")]
    UnsupportedArgMode {
        /// The skill.
        skill: String,
        /// The mode.
        mode: String,
    },
    /// The policy removed the tool from this run.
    #[error(
        "skill `{skill}` dispatches to `{tool}`, which the `{}` policy layer removed from this session ({}); change `{}` to allow it",
        removed_by.layer,
        removed_by.rule,
        removed_by.config_key
    )]
    Denied {
        /// The skill.
        skill: String,
        /// The tool.
        tool: String,
        /// Where the policy removed it.
        removed_by: RemovedBy,
    },
    /// The skill is not eligible in this environment.
    #[error("skill `{skill}` is not eligible here: {}", reasons.join("; "))]
    Ineligible {
        /// The skill.
        skill: String,
        /// Why.
        reasons: Vec<String>,
    },
}

/// Resolve `/<slash_command> <raw_args>` of `skill` into a tool call, if
/// the run's policy (`engine` evaluated for `ctx` over `universe`, exactly
/// as the run's tool table is built) allows the tool.
pub fn resolve_skill_command(
    skill: &Skill,
    slash_command: &str,
    raw_args: &str,
    engine: &PolicyEngine,
    ctx: &RunContext,
    universe: &ToolUniverse,
) -> Result<DispatchCall, DispatchError> {
    let fm = &skill.frontmatter;
    let name = skill.name.clone();
    if fm.command_dispatch.as_deref().map(str::trim) != Some("tool") {
        return Err(DispatchError::NotDispatching { skill: name });
    }
    if !fm.user_invocable {
        return Err(DispatchError::NotUserInvocable { skill: name });
    }
    if !skill.eligibility.eligible {
        return Err(DispatchError::Ineligible {
            skill: name,
            reasons: skill.eligibility.reasons.clone(),
        });
    }
    let mode = fm
        .command_arg_mode
        .as_deref()
        .map(str::trim)
        .unwrap_or("raw");
    if mode != "raw" {
        return Err(DispatchError::UnsupportedArgMode {
            skill: name,
            mode: mode.to_owned(),
        });
    }
    let Some(tool) = fm.command_tool.as_deref().map(normalize_tool_name) else {
        return Err(DispatchError::MissingTool { skill: name });
    };
    if tool.is_empty() {
        return Err(DispatchError::MissingTool { skill: name });
    }
    let check = engine.check(ctx, universe, &tool);
    if !check.allowed {
        let removed_by = check.removed_by.unwrap_or(RemovedBy {
            layer: "unknown".into(),
            rule: "removed".into(),
            config_key: "tools".into(),
        });
        return Err(DispatchError::Denied {
            skill: name,
            tool,
            removed_by,
        });
    }
    let mut params = Map::new();
    params.insert("command".into(), Value::String(raw_args.to_owned()));
    params.insert(
        "commandName".into(),
        Value::String(slash_command.trim_start_matches('/').to_owned()),
    );
    params.insert("skillName".into(), Value::String(skill.name.clone()));
    Ok(DispatchCall { tool, params })
}
