//! The `web_search` providers OpenClaw supports — Brave, Perplexity, Grok,
//! Gemini, Kimi — behind one [`SearchProvider`] trait. Each speaks its
//! API's request and response format; base URLs are configurable.

use std::fmt;

use serde_json::{Map, Value, json};
use talon_egress::{GuardedClient, blocked_in};
use talon_tool_catalog::{ToolError, ToolErrorCode};

use crate::web::error::egress_refusal;
use crate::web::freshness::Freshness;

/// One search, after validation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SearchRequest {
    /// The query as the model wrote it (trimmed).
    pub query: String,
    /// Results wanted (1–10).
    pub count: u32,
    /// Two-letter country code (Brave only).
    pub country: Option<String>,
    /// Language code (Brave only).
    pub language: Option<String>,
    /// Recency filter.
    pub freshness: Option<Freshness>,
}

/// A search backend.
#[async_trait::async_trait]
pub trait SearchProvider: Send + Sync + fmt::Debug {
    /// `brave`, `perplexity`, `grok`, `gemini` or `kimi`.
    fn id(&self) -> &'static str;

    /// The model used, for providers that answer with one.
    fn model(&self) -> Option<&str> {
        None
    }

    /// Refuse options this provider cannot honour (the message names the
    /// option and the provider).
    fn check(&self, req: &SearchRequest) -> Result<(), ToolError> {
        default_check(self.id(), req)
    }

    /// Run the search through `http`, the guarded client (it reaches only
    /// what the egress guard vetted); the payload is what the model sees.
    async fn search(&self, http: &GuardedClient, req: &SearchRequest) -> Result<Value, ToolError>;
}

/// The HTTP part every provider shares: send, read a bounded body, turn a
/// non-2xx status into a message with the API's own words (never the key).
async fn send_json(provider: &str, request: reqwest::RequestBuilder) -> Result<Value, ToolError> {
    let response = request
        .send()
        .await
        .map_err(|e| request_failed(provider, "request", &e))?;
    let status = response.status();
    let mut response = response;
    let mut body = Vec::new();
    while let Some(chunk) = response
        .chunk()
        .await
        .map_err(|e| request_failed(provider, "response", &e))?
    {
        body.extend_from_slice(&chunk);
        if body.len() > 4_000_000 {
            return Err(provider_failed(format!(
                "{provider} search response exceeds 4 MB"
            )));
        }
    }
    if !status.is_success() {
        let text = String::from_utf8_lossy(&body);
        let snippet: String = text.trim().chars().take(4_000).collect();
        return Err(ToolError::new(
            ToolErrorCode::WebHttpStatus,
            format!("{provider} search API error ({status}): {snippet}"),
        )
        .with_detail("status", status.as_u16()));
    }
    serde_json::from_slice(&body)
        .map_err(|e| provider_failed(format!("{provider} search API returned invalid JSON: {e}")))
}

/// A request to `url` through the guarded client: a URL the egress guard
/// refuses fails here, before anything is sent (the API key included).
fn guarded_request(
    http: &GuardedClient,
    method: reqwest::Method,
    provider: &str,
    url: &str,
) -> Result<reqwest::RequestBuilder, ToolError> {
    let parsed = url::Url::parse(url)
        .map_err(|e| provider_failed(format!("{provider} base URL {url:?} is not a URL: {e}")))?;
    http.request(method, parsed)
        .map_err(|b| egress_refusal("web_search", b))
}

/// A provider answer that cannot be used.
fn provider_failed(message: impl Into<String>) -> ToolError {
    ToolError::new(ToolErrorCode::WebProviderFailed, message)
}

/// A request that could not be sent or read (`web.timeout` when the
/// client's deadline passed).
fn request_failed(provider: &str, what: &str, e: &reqwest::Error) -> ToolError {
    if let Some(blocked) = blocked_in(e) {
        return egress_refusal("web_search", blocked);
    }
    let code = if e.is_timeout() {
        ToolErrorCode::WebTimeout
    } else {
        ToolErrorCode::WebRequestFailed
    };
    ToolError::new(
        code,
        format!("{provider} search {what} failed: {}", error_chain(e)),
    )
}

