//! The SSRF rules: which URLs, host names and addresses an outbound
//! connection may reach (facts §15). [`crate::EgressGuard`] applies them to
//! every consumer (web_fetch, web_search providers, MCP HTTP servers, the
//! egress proxy of a local sandbox).
//!
//! Three checks, each failing closed:
//! 1. [`SsrfPolicy::check_url`], before any request: only `http`/`https`,
//!    no userinfo, no blocked host name (`localhost`, `*.local`,
//!    `metadata.google.internal`, …), no legacy or malformed IP literal, and
//!    an IP literal must pass [`classify_ip`] (IP-literal URLs never reach a
//!    resolver, so this is their only check).
//! 2. [`SsrfPolicy::vet_addresses`], after DNS: every resolved address must
//!    pass; one bad address refuses the whole name (no "pick the good one").
//! 3. The vetted addresses are the only ones the HTTP client connects to
//!    ([`crate::EgressGuard`]: its pinned resolver), so a second DNS answer cannot
//!    swap in a private address.
//!
//! The operator's [`SsrfAllowlistConfig`] opens named hosts and networks,
//! and [`SsrfPolicy::with_private_network`] opens the private networks as
//! a whole; an empty allowlist opens nothing. `0.0.0.0` and `::` are never
//! reachable, not even through the allowlist (GHSA-72p2-79fg-pvph), and
//! neither is a cloud metadata endpoint (`crate::metadata`): that class is
//! checked first, has its own code ([`METADATA_BLOCKED_CODE`]) and no
//! opt-in.

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use ipnet::IpNet;
use url::{Host, Url};

use crate::allowlist::{AllowlistError, SsrfAllowlistConfig};
use crate::metadata::{is_metadata_hostname, metadata_endpoint};

/// The stable code of a refused URL, in the error message and in the
/// error's [`SsrfBlocked::code`].
pub const SSRF_BLOCKED_CODE: &str = "ssrf_blocked";

/// The stable code of a refused cloud metadata endpoint: refused whatever
/// the allowlist or the private-network opt-in says.
pub const METADATA_BLOCKED_CODE: &str = "metadata_blocked";

/// What class of destination the guard refused; it decides the code and
/// whether an opt-in could open it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum BlockKind {
    /// Never reachable, whatever the configuration: a scheme other than
    /// http(s), user:password@, no host, a legacy or malformed IP literal,
    /// an unspecified address, a name that resolved to nothing.
    Invalid,
    /// A private, loopback, link-local or other special-use address, or a
    /// local name (`localhost`, `*.local`, `*.internal`): the explicit
    /// opt-in (an allowlist entry, `allowPrivateNetwork`) opens it.
    Private,
    /// A cloud metadata endpoint ([`crate::metadata_endpoint`],
    /// [`crate::METADATA_HOSTNAMES`]): nothing opens it.
    Metadata,
}

impl BlockKind {
    /// [`METADATA_BLOCKED_CODE`] for metadata, [`SSRF_BLOCKED_CODE`]
    /// otherwise.
    pub fn code(self) -> &'static str {
        match self {
            BlockKind::Metadata => METADATA_BLOCKED_CODE,
            BlockKind::Invalid | BlockKind::Private => SSRF_BLOCKED_CODE,
        }
    }
}

/// A URL the SSRF guard refused, with the reason. Raised before any
/// connection to the refused destination is attempted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct SsrfBlocked {
    /// The URL (or host) that was refused.
    pub url: String,
    /// Why, e.g. `Blocked: resolves to private/internal/special-use IP
    /// address (127.0.0.1 is loopback)`.
    pub reason: String,
    /// The class refused.
    pub kind: BlockKind,
    /// How to reach it on purpose, when the consumer has an opt-in (set by
    /// [`crate::EgressGuard`], naming the consumer's config key).
    pub fix: Option<String>,
}

impl fmt::Display for SsrfBlocked {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {} (url: {})", self.code(), self.reason, self.url)?;
        if let Some(fix) = &self.fix {
            write!(f, "; {fix}")?;
        }
        Ok(())
    }
}

