//! The web tools: `web_fetch` (behind the SSRF guard) and `web_search`.
//!
//! Both reach the network only through `talon-egress`'s guarded client
//! (`EgressGuard::http_client`): every URL passes [`SsrfPolicy::check_url`],
//! host names are resolved by a [`HostResolver`] and every address is
//! vetted before the client may connect, and the client connects only to
//! vetted addresses (DNS pinning). Proxy environment variables are
//! ignored. A refusal is a tool error (`web.ssrf_blocked`, or
//! `web.metadata_blocked` for a cloud metadata endpoint, which no opt-in
//! opens) whose message starts with the egress code ([`SSRF_BLOCKED_CODE`]
//! or [`METADATA_BLOCKED_CODE`]) and names the key that opts in.
//!
//! - [`WebFetchTool`] GETs one http(s) URL, re-checking every redirect hop;
//!   `tools.web.fetch.ssrfAllowlist` opens private destinations.
//! - [`WebSearchTool`] asks one [`SearchProvider`] (Brave, Perplexity,
//!   Grok, Gemini, Kimi) and caches the answer for 30 minutes. A provider's
//!   `baseUrl` is vetted like any URL (refused at build when it is a
//!   private literal, at call time when its name resolves privately);
//!   `tools.web.search.ssrfAllowlist` opens a self-hosted endpoint.
//! - [`WebFetchConfig`] / [`WebSearchConfig`] are the `tools.web.fetch` /
//!   `tools.web.search` config blocks (OpenClaw's key names).
//!
//! ```
//! use talon_tools::web::{SsrfAllowlistConfig, SsrfPolicy, WebFetchConfig, WebFetchTool};
//! use url::Url;
//!
//! let strict = SsrfPolicy::strict();
//! let blocked = strict.check_url(&Url::parse("http://0x7f.1/").unwrap()).unwrap_err();
//! assert_eq!(blocked.code(), "ssrf_blocked");
//! assert!(blocked.reason.contains("127.0.0.1 is loopback"));
//!
//! // The operator opens a loopback service explicitly.
//! let config = WebFetchConfig {
//!     ssrf_allowlist: Some(SsrfAllowlistConfig {
//!         hosts: vec![],
//!         cidrs: vec!["127.0.0.1/32".into()],
//!     }),
//!     ..WebFetchConfig::default()
//! };
//! let tool = WebFetchTool::new(&config).unwrap();
//! assert!(tool.policy().check_url(&Url::parse("http://127.0.0.1:8080/").unwrap()).is_ok());
//! ```
//!
//! Not done here: JavaScript rendering, PDF or image extraction, Firecrawl fallback, and
//! resolving search-citation redirect URLs.

// Without the `web` feature only the config types, the error type and the
// SSRF policy are here (no HTTP client).
#[cfg(feature = "web")]
pub(crate) mod cache;
pub(crate) mod config;
pub(crate) mod error;
#[cfg(feature = "web")]
pub(crate) mod extract;
#[cfg(feature = "web")]
pub(crate) mod fetch;
pub(crate) mod freshness;
#[cfg(feature = "web")]
pub(crate) mod providers;
#[cfg(feature = "web")]
pub(crate) mod search;

pub use self::config::{
    DEFAULT_FETCH_CACHE_TTL_MINUTES, DEFAULT_FETCH_MAX_CHARS, DEFAULT_FETCH_MAX_RESPONSE_BYTES,
    DEFAULT_FETCH_TIMEOUT_SECONDS, DEFAULT_MAX_REDIRECTS, DEFAULT_SEARCH_CACHE_TTL_MINUTES,
    DEFAULT_SEARCH_COUNT, DEFAULT_SEARCH_TIMEOUT_SECONDS, MAX_FETCH_MAX_RESPONSE_BYTES,
    MAX_SEARCH_COUNT, MIN_FETCH_MAX_RESPONSE_BYTES, SearchProviderConfig, SsrfAllowlistConfig,
    WebFetchConfig, WebSearchConfig, WebToolsConfig,
};
pub use self::error::WebError;
#[cfg(feature = "web")]
pub use self::fetch::WebFetchTool;
pub use self::freshness::Freshness;
#[cfg(feature = "web")]
pub use self::providers::{
    BraveProvider, ChatSearchProvider, GeminiProvider, GrokProvider, SearchProvider, SearchRequest,
};
#[cfg(feature = "web")]
pub use self::search::{EnvLookup, SEARCH_PROVIDERS, WebSearchTool, normalize_cache_key};
pub use talon_egress::{
    BlockKind, HostLiteral, IpBlock, METADATA_BLOCKED_CODE, SSRF_BLOCKED_CODE, SsrfBlocked,
    SsrfPolicy, classify_ip, is_blocked_hostname, normalize_hostname, parse_host_literal,
};
pub use talon_egress::{HostResolver, StaticResolver, SystemResolver};
