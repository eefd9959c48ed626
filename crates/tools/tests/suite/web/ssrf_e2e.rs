//! The SSRF guard end to end: real loopback sockets that count accepts,
//! so "refused before any connection" is observed, not assumed.

use std::net::IpAddr;
use std::sync::Arc;

use serde_json::json;
use talon_tools::{
    METADATA_BLOCKED_CODE, SSRF_BLOCKED_CODE, SsrfAllowlistConfig, StaticResolver, WebFetchConfig,
    WebFetchTool,
};

use super::call;
use super::server::{Reply, TestServer};

fn ip(s: &str) -> IpAddr {
    s.parse().unwrap()
}

async fn target() -> TestServer {
    TestServer::start("127.0.0.1:0", |req| match req.path() {
        "/to-private" => Reply::redirect("http://10.0.0.1/admin"),
        "/to-metadata" => Reply::redirect("http://169.254.169.254/latest/meta-data/"),
        "/to-localhost" => Reply::redirect("http://localhost/"),
        "/to-file" => Reply::redirect("file:///etc/passwd"),
        _ => Reply::new(200, "text/plain", "reached"),
    })
    .await
}

fn assert_blocked(msg: &str, why: &str) {
    assert!(msg.starts_with(SSRF_BLOCKED_CODE), "{msg}");
    assert!(msg.contains(why), "expected {why:?} in {msg}");
}

#[tokio::test]
async fn every_loopback_spelling_is_refused_without_connecting() {
    let server = target().await;
    let port = server.addr.port();
    let tool = WebFetchTool::new(&WebFetchConfig::default()).unwrap();
    for url in [
        format!("http://127.0.0.1:{port}/"),
        format!("http://2130706433:{port}/"),
        format!("http://0x7f.1:{port}/"),
        format!("http://0x7f000001:{port}/"),
        format!("http://0177.0.0.1:{port}/"),
        format!("http://127.1:{port}/"),
        format!("http://[::ffff:127.0.0.1]:{port}/"),
        format!("http://[::127.0.0.1]:{port}/"),
        format!("http://[::1]:{port}/"),
        format!("http://localhost:{port}/"),
        format!("http://localhost.:{port}/"),
        format!("http://foo.localhost:{port}/"),
        format!("http://0.0.0.0:{port}/"),
    ] {
        let err = call(&tool, json!({ "url": url })).await.unwrap_err();
        assert_blocked(&err.to_string(), "Blocked hostname or private");
    }
    assert_eq!(server.accepts(), 0);
}

#[tokio::test]
async fn metadata_endpoints_userinfo_and_schemes_are_refused() {
    let tool = WebFetchTool::new(&WebFetchConfig::default()).unwrap();
    // Metadata endpoints have their own code, also under an allowlist that
    // names them.
    let wide = WebFetchConfig {
        ssrf_allowlist: Some(SsrfAllowlistConfig {
            hosts: vec!["metadata.google.internal".into()],
            cidrs: vec![
                "169.254.0.0/16".into(),
                "100.64.0.0/10".into(),
                "fd00::/8".into(),
            ],
        }),
        ..WebFetchConfig::default()
    };
    let wide = WebFetchTool::new(&wide).unwrap();
    for (url, why) in [
        (
            "http://169.254.169.254/latest/meta-data/",
            "cloud instance metadata",
        ),
        ("http://100.100.100.200/latest/meta-data/", "Alibaba"),
        (
            "http://[fd00:ec2::254]/latest/meta-data/",
            "AWS instance metadata",
        ),
        ("http://168.63.129.16/machine", "Azure WireServer"),
        (
            "http://metadata.google.internal/computeMetadata/v1/",
            "metadata service name",
        ),
    ] {
        for t in [&tool, &wide] {
            let err = call(t, json!({ "url": url })).await.unwrap_err();
            assert_eq!(err.code().as_str(), "web.metadata_blocked", "{url}: {err}");
            let msg = err.to_string();
            assert!(msg.starts_with(METADATA_BLOCKED_CODE), "{msg}");
            assert!(msg.contains(why), "expected {why:?} in {msg}");
        }
    }
    for (url, why) in [
        ("http://user:pw@example.com/", "credentials"),
        ("file:///etc/passwd", "Blocked scheme `file:`"),
        ("ftp://example.com/pub", "Blocked scheme `ftp:`"),
    ] {
        let err = call(&tool, json!({ "url": url })).await.unwrap_err();
        assert_blocked(&err.to_string(), why);
    }
}