impl SsrfBlocked {
    /// [`SSRF_BLOCKED_CODE`], or [`METADATA_BLOCKED_CODE`] for a metadata
    /// endpoint.
    pub fn code(&self) -> &'static str {
        self.kind.code()
    }

    fn new(url: impl Into<String>, kind: BlockKind, reason: impl Into<String>) -> Self {
        SsrfBlocked {
            url: url.into(),
            reason: reason.into(),
            kind,
            fix: None,
        }
    }
}

/// Why an address is not reachable: its special-use class, and the IPv4
/// address it carries when the class was found through an IPv6 embedding.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IpBlock {
    /// The class: `loopback`, `private`, `linkLocal`, `carrierGradeNat`,
    /// `uniqueLocal`, `multicast`, `unspecified`, `broadcast`, `reserved`,
    /// `benchmarking`, `documentation`, `siteLocal`, `discard`, `orchid`.
    pub class: &'static str,
    /// `(embedding, ipv4)` when an IPv6 address carried a blocked IPv4
    /// (`IPv4-mapped`, `IPv4-compatible`, `NAT64`, `6to4`, `Teredo`,
    /// `ISATAP`, `IPv4-translated`).
    pub embedded: Option<(&'static str, Ipv4Addr)>,
}

impl fmt::Display for IpBlock {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.embedded {
            None => f.write_str(self.class),
            Some((via, v4)) => write!(f, "{} (IPv4 {v4} embedded as {via})", self.class),
        }
    }
}

/// Trim, lower-case, strip trailing dots and `[ ]`.
pub fn normalize_hostname(host: &str) -> String {
    let mut h = host.trim().to_ascii_lowercase();
    if let Some(inner) = h.strip_prefix('[').and_then(|s| s.strip_suffix(']')) {
        h = inner.to_owned();
    }
    while h.ends_with('.') {
        h.pop();
    }
    h
}

/// Whether a (normalised) host name is blocked by name: `localhost`,
/// `localhost.localdomain`, a metadata service name
/// ([`crate::METADATA_HOSTNAMES`]), or a name under `.localhost`, `.local`
/// or `.internal`. The empty name is blocked too.
pub fn is_blocked_hostname(host: &str) -> bool {
    let h = normalize_hostname(host);
    h.is_empty()
        || is_metadata_hostname(&h)
        || matches!(h.as_str(), "localhost" | "localhost.localdomain")
        || h.ends_with(".localhost")
        || h.ends_with(".local")
        || h.ends_with(".internal")
}