fn error_chain(err: &reqwest::Error) -> String {
    let mut out = err.to_string();
    let mut source = std::error::Error::source(err);
    while let Some(e) = source {
        out.push_str(": ");
        out.push_str(&e.to_string());
        source = e.source();
    }
    out
}

fn join_url(base: &str, path: &str) -> String {
    format!(
        "{}/{}",
        base.trim_end_matches('/'),
        path.trim_start_matches('/')
    )
}

fn str_at<'a>(v: &'a Value, path: &[&str]) -> Option<&'a str> {
    let mut cur = v;
    for key in path {
        cur = cur.get(key)?;
    }
    cur.as_str()
}

fn site_name(url: &str) -> Option<String> {
    url::Url::parse(url).ok().and_then(|u| {
        u.host_str()
            .map(|h| h.trim_start_matches("www.").to_owned())
    })
}

fn push_unique(list: &mut Vec<String>, url: &str) {
    if !url.is_empty() && !list.iter().any(|u| u == url) {
        list.push(url.to_owned());
    }
}

/// Brave Search: `GET {base}/res/v1/web/search` with
/// `X-Subscription-Token`.
#[derive(Clone)]
pub struct BraveProvider {
    api_key: String,
    base_url: String,
}

impl fmt::Debug for BraveProvider {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BraveProvider")
            .field("base_url", &self.base_url)
            .finish_non_exhaustive()
    }
}

impl BraveProvider {
    /// The default base URL.
    pub const DEFAULT_BASE_URL: &'static str = "https://api.search.brave.com";

    /// A provider with `api_key`, against `base_url` (or the default).
    pub fn new(api_key: String, base_url: Option<String>) -> Self {
        BraveProvider {
            api_key,
            base_url: base_url.unwrap_or_else(|| Self::DEFAULT_BASE_URL.to_owned()),
        }
    }
}

#[async_trait::async_trait]
impl SearchProvider for BraveProvider {
    fn id(&self) -> &'static str {
        "brave"
    }

    fn check(&self, _req: &SearchRequest) -> Result<(), ToolError> {
        Ok(())
    }

    async fn search(&self, http: &GuardedClient, req: &SearchRequest) -> Result<Value, ToolError> {
        let mut url =
            url::Url::parse(&join_url(&self.base_url, "res/v1/web/search")).map_err(|e| {
                provider_failed(format!(
                    "Brave base URL {:?} is not a URL: {e}",
                    self.base_url
                ))
            })?;
        {
            let mut q = url.query_pairs_mut();
            q.append_pair("q", &req.query);
            q.append_pair("count", &req.count.to_string());
            if let Some(c) = &req.country {
                q.append_pair("country", c);
            }
            if let Some(l) = &req.language {
                q.append_pair("search_lang", l);
            }
            if let Some(f) = &req.freshness {
                q.append_pair("freshness", &f.as_param());
            }
        }
        let request = http
            .get(url)
            .map_err(|b| egress_refusal("web_search", b))?
            .header("Accept", "application/json")
            .header("X-Subscription-Token", &self.api_key);
        let data = send_json("Brave", request).await?;
        let results: Vec<Value> = data
            .pointer("/web/results")
            .and_then(Value::as_array)
            .map(|items| {
                items
                    .iter()
                    .map(|item| {
                        let url = str_at(item, &["url"]).unwrap_or_default();
                        json!({
                            "title": str_at(item, &["title"]).unwrap_or_default(),
                            "url": url,
                            "description": str_at(item, &["description"]).unwrap_or_default(),
                            "published": str_at(item, &["age"]),
                            "siteName": site_name(url),
                        })
                    })
                    .collect()
            })
            .unwrap_or_default();
        Ok(json!({
            "provider": "brave",
            "count": results.len(),
            "results": results,
        }))
    }
}

/// An OpenAI-style chat-completions provider: Perplexity (direct or
/// OpenRouter) and Kimi.
#[derive(Clone)]
pub struct ChatSearchProvider {
    id: &'static str,
    api_key: String,
    base_url: String,
    model: String,
}