#[tokio::test]
async fn a_public_name_resolving_to_loopback_is_refused_before_connecting() {
    let server = target().await;
    let port = server.addr.port();
    let resolver = StaticResolver::new()
        .with("public.example", [ip("127.0.0.1")])
        .with("mixed.example", [ip("93.184.216.34"), ip("127.0.0.1")])
        .with("mapped.example", [ip("::ffff:127.0.0.1")])
        .with("zero.example", [ip("0.0.0.0")]);
    let tool = WebFetchTool::with_resolver(&WebFetchConfig::default(), Arc::new(resolver)).unwrap();
    for host in [
        "public.example",
        "mixed.example",
        "mapped.example",
        "zero.example",
    ] {
        let err = call(&tool, json!({ "url": format!("http://{host}:{port}/") }))
            .await
            .unwrap_err();
        assert_blocked(
            &err.to_string(),
            "Blocked: resolves to private/internal/special-use IP address",
        );
    }
    assert_eq!(server.accepts(), 0, "no connection may be attempted");
}

#[tokio::test]
async fn an_allowlisted_name_connects_to_its_vetted_address_only() {
    let server = target().await;
    let port = server.addr.port();
    let resolver = StaticResolver::new()
        .with("fixture.test", [ip("127.0.0.1")])
        .with("other.test", [ip("127.0.0.1")]);
    let config = WebFetchConfig {
        ssrf_allowlist: Some(SsrfAllowlistConfig {
            hosts: vec!["fixture.test".into()],
            cidrs: vec![],
        }),
        ..WebFetchConfig::default()
    };
    let tool = WebFetchTool::with_resolver(&config, Arc::new(resolver)).unwrap();
    let out = call(
        &tool,
        json!({ "url": format!("http://fixture.test:{port}/x") }),
    )
    .await
    .unwrap();
    assert!(out.details["text"].as_str().unwrap().contains("reached"));
    assert_eq!(
        server.requests()[0].header("host"),
        Some(format!("fixture.test:{port}").as_str())
    );
    // A name not on the list, resolving to the same address, stays refused.
    let err = call(
        &tool,
        json!({ "url": format!("http://other.test:{port}/x") }),
    )
    .await
    .unwrap_err();
    assert_blocked(&err.to_string(), "127.0.0.1 is loopback");
    assert_eq!(server.accepts(), 1);
}

#[tokio::test]
async fn redirects_to_private_targets_are_refused_per_hop() {
    let server = target().await;
    // A second loopback server on 127.0.0.2, outside the /32 allowlist.
    let hidden =
        TestServer::start("127.0.0.2:0", |_| Reply::new(200, "text/plain", "internal")).await;
    let hidden_url = hidden.url("/secret");
    let redirector = TestServer::start("127.0.0.1:0", move |_| Reply::redirect(&hidden_url)).await;
    let config = WebFetchConfig {
        ssrf_allowlist: Some(SsrfAllowlistConfig {
            hosts: vec![],
            cidrs: vec!["127.0.0.1/32".into()],
        }),
        ..WebFetchConfig::default()
    };
    let tool = WebFetchTool::new(&config).unwrap();
    let err = call(&tool, json!({ "url": redirector.url("/") }))
        .await
        .unwrap_err();
    assert_blocked(&err.to_string(), "127.0.0.2 is loopback");
    assert_eq!(hidden.accepts(), 0);

    for (path, why) in [
        ("/to-private", "10.0.0.1 is private"),
        ("/to-localhost", "blocked host name"),
        ("/to-file", "Blocked scheme `file:`"),
    ] {
        let err = call(&tool, json!({ "url": server.url(path) }))
            .await
            .unwrap_err();
        assert_blocked(&err.to_string(), why);
    }
    let err = call(&tool, json!({ "url": server.url("/to-metadata") }))
        .await
        .unwrap_err();
    assert_eq!(err.code().as_str(), "web.metadata_blocked", "{err}");
}

#[tokio::test]
async fn bad_allowlist_is_a_config_error() {
    let config = WebFetchConfig {
        ssrf_allowlist: Some(SsrfAllowlistConfig {
            hosts: vec![],
            cidrs: vec!["127.0.0.1".into()],
        }),
        ..WebFetchConfig::default()
    };
    let err = WebFetchTool::new(&config).unwrap_err();
    assert!(
        err.to_string()
            .contains("tools.web.fetch.ssrfAllowlist.cidrs: `127.0.0.1` is not a CIDR"),
        "{err}"
    );
}
