//! `web_search`: one query to the configured provider, cached.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde_json::{Value, json};
use talon_tool_catalog::params::{NumberOpts, StringOpts, read_number, read_string};
use talon_tool_catalog::{
    CancelExt, CancellationToken, Section, Tool, ToolCall, ToolContext, ToolError, ToolErrorCode,
    ToolFamily, ToolResult, ToolSpec, json_result,
};

use crate::web::cache::TtlCache;
use crate::web::config::{
    DEFAULT_SEARCH_CACHE_TTL_MINUTES, DEFAULT_SEARCH_COUNT, DEFAULT_SEARCH_TIMEOUT_SECONDS,
    MAX_SEARCH_COUNT, SearchProviderConfig, WebSearchConfig,
};
use crate::web::error::WebError;
use crate::web::freshness::Freshness;
use crate::web::providers::{
    BraveProvider, ChatSearchProvider, GeminiProvider, GrokProvider, SearchProvider, SearchRequest,
};
use talon_egress::{
    EgressGuard, GuardedClient, HostResolver, HttpOptions, Redirects, SsrfPolicy, SystemResolver,
};

/// How an operator lets a provider `baseUrl` reach a private destination.
const SEARCH_OPT_IN: &str = "add its host to `tools.web.search.ssrfAllowlist.hosts` or its network to `tools.web.search.ssrfAllowlist.cidrs`";

/// The providers, in auto-detection order.
pub const SEARCH_PROVIDERS: [&str; 5] = ["brave", "gemini", "grok", "kimi", "perplexity"];

/// Reads an environment variable; injectable so tests never touch the
/// process environment.
pub type EnvLookup = Arc<dyn Fn(&str) -> Option<String> + Send + Sync>;

/// Where a provider's key may come from: the config keys, then the
/// environment variables, in order.
fn key_sources(provider: &str) -> (&'static [&'static str], &'static [&'static str]) {
    match provider {
        "brave" => (
            &["tools.web.search.brave.apiKey", "tools.web.search.apiKey"],
            &["BRAVE_API_KEY"],
        ),
        "perplexity" => (
            &["tools.web.search.perplexity.apiKey"],
            &["PERPLEXITY_API_KEY", "OPENROUTER_API_KEY"],
        ),
        "grok" => (&["tools.web.search.grok.apiKey"], &["XAI_API_KEY"]),
        "gemini" => (&["tools.web.search.gemini.apiKey"], &["GEMINI_API_KEY"]),
        _ => (
            &["tools.web.search.kimi.apiKey"],
            &["KIMI_API_KEY", "MOONSHOT_API_KEY"],
        ),
    }
}

/// The cache key: query lower-cased and trimmed, the count, then the
/// extras sorted by name (`k=v`), joined with `|`.
pub fn normalize_cache_key(query: &str, count: u32, extras: &BTreeMap<&str, String>) -> String {
    let mut parts = vec![query.trim().to_lowercase(), format!("count={count}")];
    for (k, v) in extras {
        parts.push(format!("{k}={v}"));
    }
    parts.join("|")
}

/// The `web_search` tool.
pub struct WebSearchTool {
    spec: ToolSpec,
    config: WebSearchConfig,
    explicit_provider: Option<&'static str>,
    http: GuardedClient,
    cache: TtlCache<Value>,
    env: EnvLookup,
    timeout: Duration,
    default_count: u32,
}

impl fmt::Debug for WebSearchTool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WebSearchTool")
            .field("provider", &self.explicit_provider)
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

impl WebSearchTool {
    /// The tool, reading keys from the process environment when the config
    /// has none. Checks the provider name and base URLs now (a `baseUrl`
    /// the egress guard refuses by its literal or name is an error naming
    /// its key); a missing key is reported when a search is made.
    pub fn new(config: &WebSearchConfig) -> Result<Self, WebError> {
        Self::with_resolver(config, Arc::new(SystemResolver))
    }

