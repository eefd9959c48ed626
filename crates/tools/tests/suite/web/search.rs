//! `web_search` against one fake server per provider, speaking that
//! provider's format; the request shape (path, auth header, body fields)
//! is asserted.

use serde_json::{Value, json};
use talon_tools::{
    SearchProviderConfig, SsrfAllowlistConfig, WebError, WebSearchConfig, WebSearchTool,
};

use super::call;
use super::server::{Reply, TestServer};

fn block(server: &TestServer, key: &str) -> Option<SearchProviderConfig> {
    Some(SearchProviderConfig {
        api_key: Some(key.into()),
        base_url: Some(server.url("")),
        model: None,
    })
}

/// The fake providers listen on loopback: the explicit opt-in a
/// self-hosted endpoint needs.
fn loopback_opt_in() -> Option<SsrfAllowlistConfig> {
    Some(SsrfAllowlistConfig {
        hosts: vec![],
        cidrs: vec!["127.0.0.1/32".into()],
    })
}

fn no_env(tool: WebSearchTool) -> WebSearchTool {
    tool.with_env(|_| None)
}

async fn brave_server() -> TestServer {
    TestServer::start("127.0.0.1:0", |_| {
        Reply::json(&json!({
            "web": { "results": [
                { "title": "The Rust Language", "url": "https://www.rust-lang.org/",
                  "description": "A language empowering everyone", "age": "2 days ago" },
                { "title": "Rust docs", "url": "https://doc.rust-lang.org/book/",
                  "description": "The book" }
            ]}
        }))
    })
    .await
}

#[tokio::test]
async fn brave_request_shape_and_results() {
    let server = brave_server().await;
    let config = WebSearchConfig {
        provider: Some("brave".into()),
        brave: block(&server, "BSA-key"),
        ssrf_allowlist: loopback_opt_in(),
        ..WebSearchConfig::default()
    };
    let tool = no_env(WebSearchTool::new(&config).unwrap());
    let out = call(
        &tool,
        json!({ "query": "rust lang", "count": 3, "country": "US", "language": "en", "freshness": "pw" }),
    )
    .await
    .unwrap();
    let req = &server.requests()[0];
    assert_eq!(req.method, "GET");
    assert_eq!(req.path(), "/res/v1/web/search");
    assert_eq!(
        req.target,
        "/res/v1/web/search?q=rust+lang&count=3&country=US&search_lang=en&freshness=pw"
    );
    assert_eq!(req.header("x-subscription-token"), Some("BSA-key"));
    assert_eq!(req.header("accept"), Some("application/json"));
    let d = &out.details;
    assert_eq!(d["provider"], "brave");
    assert_eq!(d["query"], "rust lang");
    assert_eq!(d["count"], 2);
    assert_eq!(d["results"][0]["title"], "The Rust Language");
    assert_eq!(d["results"][0]["url"], "https://www.rust-lang.org/");
    assert_eq!(d["results"][0]["published"], "2 days ago");
    assert_eq!(d["results"][0]["siteName"], "rust-lang.org");
    assert_eq!(d["results"][1]["description"], "The book");
    assert_eq!(d["externalContent"]["untrusted"], true);
    assert_eq!(d["cached"], false);
}