impl fmt::Debug for ChatSearchProvider {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ChatSearchProvider")
            .field("id", &self.id)
            .field("base_url", &self.base_url)
            .field("model", &self.model)
            .finish_non_exhaustive()
    }
}

impl ChatSearchProvider {
    /// Perplexity's direct API.
    pub const PERPLEXITY_BASE_URL: &'static str = "https://api.perplexity.ai";
    /// OpenRouter (keys starting `sk-or-`).
    pub const OPENROUTER_BASE_URL: &'static str = "https://openrouter.ai/api/v1";
    /// Moonshot's API.
    pub const KIMI_BASE_URL: &'static str = "https://api.moonshot.ai/v1";

    /// Perplexity: the base URL defaults by key (`pplx-` direct, `sk-or-`
    /// OpenRouter) and so does the model (`sonar-pro` or
    /// `perplexity/sonar-pro`).
    pub fn perplexity(api_key: String, base_url: Option<String>, model: Option<String>) -> Self {
        let via_openrouter = match &base_url {
            Some(b) => b.contains("openrouter"),
            None => api_key.starts_with("sk-or-"),
        };
        let base_url = base_url.unwrap_or_else(|| {
            if via_openrouter {
                Self::OPENROUTER_BASE_URL
            } else {
                Self::PERPLEXITY_BASE_URL
            }
            .to_owned()
        });
        let model = model.unwrap_or_else(|| {
            if via_openrouter {
                "perplexity/sonar-pro"
            } else {
                "sonar-pro"
            }
            .to_owned()
        });
        ChatSearchProvider {
            id: "perplexity",
            api_key,
            base_url,
            model,
        }
    }

    /// Kimi (Moonshot) with its `$web_search` builtin tool; default model
    /// `moonshot-v1-128k`.
    pub fn kimi(api_key: String, base_url: Option<String>, model: Option<String>) -> Self {
        ChatSearchProvider {
            id: "kimi",
            api_key,
            base_url: base_url.unwrap_or_else(|| Self::KIMI_BASE_URL.to_owned()),
            model: model.unwrap_or_else(|| "moonshot-v1-128k".to_owned()),
        }
    }

    async fn perplexity_search(
        &self,
        http: &GuardedClient,
        req: &SearchRequest,
    ) -> Result<Value, ToolError> {
        let mut body = json!({
            "model": self.model,
            "messages": [{ "role": "user", "content": req.query }],
        });
        if let (Some(Freshness::Shortcut(s)), Value::Object(map)) = (&req.freshness, &mut body) {
            let recency = match *s {
                "pd" => "day",
                "pw" => "week",
                "pm" => "month",
                _ => "year",
            };
            map.insert(
                "search_recency_filter".into(),
                Value::String(recency.into()),
            );
        }
        let request = guarded_request(
            http,
            reqwest::Method::POST,
            "Perplexity",
            &join_url(&self.base_url, "chat/completions"),
        )?
        .bearer_auth(&self.api_key)
        .header("HTTP-Referer", "https://talon.invalid")
        .header("X-Title", "Talon web_search")
        .header("Content-Type", "application/json")
        .body(body.to_string());
        let data = send_json("Perplexity", request).await?;
        let content = data
            .pointer("/choices/0/message/content")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let mut citations = Vec::new();
        for c in data
            .get("citations")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            if let Some(u) = c.as_str() {
                push_unique(&mut citations, u);
            }
        }
        Ok(json!({
            "provider": "perplexity",
            "model": self.model,
            "content": content,
            "citations": citations,
        }))
    }

    async fn kimi_search(
        &self,
        http: &GuardedClient,
        req: &SearchRequest,
    ) -> Result<Value, ToolError> {
        let mut messages = vec![json!({ "role": "user", "content": req.query })];
        let tools = json!([{ "type": "builtin_function", "function": { "name": "$web_search" } }]);
        // Kimi answers with a `$web_search` tool call first; echoing its
        // arguments back runs the search. Bounded rounds.
        for _round in 0..3 {
            let body = json!({
                "model": self.model,
                "messages": messages,
                "tools": tools,
            });
            let request = guarded_request(
                http,
                reqwest::Method::POST,
                "Kimi",
                &join_url(&self.base_url, "chat/completions"),
            )?
            .bearer_auth(&self.api_key)
            .header("Content-Type", "application/json")
            .body(body.to_string());
            let data = send_json("Kimi", request).await?;
            let choice = data.pointer("/choices/0").cloned().unwrap_or(Value::Null);
            let message = choice.get("message").cloned().unwrap_or(Value::Null);
            let calls = message
                .get("tool_calls")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default();
            if str_at(&choice, &["finish_reason"]) == Some("tool_calls") && !calls.is_empty() {
                messages.push(message.clone());
                for call in &calls {
                    messages.push(json!({
                        "role": "tool",
                        "tool_call_id": str_at(call, &["id"]).unwrap_or_default(),
                        "name": str_at(call, &["function", "name"]).unwrap_or("$web_search"),
                        "content": str_at(call, &["function", "arguments"]).unwrap_or("{}"),
                    }));
                }
                continue;
            }
            let content = str_at(&message, &["content"]).unwrap_or_default();
            return Ok(json!({
                "provider": "kimi",
                "model": self.model,
                "content": content,
                "citations": Vec::<String>::new(),
            }));
        }
        Err(provider_failed(
            "Kimi kept asking for tool calls after 3 rounds; no answer",
        ))
    }
}

