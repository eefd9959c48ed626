//! `web_fetch` against a real loopback server (allowed through the
//! allowlist's CIDRs).

use std::time::{Duration, Instant};

use serde_json::json;
use talon_tool_catalog::{CancellationToken, ToolError};
use talon_tools::{SsrfAllowlistConfig, WebFetchConfig, WebFetchTool};

use super::server::{Reply, TestServer};
use super::{call, call_with};

const PAGE: &str = r#"<!doctype html>
<html><head><title>Talon &amp; the Web</title>
<style>.nav { color: red } style-secret</style>
<script>var secret = "script-secret";</script></head>
<body>
<nav><a href="/home">nav-secret home</a></nav>
<header><p>site banner</p></header>
<main>
  <h1>Main heading</h1>
  <p>First paragraph with a <a href="https://example.com/docs">docs link</a>.</p>
  <ul><li>one</li><li>two</li></ul>
</main>
<aside>aside-secret</aside>
<footer>footer-secret</footer>
</body></html>"#;

fn loopback_config() -> WebFetchConfig {
    WebFetchConfig {
        ssrf_allowlist: Some(SsrfAllowlistConfig {
            hosts: vec![],
            cidrs: vec!["127.0.0.1/32".into()],
        }),
        ..WebFetchConfig::default()
    }
}

