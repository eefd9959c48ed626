#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::net::{IpAddr, Ipv4Addr};

use super::*;

fn ip(s: &str) -> IpAddr {
    s.parse().unwrap()
}

fn class(s: &str) -> Option<&'static str> {
    classify_ip(ip(s)).map(|b| b.class)
}

#[test]
fn ipv4_special_use_classes() {
    let cases = [
        ("127.0.0.1", "loopback"),
        ("127.255.255.254", "loopback"),
        ("10.0.0.1", "private"),
        ("172.16.0.1", "private"),
        ("172.31.255.255", "private"),
        ("192.168.1.1", "private"),
        ("169.254.169.254", "linkLocal"),
        ("100.64.0.1", "carrierGradeNat"),
        ("100.100.100.200", "carrierGradeNat"),
        ("100.127.255.255", "carrierGradeNat"),
        ("0.0.0.0", "unspecified"),
        ("0.1.2.3", "unspecified"),
        ("255.255.255.255", "broadcast"),
        ("224.0.0.1", "multicast"),
        ("239.255.255.250", "multicast"),
        ("198.18.0.1", "benchmarking"),
        ("198.19.255.255", "benchmarking"),
        ("192.0.2.1", "documentation"),
        ("198.51.100.7", "documentation"),
        ("203.0.113.9", "documentation"),
        ("192.0.0.8", "reserved"),
        ("240.0.0.1", "reserved"),
    ];
    for (addr, want) in cases {
        assert_eq!(class(addr), Some(want), "{addr}");
    }
}

#[test]
fn ipv4_public_addresses_pass_including_range_edges() {
    for addr in [
        "8.8.8.8",
        "1.1.1.1",
        "172.15.255.255",
        "172.32.0.0",
        "100.63.255.255",
        "100.128.0.0",
        "198.17.255.255",
        "198.20.0.0",
        "169.253.255.255",
        "223.255.255.255",
    ] {
        assert_eq!(class(addr), None, "{addr}");
    }
}

#[test]
fn ipv6_special_use_classes() {
    let cases = [
        ("::", "unspecified"),
        ("::1", "loopback"),
        ("fe80::1", "linkLocal"),
        ("febf::1", "linkLocal"),
        ("fec0::1", "siteLocal"),
        ("fc00::1", "uniqueLocal"),
        ("fd00:ec2::254", "uniqueLocal"),
        ("ff02::1", "multicast"),
        ("100::1", "discard"),
        ("2001:db8::1", "documentation"),
        ("3fff::1", "documentation"),
        ("2001:2::1", "benchmarking"),
        ("2001:10::1", "orchid"),
        ("2001:20::1", "orchid"),
        ("2001:100::1", "reserved"),
    ];
    for (addr, want) in cases {
        assert_eq!(class(addr), Some(want), "{addr}");
    }
}

#[test]
fn embedded_ipv4_is_rechecked_for_every_embedding() {
    let cases = [
        ("::ffff:127.0.0.1", "IPv4-mapped", "loopback"),
        ("0:0:0:0:0:ffff:7f00:1", "IPv4-mapped", "loopback"),
        ("::ffff:169.254.169.254", "IPv4-mapped", "linkLocal"),
        ("::127.0.0.1", "IPv4-compatible", "loopback"),
        ("::10.0.0.1", "IPv4-compatible", "private"),
        ("::ffff:0:10.1.2.3", "IPv4-translated", "private"),
        ("64:ff9b::127.0.0.1", "NAT64", "loopback"),
        ("64:ff9b::a9fe:a9fe", "NAT64", "linkLocal"),
        ("64:ff9b:1::c0a8:101", "NAT64", "private"),
        ("2002:7f00:1::", "6to4", "loopback"),
        ("2002:a00:1::1", "6to4", "private"),
        // Teredo: client 127.0.0.1 obfuscated (XOR ffff:ffff) = 80ff:fffe.
        ("2001:0:808:808::80ff:fffe", "Teredo", "loopback"),
        // Teredo server itself private.
        ("2001:0:a00:1::1", "Teredo", "private"),
        ("2001:4860::5efe:7f00:1", "ISATAP", "loopback"),
        ("2607:f8b0::200:5efe:a00:1", "ISATAP", "private"),
    ];
    for (addr, via, want) in cases {
        let block = classify_ip(ip(addr)).unwrap_or_else(|| panic!("{addr} passed"));
        assert_eq!(block.class, want, "{addr}");
        assert_eq!(block.embedded.map(|(v, _)| v), Some(via), "{addr}");
    }
}

