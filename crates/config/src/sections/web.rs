//! Config of the web tools: the keys Talon honours under OpenClaw's
//! `tools.web.fetch.*` and `tools.web.search.*`, plus Talon's own
//! `tools.web.fetch.ssrfAllowlist` and `tools.web.search.ssrfAllowlist`.
//!
//! Every field is optional; the defaults are OpenClaw's (facts §15, seed
//! 002 §4). Unknown keys are refused so that a misspelt limit never
//! silently falls back to its default.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// `web_fetch`'s default `maxChars`.
pub const DEFAULT_FETCH_MAX_CHARS: usize = 20_000;
/// `web_fetch`'s default response size cap in bytes.
pub const DEFAULT_FETCH_MAX_RESPONSE_BYTES: u64 = 750_000;
/// The smallest response size cap (smaller values are raised to it).
pub const MIN_FETCH_MAX_RESPONSE_BYTES: u64 = 32_000;
/// The largest response size cap (larger values are lowered to it).
pub const MAX_FETCH_MAX_RESPONSE_BYTES: u64 = 10_000_000;
/// `web_fetch`'s default timeout in seconds.
pub const DEFAULT_FETCH_TIMEOUT_SECONDS: u64 = 30;
/// `web_fetch`'s default cache TTL in minutes.
pub const DEFAULT_FETCH_CACHE_TTL_MINUTES: u64 = 15;
/// The default number of redirects `web_fetch` follows.
pub const DEFAULT_MAX_REDIRECTS: u32 = 3;
/// `web_search`'s default cache TTL in minutes.
pub const DEFAULT_SEARCH_CACHE_TTL_MINUTES: u64 = 30;
/// `web_search`'s default timeout in seconds.
pub const DEFAULT_SEARCH_TIMEOUT_SECONDS: u64 = 30;
/// `web_search`'s default result count.
pub const DEFAULT_SEARCH_COUNT: u32 = 5;
/// `web_search`'s largest result count.
pub const MAX_SEARCH_COUNT: u32 = 10;

/// `tools.web`: both web tools.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct WebToolsConfig {
    /// `tools.web.fetch`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fetch: Option<WebFetchConfig>,
    /// `tools.web.search`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub search: Option<WebSearchConfig>,
}

/// `tools.web.fetch`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct WebFetchConfig {
    /// Whether the tool is offered (default true).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enabled: Option<bool>,
    /// Default `maxChars` when the call gives none (default 20 000).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_chars: Option<u64>,
    /// Upper bound on the `maxChars` a call may ask for (default: no bound
    /// beyond the response cap).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_chars_cap: Option<u64>,
    /// Response body cap in bytes (default 750 000; clamped to
    /// 32 000–10 000 000). The body beyond it is not read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_response_bytes: Option<u64>,
    /// Timeout of the whole fetch, redirects included (default 30).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_seconds: Option<u64>,
    /// How long a fetched page is reused (default 15; 0 turns the cache
    /// off).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_ttl_minutes: Option<u64>,
    /// Redirects followed, each re-checked against the SSRF rules
    /// (default 3).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_redirects: Option<u32>,
    /// The `User-Agent` header sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user_agent: Option<String>,
    /// Prefer the page's main content (`<main>`, `<article>`) over the
    /// whole body (default true).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub readability: Option<bool>,
    /// Talon: hosts and networks `web_fetch` (and a local sandbox's egress
    /// proxy) may reach although they are private or special-use. Empty
    /// means none (never "all"); cloud metadata endpoints stay refused
    /// whatever it lists.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ssrf_allowlist: Option<SsrfAllowlistConfig>,
}

impl WebFetchConfig {
    /// Whether `web_fetch` is offered (`enabled`, default true).
    pub fn is_enabled(&self) -> bool {
        self.enabled.unwrap_or(true)
    }
}

impl WebSearchConfig {
    /// Whether `web_search` is offered (`enabled`, default true).
    pub fn is_enabled(&self) -> bool {
        self.enabled.unwrap_or(true)
    }
}

/// `tools.web.fetch.ssrfAllowlist`: defined beside the guard that reads it
/// (`talon-egress`, a leaf crate of plain data and the SSRF rules), so
/// `web_fetch` and the local sandbox's egress proxy share one type.
pub use talon_egress::SsrfAllowlistConfig;

/// `tools.web.search`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct WebSearchConfig {
    /// Whether the tool is offered (default true).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enabled: Option<bool>,
    /// `brave`, `perplexity`, `grok`, `gemini` or `kimi` (default: the
    /// first one with a key, else `brave`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider: Option<String>,
    /// The Brave Search API key (OpenClaw's historical location).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_key: Option<String>,
    /// Default result count (1–10, default 5).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_results: Option<u32>,
    /// Timeout of one provider call (default 30).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_seconds: Option<u64>,
    /// How long a result is reused (default 30; 0 turns the cache off).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_ttl_minutes: Option<u64>,
    /// Brave settings.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub brave: Option<SearchProviderConfig>,
    /// Perplexity settings (direct or through OpenRouter).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub perplexity: Option<SearchProviderConfig>,
    /// xAI Grok settings.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grok: Option<SearchProviderConfig>,
    /// Google Gemini settings.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gemini: Option<SearchProviderConfig>,
    /// Moonshot Kimi settings.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kimi: Option<SearchProviderConfig>,
    /// Talon: hosts and networks a provider `baseUrl` may reach although
    /// they are private or special-use (a self-hosted, compatible
    /// endpoint), in the same form as `tools.web.fetch.ssrfAllowlist`.
    /// Empty means none (never "all"); cloud metadata endpoints stay
    /// refused whatever it lists.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ssrf_allowlist: Option<SsrfAllowlistConfig>,
}

/// One search provider's block.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SearchProviderConfig {
    /// The provider's API key (else its environment variable).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_key: Option<String>,
    /// The API base URL (for a self-hosted or compatible endpoint).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_url: Option<String>,
    /// The model (Perplexity, Grok, Gemini, Kimi).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
}
