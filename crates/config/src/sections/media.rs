//! Config of the media tools: Talon's own `tools.imageProvider`, the
//! vision endpoint the `image` tool asks.
//!
//! OpenClaw's `agents.defaults.imageModel` (`{primary, fallbacks}`) only
//! names a model ref whose credentials live in the provider catalog,
//! which Talon does not read; so the endpoint, model and key are given
//! here in one block. (Not under `tools.media`: that is OpenClaw's
//! media-understanding section, `tools.media.image.{enabled, models}`,
//! which Talon ignores.) Unknown keys are refused.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use talon_egress::SsrfAllowlistConfig;

/// `tools.imageProvider`: an OpenAI-compatible
/// `chat/completions` endpoint.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct VisionProviderConfig {
    /// The API base (`https://api.openai.com/v1`); `/chat/completions` is
    /// appended. Reached only through the egress guard.
    pub base_url: String,
    /// The model asked (`gpt-4o-mini`).
    pub model: String,
    /// The bearer key: `${secret:NAME}` (from `<state dir>/secrets.json`)
    /// or `${ENV_VAR}`; a literal is accepted but discouraged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_key: Option<String>,
    /// Private or loopback networks the endpoint may be on (a self-hosted
    /// model), in the form of `tools.web.fetch.ssrfAllowlist`. Empty
    /// means none; metadata endpoints stay refused.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ssrf_allowlist: Option<SsrfAllowlistConfig>,
}