#[tokio::test]
async fn perplexity_request_shape_and_citations() {
    let server = TestServer::start("127.0.0.1:0", |_| {
        Reply::json(&json!({
            "choices": [{ "message": { "role": "assistant", "content": "Rust 1.90 is out." } }],
            "citations": ["https://blog.rust-lang.org/", "https://blog.rust-lang.org/"]
        }))
    })
    .await;
    let config = WebSearchConfig {
        provider: Some("perplexity".into()),
        perplexity: block(&server, "pplx-secret"),
        ssrf_allowlist: loopback_opt_in(),
        ..WebSearchConfig::default()
    };
    let tool = no_env(WebSearchTool::new(&config).unwrap());
    let out = call(
        &tool,
        json!({ "query": "latest rust", "freshness": "week" }),
    )
    .await
    .unwrap();
    let req = &server.requests()[0];
    assert_eq!(req.method, "POST");
    assert_eq!(req.path(), "/chat/completions");
    assert_eq!(req.header("authorization"), Some("Bearer pplx-secret"));
    assert_eq!(req.header("content-type"), Some("application/json"));
    let body = req.json();
    assert_eq!(body["model"], "sonar-pro");
    assert_eq!(
        body["messages"][0],
        json!({ "role": "user", "content": "latest rust" })
    );
    assert_eq!(body["search_recency_filter"], "week");
    assert_eq!(out.details["content"], "Rust 1.90 is out.");
    assert_eq!(
        out.details["citations"],
        json!(["https://blog.rust-lang.org/"])
    );
    assert_eq!(out.details["model"], "sonar-pro");
}

#[tokio::test]
async fn perplexity_through_openrouter_uses_its_model_name() {
    let server = TestServer::start("127.0.0.1:0", |_| {
        Reply::json(&json!({ "choices": [{ "message": { "content": "ok" } }] }))
    })
    .await;
    let config = WebSearchConfig {
        provider: Some("perplexity".into()),
        perplexity: Some(SearchProviderConfig {
            api_key: Some("sk-or-abc".into()),
            base_url: Some(format!("{}/openrouter/api/v1", server.url(""))),
            model: None,
        }),
        ssrf_allowlist: loopback_opt_in(),
        ..WebSearchConfig::default()
    };
    let tool = no_env(WebSearchTool::new(&config).unwrap());
    call(&tool, json!({ "query": "q" })).await.unwrap();
    let req = &server.requests()[0];
    assert_eq!(req.path(), "/openrouter/api/v1/chat/completions");
    assert_eq!(req.json()["model"], "perplexity/sonar-pro");
}

#[tokio::test]
async fn grok_request_shape_and_annotations() {
    let server = TestServer::start("127.0.0.1:0", |_| {
        Reply::json(&json!({
            "output": [
                { "type": "web_search_call", "status": "completed" },
                { "type": "message", "content": [{
                    "type": "output_text",
                    "text": "Grok says hi.",
                    "annotations": [{ "type": "url_citation", "url": "https://x.ai/news" }]
                }]}
            ],
            "citations": ["https://x.ai/news", "https://x.ai/blog"]
        }))
    })
    .await;
    let config = WebSearchConfig {
        provider: Some("grok".into()),
        grok: block(&server, "xai-key"),
        ssrf_allowlist: loopback_opt_in(),
        ..WebSearchConfig::default()
    };
    let tool = no_env(WebSearchTool::new(&config).unwrap());
    let out = call(&tool, json!({ "query": "xai news" })).await.unwrap();
    let req = &server.requests()[0];
    assert_eq!(req.method, "POST");
    assert_eq!(req.path(), "/responses");
    assert_eq!(req.header("authorization"), Some("Bearer xai-key"));
    let body = req.json();
    assert_eq!(body["model"], "grok-4-1-fast");
    assert_eq!(body["input"][0]["content"], "xai news");
    assert_eq!(body["tools"], json!([{ "type": "web_search" }]));
    assert_eq!(out.details["content"], "Grok says hi.");
    assert_eq!(
        out.details["citations"],
        json!(["https://x.ai/news", "https://x.ai/blog"])
    );
}

