//! The web tools: `web_fetch` (behind the SSRF guard) and `web_search`.

pub(crate) mod cache;
pub(crate) mod config;
pub(crate) mod error;
pub(crate) mod extract;
pub(crate) mod fetch;
pub(crate) mod freshness;
pub(crate) mod providers;
pub(crate) mod resolve;
pub(crate) mod search;
pub(crate) mod ssrf;

pub use self::config::{
    DEFAULT_FETCH_CACHE_TTL_MINUTES, DEFAULT_FETCH_MAX_CHARS, DEFAULT_FETCH_MAX_RESPONSE_BYTES,
    DEFAULT_FETCH_TIMEOUT_SECONDS, DEFAULT_MAX_REDIRECTS, DEFAULT_SEARCH_CACHE_TTL_MINUTES,
    DEFAULT_SEARCH_COUNT, DEFAULT_SEARCH_TIMEOUT_SECONDS, MAX_FETCH_MAX_RESPONSE_BYTES,
    MAX_SEARCH_COUNT, MIN_FETCH_MAX_RESPONSE_BYTES, SearchProviderConfig, SsrfAllowlistConfig,
    WebFetchConfig, WebSearchConfig, WebToolsConfig,
};
pub use self::error::WebError;
pub use self::fetch::WebFetchTool;
pub use self::freshness::Freshness;
pub use self::providers::{
    BraveProvider, ChatSearchProvider, GeminiProvider, GrokProvider, SearchProvider, SearchRequest,
};
pub use self::resolve::{HostResolver, StaticResolver, SystemResolver};
pub use self::search::{EnvLookup, SEARCH_PROVIDERS, WebSearchTool, normalize_cache_key};
pub use self::ssrf::{
    HostLiteral, IpBlock, SSRF_BLOCKED_CODE, SsrfBlocked, SsrfPolicy, classify_ip,
    is_blocked_hostname, normalize_hostname, parse_host_literal,
};