#[test]
fn embedded_public_ipv4_passes() {
    for addr in [
        "::ffff:8.8.8.8",
        "64:ff9b::808:808",
        "2002:808:808::1",
        "2001:0:808:808::f7f7:f7f7",
        "2606:4700::1111",
        "2001:4860:4860::8888",
    ] {
        assert_eq!(classify_ip(ip(addr)), None, "{addr}");
    }
}

#[test]
fn block_display_names_the_embedding() {
    let block = classify_ip(ip("::ffff:127.0.0.1")).unwrap();
    assert_eq!(
        block.to_string(),
        "loopback (IPv4 127.0.0.1 embedded as IPv4-mapped)"
    );
}

#[test]
fn hostname_normalisation() {
    assert_eq!(normalize_hostname("  LocalHost.. "), "localhost");
    assert_eq!(normalize_hostname("[::1]"), "::1");
    assert_eq!(normalize_hostname("Example.COM."), "example.com");
}

#[test]
fn blocked_hostnames_and_suffixes() {
    for h in [
        "localhost",
        "LOCALHOST.",
        "localhost.localdomain",
        "metadata.google.internal",
        "metadata.google.internal.",
        "foo.localhost",
        "printer.local",
        "db.corp.internal",
        "",
    ] {
        assert!(is_blocked_hostname(h), "{h:?} should be blocked");
    }
    for h in [
        "example.com",
        "localhost.example.com",
        "internal.example.com",
        "mylocal",
    ] {
        assert!(!is_blocked_hostname(h), "{h:?} should pass");
    }
}

#[test]
fn legacy_and_malformed_literals_fail_closed() {
    for h in [
        "2130706433",
        "0x7f000001",
        "0x7f.1",
        "0177.0.0.1",
        "127.1",
        "127.0.1",
        "1.2.3.4.5",
        "1..2.3",
        "01.02.03.04",
        "256.1.1.1",
        "example.123",
    ] {
        assert_eq!(parse_host_literal(h), HostLiteral::LegacyIpv4, "{h}");
    }
    for h in ["[::ffff:zz]", "1:2:3:4:5:6:7:8:9", "fe80::1%eth0"] {
        assert_eq!(parse_host_literal(h), HostLiteral::MalformedIpv6, "{h}");
    }
    assert_eq!(
        parse_host_literal("127.0.0.1"),
        HostLiteral::Ip(IpAddr::V4(Ipv4Addr::LOCALHOST))
    );
    assert_eq!(
        parse_host_literal("Example.com."),
        HostLiteral::Name("example.com".into())
    );
}

fn refuse(policy: &SsrfPolicy, url: &str) -> SsrfBlocked {
    let parsed = Url::parse(url).unwrap();
    policy
        .check_url(&parsed)
        .expect_err(&format!("{url} should be refused"))
}

#[test]
fn every_loopback_spelling_is_refused_before_dns() {
    let policy = SsrfPolicy::strict();
    for url in [
        "http://127.0.0.1/",
        "http://2130706433/",
        "http://0x7f.1/",
        "http://0x7f000001/",
        "http://0177.0.0.1/",
        "http://127.1/",
        "http://[::1]/",
        "http://[::ffff:127.0.0.1]/",
        "http://[0:0:0:0:0:ffff:7f00:1]/",
        "http://[::127.0.0.1]/",
        "http://0.0.0.0/",
        "http://[::]/",
        "http://localhost/",
        "http://localhost./",
        "http://LOCALHOST:8080/",
        "http://foo.localhost/",
    ] {
        let err = refuse(&policy, url);
        assert_eq!(err.code(), "ssrf_blocked");
        assert!(
            err.reason.starts_with("Blocked hostname or private"),
            "{url}: {}",
            err.reason
        );
    }
}

#[test]
fn metadata_and_private_targets_are_refused() {
    let policy = SsrfPolicy::strict();
    for (url, why) in [
        ("http://10.1.2.3:8080/x", "private"),
        ("https://192.168.0.1/", "private"),
        ("http://169.254.1.1/", "linkLocal"),
    ] {
        let err = refuse(&policy, url);
        assert_eq!(err.kind, BlockKind::Private);
        assert!(err.reason.contains(why), "{url}: {}", err.reason);
        assert!(err.to_string().starts_with("ssrf_blocked: "), "{err}");
    }
    for (url, why) in [
        (
            "http://169.254.169.254/latest/meta-data/",
            "169.254.169.254 is the cloud instance metadata service",
        ),
        ("http://100.100.100.200/", "Alibaba"),
        ("http://[fd00:ec2::254]/", "AWS instance metadata (IPv6)"),
        ("http://168.63.129.16/", "Azure WireServer"),
        (
            "http://metadata.google.internal/",
            "`metadata.google.internal` is a metadata service name",
        ),
    ] {
        let err = refuse(&policy, url);
        assert_eq!(err.kind, BlockKind::Metadata, "{url}");
        assert!(err.reason.contains(why), "{url}: {}", err.reason);
        assert!(err.to_string().starts_with("metadata_blocked: "), "{err}");
    }
}