#[tokio::test]
async fn gemini_request_shape_and_grounding() {
    let server = TestServer::start("127.0.0.1:0", |_| {
        Reply::json(&json!({
            "candidates": [{
                "content": { "parts": [{ "text": "Grounded " }, { "text": "answer." }] },
                "groundingMetadata": { "groundingChunks": [
                    { "web": { "uri": "https://example.org/a", "title": "example.org" } }
                ]}
            }]
        }))
    })
    .await;
    let config = WebSearchConfig {
        provider: Some("gemini".into()),
        gemini: Some(SearchProviderConfig {
            api_key: Some("g-key".into()),
            base_url: Some(server.url("/v1beta")),
            model: Some("gemini-2.5-pro".into()),
        }),
        ssrf_allowlist: loopback_opt_in(),
        ..WebSearchConfig::default()
    };
    let tool = no_env(WebSearchTool::new(&config).unwrap());
    let out = call(&tool, json!({ "query": "grounding" })).await.unwrap();
    let req = &server.requests()[0];
    assert_eq!(req.method, "POST");
    assert_eq!(req.path(), "/v1beta/models/gemini-2.5-pro:generateContent");
    assert_eq!(req.header("x-goog-api-key"), Some("g-key"));
    assert_eq!(req.header("authorization"), None);
    let body = req.json();
    assert_eq!(body["contents"][0]["parts"][0]["text"], "grounding");
    assert_eq!(body["tools"], json!([{ "google_search": {} }]));
    assert_eq!(out.details["content"], "Grounded answer.");
    assert_eq!(
        out.details["citations"],
        json!([{ "url": "https://example.org/a", "title": "example.org" }])
    );
}