/// `host` with its `%XX` escapes decoded, when it has any that decode to
/// UTF-8; `None` when there is nothing to decode.
fn percent_decoded(host: &str) -> Option<String> {
    if !host.contains('%') {
        return None;
    }
    let bytes = host.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| char::from(b).to_digit(16);
        match (
            bytes[i],
            bytes.get(i + 1).copied().and_then(hex),
            bytes.get(i + 2).copied().and_then(hex),
        ) {
            (b'%', Some(hi), Some(lo)) => {
                out.push(u8::try_from(hi * 16 + lo).unwrap_or(b'%'));
                i += 3;
            }
            (b, _, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8(out).ok()
}

/// What a host string is, read the strict way.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HostLiteral {
    /// A canonical IPv4 (four decimal parts) or a valid IPv6 literal.
    Ip(IpAddr),
    /// Something an IPv4 parser somewhere would read as an address but that
    /// is not canonical dotted decimal (octal, hex, 1–3 parts, a plain
    /// integer, empty parts, a numeric last label): refused.
    LegacyIpv4,
    /// Looks like IPv6 (has a `:`) but does not parse: refused.
    MalformedIpv6,
    /// A host name.
    Name(String),
}

/// Classify a host string (already without brackets or with them).
/// Percent-escapes are decoded first, as a URL parser's host parser does
/// (`%35` is `5`, so `%31%32%37.0.0.1` is `127.0.0.1`), so a raw host
/// never reads as a name where a URL library would read an address.
pub fn parse_host_literal(host: &str) -> HostLiteral {
    let decoded;
    let host = match percent_decoded(host) {
        Some(d) => {
            decoded = d;
            decoded.as_str()
        }
        None => host,
    };
    let h = normalize_hostname(host);
    if h.contains(':') {
        return match h.parse::<Ipv6Addr>() {
            Ok(v6) => HostLiteral::Ip(IpAddr::V6(v6)),
            Err(_) => HostLiteral::MalformedIpv6,
        };
    }
    if let Some(v4) = parse_canonical_ipv4(&h) {
        return HostLiteral::Ip(IpAddr::V4(v4));
    }
    let last = h.rsplit('.').next().unwrap_or_default();
    let numeric_label = |l: &str| {
        !l.is_empty()
            && (l.bytes().all(|b| b.is_ascii_digit())
                || l.strip_prefix("0x")
                    .is_some_and(|hex| hex.bytes().all(|b| b.is_ascii_hexdigit())))
    };
    let labels: Vec<&str> = h.split('.').collect();
    let all_numeric_or_empty = labels.iter().all(|l| l.is_empty() || numeric_label(l));
    if numeric_label(last) || (all_numeric_or_empty && labels.iter().any(|l| numeric_label(l))) {
        return HostLiteral::LegacyIpv4;
    }
    HostLiteral::Name(h)
}

/// Dotted decimal with exactly four parts, each 0–255, no leading zeros.
fn parse_canonical_ipv4(h: &str) -> Option<Ipv4Addr> {
    let mut octets = [0u8; 4];
    let mut parts = h.split('.');
    for slot in &mut octets {
        let part = parts.next()?;
        if part.is_empty()
            || part.len() > 3
            || !part.bytes().all(|b| b.is_ascii_digit())
            || (part.len() > 1 && part.starts_with('0'))
        {
            return None;
        }
        *slot = part.parse().ok()?;
    }
    if parts.next().is_some() {
        return None;
    }
    Some(Ipv4Addr::from(octets))
}

fn in_v4(ip: u32, net: [u8; 4], prefix: u32) -> bool {
    let net = u32::from_be_bytes(net);
    let mask = if prefix == 0 {
        0
    } else {
        u32::MAX << (32 - prefix)
    };
    ip & mask == net & mask
}

fn in_v6(ip: u128, net: u128, prefix: u32) -> bool {
    let mask = if prefix == 0 {
        0
    } else {
        u128::MAX << (128 - prefix)
    };
    ip & mask == net & mask
}

/// IPv4 special-use ranges, most specific first.
const V4_RANGES: &[([u8; 4], u32, &str)] = &[
    ([255, 255, 255, 255], 32, "broadcast"),
    ([0, 0, 0, 0], 8, "unspecified"),
    ([127, 0, 0, 0], 8, "loopback"),
    ([10, 0, 0, 0], 8, "private"),
    ([172, 16, 0, 0], 12, "private"),
    ([192, 168, 0, 0], 16, "private"),
    ([169, 254, 0, 0], 16, "linkLocal"),
    ([100, 64, 0, 0], 10, "carrierGradeNat"),
    ([224, 0, 0, 0], 4, "multicast"),
    ([198, 18, 0, 0], 15, "benchmarking"),
    ([192, 0, 2, 0], 24, "documentation"),
    ([198, 51, 100, 0], 24, "documentation"),
    ([203, 0, 113, 0], 24, "documentation"),
    ([192, 0, 0, 0], 24, "reserved"),
    ([192, 88, 99, 0], 24, "reserved"),
    ([240, 0, 0, 0], 4, "reserved"),
];

/// The special-use class of an IPv4 address, `None` for a public one.
fn classify_v4(ip: Ipv4Addr) -> Option<&'static str> {
    let n = u32::from(ip);
    V4_RANGES
        .iter()
        .find(|(net, prefix, _)| in_v4(n, *net, *prefix))
        .map(|(_, _, class)| *class)
}

