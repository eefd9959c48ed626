//! Egress proxy benchmarks, on loopback:
//!
//! - `egress_roundtrip_direct`: TCP connect to an echo server and one
//!   byte there and back: the floor;
//! - `egress_roundtrip_proxy`: the same through [`EgressProxy`] (Unix
//!   socket connect, `CONNECT` head parsed, SSRF check, upstream connect,
//!   `200`, then the byte through the tunnel);
//! - `egress_refusal`: a `CONNECT` the SSRF rules refuse (`403`), the cost
//!   of saying no.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::Arc;

use criterion::{Criterion, criterion_group, criterion_main};
use talon_egress::{EgressProxy, SsrfAllowlistConfig, SsrfPolicy, StaticResolver};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream, UnixStream};

async fn echo_server() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        while let Ok((mut conn, _)) = listener.accept().await {
            tokio::spawn(async move {
                let mut buf = [0u8; 64];
                while let Ok(n) = conn.read(&mut buf).await {
                    if n == 0 || conn.write_all(&buf[..n]).await.is_err() {
                        break;
                    }
                }
            });
        }
    });
    port
}

async fn read_head<S: AsyncReadExt + Unpin>(s: &mut S) -> Vec<u8> {
    let mut got = Vec::new();
    let mut byte = [0u8; 1];
    while !got.ends_with(b"\r\n\r\n") {
        assert_eq!(s.read(&mut byte).await.unwrap(), 1);
        got.push(byte[0]);
    }
    got
}

fn benches(c: &mut Criterion) {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let (port, proxy) = rt.block_on(async {
        let port = echo_server().await;
        let policy = SsrfPolicy::from_config(&SsrfAllowlistConfig {
            hosts: vec![],
            cidrs: vec!["127.0.0.1/32".to_owned()],
        })
        .unwrap();
        let proxy = EgressProxy::start(
            &dir.path().join("egress.sock"),
            Arc::new(policy),
            Arc::new(StaticResolver::new()),
        )
        .unwrap();
        (port, proxy)
    });
    let socket = proxy.socket_path().to_path_buf();

    c.bench_function("egress_roundtrip_direct", |b| {
        b.iter(|| {
            rt.block_on(async {
                let mut s = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
                s.write_all(b"x").await.unwrap();
                let mut one = [0u8; 1];
                s.read_exact(&mut one).await.unwrap();
            })
        });
    });
    let connect = format!("CONNECT 127.0.0.1:{port} HTTP/1.1\r\n\r\n");
    c.bench_function("egress_roundtrip_proxy", |b| {
        b.iter(|| {
            rt.block_on(async {
                let mut s = UnixStream::connect(&socket).await.unwrap();
                s.write_all(connect.as_bytes()).await.unwrap();
                assert!(read_head(&mut s).await.starts_with(b"HTTP/1.1 200"));
                s.write_all(b"x").await.unwrap();
                let mut one = [0u8; 1];
                s.read_exact(&mut one).await.unwrap();
            })
        });
    });
    c.bench_function("egress_refusal", |b| {
        b.iter(|| {
            rt.block_on(async {
                let mut s = UnixStream::connect(&socket).await.unwrap();
                s.write_all(b"CONNECT 169.254.169.254:80 HTTP/1.1\r\n\r\n")
                    .await
                    .unwrap();
                assert!(read_head(&mut s).await.starts_with(b"HTTP/1.1 403"));
            })
        });
    });
    drop(proxy);
}

criterion_group!(egress, benches);
criterion_main!(egress);