#[async_trait::async_trait]
impl SearchProvider for ChatSearchProvider {
    fn id(&self) -> &'static str {
        self.id
    }

    fn model(&self) -> Option<&str> {
        Some(&self.model)
    }

    fn check(&self, req: &SearchRequest) -> Result<(), ToolError> {
        if self.id == "perplexity" {
            return match &req.freshness {
                Some(Freshness::Range { .. }) => Err(ToolError::input(
                    "freshness",
                    "the perplexity web_search provider accepts freshness pd, pw, pm or py only, not a date range",
                )),
                _ if req.country.is_some() || req.language.is_some() => {
                    Err(ToolError::invalid_arguments(
                        "country and language are not supported by the perplexity web_search provider; omit them",
                    ))
                }
                _ => Ok(()),
            };
        }
        default_check(self.id, req)
    }

    async fn search(&self, http: &GuardedClient, req: &SearchRequest) -> Result<Value, ToolError> {
        if self.id == "kimi" {
            self.kimi_search(http, req).await
        } else {
            self.perplexity_search(http, req).await
        }
    }
}

fn default_check(id: &str, req: &SearchRequest) -> Result<(), ToolError> {
    for (name, given) in [
        ("country", req.country.is_some()),
        ("language", req.language.is_some()),
        ("freshness", req.freshness.is_some()),
    ] {
        if given {
            return Err(ToolError::input(
                name,
                format!("{name} is not supported by the {id} web_search provider; omit it"),
            ));
        }
    }
    Ok(())
}

/// xAI Grok: `POST {base}/responses` with the `web_search` tool.
#[derive(Clone)]
pub struct GrokProvider {
    api_key: String,
    base_url: String,
    model: String,
}

impl fmt::Debug for GrokProvider {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("GrokProvider")
            .field("base_url", &self.base_url)
            .field("model", &self.model)
            .finish_non_exhaustive()
    }
}

impl GrokProvider {
    /// The default base URL.
    pub const DEFAULT_BASE_URL: &'static str = "https://api.x.ai/v1";

    /// Default model `grok-4-1-fast`.
    pub fn new(api_key: String, base_url: Option<String>, model: Option<String>) -> Self {
        GrokProvider {
            api_key,
            base_url: base_url.unwrap_or_else(|| Self::DEFAULT_BASE_URL.to_owned()),
            model: model.unwrap_or_else(|| "grok-4-1-fast".to_owned()),
        }
    }
}