const fn v6(segments: [u16; 8]) -> u128 {
    let mut out: u128 = 0;
    let mut i = 0;
    while i < 8 {
        out = (out << 16) | segments[i] as u128;
        i += 1;
    }
    out
}

/// IPv6 ranges blocked outright (no embedded IPv4 to look at).
const V6_RANGES: &[(u128, u32, &str)] = &[
    (v6([0, 0, 0, 0, 0, 0, 0, 0]), 128, "unspecified"),
    (v6([0, 0, 0, 0, 0, 0, 0, 1]), 128, "loopback"),
    (v6([0xfe80, 0, 0, 0, 0, 0, 0, 0]), 10, "linkLocal"),
    (v6([0xfec0, 0, 0, 0, 0, 0, 0, 0]), 10, "siteLocal"),
    (v6([0xfc00, 0, 0, 0, 0, 0, 0, 0]), 7, "uniqueLocal"),
    (v6([0xff00, 0, 0, 0, 0, 0, 0, 0]), 8, "multicast"),
    (v6([0x0100, 0, 0, 0, 0, 0, 0, 0]), 64, "discard"),
    (v6([0x2001, 0x0db8, 0, 0, 0, 0, 0, 0]), 32, "documentation"),
    (v6([0x3fff, 0, 0, 0, 0, 0, 0, 0]), 20, "documentation"),
    (v6([0x2001, 0x0002, 0, 0, 0, 0, 0, 0]), 48, "benchmarking"),
    (v6([0x2001, 0x0010, 0, 0, 0, 0, 0, 0]), 28, "orchid"),
    (v6([0x2001, 0x0020, 0, 0, 0, 0, 0, 0]), 28, "orchid"),
];

/// Where an IPv6 address carries an IPv4 address, and which.
pub(crate) fn embedded_v4(ip: Ipv6Addr) -> Vec<(&'static str, Ipv4Addr)> {
    let n = u128::from(ip);
    let low32 = Ipv4Addr::from((n & 0xffff_ffff) as u32);
    let mut out = Vec::new();
    if in_v6(n, v6([0, 0, 0, 0, 0, 0xffff, 0, 0]), 96) {
        out.push(("IPv4-mapped", low32));
    }
    if in_v6(n, v6([0, 0, 0, 0, 0, 0, 0, 0]), 96) {
        out.push(("IPv4-compatible", low32));
    }
    if in_v6(n, v6([0, 0, 0, 0, 0xffff, 0, 0, 0]), 96) {
        out.push(("IPv4-translated", low32));
    }
    if in_v6(n, v6([0x64, 0xff9b, 0, 0, 0, 0, 0, 0]), 96)
        || in_v6(n, v6([0x64, 0xff9b, 1, 0, 0, 0, 0, 0]), 48)
    {
        out.push(("NAT64", low32));
    }
    if in_v6(n, v6([0x2002, 0, 0, 0, 0, 0, 0, 0]), 16) {
        out.push(("6to4", Ipv4Addr::from(((n >> 80) & 0xffff_ffff) as u32)));
    }
    if in_v6(n, v6([0x2001, 0, 0, 0, 0, 0, 0, 0]), 32) {
        // Teredo: the server at bits 32..64, the client obfuscated (XOR)
        // in the low 32 bits.
        out.push(("Teredo", Ipv4Addr::from(((n >> 64) & 0xffff_ffff) as u32)));
        out.push(("Teredo", Ipv4Addr::from(!((n & 0xffff_ffff) as u32))));
    }
    // ISATAP: interface id 0000:5efe or 0200:5efe, then the IPv4.
    let iid_high = ((n >> 32) & 0xffff_ffff) as u32;
    if iid_high == 0x0000_5efe || iid_high == 0x0200_5efe {
        out.push(("ISATAP", low32));
    }
    out
}

