//! Streamable-HTTP servers behind the egress guard: a loopback canary
//! counts every connection, so "refused before anything connected" (and
//! so before a configured token could leave) is observed, not assumed.

use std::net::IpAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use serde_json::{Value, json};
use talon_egress::StaticResolver;
use talon_mcp::{McpManager, ServerState};

use crate::suite::calls::call;
use crate::suite::peers::HttpFixture;
use crate::support::manager;

fn ip(s: &str) -> IpAddr {
    s.parse().unwrap()
}

/// A TCP listener on loopback that only counts the connections it gets.
struct Canary {
    port: u16,
    accepts: Arc<AtomicUsize>,
    task: tokio::task::JoinHandle<()>,
}

impl Canary {
    async fn start() -> Canary {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let accepts = Arc::new(AtomicUsize::new(0));
        let seen = Arc::clone(&accepts);
        let task = tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                seen.fetch_add(1, Ordering::SeqCst);
                drop(stream);
            }
        });
        Canary {
            port,
            accepts,
            task,
        }
    }

    async fn connections(&self) -> usize {
        tokio::time::sleep(Duration::from_millis(100)).await;
        self.accepts.load(Ordering::SeqCst)
    }
}

impl Drop for Canary {
    fn drop(&mut self) {
        self.task.abort();
    }
}

fn resolver() -> Arc<StaticResolver> {
    Arc::new(
        StaticResolver::new()
            .with("mcp.example", [ip("127.0.0.1")])
            .with("localhost", [ip("127.0.0.1")])
            .with("imds.example", [ip("169.254.169.254")]),
    )
}

fn with_resolver(servers: Value) -> McpManager {
    manager(servers).with_resolver(resolver())
}

/// Start `servers` and return the one report's error.
async fn start_error(m: &McpManager) -> String {
    let reports = m.ensure_agent("main").await;
    let err = reports[0]
        .error
        .as_ref()
        .map(ToString::to_string)
        .unwrap_or_default();
    assert_eq!(m.status().servers[0].state, ServerState::Failed, "{err}");
    m.shutdown().await;
    err
}

#[tokio::test]
async fn a_loopback_server_is_refused_without_opt_in_and_never_contacted() {
    let canary = Canary::start().await;
    let port = canary.port;
    for url in [
        format!("http://127.0.0.1:{port}/mcp"),
        format!("http://localhost:{port}/mcp"),
        format!("http://[::ffff:127.0.0.1]:{port}/mcp"),
        format!("http://mcp.example:{port}/mcp"),
    ] {
        let m = with_resolver(json!({"canary": {
            "url": url,
            "headers": {"Authorization": "Bearer canary-token"},
        }}));
        let err = start_error(&m).await;
        assert_eq!(
            m.status().servers[0].last_error.as_deref(),
            Some(err.as_str())
        );
        assert!(err.starts_with("ssrf_blocked: "), "{url}: {err}");
        assert!(err.contains("allowPrivateNetwork: true"), "{err}");
        assert!(err.contains("mcp.servers.canary"), "{err}");
        assert!(!err.contains("canary-token"), "{err}");
        // `mcp.status` shows the same reason.
    }
    assert_eq!(canary.connections().await, 0, "the canary was contacted");
}

#[tokio::test]
async fn a_metadata_url_is_refused_with_and_without_the_opt_in() {
    for url in [
        "http://169.254.169.254/mcp",
        "http://[fd00:ec2::254]/mcp",
        "http://100.100.100.200/mcp",
        "http://metadata.google.internal/mcp",
        "http://imds.example/mcp",
    ] {
        for open in [false, true] {
            let m = with_resolver(json!({"meta": {"url": url, "allowPrivateNetwork": open}}));
            let err = start_error(&m).await;
            assert!(
                err.starts_with("metadata_blocked: "),
                "{url} ({open}): {err}"
            );
            assert!(
                err.contains("no allowlist entry or private-network opt-in opens them"),
                "{err}"
            );
        }
    }
}

#[tokio::test]
async fn with_the_opt_in_a_loopback_server_works_and_names_resolve_through_the_guard() {
    let fixture = HttpFixture::start();
    let by_localhost = fixture.url.replace("127.0.0.1", "localhost");
    for url in [fixture.url.clone(), by_localhost] {
        let m = with_resolver(json!({"web": {"url": url, "allowPrivateNetwork": true}}));
        assert_eq!(m.ensure_agent("main").await[0].error, None, "{url}");
        assert_eq!(
            call(&m, "web__echo", json!({"text": "through the guard"}))
                .await
                .unwrap()
                .text(),
            "through the guard"
        );
        m.shutdown().await;
    }
    // A name only the injected resolver knows reaches the fixture (whose
    // DNS-rebinding check then refuses the unknown Host header): the
    // session connects through the guard's pinned resolution or not at all.
    let by_name = fixture.url.replace("127.0.0.1", "mcp.example");
    let m = with_resolver(json!({"web": {"url": by_name, "allowPrivateNetwork": true}}));
    let err = start_error(&m).await;
    assert!(err.contains("Host header is not allowed"), "{err}");
}

#[test]
fn allow_private_network_is_for_url_servers_only_and_unknown_keys_are_refused() {
    let err = talon_mcp::parse_config(
        &json!({"servers": {"s": {"command": "srv", "allowPrivateNetwork": true}}}),
        "mcp",
    )
    .unwrap_err()
    .to_string();
    assert!(err.contains("mcp.servers.s.allowPrivateNetwork"), "{err}");
    let err = talon_mcp::parse_config(
        &json!({"servers": {"s": {"url": "http://127.0.0.1/", "allowPrivateNetworks": true}}}),
        "mcp",
    )
    .unwrap_err()
    .to_string();
    assert!(err.contains("allowPrivateNetworks"), "{err}");
}
