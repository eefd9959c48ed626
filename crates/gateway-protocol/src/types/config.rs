//! `config.*`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::gateway::ReloadReport;

/// `config.get`'s answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ConfigGetResponse {
    /// The file (or `<built-in defaults>`).
    pub origin: String,
    /// The active configuration generation.
    pub generation: u64,
    /// When it was loaded (Unix ms).
    pub loaded_at_ms: u64,
    /// The configuration, secrets redacted.
    pub config: Value,
    /// What the last reload did (`null` before the first).
    pub last_reload: Option<ReloadReport>,
}

/// `config.schema.lookup`'s params.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ConfigSchemaLookupParams {
    /// A dotted config path (`tools.web.fetch`); required (its absence is
    /// refused with an example).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
}

/// `config.schema.lookup`'s answer: the config schema at `path`, as the
/// `gateway` tool's `config.schema.lookup` action reports it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(transparent)]
pub struct ConfigSchemaLookupResponse(pub Value);