/// The block of an address, `None` when it is public.
///
/// IPv4: unspecified (0/8), broadcast, multicast, link-local (which covers
/// 169.254.169.254), loopback, CGNAT (100.64/10, which covers
/// 100.100.100.200), private, benchmarking (198.18/15), documentation and
/// reserved ranges. IPv6: unspecified, loopback, link-local, site-local
/// (fec0::/10), unique-local (which covers fd00:ec2::254), multicast,
/// discard, documentation, benchmarking, ORCHID; then any embedded IPv4
/// (mapped, compatible, translated, NAT64, 6to4, Teredo, ISATAP) is
/// checked as IPv4. The rest of 2001::/23 (IETF protocol assignments) is
/// refused as reserved.
pub fn classify_ip(ip: IpAddr) -> Option<IpBlock> {
    match ip {
        IpAddr::V4(v4) => classify_v4(v4).map(|class| IpBlock {
            class,
            embedded: None,
        }),
        IpAddr::V6(v6addr) => {
            let n = u128::from(v6addr);
            if let Some((_, _, class)) = V6_RANGES
                .iter()
                .find(|(net, prefix, _)| in_v6(n, *net, *prefix))
            {
                return Some(IpBlock {
                    class,
                    embedded: None,
                });
            }
            for (via, v4) in embedded_v4(v6addr) {
                if let Some(class) = classify_v4(v4) {
                    return Some(IpBlock {
                        class,
                        embedded: Some((via, v4)),
                    });
                }
            }
            let teredo = in_v6(n, v6([0x2001, 0, 0, 0, 0, 0, 0, 0]), 32);
            if !teredo && in_v6(n, v6([0x2001, 0, 0, 0, 0, 0, 0, 0]), 23) {
                return Some(IpBlock {
                    class: "reserved",
                    embedded: None,
                });
            }
            None
        }
    }
}

/// One `hosts` entry of the allowlist.
#[derive(Debug, Clone, PartialEq, Eq)]
enum HostPattern {
    Exact(String),
    /// `*.suffix`: strict subdomains of `suffix`.
    Subdomains(String),
}

/// The special-use classes the private-network opt-in opens: the networks
/// a self-hosted service lives on. Multicast, broadcast, documentation,
/// reserved and the like stay refused (nothing legitimate listens there).
const PRIVATE_NETWORK_CLASSES: &[&str] = &[
    "loopback",
    "private",
    "linkLocal",
    "carrierGradeNat",
    "uniqueLocal",
    "siteLocal",
];

/// The config key an allowlist is read from when none is given.
const DEFAULT_ALLOWLIST_KEY: &str = "tools.web.fetch.ssrfAllowlist";

/// The SSRF rules with the operator's allowlist, compiled once.
///
/// Order of every decision: cloud metadata first (refused, nothing opens
/// it), then unspecified addresses (refused), then the allowlist, then the
/// private-network opt-in, then the special-use classes.
#[derive(Debug, Clone, Default)]
pub struct SsrfPolicy {
    hosts: Vec<HostPattern>,
    cidrs: Vec<IpNet>,
    private_network: bool,
}

impl SsrfPolicy {
    /// The strict policy: nothing private is reachable.
    pub fn strict() -> Self {
        Self::default()
    }

    /// Compile `tools.web.fetch.ssrfAllowlist`. An entry that is not a
    /// host name, a `*.suffix` pattern or a CIDR is an error naming it.
    pub fn from_config(allow: &SsrfAllowlistConfig) -> Result<Self, AllowlistError> {
        Self::from_config_at(allow, DEFAULT_ALLOWLIST_KEY)
    }

