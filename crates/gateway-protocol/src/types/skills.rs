//! `skills.*`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A skill file that was not loaded.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RejectedSkill {
    /// Where it is.
    pub location: Value,
    /// Which root it came from (`workspace`, `managed`, `bundled`, …).
    pub source: String,
    /// Why it was rejected.
    pub reason: String,
}

/// `skills.list`'s answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SkillsListResponse {
    /// The loaded skills (name, description, source, location, version,
    /// eligibility and reasons, invocation flags, shadows, warnings).
    pub skills: Vec<Value>,
    /// The skill files that were refused, and why.
    pub rejected: Vec<RejectedSkill>,
}

/// `skills.prompt`'s answer: the skills index as the model's prompt
/// would hold it (talon-skills' `RenderedPrompt`: the text and what was
/// left out to fit the limits).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(transparent)]
pub struct SkillsPromptResponse(pub Value);
