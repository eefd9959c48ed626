//! `web_fetch`: GET one http(s) URL through the SSRF guard and return its
//! readable content.

use std::sync::Arc;
use std::time::{Duration, Instant};

use reqwest::header::{ACCEPT, CONTENT_TYPE, LOCATION};
use serde_json::{Value, json};
use talon_tool_catalog::params::{NumberOpts, StringOpts, read_number, read_string};
use talon_tool_catalog::{
    CancelExt, CancellationToken, Section, Tool, ToolCall, ToolContext, ToolError, ToolErrorCode,
    ToolFamily, ToolResult, ToolSpec, json_result,
};
use url::Url;

use crate::web::cache::TtlCache;
use crate::web::config::{
    DEFAULT_FETCH_CACHE_TTL_MINUTES, DEFAULT_FETCH_MAX_CHARS, DEFAULT_FETCH_MAX_RESPONSE_BYTES,
    DEFAULT_FETCH_TIMEOUT_SECONDS, DEFAULT_MAX_REDIRECTS, MAX_FETCH_MAX_RESPONSE_BYTES,
    MIN_FETCH_MAX_RESPONSE_BYTES, WebFetchConfig,
};
use crate::web::error::{WebError, egress_refusal};
use crate::web::extract::{
    BodyKind, decode_body, html_to_markdown, markdown_to_text, pretty_json, truncate_chars,
};
use talon_egress::{
    EgressGuard, GuardedClient, HostResolver, HttpOptions, Redirects, SsrfBlocked, SsrfPolicy,
    SystemResolver, blocked_in,
};

/// How an operator lets `web_fetch` reach a private destination.
const FETCH_OPT_IN: &str = "add its host to `tools.web.fetch.ssrfAllowlist.hosts` or its network to `tools.web.fetch.ssrfAllowlist.cidrs`";

/// The smallest `maxChars` a call gets.
const MIN_MAX_CHARS: usize = 100;
/// Error bodies: bytes read and characters shown.
const ERROR_BODY_BYTES: usize = 64_000;
const ERROR_BODY_CHARS: usize = 4_000;
const DEFAULT_USER_AGENT: &str = concat!(
    "Mozilla/5.0 (compatible; Talon-web_fetch/",
    env!("CARGO_PKG_VERSION"),
    ")"
);
const UNTRUSTED_OPEN: &str = "<<<EXTERNAL_UNTRUSTED_CONTENT source=\"web_fetch\">>>";
const UNTRUSTED_CLOSE: &str = "<<<END_EXTERNAL_UNTRUSTED_CONTENT>>>";

/// The two `extractMode`s.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ExtractMode {
    Markdown,
    Text,
}

impl ExtractMode {
    fn as_str(self) -> &'static str {
        match self {
            ExtractMode::Markdown => "markdown",
            ExtractMode::Text => "text",
        }
    }
}

/// A page as cached: everything but the `maxChars` cut.
#[derive(Debug, Clone)]
struct Page {
    final_url: String,
    status: u16,
    content_type: Option<String>,
    title: Option<String>,
    extractor: &'static str,
    text: String,
    bytes_truncated: bool,
}

/// The `web_fetch` tool.
#[derive(Debug)]
pub struct WebFetchTool {
    spec: ToolSpec,
    client: GuardedClient,
    cache: TtlCache<Page>,
    max_chars: usize,
    max_chars_cap: Option<usize>,
    max_response_bytes: usize,
    timeout: Duration,
    max_redirects: u32,
    readability: bool,
}

impl WebFetchTool {
    /// The tool with the system resolver.
    pub fn new(config: &WebFetchConfig) -> Result<Self, WebError> {
        Self::with_resolver(config, Arc::new(SystemResolver))
    }

