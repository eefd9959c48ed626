//! The egress guard's host classification against independent parsers:
//! whatever a URL parser (the WHATWG host parser of the `url` crate, which
//! reqwest connects by) or the standard library reads as an IP address,
//! the guard reads as that same address or refuses as a legacy IPv4
//! spelling. It never takes an address for a host name (which would skip
//! the address rules).
#![no_main]

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use libfuzzer_sys::fuzz_target;
use talon_egress::{HostLiteral, parse_host_literal};

fn agrees(text: &str, ip: IpAddr, ours: &HostLiteral) {
    match ours {
        HostLiteral::Ip(got) => assert_eq!(*got, ip, "{text:?}"),
        HostLiteral::LegacyIpv4 if ip.is_ipv4() => {}
        other => panic!("{text:?} is {ip} to an independent parser, {other:?} to the guard"),
    }
}

fuzz_target!(|text: &str| {
    if !text.is_ascii() {
        return;
    }
    let ours = parse_host_literal(text);
    if let Ok(v4) = text.parse::<Ipv4Addr>() {
        agrees(text, IpAddr::V4(v4), &ours);
    }
    if let Ok(v6) = text.parse::<Ipv6Addr>() {
        agrees(text, IpAddr::V6(v6), &ours);
    }
    match url::Host::parse(text) {
        Ok(url::Host::Ipv4(v4)) => agrees(text, IpAddr::V4(v4), &ours),
        Ok(url::Host::Ipv6(v6)) => agrees(text, IpAddr::V6(v6), &ours),
        _ => {}
    }
});