async fn site() -> TestServer {
    TestServer::start("127.0.0.1:0", |req| match req.path() {
        "/page" => Reply::new(200, "text/html; charset=utf-8", PAGE),
        "/article" => Reply::new(
            200,
            "text/html",
            "<html><body><div>menu junk</div><article><h2>Short</h2></article>\
             <article><h2>Long story</h2><p>The longer article wins.</p></article></body></html>",
        ),
        "/bare" => Reply::new(
            200,
            "text/html",
            "<html><body><p>Body only <b>bold</b></p><script>x()</script></body></html>",
        ),
        "/data.json" => Reply::new(200, "application/json", r#"{"a":1,"b":[true,null]}"#),
        "/notes.txt" => Reply::new(200, "text/plain", "line one\n  line two <not html>\n"),
        "/image.png" => Reply::new(200, "image/png", vec![0x89, b'P', b'N', b'G', 0, 0, 1]),
        "/big.txt" => Reply::new(200, "text/plain", "a".repeat(100_000)),
        "/slow" => Reply::new(200, "text/plain", "late").delayed(Duration::from_secs(3)),
        "/missing" => Reply::new(
            404,
            "text/html",
            "<html><body><p>No such page here</p></body></html>",
        ),
        "/r1" => Reply::redirect("/r2"),
        "/r2" => Reply::redirect("/page"),
        "/loop" => Reply::redirect("/loop"),
        "/latin1" => Reply::new(200, "text/plain; charset=ISO-8859-1", b"caf\xe9 cr\xe8me".to_vec()),
        "/meta1252" => Reply::new(
            200,
            "text/html",
            b"<html><head><meta charset=\"windows-1252\"></head><body><p>\x93quoted\x94 \x80</p></body></html>"
                .to_vec(),
        ),
        _ => Reply::new(500, "text/plain", "unexpected path"),
    })
    .await
}

#[tokio::test]
async fn html_becomes_markdown_of_the_main_content() {
    let server = site().await;
    let tool = WebFetchTool::new(&loopback_config()).unwrap();
    let url = server.url("/page");
    let out = call(&tool, json!({ "url": url })).await.unwrap();
    let d = &out.details;
    assert_eq!(d["status"], 200);
    assert_eq!(d["finalUrl"], url);
    assert_eq!(d["contentType"], "text/html; charset=utf-8");
    assert_eq!(d["title"], "Talon & the Web");
    assert_eq!(d["extractor"], "main");
    assert_eq!(d["extractMode"], "markdown");
    assert_eq!(d["truncated"], false);
    assert_eq!(d["cached"], false);
    let text = d["text"].as_str().unwrap();
    assert!(text.starts_with("<<<EXTERNAL_UNTRUSTED_CONTENT"), "{text}");
    assert!(text.contains("# Main heading"), "{text}");
    assert!(
        text.contains("[docs link](https://example.com/docs)"),
        "{text}"
    );
    assert!(text.contains("one") && text.contains("two"), "{text}");
    for hidden in [
        "nav-secret",
        "script-secret",
        "style-secret",
        "aside-secret",
        "footer-secret",
        "site banner",
    ] {
        assert!(!text.contains(hidden), "{hidden} leaked: {text}");
    }
    // The model sees the same payload as text.
    assert!(out.text().contains("\"finalUrl\""));
}

#[tokio::test]
async fn text_mode_drops_markup_but_keeps_link_text() {
    let server = site().await;
    let tool = WebFetchTool::new(&loopback_config()).unwrap();
    let out = call(
        &tool,
        json!({ "url": server.url("/page"), "extractMode": "text" }),
    )
    .await
    .unwrap();
    let text = out.details["text"].as_str().unwrap();
    assert!(text.contains("Main heading"), "{text}");
    assert!(!text.contains("# Main"), "{text}");
    assert!(text.contains("docs link"), "{text}");
    assert!(!text.contains("](https://"), "{text}");
    assert_eq!(out.details["extractMode"], "text");
}

#[tokio::test]
async fn longest_article_then_body_are_the_fallbacks() {
    let server = site().await;
    let tool = WebFetchTool::new(&loopback_config()).unwrap();
    let out = call(&tool, json!({ "url": server.url("/article") }))
        .await
        .unwrap();
    assert_eq!(out.details["extractor"], "article");
    let text = out.details["text"].as_str().unwrap();
    assert!(text.contains("The longer article wins."), "{text}");
    assert!(!text.contains("menu junk"), "{text}");

    let out = call(&tool, json!({ "url": server.url("/bare") }))
        .await
        .unwrap();
    assert_eq!(out.details["extractor"], "body");
    let text = out.details["text"].as_str().unwrap();
    assert!(text.contains("Body only **bold**"), "{text}");
    assert!(!text.contains("x()"), "{text}");
}

#[tokio::test]
async fn json_is_pretty_printed_and_text_is_kept_as_is() {
    let server = site().await;
    let tool = WebFetchTool::new(&loopback_config()).unwrap();
    let out = call(&tool, json!({ "url": server.url("/data.json") }))
        .await
        .unwrap();
    let text = out.details["text"].as_str().unwrap();
    assert!(
        text.contains("{\n  \"a\": 1,\n  \"b\": [\n    true,\n    null\n  ]\n}"),
        "{text}"
    );
    assert_eq!(out.details["extractor"], "json");

    let out = call(&tool, json!({ "url": server.url("/notes.txt") }))
        .await
        .unwrap();
    let text = out.details["text"].as_str().unwrap();
    assert!(text.contains("line one\n  line two <not html>\n"), "{text}");
}

#[tokio::test]
async fn binary_content_is_refused_with_its_type() {
    let server = site().await;
    let tool = WebFetchTool::new(&loopback_config()).unwrap();
    let err = call(&tool, json!({ "url": server.url("/image.png") }))
        .await
        .unwrap_err();
    let msg = err.to_string();
    assert!(msg.contains("`image/png`"), "{msg}");
    assert!(msg.contains("HTML, JSON and text only"), "{msg}");
}

#[tokio::test]
async fn http_errors_carry_status_and_a_readable_snippet() {
    let server = site().await;
    let tool = WebFetchTool::new(&loopback_config()).unwrap();
    let err = call(&tool, json!({ "url": server.url("/missing") }))
        .await
        .unwrap_err();
    let msg = err.to_string();
    assert!(msg.contains("404"), "{msg}");
    assert!(msg.contains("No such page here"), "{msg}");
    assert!(!msg.contains("<p>"), "{msg}");
}

#[tokio::test]
async fn response_size_cap_and_max_chars_truncate() {
    let server = site().await;
    let config = WebFetchConfig {
        max_response_bytes: Some(1_000), // raised to the 32 000 floor
        ..loopback_config()
    };
    let tool = WebFetchTool::new(&config).unwrap();
    let out = call(
        &tool,
        json!({ "url": server.url("/big.txt"), "maxChars": 50_000 }),
    )
    .await
    .unwrap();
    assert_eq!(out.details["bytesTruncated"], true);
    assert_eq!(out.details["truncated"], true);
    assert_eq!(out.details["rawLength"], 32_000);
    assert_eq!(out.details["length"], 32_000);

    // maxChars as a string, and below the floor of 100 → 100.
    let out = call(
        &tool,
        json!({ "url": server.url("/notes.txt"), "max_chars": "5" }),
    )
    .await
    .unwrap();
    assert_eq!(out.details["truncated"], false);
    let out = call(
        &tool,
        json!({ "url": server.url("/big.txt"), "maxChars": 150 }),
    )
    .await
    .unwrap();
    assert_eq!(out.details["length"], 150);
    assert_eq!(out.details["truncated"], true);
}

#[tokio::test]
async fn default_max_chars_is_twenty_thousand() {
    let server = site().await;
    let config = WebFetchConfig {
        cache_ttl_minutes: Some(0),
        ..loopback_config()
    };
    let tool = WebFetchTool::new(&config).unwrap();
    let out = call(&tool, json!({ "url": server.url("/big.txt") }))
        .await
        .unwrap();
    assert_eq!(out.details["length"], 20_000);
    assert_eq!(out.details["bytesTruncated"], false);
}

#[tokio::test]
async fn redirects_are_followed_up_to_the_limit() {
    let server = site().await;
    let tool = WebFetchTool::new(&loopback_config()).unwrap();
    let out = call(&tool, json!({ "url": server.url("/r1") }))
        .await
        .unwrap();
    assert_eq!(out.details["finalUrl"], server.url("/page"));
    assert_eq!(out.details["url"], server.url("/r1"));
    assert_eq!(out.details["extractor"], "main");

    let err = call(&tool, json!({ "url": server.url("/loop") }))
        .await
        .unwrap_err();
    assert!(
        err.to_string().contains("Too many redirects (limit: 3)"),
        "{err}"
    );
    let loops = server
        .requests()
        .iter()
        .filter(|r| r.path() == "/loop")
        .count();
    assert_eq!(loops, 4, "the first request plus three redirects");
}

#[tokio::test]
async fn timeout_ends_a_slow_fetch() {
    let server = site().await;
    let tool = WebFetchTool::new(&loopback_config())
        .unwrap()
        .with_timeout(Duration::from_millis(300));
    let started = Instant::now();
    let err = call(&tool, json!({ "url": server.url("/slow") }))
        .await
        .unwrap_err();
    assert!(err.to_string().contains("timed out after 300 ms"), "{err}");
    assert!(started.elapsed() < Duration::from_secs(2));
}

#[tokio::test]
async fn abort_ends_a_slow_fetch() {
    let server = site().await;
    let tool = WebFetchTool::new(&loopback_config()).unwrap();
    let abort = CancellationToken::new();
    let trigger = abort.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(100)).await;
        trigger.cancel();
    });
    let started = Instant::now();
    let err = call_with(&tool, json!({ "url": server.url("/slow") }), &abort)
        .await
        .unwrap_err();
    assert_eq!(err, ToolError::aborted(talon_tool_catalog::ABORTED_REASON));
    assert!(started.elapsed() < Duration::from_secs(2));
}