#[tokio::test]
async fn kimi_echoes_the_builtin_search_call_then_answers() {
    let server = TestServer::start("127.0.0.1:0", |req| {
        let messages = req.json()["messages"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        if messages.len() == 1 {
            Reply::json(&json!({ "choices": [{
                "finish_reason": "tool_calls",
                "message": { "role": "assistant", "content": "", "tool_calls": [{
                    "id": "call-7", "type": "builtin_function",
                    "function": { "name": "$web_search", "arguments": "{\"query\":\"moon\"}" }
                }]}
            }]}))
        } else {
            Reply::json(&json!({ "choices": [{
                "finish_reason": "stop",
                "message": { "role": "assistant", "content": "The moon is far." }
            }]}))
        }
    })
    .await;
    let config = WebSearchConfig {
        provider: Some("kimi".into()),
        kimi: block(&server, "moon-key"),
        ssrf_allowlist: loopback_opt_in(),
        ..WebSearchConfig::default()
    };
    let tool = no_env(WebSearchTool::new(&config).unwrap());
    let out = call(&tool, json!({ "query": "moon distance" }))
        .await
        .unwrap();
    let reqs = server.requests();
    assert_eq!(reqs.len(), 2);
    for req in &reqs {
        assert_eq!(req.path(), "/chat/completions");
        assert_eq!(req.header("authorization"), Some("Bearer moon-key"));
        assert_eq!(req.json()["model"], "moonshot-v1-128k");
        assert_eq!(
            req.json()["tools"],
            json!([{ "type": "builtin_function", "function": { "name": "$web_search" } }])
        );
    }
    let second = reqs[1].json();
    let tool_msg = &second["messages"][2];
    assert_eq!(tool_msg["role"], "tool");
    assert_eq!(tool_msg["tool_call_id"], "call-7");
    assert_eq!(tool_msg["content"], "{\"query\":\"moon\"}");
    assert_eq!(out.details["content"], "The moon is far.");
}

#[tokio::test]
async fn key_comes_from_the_environment_when_config_has_none() {
    let server = brave_server().await;
    let config = WebSearchConfig {
        brave: Some(SearchProviderConfig {
            api_key: None,
            base_url: Some(server.url("")),
            model: None,
        }),
        ssrf_allowlist: loopback_opt_in(),
        ..WebSearchConfig::default()
    };
    let tool = WebSearchTool::new(&config)
        .unwrap()
        .with_env(|name| (name == "BRAVE_API_KEY").then(|| "env-key".to_owned()));
    call(&tool, json!({ "query": "q" })).await.unwrap();
    assert_eq!(
        server.requests()[0].header("x-subscription-token"),
        Some("env-key")
    );
}

#[tokio::test]
async fn provider_is_auto_detected_from_the_available_key() {
    let server = TestServer::start("127.0.0.1:0", |_| {
        Reply::json(&json!({ "output_text": "found", "output": [] }))
    })
    .await;
    let config = WebSearchConfig {
        grok: Some(SearchProviderConfig {
            api_key: None,
            base_url: Some(server.url("")),
            model: None,
        }),
        ssrf_allowlist: loopback_opt_in(),
        ..WebSearchConfig::default()
    };
    let tool = WebSearchTool::new(&config)
        .unwrap()
        .with_env(|name| (name == "XAI_API_KEY").then(|| "xai-env".to_owned()));
    let out = call(&tool, json!({ "query": "q" })).await.unwrap();
    assert_eq!(out.details["provider"], "grok");
    assert_eq!(out.details["content"], "found");
    assert_eq!(
        server.requests()[0].header("authorization"),
        Some("Bearer xai-env")
    );
}

#[tokio::test]
async fn missing_key_names_the_config_key_and_env_var() {
    let tool = no_env(WebSearchTool::new(&WebSearchConfig::default()).unwrap());
    let err = call(&tool, json!({ "query": "q" })).await.unwrap_err();
    assert_eq!(
        err.to_string(),
        "web_search (brave) needs an API key: set tools.web.search.brave.apiKey or tools.web.search.apiKey in the config, or the BRAVE_API_KEY environment variable"
    );
    let config = WebSearchConfig {
        provider: Some("kimi".into()),
        ssrf_allowlist: loopback_opt_in(),
        ..WebSearchConfig::default()
    };
    let tool = no_env(WebSearchTool::new(&config).unwrap());
    let msg = call(&tool, json!({ "query": "q" }))
        .await
        .unwrap_err()
        .to_string();
    assert!(msg.contains("tools.web.search.kimi.apiKey"), "{msg}");
    assert!(msg.contains("KIMI_API_KEY or MOONSHOT_API_KEY"), "{msg}");
}

#[tokio::test]
async fn freshness_is_validated_before_any_request() {
    let server = brave_server().await;
    let config = WebSearchConfig {
        provider: Some("brave".into()),
        brave: block(&server, "k"),
        ssrf_allowlist: loopback_opt_in(),
        ..WebSearchConfig::default()
    };
    let tool = no_env(WebSearchTool::new(&config).unwrap());
    for bad in [
        "yesterday",
        "2024-02-30to2024-03-01",
        "2024-13-01to2024-12-01",
        "2024-06-01to2024-01-01",
        "2024-1-1to2024-2-2",
    ] {
        let err = call(&tool, json!({ "query": "q", "freshness": bad }))
            .await
            .unwrap_err();
        assert_eq!(err.param(), Some("freshness"), "{bad}: {err}");
    }
    let err = call(
        &tool,
        json!({ "query": "q", "freshness": "pd", "date_after": "2024-01-01" }),
    )
    .await
    .unwrap_err();
    assert_eq!(err.param(), Some("freshness"));
    assert_eq!(server.accepts(), 0);

    for (good, wire) in [
        ("pd", "freshness=pd"),
        ("PY", "freshness=py"),
        ("2024-02-29to2024-03-01", "freshness=2024-02-29to2024-03-01"),
    ] {
        call(&tool, json!({ "query": good, "freshness": good }))
            .await
            .unwrap();
        let last = server.requests().pop().unwrap();
        assert!(last.target.ends_with(wire), "{}", last.target);
    }
    call(
        &tool,
        json!({ "query": "dated", "date_after": "2023-01-01", "date_before": "2023-12-31" }),
    )
    .await
    .unwrap();
    let last = server.requests().pop().unwrap();
    assert!(
        last.target.ends_with("freshness=2023-01-01to2023-12-31"),
        "{}",
        last.target
    );
}

#[tokio::test]
async fn unsupported_options_are_refused_per_provider() {
    let server = TestServer::start("127.0.0.1:0", |_| Reply::json(&json!({}))).await;
    let config = WebSearchConfig {
        provider: Some("grok".into()),
        grok: block(&server, "k"),
        ssrf_allowlist: loopback_opt_in(),
        ..WebSearchConfig::default()
    };
    let tool = no_env(WebSearchTool::new(&config).unwrap());
    let msg = call(&tool, json!({ "query": "q", "freshness": "pd" }))
        .await
        .unwrap_err()
        .to_string();
    assert!(
        msg.contains("freshness is not supported by the grok"),
        "{msg}"
    );
    let config = WebSearchConfig {
        provider: Some("perplexity".into()),
        perplexity: block(&server, "pplx-k"),
        ssrf_allowlist: loopback_opt_in(),
        ..WebSearchConfig::default()
    };
    let tool = no_env(WebSearchTool::new(&config).unwrap());
    let msg = call(
        &tool,
        json!({ "query": "q", "freshness": "2024-01-01to2024-02-01" }),
    )
    .await
    .unwrap_err()
    .to_string();
    assert!(msg.contains("pd, pw, pm or py only"), "{msg}");
    assert_eq!(server.accepts(), 0);
}

#[tokio::test]
async fn results_are_cached_under_the_normalised_key() {
    let server = brave_server().await;
    let config = WebSearchConfig {
        brave: block(&server, "k"),
        ssrf_allowlist: loopback_opt_in(),
        ..WebSearchConfig::default()
    };
    let tool = no_env(WebSearchTool::new(&config).unwrap());
    let first = call(&tool, json!({ "query": "Rust Lang" })).await.unwrap();
    let second = call(&tool, json!({ "query": "  rust lang ", "count": "5" }))
        .await
        .unwrap();
    assert_eq!(server.requests().len(), 1);
    assert_eq!(first.details["cached"], false);
    assert_eq!(second.details["cached"], true);
    assert_eq!(second.details["results"], first.details["results"]);
    call(&tool, json!({ "query": "rust lang", "count": 2 }))
        .await
        .unwrap();
    call(&tool, json!({ "query": "rust lang", "country": "de" }))
        .await
        .unwrap();
    assert_eq!(server.requests().len(), 3);
}

#[tokio::test]
async fn count_is_clamped_to_one_through_ten() {
    let server = brave_server().await;
    let config = WebSearchConfig {
        brave: block(&server, "k"),
        cache_ttl_minutes: Some(0),
        ssrf_allowlist: loopback_opt_in(),
        ..WebSearchConfig::default()
    };
    let tool = no_env(WebSearchTool::new(&config).unwrap());
    call(&tool, json!({ "query": "q", "count": 50 }))
        .await
        .unwrap();
    call(&tool, json!({ "query": "q", "count": 0 }))
        .await
        .unwrap();
    let reqs = server.requests();
    assert!(reqs[0].target.contains("count=10"), "{}", reqs[0].target);
    assert!(reqs[1].target.contains("count=1&") || reqs[1].target.ends_with("count=1"));
}

#[tokio::test]
async fn provider_errors_carry_status_and_text_but_not_the_key() {
    let server = TestServer::start("127.0.0.1:0", |_| {
        Reply::new(
            401,
            "application/json",
            r#"{"error":"invalid subscription token"}"#,
        )
    })
    .await;
    let config = WebSearchConfig {
        brave: block(&server, "super-secret-key"),
        ssrf_allowlist: loopback_opt_in(),
        ..WebSearchConfig::default()
    };
    let tool = no_env(WebSearchTool::new(&config).unwrap());
    let msg = call(&tool, json!({ "query": "q" }))
        .await
        .unwrap_err()
        .to_string();
    assert!(msg.contains("401"), "{msg}");
    assert!(msg.contains("invalid subscription token"), "{msg}");
    assert!(!msg.contains("super-secret-key"), "{msg}");
    assert!(!format!("{tool:?}").contains("super-secret-key"));
}

#[tokio::test]
async fn bad_config_is_refused_with_the_key() {
    let err = WebSearchTool::new(&WebSearchConfig {
        provider: Some("bing".into()),
        ssrf_allowlist: loopback_opt_in(),
        ..WebSearchConfig::default()
    })
    .unwrap_err();
    assert!(
        matches!(&err, WebError::Config { key, .. } if key == "tools.web.search.provider"),
        "{err}"
    );
    assert!(
        err.to_string()
            .contains("brave, gemini, grok, kimi, perplexity")
    );
    let err = WebSearchTool::new(&WebSearchConfig {
        gemini: Some(SearchProviderConfig {
            base_url: Some("ftp://x".into()),
            ..SearchProviderConfig::default()
        }),
        ssrf_allowlist: loopback_opt_in(),
        ..WebSearchConfig::default()
    })
    .unwrap_err();
    assert!(
        err.to_string()
            .starts_with("tools.web.search.gemini.baseUrl"),
        "{err}"
    );
}

#[test]
fn config_uses_openclaw_key_names_and_refuses_unknown_keys() {
    let parsed: WebSearchConfig = serde_json::from_value(json!({
        "provider": "perplexity",
        "apiKey": "brave-key",
        "maxResults": 7,
        "cacheTtlMinutes": 10,
        "perplexity": { "apiKey": "pplx-1", "baseUrl": "https://api.perplexity.ai", "model": "sonar" }
    }))
    .unwrap();
    assert_eq!(parsed.max_results, Some(7));
    assert_eq!(parsed.perplexity.unwrap().model.as_deref(), Some("sonar"));
    let err = serde_json::from_value::<WebSearchConfig>(json!({ "maxResult": 7 })).unwrap_err();
    assert!(
        err.to_string().contains("unknown field `maxResult`"),
        "{err}"
    );
    let fetch: talon_tools::WebFetchConfig = serde_json::from_value(json!({
        "maxChars": 5000, "maxResponseBytes": 100000, "timeoutSeconds": 10,
        "cacheTtlMinutes": 0, "maxRedirects": 1,
        "ssrfAllowlist": { "hosts": ["wiki.corp"], "cidrs": ["10.0.0.0/8"] }
    }))
    .unwrap();
    assert_eq!(fetch.max_redirects, Some(1));
    let value: Value = serde_json::to_value(&fetch).unwrap();
    assert_eq!(value["ssrfAllowlist"]["cidrs"][0], "10.0.0.0/8");
}

#[test]
fn cache_key_is_normalised_and_extras_sorted() {
    let mut extras = std::collections::BTreeMap::new();
    extras.insert("provider", "brave".to_owned());
    extras.insert("country", "us".to_owned());
    assert_eq!(
        talon_tools::normalize_cache_key("  Rust LANG ", 5, &extras),
        "rust lang|count=5|country=us|provider=brave"
    );
}

#[test]
fn freshness_parses_shortcuts_and_real_ranges_only() {
    use talon_tools::Freshness;
    assert_eq!(Freshness::parse("pm").unwrap(), Freshness::Shortcut("pm"));
    assert_eq!(
        Freshness::parse(" Year ").unwrap(),
        Freshness::Shortcut("py")
    );
    assert_eq!(
        Freshness::parse("2024-02-29to2024-02-29")
            .unwrap()
            .as_param(),
        "2024-02-29to2024-02-29"
    );
    for bad in [
        "2023-02-29to2023-03-01",
        "1900-02-29to1900-03-01",
        "2024-04-31to2024-05-01",
        "0000-01-01to2024-01-01",
        "pdx",
        "",
    ] {
        assert!(Freshness::parse(bad).is_err(), "{bad}");
    }
    assert!(
        Freshness::parse("2000-02-29to2000-03-01").is_ok(),
        "2000 is a leap year"
    );
}