#[async_trait::async_trait]
impl SearchProvider for GrokProvider {
    fn id(&self) -> &'static str {
        "grok"
    }

    fn model(&self) -> Option<&str> {
        Some(&self.model)
    }

    async fn search(&self, http: &GuardedClient, req: &SearchRequest) -> Result<Value, ToolError> {
        let body = json!({
            "model": self.model,
            "input": [{ "role": "user", "content": req.query }],
            "tools": [{ "type": "web_search" }],
        });
        let request = guarded_request(
            http,
            reqwest::Method::POST,
            "Grok",
            &join_url(&self.base_url, "responses"),
        )?
        .bearer_auth(&self.api_key)
        .header("Content-Type", "application/json")
        .body(body.to_string());
        let data = send_json("Grok", request).await?;
        let mut texts = Vec::new();
        let mut citations = Vec::new();
        for item in data
            .get("output")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            if str_at(item, &["type"]) != Some("message") {
                continue;
            }
            for part in item
                .get("content")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                if str_at(part, &["type"]) == Some("output_text") {
                    if let Some(t) = str_at(part, &["text"]) {
                        texts.push(t.to_owned());
                    }
                    for ann in part
                        .get("annotations")
                        .and_then(Value::as_array)
                        .into_iter()
                        .flatten()
                    {
                        if let Some(u) = str_at(ann, &["url"]) {
                            push_unique(&mut citations, u);
                        }
                    }
                }
            }
        }
        if texts.is_empty()
            && let Some(t) = str_at(&data, &["output_text"])
        {
            texts.push(t.to_owned());
        }
        for c in data
            .get("citations")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            if let Some(u) = c.as_str() {
                push_unique(&mut citations, u);
            }
        }
        Ok(json!({
            "provider": "grok",
            "model": self.model,
            "content": texts.join("\n\n"),
            "citations": citations,
        }))
    }
}

/// Google Gemini with Google Search grounding:
/// `POST {base}/models/{model}:generateContent` with `x-goog-api-key`.
#[derive(Clone)]
pub struct GeminiProvider {
    api_key: String,
    base_url: String,
    model: String,
}

impl fmt::Debug for GeminiProvider {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("GeminiProvider")
            .field("base_url", &self.base_url)
            .field("model", &self.model)
            .finish_non_exhaustive()
    }
}

impl GeminiProvider {
    /// The default base URL.
    pub const DEFAULT_BASE_URL: &'static str = "https://generativelanguage.googleapis.com/v1beta";

    /// Default model `gemini-2.5-flash`.
    pub fn new(api_key: String, base_url: Option<String>, model: Option<String>) -> Self {
        GeminiProvider {
            api_key,
            base_url: base_url.unwrap_or_else(|| Self::DEFAULT_BASE_URL.to_owned()),
            model: model.unwrap_or_else(|| "gemini-2.5-flash".to_owned()),
        }
    }
}

#[async_trait::async_trait]
impl SearchProvider for GeminiProvider {
    fn id(&self) -> &'static str {
        "gemini"
    }

    fn model(&self) -> Option<&str> {
        Some(&self.model)
    }

    async fn search(&self, http: &GuardedClient, req: &SearchRequest) -> Result<Value, ToolError> {
        let body = json!({
            "contents": [{ "parts": [{ "text": req.query }] }],
            "tools": [{ "google_search": {} }],
        });
        let path = format!("models/{}:generateContent", self.model);
        let request = guarded_request(
            http,
            reqwest::Method::POST,
            "Gemini",
            &join_url(&self.base_url, &path),
        )?
        .header("x-goog-api-key", &self.api_key)
        .header("Content-Type", "application/json")
        .body(body.to_string());
        let data = send_json("Gemini", request).await?;
        let candidate = data
            .pointer("/candidates/0")
            .cloned()
            .unwrap_or(Value::Null);
        let content: Vec<&str> = candidate
            .pointer("/content/parts")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|p| str_at(p, &["text"]))
            .collect();
        let mut citations: Vec<Value> = Vec::new();
        for chunk in candidate
            .pointer("/groundingMetadata/groundingChunks")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            if let Some(uri) = str_at(chunk, &["web", "uri"]) {
                let mut entry = Map::new();
                entry.insert("url".into(), Value::String(uri.to_owned()));
                if let Some(t) = str_at(chunk, &["web", "title"]) {
                    entry.insert("title".into(), Value::String(t.to_owned()));
                }
                citations.push(Value::Object(entry));
            }
        }
        Ok(json!({
            "provider": "gemini",
            "model": self.model,
            "content": content.join(""),
            "citations": citations,
        }))
    }
}