#[test]
fn metadata_addresses_are_matched_through_every_embedding() {
    for addr in [
        "169.254.169.254",
        "::ffff:169.254.169.254",
        "::169.254.169.254",
        "64:ff9b::a9fe:a9fe",
        "2002:a9fe:a9fe::1",
        "::ffff:168.63.129.16",
        "fd00:ec2::254",
        "fd20:ce::254",
    ] {
        assert!(crate::metadata_endpoint(ip(addr)).is_some(), "{addr}");
    }
    for addr in [
        "169.254.169.253",
        "168.63.129.17",
        "fd00:ec2::255",
        "8.8.8.8",
    ] {
        assert_eq!(crate::metadata_endpoint(ip(addr)), None, "{addr}");
    }
    // A metadata address resolved for an allowlisted name is still refused.
    let policy = SsrfPolicy::from_config(&SsrfAllowlistConfig {
        hosts: vec!["intranet.test".into()],
        cidrs: vec!["169.254.0.0/16".into()],
    })
    .unwrap()
    .with_private_network(true);
    let err = policy
        .vet_addresses("intranet.test", &[ip("10.0.0.1"), ip("169.254.169.254")])
        .unwrap_err();
    assert_eq!(err.kind, BlockKind::Metadata);
    assert!(
        policy
            .vet_addresses("intranet.test", &[ip("10.0.0.1")])
            .is_ok()
    );
    assert_eq!(
        policy.ip_block(ip("169.254.169.254")).map(|(k, _)| k),
        Some(BlockKind::Metadata)
    );
    assert_eq!(policy.ip_block(ip("169.254.1.1")), None);
}

#[test]
fn allowlist_errors_name_the_key_they_were_read_from() {
    let err = SsrfPolicy::from_config_at(
        &SsrfAllowlistConfig {
            hosts: vec![],
            cidrs: vec!["10.0.0.0/99".into()],
        },
        "tools.web.search.ssrfAllowlist",
    )
    .unwrap_err();
    assert_eq!(err.key, "tools.web.search.ssrfAllowlist.cidrs");
}

#[test]
fn userinfo_and_other_schemes_are_refused() {
    let policy = SsrfPolicy::strict();
    let err = refuse(&policy, "http://user:pass@example.com/");
    assert!(err.reason.contains("credentials"), "{}", err.reason);
    let err = refuse(&policy, "http://user@example.com/");
    assert!(err.reason.contains("credentials"), "{}", err.reason);
    for url in [
        "file:///etc/passwd",
        "ftp://example.com/x",
        "gopher://example.com/",
        "data:text/plain,hi",
    ] {
        let err = refuse(&policy, url);
        assert!(
            err.reason.contains("Blocked scheme"),
            "{url}: {}",
            err.reason
        );
    }
}

#[test]
fn public_urls_pass_the_pre_dns_check() {
    let policy = SsrfPolicy::strict();
    for url in [
        "https://example.com/",
        "http://8.8.8.8/",
        "http://[2606:4700::1111]/",
    ] {
        assert!(policy.check_url(&Url::parse(url).unwrap()).is_ok(), "{url}");
    }
}

#[test]
fn any_blocked_resolved_address_refuses_the_name() {
    let policy = SsrfPolicy::strict();
    let err = policy
        .vet_addresses("public.example", &[ip("93.184.216.34"), ip("10.0.0.5")])
        .unwrap_err();
    assert!(
        err.reason
            .starts_with("Blocked: resolves to private/internal/special-use IP address"),
        "{}",
        err.reason
    );
    assert!(err.reason.contains("10.0.0.5"), "{}", err.reason);
    assert!(policy.vet_addresses("x.example", &[]).is_err());
    assert_eq!(
        policy
            .vet_addresses("ok.example", &[ip("93.184.216.34")])
            .unwrap(),
        vec![ip("93.184.216.34")]
    );
    // A mapped address is judged as the IPv4 it carries.
    assert!(
        policy
            .vet_addresses("m.example", &[ip("::ffff:127.0.0.1")])
            .is_err()
    );
}

