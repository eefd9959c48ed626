//! The egress proxy against real loopback listeners: what the SSRF rules
//! refuse is never connected to; what they allow is tunnelled byte for byte.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::net::{IpAddr, Ipv4Addr};
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use talon_egress::{EgressProxy, SsrfAllowlistConfig, SsrfPolicy, StaticResolver};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, UnixStream};

/// A loopback listener that counts connections and echoes what it gets,
/// after answering a plain HTTP request with the head it received.
async fn upstream() -> (u16, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let seen = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&seen);
    tokio::spawn(async move {
        while let Ok((mut conn, _)) = listener.accept().await {
            counter.fetch_add(1, Ordering::SeqCst);
            tokio::spawn(async move {
                let mut buf = vec![0u8; 4096];
                while let Ok(n) = conn.read(&mut buf).await {
                    if n == 0 {
                        break;
                    }
                    let data = &buf[..n];
                    if data.starts_with(b"GET ") {
                        let body = String::from_utf8_lossy(data).into_owned();
                        let reply = format!(
                            "HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\n{body}",
                            body.len()
                        );
                        let _ = conn.write_all(reply.as_bytes()).await;
                        break;
                    }
                    if conn.write_all(data).await.is_err() {
                        break;
                    }
                }
            });
        }
    });
    (port, seen)
}

fn loopback_allowed() -> SsrfPolicy {
    SsrfPolicy::from_config(&SsrfAllowlistConfig {
        hosts: vec![],
        cidrs: vec!["127.0.0.1/32".to_owned()],
    })
    .unwrap()
}

fn start(dir: &Path, policy: SsrfPolicy, resolver: StaticResolver) -> EgressProxy {
    EgressProxy::start(
        &dir.join("egress.sock"),
        Arc::new(policy),
        Arc::new(resolver),
    )
    .unwrap()
}

/// Send `head`, read until the end of the response head; returns it and
/// the open stream.
async fn ask(proxy: &EgressProxy, head: &str) -> (String, UnixStream) {
    let mut s = UnixStream::connect(proxy.socket_path()).await.unwrap();
    s.write_all(head.as_bytes()).await.unwrap();
    let mut got = Vec::new();
    let mut byte = [0u8; 1];
    while !got.ends_with(b"\r\n\r\n") {
        let n = tokio::time::timeout(Duration::from_secs(10), s.read(&mut byte))
            .await
            .unwrap()
            .unwrap();
        assert!(
            n > 0,
            "proxy closed mid-head: {}",
            String::from_utf8_lossy(&got)
        );
        got.push(byte[0]);
    }
    (String::from_utf8(got).unwrap(), s)
}

async fn body(mut s: UnixStream) -> String {
    let mut out = String::new();
    tokio::time::timeout(Duration::from_secs(10), s.read_to_string(&mut out))
        .await
        .unwrap()
        .unwrap();
    out
}

#[tokio::test]
async fn strict_rules_refuse_loopback_and_never_connect() {
    let dir = tempfile::tempdir().unwrap();
    let (port, seen) = upstream().await;
    let proxy = start(dir.path(), SsrfPolicy::strict(), StaticResolver::new());
    for target in [
        format!("127.0.0.1:{port}"),
        format!("localhost:{port}"),
        format!("[::ffff:127.0.0.1]:{port}"),
        format!("2130706433:{port}"),
    ] {
        let (head, s) = ask(&proxy, &format!("CONNECT {target} HTTP/1.1\r\n\r\n")).await;
        assert!(head.starts_with("HTTP/1.1 403"), "{target}: {head}");
        assert!(
            head.contains("X-Talon-Egress: ssrf_blocked"),
            "{target}: {head}"
        );
        assert!(body(s).await.starts_with("ssrf_blocked: "), "{target}");
    }
    let (head, _) = ask(
        &proxy,
        &format!("GET http://127.0.0.1:{port}/ HTTP/1.1\r\nHost: x\r\n\r\n"),
    )
    .await;
    assert!(head.starts_with("HTTP/1.1 403"), "{head}");
    assert_eq!(
        seen.load(Ordering::SeqCst),
        0,
        "a refused destination was connected"
    );
}

