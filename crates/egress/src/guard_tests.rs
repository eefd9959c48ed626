#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::net::IpAddr;
use std::sync::Arc;

use url::Url;

use super::*;
use crate::allowlist::SsrfAllowlistConfig;
use crate::resolver::StaticResolver;
use crate::ssrf::{METADATA_BLOCKED_CODE, SSRF_BLOCKED_CODE};

fn ip(s: &str) -> IpAddr {
    s.parse().unwrap()
}

fn url(s: &str) -> Url {
    Url::parse(s).unwrap()
}

fn resolver() -> Arc<StaticResolver> {
    Arc::new(
        StaticResolver::new()
            .with("public.example", [ip("93.184.216.34")])
            .with("sneaky.example", [ip("93.184.216.34"), ip("10.0.0.7")])
            .with("loop.example", [ip("127.0.0.1")])
            .with("localhost", [ip("127.0.0.1"), ip("::1")])
            .with("imds.example", [ip("169.254.169.254")])
            .with("azure.example", [ip("168.63.129.16")])
            .with("mapped-imds.example", [ip("::ffff:169.254.169.254")]),
    )
}

fn guard(policy: SsrfPolicy) -> EgressGuard {
    EgressGuard::new(Arc::new(policy), resolver()).with_opt_in("set `x.allowPrivateNetwork: true`")
}

async fn refusal(g: &EgressGuard, u: &str) -> SsrfBlocked {
    match g.destination(&url(u)).await {
        Err(EgressError::Blocked(b)) => b,
        other => panic!("{u}: expected a refusal, got {other:?}"),
    }
}

#[tokio::test]
async fn a_public_name_yields_its_vetted_addresses() {
    let g = guard(SsrfPolicy::strict());
    let dest = g
        .destination(&url("https://public.example/x"))
        .await
        .unwrap();
    assert_eq!(dest.host, "public.example");
    assert_eq!(dest.addrs, vec![ip("93.184.216.34")]);
}

#[tokio::test]
async fn names_resolving_to_private_addresses_are_refused_with_the_opt_in_named() {
    let g = guard(SsrfPolicy::strict());
    for (u, why) in [
        ("http://sneaky.example/", "10.0.0.7 is private"),
        ("http://loop.example:8080/", "127.0.0.1 is loopback"),
    ] {
        let b = refusal(&g, u).await;
        assert_eq!(b.kind, BlockKind::Private, "{u}");
        assert_eq!(b.code(), SSRF_BLOCKED_CODE);
        assert!(b.reason.contains(why), "{u}: {b}");
        let text = b.to_string();
        assert!(text.contains("x.allowPrivateNetwork"), "{text}");
    }
}

#[tokio::test]
async fn the_private_network_opt_in_opens_private_names_and_literals() {
    let g = guard(SsrfPolicy::strict().with_private_network(true));
    for u in [
        "http://loop.example/",
        "http://sneaky.example/",
        "http://127.0.0.1:9/",
        "http://[::1]:9/",
        "http://localhost:9/",
        "http://10.1.2.3/",
        "http://169.254.10.10/",
    ] {
        assert!(g.destination(&url(u)).await.is_ok(), "{u}");
    }
    // Still refused: unspecified, multicast, documentation, legacy literals.
    for u in [
        "http://0.0.0.0/",
        "http://[::]/",
        "http://224.0.0.1/",
        "http://192.0.2.1/",
    ] {
        assert!(g.check_url(&url(u)).is_err(), "{u}");
    }
}

#[tokio::test]
async fn metadata_endpoints_are_refused_under_every_opt_in() {
    let wide_open = SsrfPolicy::from_config(&SsrfAllowlistConfig {
        hosts: vec![
            "metadata.google.internal".into(),
            "imds.example".into(),
            "azure.example".into(),
            "mapped-imds.example".into(),
        ],
        cidrs: vec!["0.0.0.0/0".into(), "::/0".into(), "169.254.0.0/16".into()],
    })
    .unwrap()
    .with_private_network(true);
    for policy in [SsrfPolicy::strict(), wide_open] {
        let g = guard(policy);
        for u in [
            "http://169.254.169.254/latest/meta-data/",
            "http://[fd00:ec2::254]/latest/meta-data/",
            "http://[::ffff:a9fe:a9fe]/",
            "http://[64:ff9b::a9fe:a9fe]/",
            "http://100.100.100.200/latest/meta-data/",
            "http://168.63.129.16/machine?comp=goalstate",
            "http://169.254.170.2/v2/credentials",
            "http://[fd20:ce::254]/",
            "http://metadata.google.internal/computeMetadata/v1/",
            "http://METADATA.GOOGLE.INTERNAL./",
            "http://metadata.goog/",
            "http://metadata/computeMetadata/v1/",
            "http://instance-data/latest/",
            "http://imds.example/",
            "http://azure.example/",
            "http://mapped-imds.example/",
        ] {
            let b = refusal(&g, u).await;
            assert_eq!(b.kind, BlockKind::Metadata, "{u}: {b}");
            assert_eq!(b.code(), METADATA_BLOCKED_CODE, "{u}");
            let text = b.to_string();
            assert!(text.starts_with("metadata_blocked: "), "{text}");
            assert!(
                text.contains("no allowlist entry or private-network opt-in"),
                "{text}"
            );
        }
    }
}

#[tokio::test]
async fn an_unknown_name_is_a_resolve_error_not_a_refusal() {
    let g = guard(SsrfPolicy::strict());
    let err = g
        .destination(&url("http://nowhere.example/"))
        .await
        .unwrap_err();
    assert_eq!(err.code(), RESOLVE_FAILED_CODE);
    assert!(err.blocked().is_none());
}

#[test]
fn blocked_in_finds_a_refusal_anywhere_in_a_source_chain() {
    #[derive(Debug, thiserror::Error)]
    #[error("outer")]
    struct Outer(#[source] Box<dyn std::error::Error + Send + Sync>);
    let b = guard(SsrfPolicy::strict())
        .check_url(&url("http://127.0.0.1/"))
        .unwrap_err();
    let chain = Outer(Box::new(b.clone()));
    assert_eq!(blocked_in(&chain), Some(b.clone()));
    let chain = Outer(Box::new(EgressError::Blocked(b.clone())));
    assert_eq!(blocked_in(&chain), Some(b));
    let plain = Outer(Box::new(std::io::Error::other("x")));
    assert_eq!(blocked_in(&plain), None);
}
