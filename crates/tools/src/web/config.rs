//! `tools.web`, typed by `talon-config` (plain data, so the config crate
//! does not depend on `reqwest`) and re-exported here.

pub use talon_config::sections::web::{
    DEFAULT_FETCH_CACHE_TTL_MINUTES, DEFAULT_FETCH_MAX_CHARS, DEFAULT_FETCH_MAX_RESPONSE_BYTES,
    DEFAULT_FETCH_TIMEOUT_SECONDS, DEFAULT_MAX_REDIRECTS, DEFAULT_SEARCH_CACHE_TTL_MINUTES,
    DEFAULT_SEARCH_COUNT, DEFAULT_SEARCH_TIMEOUT_SECONDS, MAX_FETCH_MAX_RESPONSE_BYTES,
    MAX_SEARCH_COUNT, MIN_FETCH_MAX_RESPONSE_BYTES, SearchProviderConfig, SsrfAllowlistConfig,
    WebFetchConfig, WebSearchConfig, WebToolsConfig,
};
