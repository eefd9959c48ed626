//! URLs and host strings for web_fetch's SSRF guard. What the strict rules
//! accept is never a loopback, private or otherwise special-use literal.
#![no_main]

use libfuzzer_sys::fuzz_target;
use talon_egress::{HostLiteral, SsrfPolicy, classify_ip, parse_host_literal};

fuzz_target!(|text: &str| {
    if let HostLiteral::Ip(ip) = parse_host_literal(text) {
        let _ = classify_ip(ip);
    }
    let Ok(url) = url::Url::parse(text) else {
        return;
    };
    if SsrfPolicy::strict().check_url(&url).is_ok() {
        if let Some(url::Host::Ipv4(v4)) = url.host() {
            assert!(classify_ip(v4.into()).is_none(), "{text:?} passed as {v4}");
        }
        if let Some(url::Host::Ipv6(v6)) = url.host() {
            assert!(classify_ip(v6.into()).is_none(), "{text:?} passed as {v6}");
        }
    }
});