    /// Compile an allowlist read from `key` (e.g.
    /// `tools.web.search.ssrfAllowlist`); errors name `key.hosts` or
    /// `key.cidrs`.
    pub fn from_config_at(allow: &SsrfAllowlistConfig, key: &str) -> Result<Self, AllowlistError> {
        let mut hosts = Vec::new();
        for raw in &allow.hosts {
            let h = normalize_hostname(raw);
            let pattern = match h.strip_prefix("*.") {
                Some(suffix) => HostPattern::Subdomains(suffix.to_owned()),
                None => HostPattern::Exact(h.clone()),
            };
            let body = match &pattern {
                HostPattern::Exact(s) | HostPattern::Subdomains(s) => s,
            };
            let valid = !body.is_empty()
                && body
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-' | b'_' | b':'));
            if !valid {
                return Err(AllowlistError::new(
                    format!("{key}.hosts"),
                    format!(
                        "`{raw}` is not a host name or `*.suffix` pattern; write e.g. `intranet.example.com` or `*.example.com`"
                    ),
                ));
            }
            hosts.push(pattern);
        }
        let mut cidrs = Vec::new();
        for raw in &allow.cidrs {
            let net: IpNet = raw.trim().parse().map_err(|_| {
                AllowlistError::new(
                    format!("{key}.cidrs"),
                    format!("`{raw}` is not a CIDR; write e.g. `10.1.0.0/16` or `fd00::/8`"),
                )
            })?;
            cidrs.push(net);
        }
        Ok(SsrfPolicy {
            hosts,
            cidrs,
            private_network: false,
        })
    }

    /// Builder: `true` opens the private networks (loopback, RFC 1918,
    /// link-local, CGNAT, unique-local, site-local addresses and the names
    /// `localhost`, `*.localhost`, `*.local`, `*.internal`). Cloud metadata
    /// endpoints and unspecified addresses stay refused.
    pub fn with_private_network(mut self, open: bool) -> Self {
        self.private_network = open;
        self
    }

    /// Whether the private networks are open ([`Self::with_private_network`]).
    pub fn private_network(&self) -> bool {
        self.private_network
    }

    /// Whether the operator opened this host name explicitly.
    pub fn host_allowed(&self, host: &str) -> bool {
        let h = normalize_hostname(host);
        self.hosts.iter().any(|p| match p {
            HostPattern::Exact(e) => *e == h,
            HostPattern::Subdomains(s) => h
                .strip_suffix(s.as_str())
                .is_some_and(|rest| rest.ends_with('.') && rest.len() > 1),
        })
    }

    /// Why `ip` is not reachable, `None` when it is. Metadata endpoints
    /// and unspecified addresses are refused even when allowlisted.
    pub fn ip_refusal(&self, ip: IpAddr) -> Option<String> {
        self.ip_block(ip).map(|(_, why)| why)
    }

    /// [`Self::ip_refusal`] with the class refused.
    pub fn ip_block(&self, ip: IpAddr) -> Option<(BlockKind, String)> {
        let ip = canonical_ip(ip);
        if let Some(what) = metadata_endpoint(ip) {
            return Some((BlockKind::Metadata, format!("{ip} is {what}")));
        }
        if ip.is_unspecified() {
            return Some((BlockKind::Invalid, format!("{ip} is unspecified")));
        }
        if self.cidrs.iter().any(|net| net.contains(&ip)) {
            return None;
        }
        let block = classify_ip(ip)?;
        if self.private_network && PRIVATE_NETWORK_CLASSES.contains(&block.class) {
            return None;
        }
        Some((BlockKind::Private, format!("{ip} is {block}")))
    }