#[test]
fn allowlist_opens_named_hosts_and_cidrs_but_never_unspecified() {
    let policy = SsrfPolicy::from_config(&SsrfAllowlistConfig {
        hosts: vec!["intranet.test".into(), "*.corp.test".into()],
        cidrs: vec!["127.0.0.1/32".into(), "0.0.0.0/0".into()],
    })
    .unwrap();
    assert!(policy.host_allowed("INTRANET.test."));
    assert!(policy.host_allowed("a.corp.test"));
    assert!(
        !policy.host_allowed("corp.test"),
        "*.suffix excludes the apex"
    );
    assert!(!policy.host_allowed("evilcorp.test"));
    assert!(
        policy
            .check_url(&Url::parse("http://127.0.0.1:9/").unwrap())
            .is_ok()
    );
    assert!(
        policy
            .vet_addresses("intranet.test", &[ip("10.0.0.1")])
            .is_ok()
    );
    // Even with 0.0.0.0/0 allowlisted, the unspecified address is refused.
    assert!(
        refuse(&policy, "http://0.0.0.0/")
            .reason
            .contains("unspecified")
    );
    assert!(policy.vet_addresses("intranet.test", &[ip("::")]).is_err());

    let narrow = SsrfPolicy::from_config(&SsrfAllowlistConfig {
        hosts: vec![],
        cidrs: vec!["127.0.0.1/32".into()],
    })
    .unwrap();
    assert!(
        refuse(&narrow, "http://127.0.0.2/")
            .reason
            .contains("loopback")
    );
}

#[test]
fn empty_allowlist_opens_nothing() {
    let policy = SsrfPolicy::from_config(&SsrfAllowlistConfig::default()).unwrap();
    refuse(&policy, "http://127.0.0.1/");
    refuse(&policy, "http://localhost/");
}

#[test]
fn bad_allowlist_entries_name_the_key() {
    let err = SsrfPolicy::from_config(&SsrfAllowlistConfig {
        hosts: vec![],
        cidrs: vec!["10.0.0.0/33".into()],
    })
    .unwrap_err();
    assert!(
        err.to_string()
            .starts_with("tools.web.fetch.ssrfAllowlist.cidrs: `10.0.0.0/33` is not a CIDR"),
        "{err}"
    );
    let err = SsrfPolicy::from_config(&SsrfAllowlistConfig {
        hosts: vec!["http://x/".into()],
        cidrs: vec![],
    })
    .unwrap_err();
    assert!(
        err.to_string()
            .starts_with("tools.web.fetch.ssrfAllowlist.hosts"),
        "{err}"
    );
}

mod props {
    use proptest::prelude::*;

    use super::*;

    proptest! {
        #[test]
        fn every_mapped_private_v4_is_blocked(a in 0u8..=255, b in 0u8..=255, c in 0u8..=255) {
            let v4 = Ipv4Addr::new(10, a, b, c);
            let mapped = IpAddr::V6(v4.to_ipv6_mapped());
            prop_assert_eq!(classify_ip(mapped).map(|b| b.class), Some("private"));
            let nat64 = IpAddr::V6(std::net::Ipv6Addr::from(
                (0x0064_ff9b_u128 << 96) | u128::from(u32::from(v4)),
            ));
            prop_assert_eq!(classify_ip(nat64).map(|b| b.class), Some("private"));
        }

        #[test]
        fn loopback_block_is_total(x in any::<u32>()) {
            let v4 = Ipv4Addr::from((127u32 << 24) | (x & 0x00ff_ffff));
            prop_assert_eq!(classify_ip(IpAddr::V4(v4)).map(|b| b.class), Some("loopback"));
        }
    }
}

/// Found by the `ip_literal_differential` fuzz target: `%35` is the
/// address 0.0.0.5 to a URL host parser, so the guard must not read it as
/// a host name (which would skip the address rules).
#[test]
fn percent_escaped_hosts_are_read_as_the_address_they_decode_to() {
    assert_eq!(
        parse_host_literal("%35"),
        HostLiteral::LegacyIpv4,
        "a one-part IPv4 literal once decoded"
    );
    assert_eq!(
        parse_host_literal("%31%32%37.0.0.1"),
        HostLiteral::Ip(ip("127.0.0.1"))
    );
    assert_eq!(parse_host_literal("%3A%3A1"), HostLiteral::Ip(ip("::1")));
    // Not an escape: left as it is.
    assert_eq!(
        parse_host_literal("a%zz"),
        HostLiteral::Name("a%zz".to_owned())
    );
}