#[tokio::test]
async fn cache_hits_skip_the_network_per_url_and_mode() {
    let server = site().await;
    let tool = WebFetchTool::new(&loopback_config()).unwrap();
    let url = server.url("/big.txt");
    let first = call(&tool, json!({ "url": url })).await.unwrap();
    let second = call(&tool, json!({ "url": url, "maxChars": 120 }))
        .await
        .unwrap();
    assert_eq!(server.requests().len(), 1);
    assert_eq!(first.details["cached"], false);
    assert_eq!(second.details["cached"], true);
    assert_eq!(second.details["length"], 120, "maxChars applies to a hit");
    call(&tool, json!({ "url": url, "extractMode": "text" }))
        .await
        .unwrap();
    assert_eq!(server.requests().len(), 2, "another mode is another entry");
}

#[tokio::test]
async fn cache_ttl_zero_turns_the_cache_off() {
    let server = site().await;
    let config = WebFetchConfig {
        cache_ttl_minutes: Some(0),
        ..loopback_config()
    };
    let tool = WebFetchTool::new(&config).unwrap();
    for _ in 0..2 {
        let out = call(&tool, json!({ "url": server.url("/notes.txt") }))
            .await
            .unwrap();
        assert_eq!(out.details["cached"], false);
    }
    assert_eq!(server.requests().len(), 2);
}

#[tokio::test]
async fn bad_parameters_name_the_parameter_and_fetch_nothing() {
    let server = site().await;
    let tool = WebFetchTool::new(&loopback_config()).unwrap();
    let err = call(&tool, json!({})).await.unwrap_err();
    assert_eq!(err.param(), Some("url"));
    assert_eq!(err.to_string(), "url required");
    let err = call(&tool, json!({ "url": "not a url" }))
        .await
        .unwrap_err();
    assert_eq!(err.param(), Some("url"));
    assert!(err.to_string().contains("absolute http(s) URL"), "{err}");
    let err = call(
        &tool,
        json!({ "url": server.url("/page"), "extractMode": "pdf" }),
    )
    .await
    .unwrap_err();
    assert_eq!(err.param(), Some("extractMode"));
    let err = call(&tool, json!({ "url": server.url("/page"), "maxChars": -3 }))
        .await
        .unwrap_err();
    assert_eq!(err.param(), Some("maxChars"));
    assert_eq!(server.accepts(), 0);
}

#[tokio::test]
async fn request_carries_accept_and_user_agent() {
    let server = site().await;
    let config = WebFetchConfig {
        user_agent: Some("TalonTest/1".into()),
        ..loopback_config()
    };
    let tool = WebFetchTool::new(&config).unwrap();
    call(&tool, json!({ "url": server.url("/notes.txt") }))
        .await
        .unwrap();
    let req = &server.requests()[0];
    assert_eq!(req.method, "GET");
    assert_eq!(req.header("user-agent"), Some("TalonTest/1"));
    assert!(req.header("accept").unwrap().contains("text/html"));
}

#[tokio::test]
async fn bodies_are_decoded_by_their_declared_charset() {
    let server = site().await;
    let tool = WebFetchTool::new(&loopback_config()).unwrap();
    let out = call(&tool, json!({ "url": server.url("/latin1") }))
        .await
        .unwrap();
    assert!(out.details["text"].as_str().unwrap().contains("café crème"));
    let out = call(&tool, json!({ "url": server.url("/meta1252") }))
        .await
        .unwrap();
    let text = out.details["text"].as_str().unwrap();
    assert!(text.contains("\u{201c}quoted\u{201d} \u{20ac}"), "{text}");
}