    /// Check a URL before any request: scheme, userinfo, host name and IP
    /// literal. Names still have to pass [`SsrfPolicy::vet_addresses`]
    /// once resolved.
    pub fn check_url(&self, url: &Url) -> Result<(), SsrfBlocked> {
        let shown = url.as_str();
        match url.scheme() {
            "http" | "https" => {}
            other => {
                return Err(SsrfBlocked::new(
                    shown,
                    BlockKind::Invalid,
                    format!("Blocked scheme `{other}:`; only http and https URLs can be fetched"),
                ));
            }
        }
        if !url.username().is_empty() || url.password().is_some() {
            return Err(SsrfBlocked::new(
                shown,
                BlockKind::Invalid,
                "Blocked: URLs with credentials (user:password@) are not fetched",
            ));
        }
        let pre_dns = "Blocked hostname or private/internal/special-use IP address";
        match url.host() {
            None => Err(SsrfBlocked::new(
                shown,
                BlockKind::Invalid,
                "Blocked: the URL has no host",
            )),
            Some(Host::Ipv4(v4)) => self.check_literal(shown, IpAddr::V4(v4), pre_dns),
            Some(Host::Ipv6(v6addr)) => self.check_literal(shown, IpAddr::V6(v6addr), pre_dns),
            Some(Host::Domain(name)) => {
                if is_metadata_hostname(name) {
                    return Err(SsrfBlocked::new(
                        shown,
                        BlockKind::Metadata,
                        format!(
                            "Blocked cloud metadata endpoint (`{}` is a metadata service name)",
                            normalize_hostname(name)
                        ),
                    ));
                }
                if self.host_allowed(name) {
                    return Ok(());
                }
                match parse_host_literal(name) {
                    HostLiteral::Ip(ip) => self.check_literal(shown, ip, pre_dns),
                    HostLiteral::LegacyIpv4 => Err(SsrfBlocked::new(
                        shown,
                        BlockKind::Invalid,
                        format!("{pre_dns} (`{name}` is a non-canonical IPv4 literal)"),
                    )),
                    HostLiteral::MalformedIpv6 => Err(SsrfBlocked::new(
                        shown,
                        BlockKind::Invalid,
                        format!("{pre_dns} (`{name}` is a malformed IPv6 literal)"),
                    )),
                    HostLiteral::Name(n)
                        if is_blocked_hostname(&n) && (!self.private_network || n.is_empty()) =>
                    {
                        Err(SsrfBlocked::new(
                            shown,
                            BlockKind::Private,
                            format!("{pre_dns} (`{n}` is a blocked host name)"),
                        ))
                    }
                    HostLiteral::Name(_) => Ok(()),
                }
            }
        }
    }

    fn check_literal(&self, shown: &str, ip: IpAddr, pre_dns: &str) -> Result<(), SsrfBlocked> {
        match self.ip_block(ip) {
            Some((BlockKind::Metadata, why)) => Err(SsrfBlocked::new(
                shown,
                BlockKind::Metadata,
                format!("Blocked cloud metadata endpoint ({why})"),
            )),
            Some((kind, why)) => Err(SsrfBlocked::new(shown, kind, format!("{pre_dns} ({why})"))),
            None => Ok(()),
        }
    }

    /// Vet what `host` resolved to: refused if it resolved to nothing or if
    /// ANY address is blocked (unless the host is allowlisted, and even
    /// then metadata endpoints and unspecified addresses are refused).
    /// Returns the addresses to connect to.
    pub fn vet_addresses(&self, host: &str, addrs: &[IpAddr]) -> Result<Vec<IpAddr>, SsrfBlocked> {
        if addrs.is_empty() {
            return Err(SsrfBlocked::new(
                host,
                BlockKind::Invalid,
                "Blocked: the host name resolved to no address",
            ));
        }
        let allowed_host = self.host_allowed(host);
        for ip in addrs {
            let refusal = match self.ip_block(*ip) {
                Some((BlockKind::Private, _)) if allowed_host => None,
                other => other,
            };
            if let Some((kind, why)) = refusal {
                let reason = match kind {
                    BlockKind::Metadata => {
                        format!("Blocked: resolves to a cloud metadata endpoint ({why})")
                    }
                    _ => format!(
                        "Blocked: resolves to private/internal/special-use IP address ({why})"
                    ),
                };
                return Err(SsrfBlocked::new(host, kind, reason));
            }
        }
        Ok(addrs.to_vec())
    }
}

/// An IPv4-mapped IPv6 address as the IPv4 it is, anything else as is.
fn canonical_ip(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6addr) => match v6addr.to_ipv4_mapped() {
            Some(v4) => IpAddr::V4(v4),
            None => IpAddr::V6(v6addr),
        },
        v4 => v4,
    }
}

#[cfg(test)]
#[path = "ssrf_tests.rs"]
mod tests;