#[tokio::test]
async fn a_name_with_one_private_answer_is_refused_whole() {
    let dir = tempfile::tempdir().unwrap();
    let (port, seen) = upstream().await;
    let resolver = StaticResolver::new().with(
        "rebind.example",
        [
            IpAddr::V4(Ipv4Addr::new(93, 184, 216, 34)),
            IpAddr::V4(Ipv4Addr::LOCALHOST),
        ],
    );
    let proxy = start(dir.path(), SsrfPolicy::strict(), resolver);
    let (head, s) = ask(
        &proxy,
        &format!("CONNECT rebind.example:{port} HTTP/1.1\r\n\r\n"),
    )
    .await;
    assert!(head.starts_with("HTTP/1.1 403"), "{head}");
    assert!(body(s).await.contains("127.0.0.1 is loopback"));
    assert_eq!(seen.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn an_allowlisted_destination_is_tunnelled() {
    let dir = tempfile::tempdir().unwrap();
    let (port, seen) = upstream().await;
    let resolver = StaticResolver::new().with("svc.example", [IpAddr::V4(Ipv4Addr::LOCALHOST)]);
    let proxy = start(dir.path(), loopback_allowed(), resolver);
    for target in [format!("127.0.0.1:{port}"), format!("svc.example:{port}")] {
        let (head, mut s) = ask(&proxy, &format!("CONNECT {target} HTTP/1.1\r\n\r\n")).await;
        assert!(head.starts_with("HTTP/1.1 200"), "{target}: {head}");
        s.write_all(b"ping through the tunnel").await.unwrap();
        let mut buf = [0u8; 23];
        tokio::time::timeout(Duration::from_secs(10), s.read_exact(&mut buf))
            .await
            .unwrap()
            .unwrap();
        assert_eq!(&buf, b"ping through the tunnel");
    }
    assert_eq!(seen.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn plain_http_is_forwarded_in_origin_form_without_proxy_credentials() {
    let dir = tempfile::tempdir().unwrap();
    let (port, _) = upstream().await;
    let proxy = start(dir.path(), loopback_allowed(), StaticResolver::new());
    let (head, s) = ask(
        &proxy,
        &format!(
            "GET http://127.0.0.1:{port}/path?q=1 HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\
             Proxy-Authorization: Basic c2VjcmV0\r\n\r\n"
        ),
    )
    .await;
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    let echoed = body(s).await;
    assert!(echoed.starts_with("GET /path?q=1 HTTP/1.1\r\n"), "{echoed}");
    assert!(echoed.contains("Connection: close\r\n"), "{echoed}");
    assert!(!echoed.contains("Proxy-Authorization"), "{echoed}");
}

#[tokio::test]
async fn garbage_and_oversized_heads_get_400() {
    let dir = tempfile::tempdir().unwrap();
    let proxy = start(dir.path(), SsrfPolicy::strict(), StaticResolver::new());
    let (head, _) = ask(&proxy, "HELLO\r\n\r\n").await;
    assert!(head.starts_with("HTTP/1.1 400"), "{head}");
    let long = format!(
        "GET http://a.example/{} HTTP/1.1\r\n\r\n",
        "a".repeat(40_000)
    );
    let (head, _) = ask(&proxy, &long).await;
    assert!(head.starts_with("HTTP/1.1 400"), "{head}");
}

#[tokio::test]
async fn dropping_the_proxy_removes_its_socket_and_a_file_is_never_replaced() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("egress.sock");
    let proxy = start(dir.path(), SsrfPolicy::strict(), StaticResolver::new());
    assert!(path.exists());
    drop(proxy);
    assert!(!path.exists());
    std::fs::write(&path, b"not a socket").unwrap();
    let err = EgressProxy::start(
        &path,
        Arc::new(SsrfPolicy::strict()),
        Arc::new(StaticResolver::new()),
    )
    .unwrap_err();
    assert!(err.to_string().contains("not a socket"), "{err}");
    assert_eq!(std::fs::read(&path).unwrap(), b"not a socket");
}