    /// [`WebSearchTool::new`] resolving host names with `resolver` (tests
    /// make a "public" name resolve to a loopback address with a
    /// [`crate::web::StaticResolver`]).
    pub fn with_resolver(
        config: &WebSearchConfig,
        resolver: Arc<dyn HostResolver>,
    ) -> Result<Self, WebError> {
        let explicit_provider = match config.provider.as_deref().map(str::trim) {
            None | Some("") => None,
            Some(p) => {
                let lower = p.to_ascii_lowercase();
                let found = SEARCH_PROVIDERS.iter().find(|id| **id == lower).copied();
                Some(found.ok_or_else(|| {
                    WebError::config(
                        "tools.web.search.provider",
                        format!(
                            "unknown provider `{p}`; use one of {}",
                            SEARCH_PROVIDERS.join(", ")
                        ),
                    )
                })?)
            }
        };
        let policy = match &config.ssrf_allowlist {
            Some(allow) => SsrfPolicy::from_config_at(allow, "tools.web.search.ssrfAllowlist")?,
            None => SsrfPolicy::strict(),
        };
        let guard = EgressGuard::new(Arc::new(policy), resolver).with_opt_in(SEARCH_OPT_IN);
        for id in SEARCH_PROVIDERS {
            if let Some(base) = provider_block(config, id).and_then(|b| b.base_url.as_deref()) {
                let key = format!("tools.web.search.{id}.baseUrl");
                let parsed = url::Url::parse(base)
                    .ok()
                    .filter(|u| matches!(u.scheme(), "http" | "https") && u.has_host())
                    .ok_or_else(|| {
                        WebError::config(key.clone(), format!("`{base}` is not an http(s) URL"))
                    })?;
                guard
                    .check_url(&parsed)
                    .map_err(|blocked| WebError::Blocked { key, blocked })?;
            }
        }
        // No redirects are followed: a provider API answers in place.
        let http = guard
            .http_client(HttpOptions {
                user_agent: Some(concat!("Talon-web_search/", env!("CARGO_PKG_VERSION")).into()),
                redirects: Redirects::None,
                pool_max_idle_per_host: None,
            })
            .map_err(|e| WebError::Client {
                tool: "web_search",
                message: e.to_string(),
            })?;
        let ttl_minutes = config
            .cache_ttl_minutes
            .unwrap_or(DEFAULT_SEARCH_CACHE_TTL_MINUTES);
        let spec = ToolSpec::core("web_search").unwrap_or_else(|| {
            ToolSpec::new(
                "web_search",
                ToolFamily::Core {
                    section: Section::Web,
                },
            )
        });
        let spec = freshness_aware_spec(spec);
        Ok(WebSearchTool {
            spec,
            config: config.clone(),
            explicit_provider,
            http,
            cache: TtlCache::new(Duration::from_secs(ttl_minutes.saturating_mul(60))),
            env: Arc::new(|name: &str| std::env::var(name).ok()),
            timeout: Duration::from_secs(
                config
                    .timeout_seconds
                    .unwrap_or(DEFAULT_SEARCH_TIMEOUT_SECONDS)
                    .max(1),
            ),
            default_count: config
                .max_results
                .unwrap_or(DEFAULT_SEARCH_COUNT)
                .clamp(1, MAX_SEARCH_COUNT),
        })
    }

    /// Builder: read environment variables through `env` instead of the
    /// process environment.
    pub fn with_env(
        mut self,
        env: impl Fn(&str) -> Option<String> + Send + Sync + 'static,
    ) -> Self {
        self.env = Arc::new(env);
        self
    }

    /// Builder: a provider-call timeout finer than `timeoutSeconds`.
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    fn key_of(&self, id: &str) -> Option<String> {
        let block = provider_block(&self.config, id).and_then(|b| b.api_key.clone());
        let top = if id == "brave" {
            self.config.api_key.clone()
        } else {
            None
        };
        let from_env = || key_sources(id).1.iter().find_map(|name| (self.env)(name));
        block
            .or(top)
            .filter(|k| !k.trim().is_empty())
            .or_else(|| from_env().filter(|k| !k.trim().is_empty()))
            .map(|k| k.trim().to_owned())
    }

    /// The provider this search uses: the configured one, else the first
    /// with a key, else Brave. A missing key is an error naming the config
    /// keys and environment variables that would supply it.
    pub fn resolve_provider(&self) -> Result<Box<dyn SearchProvider>, ToolError> {
        let id = self.explicit_provider.unwrap_or_else(|| {
            SEARCH_PROVIDERS
                .iter()
                .copied()
                .find(|id| self.key_of(id).is_some())
                .unwrap_or("brave")
        });
        let Some(key) = self.key_of(id) else {
            let (config_keys, env_vars) = key_sources(id);
            return Err(ToolError::new(
                ToolErrorCode::WebMissingApiKey,
                format!(
                    "web_search ({id}) needs an API key: set {} in the config, or the {} environment variable",
                    config_keys.join(" or "),
                    env_vars.join(" or ")
                ),
            ));
        };
        let block = provider_block(&self.config, id)
            .cloned()
            .unwrap_or_default();
        let provider: Box<dyn SearchProvider> = match id {
            "brave" => Box::new(BraveProvider::new(key, block.base_url)),
            "perplexity" => {
                // A key from OPENROUTER_API_KEY goes to OpenRouter even
                // when it lacks the `sk-or-` prefix.
                let via_env_openrouter = block.api_key.is_none()
                    && (self.env)("PERPLEXITY_API_KEY").is_none()
                    && block.base_url.is_none();
                let base = if via_env_openrouter {
                    Some(ChatSearchProvider::OPENROUTER_BASE_URL.to_owned())
                } else {
                    block.base_url
                };
                Box::new(ChatSearchProvider::perplexity(key, base, block.model))
            }
            "grok" => Box::new(GrokProvider::new(key, block.base_url, block.model)),
            "gemini" => Box::new(GeminiProvider::new(key, block.base_url, block.model)),
            _ => Box::new(ChatSearchProvider::kimi(key, block.base_url, block.model)),
        };
        Ok(provider)
    }