    /// The tool with `resolver` for host names (tests use a
    /// [`crate::web::StaticResolver`] to make a "public" name resolve to a
    /// loopback address).
    pub fn with_resolver(
        config: &WebFetchConfig,
        resolver: Arc<dyn HostResolver>,
    ) -> Result<Self, WebError> {
        let policy = Arc::new(match &config.ssrf_allowlist {
            Some(allow) => SsrfPolicy::from_config(allow)?,
            None => SsrfPolicy::strict(),
        });
        let guard = EgressGuard::new(policy, resolver).with_opt_in(FETCH_OPT_IN);
        let user_agent = config
            .user_agent
            .clone()
            .filter(|u| !u.trim().is_empty())
            .unwrap_or_else(|| DEFAULT_USER_AGENT.to_owned());
        // Redirects are followed here, hop by hop, each through the guard.
        let client = guard
            .http_client(HttpOptions {
                user_agent: Some(user_agent),
                redirects: Redirects::None,
                pool_max_idle_per_host: None,
            })
            .map_err(|e| WebError::Client {
                tool: "web_fetch",
                message: e.to_string(),
            })?;
        let max_response_bytes = config
            .max_response_bytes
            .unwrap_or(DEFAULT_FETCH_MAX_RESPONSE_BYTES)
            .clamp(MIN_FETCH_MAX_RESPONSE_BYTES, MAX_FETCH_MAX_RESPONSE_BYTES);
        let max_chars = config
            .max_chars
            .map_or(DEFAULT_FETCH_MAX_CHARS, to_usize)
            .max(MIN_MAX_CHARS);
        let ttl_minutes = config
            .cache_ttl_minutes
            .unwrap_or(DEFAULT_FETCH_CACHE_TTL_MINUTES);
        let spec = ToolSpec::core("web_fetch").unwrap_or_else(|| {
            ToolSpec::new(
                "web_fetch",
                ToolFamily::Core {
                    section: Section::Web,
                },
            )
        });
        Ok(WebFetchTool {
            spec,
            client,
            cache: TtlCache::new(Duration::from_secs(ttl_minutes.saturating_mul(60))),
            max_chars,
            max_chars_cap: config.max_chars_cap.map(|c| to_usize(c).max(MIN_MAX_CHARS)),
            max_response_bytes: to_usize(max_response_bytes),
            timeout: Duration::from_secs(
                config
                    .timeout_seconds
                    .unwrap_or(DEFAULT_FETCH_TIMEOUT_SECONDS)
                    .max(1),
            ),
            max_redirects: config.max_redirects.unwrap_or(DEFAULT_MAX_REDIRECTS),
            readability: config.readability.unwrap_or(true),
        })
    }

    /// Builder: a timeout finer than `timeoutSeconds` (for the whole
    /// fetch, redirects included).
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// The compiled SSRF policy.
    pub fn policy(&self) -> &SsrfPolicy {
        self.client.guard().policy()
    }

    fn read_params(&self, call: &ToolCall) -> Result<(Url, ExtractMode, usize), ToolError> {
        let raw = read_string(&call.params, "url", StringOpts::required())?.unwrap_or_default();
        let url = Url::parse(&raw).map_err(|e| {
            ToolError::input(
                "url",
                format!("url must be an absolute http(s) URL like https://example.com/page ({e})"),
            )
        })?;
        let mode = match read_string(&call.params, "extractMode", StringOpts::default())?
            .map(|m| m.to_ascii_lowercase())
            .as_deref()
        {
            None | Some("markdown") => ExtractMode::Markdown,
            Some("text") => ExtractMode::Text,
            Some(other) => {
                return Err(ToolError::input(
                    "extractMode",
                    format!("extractMode must be \"markdown\" or \"text\", got {other:?}"),
                ));
            }
        };
        let requested = read_number(
            &call.params,
            "maxChars",
            NumberOpts {
                integer: true,
                ..NumberOpts::default()
            },
        )?;
        let max_chars = match requested {
            None => self.max_chars,
            Some(n) if n < 1.0 => {
                return Err(ToolError::input(
                    "maxChars",
                    format!("maxChars must be a positive integer (at least {MIN_MAX_CHARS})"),
                ));
            }
            Some(n) => (n as usize).max(MIN_MAX_CHARS),
        };
        let max_chars = match self.max_chars_cap {
            Some(cap) => max_chars.min(cap),
            None => max_chars,
        };
        Ok((url, mode, max_chars))
    }

    async fn fetch_page(&self, url: &Url, mode: ExtractMode) -> Result<Page, ToolError> {
        let mut current = url.clone();
        let mut hops = 0u32;
        let response = loop {
            let response = self
                .client
                .get(current.clone())
                .map_err(ssrf_error)?
                .header(
                    ACCEPT,
                    "text/markdown, text/html;q=0.9, application/json;q=0.8, */*;q=0.1",
                )
                .send()
                .await
                .map_err(|e| request_error(&e, &current))?;
            let location = response
                .headers()
                .get(LOCATION)
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned);
            match location {
                Some(loc) if response.status().is_redirection() => {
                    if hops >= self.max_redirects {
                        return Err(ToolError::new(
                            ToolErrorCode::WebRedirect,
                            format!(
                                "Too many redirects (limit: {}) fetching {url}",
                                self.max_redirects
                            ),
                        ));
                    }
                    let next = current.join(&loc).map_err(|e| {
                        ToolError::new(
                            ToolErrorCode::WebRedirect,
                            format!("{current} redirected to an invalid location {loc:?}: {e}"),
                        )
                    })?;
                    // Hosts only: a URL's query may carry a token.
                    tracing::debug!(
                        from = current.host_str().unwrap_or_default(),
                        to = next.host_str().unwrap_or_default(),
                        hop = hops + 1,
                        "web_fetch: following redirect"
                    );
                    hops += 1;
                    current = next;
                }
                _ => break response,
            }
        };
        let status = response.status();
        let content_type = response
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        if status.is_client_error() || status.is_server_error() {
            let (body, _) = read_capped(response, ERROR_BODY_BYTES, &current).await?;
            let text = decode_body(content_type.as_deref(), &body);
            let readable = match BodyKind::detect(content_type.as_deref(), &body) {
                Ok(BodyKind::Html) => markdown_to_text(&html_to_markdown(&text, true).markdown),
                _ => text,
            };
            let (snippet, _) = truncate_chars(readable.trim(), ERROR_BODY_CHARS);
            return Err(ToolError::new(
                ToolErrorCode::WebHttpStatus,
                format!("web_fetch failed ({status}) for {current}: {snippet}"),
            )
            .with_detail("status", status.as_u16()));
        }
        let (body, bytes_truncated) =
            read_capped(response, self.max_response_bytes, &current).await?;
        let kind = BodyKind::detect(content_type.as_deref(), &body).map_err(|media| {
            ToolError::new(ToolErrorCode::WebUnsupportedContent, format!(
                "web_fetch cannot read `{media}` content from {current}; it reads HTML, JSON and text only"
            ))
        })?;
        let raw = decode_body(content_type.as_deref(), &body);
        let (title, extractor, text) = match kind {
            BodyKind::Html => {
                let page = html_to_markdown(&raw, self.readability);
                let text = match mode {
                    ExtractMode::Markdown => page.markdown,
                    ExtractMode::Text => markdown_to_text(&page.markdown),
                };
                (page.title, page.extractor, text)
            }
            BodyKind::Json if !bytes_truncated => (None, "json", pretty_json(&raw)),
            BodyKind::Json | BodyKind::Text => (None, "raw", raw),
        };
        Ok(Page {
            final_url: current.to_string(),
            status: status.as_u16(),
            content_type,
            title,
            extractor,
            text,
            bytes_truncated,
        })
    }
}

