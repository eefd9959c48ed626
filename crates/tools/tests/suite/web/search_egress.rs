//! `web_search` provider base URLs behind the egress guard: a real loopback
//! listener stands in for a canary that a configured `baseUrl` (or a name
//! that resolves to loopback) points at, and counts every connection, so
//! "the API key never left" is observed, not assumed.

use std::net::IpAddr;
use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use talon_tools::{
    BlockKind, SEARCH_PROVIDERS, SearchProviderConfig, SsrfAllowlistConfig, StaticResolver,
    WebError, WebSearchConfig, WebSearchTool,
};

use super::call;
use super::server::{Reply, TestServer};

const KEY: &str = "canary-api-key-7f3a";

fn ip(s: &str) -> IpAddr {
    s.parse().unwrap()
}

async fn canary() -> TestServer {
    TestServer::start("127.0.0.1:0", |_| {
        Reply::json(&json!({ "web": { "results": [] } }))
    })
    .await
}

fn block(base: String) -> Option<SearchProviderConfig> {
    Some(SearchProviderConfig {
        api_key: Some(KEY.into()),
        base_url: Some(base),
        model: None,
    })
}

/// `provider` configured with `base` as its `baseUrl`.
fn config(provider: &str, base: String, allow: Option<SsrfAllowlistConfig>) -> WebSearchConfig {
    let mut c = WebSearchConfig {
        provider: Some(provider.into()),
        ssrf_allowlist: allow,
        ..WebSearchConfig::default()
    };
    let slot = match provider {
        "brave" => &mut c.brave,
        "perplexity" => &mut c.perplexity,
        "grok" => &mut c.grok,
        "gemini" => &mut c.gemini,
        _ => &mut c.kimi,
    };
    *slot = block(base);
    c
}

fn resolver() -> Arc<StaticResolver> {
    Arc::new(
        StaticResolver::new()
            .with("search.example", [ip("127.0.0.1")])
            .with("imds.example", [ip("169.254.169.254")]),
    )
}

/// Give a connection that slipped through time to be accepted.
async fn settle() {
    tokio::time::sleep(Duration::from_millis(100)).await;
}

#[tokio::test]
async fn a_loopback_base_url_is_refused_at_build_without_opt_in_and_nothing_connects() {
    let server = canary().await;
    for id in SEARCH_PROVIDERS {
        for base in [
            server.url("/v1"),
            format!("http://localhost:{}/v1", server.addr.port()),
            format!("http://[::ffff:127.0.0.1]:{}/", server.addr.port()),
        ] {
            let err = WebSearchTool::new(&config(id, base.clone(), None)).unwrap_err();
            let WebError::Blocked { key, blocked } = &err else {
                panic!("{id} {base}: {err}");
            };
            assert_eq!(key, &format!("tools.web.search.{id}.baseUrl"));
            assert_eq!(blocked.kind, BlockKind::Private, "{err}");
            let text = err.to_string();
            assert!(text.contains("ssrf_blocked"), "{text}");
            assert!(text.contains("tools.web.search.ssrfAllowlist"), "{text}");
            assert!(!text.contains(KEY), "{text}");
            // What every call of the unbuilt tool fails with keeps the code.
            let call_error = err.clone().into_tool_error();
            assert_eq!(call_error.code().as_str(), "web.ssrf_blocked");
            assert!(
                call_error
                    .message()
                    .contains(&format!("tools.web.search.{id}.baseUrl"))
            );
        }
    }
    settle().await;
    assert_eq!(server.accepts(), 0);
}

#[tokio::test]
async fn a_base_url_name_resolving_to_loopback_is_refused_before_the_key_is_sent() {
    let server = canary().await;
    let base = format!("http://search.example:{}/v1", server.addr.port());
    for id in SEARCH_PROVIDERS {
        let tool = WebSearchTool::with_resolver(&config(id, base.clone(), None), resolver())
            .unwrap()
            .with_env(|_| None);
        let err = call(&tool, json!({ "query": "q" })).await.unwrap_err();
        assert_eq!(err.code().as_str(), "web.ssrf_blocked", "{id}: {err}");
        let msg = err.to_string();
        assert!(msg.contains("127.0.0.1 is loopback"), "{msg}");
        assert!(msg.contains("tools.web.search.ssrfAllowlist"), "{msg}");
        assert!(!msg.contains(KEY), "{msg}");
    }
    settle().await;
    assert_eq!(server.accepts(), 0, "the canary saw a connection");
    assert!(server.requests().is_empty());
}

#[tokio::test]
async fn with_the_opt_in_the_loopback_endpoint_is_reached() {
    let server = canary().await;
    // By name, allowlisted under `hosts`.
    let by_name = config(
        "brave",
        format!("http://search.example:{}", server.addr.port()),
        Some(SsrfAllowlistConfig {
            hosts: vec!["search.example".into()],
            cidrs: vec![],
        }),
    );
    let tool = WebSearchTool::with_resolver(&by_name, resolver())
        .unwrap()
        .with_env(|_| None);
    call(&tool, json!({ "query": "q" })).await.unwrap();
    // By address, allowlisted under `cidrs`.
    let by_addr = config(
        "brave",
        server.url(""),
        Some(SsrfAllowlistConfig {
            hosts: vec![],
            cidrs: vec!["127.0.0.0/8".into()],
        }),
    );
    let tool = WebSearchTool::new(&by_addr).unwrap().with_env(|_| None);
    call(&tool, json!({ "query": "r" })).await.unwrap();
    let seen = server.requests();
    assert_eq!(seen.len(), 2);
    assert!(
        seen.iter()
            .all(|r| r.header("x-subscription-token") == Some(KEY))
    );
}

#[tokio::test]
async fn a_metadata_base_url_is_refused_even_when_the_allowlist_names_it() {
    let allow = Some(SsrfAllowlistConfig {
        hosts: vec!["imds.example".into(), "metadata.google.internal".into()],
        cidrs: vec!["169.254.0.0/16".into()],
    });
    for base in [
        "http://169.254.169.254/latest",
        "http://metadata.google.internal/v1",
        "http://[fd00:ec2::254]/",
    ] {
        let err = WebSearchTool::new(&config("grok", base.into(), allow.clone())).unwrap_err();
        let WebError::Blocked { blocked, .. } = &err else {
            panic!("{base}: {err}");
        };
        assert_eq!(blocked.kind, BlockKind::Metadata, "{err}");
        assert!(err.to_string().contains("metadata_blocked"), "{err}");
    }
    // A name that resolves to a metadata address fails the call.
    let tool = WebSearchTool::with_resolver(
        &config("grok", "http://imds.example/v1".into(), allow),
        resolver(),
    )
    .unwrap()
    .with_env(|_| None);
    let err = call(&tool, json!({ "query": "q" })).await.unwrap_err();
    assert_eq!(err.code().as_str(), "web.metadata_blocked", "{err}");
}

#[tokio::test]
async fn a_bad_search_allowlist_names_its_own_key() {
    let err = WebSearchTool::new(&WebSearchConfig {
        ssrf_allowlist: Some(SsrfAllowlistConfig {
            hosts: vec![],
            cidrs: vec!["127.0.0.1".into()],
        }),
        ..WebSearchConfig::default()
    })
    .unwrap_err();
    assert!(
        err.to_string()
            .starts_with("tools.web.search.ssrfAllowlist.cidrs: `127.0.0.1` is not a CIDR"),
        "{err}"
    );
}