    fn read_request(&self, call: &ToolCall) -> Result<SearchRequest, ToolError> {
        let query = read_string(&call.params, "query", StringOpts::required())?.unwrap_or_default();
        let count = read_number(
            &call.params,
            "count",
            NumberOpts {
                integer: true,
                ..NumberOpts::default()
            },
        )?
        .map_or(self.default_count, |n| {
            n.clamp(1.0, f64::from(MAX_SEARCH_COUNT)) as u32
        });
        let country = read_string(&call.params, "country", StringOpts::default())?;
        let language = read_string(&call.params, "language", StringOpts::default())?;
        let freshness_raw = read_string(&call.params, "freshness", StringOpts::default())?;
        let after = read_string(&call.params, "date_after", StringOpts::default())?;
        let before = read_string(&call.params, "date_before", StringOpts::default())?;
        let freshness = match (freshness_raw, after, before) {
            (Some(_), Some(_), _) | (Some(_), _, Some(_)) => {
                return Err(ToolError::input(
                    "freshness",
                    "freshness cannot be combined with date_after/date_before; use one or the other",
                ));
            }
            (Some(f), None, None) => Some(Freshness::parse(&f)?),
            (None, None, None) => None,
            (None, after, before) => {
                let start = after.unwrap_or_else(|| "1970-01-01".to_owned());
                let end = before.unwrap_or_else(today);
                let param = "date_after";
                Some(Freshness::range(&start, &end).map_err(|e| e.with_param(param))?)
            }
        };
        Ok(SearchRequest {
            query,
            count,
            country,
            language,
            freshness,
        })
    }
}

fn provider_block<'a>(config: &'a WebSearchConfig, id: &str) -> Option<&'a SearchProviderConfig> {
    match id {
        "brave" => config.brave.as_ref(),
        "perplexity" => config.perplexity.as_ref(),
        "grok" => config.grok.as_ref(),
        "gemini" => config.gemini.as_ref(),
        "kimi" => config.kimi.as_ref(),
        _ => None,
    }
}

/// The catalog schema, with `freshness` describing what is accepted.
fn freshness_aware_spec(mut spec: ToolSpec) -> ToolSpec {
    if let Some(f) = spec.parameters.pointer_mut("/properties/freshness")
        && let Value::Object(map) = f
    {
        map.insert(
            "description".into(),
            Value::String(
                "Recency filter: pd, pw, pm, py (past day, week, month, year) or a range YYYY-MM-DDtoYYYY-MM-DD; not combined with date_after/date_before."
                    .into(),
            ),
        );
    }
    spec
}

/// Today's date (UTC) as `YYYY-MM-DD`.
fn today() -> String {
    let secs = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let days = i64::try_from(secs / 86_400).unwrap_or(0);
    // Civil date from days since 1970-01-01 (proleptic Gregorian).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}-{m:02}-{d:02}")
}

#[async_trait::async_trait]
impl Tool for WebSearchTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    async fn execute(
        &self,
        call: &ToolCall,
        _ctx: &ToolContext,
        abort: &CancellationToken,
    ) -> Result<ToolResult, ToolError> {
        abort.check()?;
        let started = Instant::now();
        let req = self.read_request(call)?;
        let provider = self.resolve_provider()?;
        provider.check(&req)?;
        let mut extras = BTreeMap::new();
        extras.insert("provider", provider.id().to_owned());
        if let Some(m) = provider.model() {
            extras.insert("model", m.to_owned());
        }
        if let Some(c) = &req.country {
            extras.insert("country", c.to_ascii_lowercase());
        }
        if let Some(l) = &req.language {
            extras.insert("language", l.to_ascii_lowercase());
        }
        if let Some(f) = &req.freshness {
            extras.insert("freshness", f.as_param());
        }
        let key = normalize_cache_key(&req.query, req.count, &extras);
        if let Some(mut hit) = self.cache.get(&key) {
            if let Value::Object(map) = &mut hit {
                map.insert("cached".into(), Value::Bool(true));
            }
            return Ok(json_result(hit));
        }
        let search = tokio::time::timeout(self.timeout, provider.search(&self.http, &req));
        let found = tokio::select! {
            () = abort.cancelled() => {
                return Err(abort.abort_error());
            }
            outcome = search => outcome.map_err(|_| {
                ToolError::new(ToolErrorCode::WebTimeout, format!(
                    "web_search ({}) timed out after {} ms",
                    provider.id(),
                    self.timeout.as_millis()
                ))
            })??,
        };
        let mut payload = json!({ "query": req.query });
        if let (Value::Object(out), Value::Object(found)) = (&mut payload, found) {
            out.extend(found);
            out.insert(
                "tookMs".into(),
                json!(u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX)),
            );
            out.insert(
                "externalContent".into(),
                json!({ "untrusted": true, "source": "web_search", "provider": provider.id() }),
            );
        }
        let payload = match payload {
            Value::Object(map) => {
                Value::Object(map.into_iter().filter(|(_, v)| !v.is_null()).collect())
            }
            other => other,
        };
        self.cache.put(key, payload.clone());
        let mut shown = payload;
        if let Value::Object(map) = &mut shown {
            map.insert("cached".into(), Value::Bool(false));
        }
        Ok(json_result(shown))
    }
}