fn to_usize(n: u64) -> usize {
    usize::try_from(n).unwrap_or(usize::MAX)
}

fn ssrf_error(blocked: SsrfBlocked) -> ToolError {
    egress_refusal("web_fetch", blocked)
}

fn request_error(err: &reqwest::Error, url: &Url) -> ToolError {
    if let Some(blocked) = blocked_in(err) {
        return ssrf_error(SsrfBlocked {
            url: url.to_string(),
            ..blocked
        });
    }
    let mut chain = Vec::new();
    let mut source = std::error::Error::source(err);
    while let Some(e) = source {
        chain.push(e.to_string());
        source = e.source();
    }
    let detail = if chain.is_empty() {
        err.to_string()
    } else {
        format!("{err}: {}", chain.join(": "))
    };
    let code = if err.is_timeout() {
        ToolErrorCode::WebTimeout
    } else {
        ToolErrorCode::WebRequestFailed
    };
    ToolError::new(code, format!("web_fetch could not fetch {url}: {detail}"))
}

/// Read at most `cap` bytes of the body; `true` when there was more.
async fn read_capped(
    mut response: reqwest::Response,
    cap: usize,
    url: &Url,
) -> Result<(Vec<u8>, bool), ToolError> {
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(|e| request_error(&e, url))? {
        let room = cap.saturating_sub(body.len());
        if chunk.len() > room {
            body.extend_from_slice(&chunk[..room]);
            return Ok((body, true));
        }
        body.extend_from_slice(&chunk);
    }
    Ok((body, false))
}

#[async_trait::async_trait]
impl Tool for WebFetchTool {
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
        let (url, mode, max_chars) = self.read_params(call)?;
        self.client.guard().check_url(&url).map_err(ssrf_error)?;
        let key = format!("{}|{}", mode.as_str(), url);
        let (page, cached) = match self.cache.get(&key) {
            Some(page) => (page, true),
            None => {
                let fetch = tokio::time::timeout(self.timeout, self.fetch_page(&url, mode));
                let page = tokio::select! {
                    () = abort.cancelled() => {
                        return Err(abort.abort_error());
                    }
                    outcome = fetch => outcome.map_err(|_| {
                        ToolError::new(ToolErrorCode::WebTimeout, format!(
                            "web_fetch timed out after {} ms fetching {url}",
                            self.timeout.as_millis()
                        ))
                    })??,
                };
                self.cache.put(key, page.clone());
                (page, false)
            }
        };
        let (text, chars_truncated) = truncate_chars(&page.text, max_chars);
        let length = text.chars().count();
        let payload = json!({
            "url": url.as_str(),
            "finalUrl": page.final_url,
            "status": page.status,
            "contentType": page.content_type,
            "title": page.title,
            "extractMode": mode.as_str(),
            "extractor": page.extractor,
            "truncated": chars_truncated || page.bytes_truncated,
            "bytesTruncated": page.bytes_truncated,
            "length": length,
            "rawLength": page.text.chars().count(),
            "cached": cached,
            "tookMs": u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
            "externalContent": { "untrusted": true, "source": "web_fetch" },
            "text": format!("{UNTRUSTED_OPEN}\n{text}\n{UNTRUSTED_CLOSE}"),
        });
        Ok(json_result(strip_nulls(payload)))
    }
}

fn strip_nulls(v: Value) -> Value {
    match v {
        Value::Object(map) => {
            Value::Object(map.into_iter().filter(|(_, v)| !v.is_null()).collect())
        }
        other => other,
    }
}
