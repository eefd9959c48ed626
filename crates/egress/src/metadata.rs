//! Cloud metadata endpoints: the addresses and names that hand out
//! instance credentials to whoever asks from inside the machine. They are
//! a class of their own, refused before any allowlist or private-network
//! opt-in is consulted, so no configuration can make them reachable.
//!
//! The list, with where each comes from:
//!
//! | address / name | what answers there |
//! |---|---|
//! | `169.254.169.254` | instance metadata of AWS (IMDS), GCP, Azure (IMDS), Oracle Cloud, OpenStack, DigitalOcean, Hetzner, IBM Cloud |
//! | `fd00:ec2::254` | AWS IMDS over IPv6 (Nitro instances) |
//! | `169.254.170.2` | AWS ECS task metadata and task-role credentials |
//! | `169.254.170.23`, `fd00:ec2::23` | AWS EKS Pod Identity agent (credentials) |
//! | `fd20:ce::254` | GCP metadata server over IPv6 |
//! | `100.100.100.200` | Alibaba Cloud metadata |
//! | `168.63.129.16` | Azure WireServer (host agent, extension config); a public address, so only this list stops it |
//! | `169.254.0.23` | Tencent Cloud metadata |
//! | `192.0.0.192` | Oracle Cloud Infrastructure legacy metadata |
//! | `metadata.google.internal`, `metadata.goog`, `metadata` | GCP metadata server names |
//! | `instance-data`, `instance-data.ec2.internal` | AWS names for IMDS inside a VPC |
//! | `metadata.tencentyun.com` | Tencent Cloud metadata name |
//!
//! An address is matched as written, IPv4-mapped, and through every IPv6
//! embedding the special-use check knows (NAT64, 6to4, Teredo, ...), so
//! `::ffff:a9fe:a9fe` and `64:ff9b::a9fe:a9fe` are `169.254.169.254`.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use crate::ssrf::{embedded_v4, normalize_hostname};

/// IPv4 metadata endpoints and who answers there.
const METADATA_V4: &[(Ipv4Addr, &str)] = &[
    (
        Ipv4Addr::new(169, 254, 169, 254),
        "the cloud instance metadata service",
    ),
    (Ipv4Addr::new(169, 254, 170, 2), "AWS ECS task metadata"),
    (
        Ipv4Addr::new(169, 254, 170, 23),
        "the AWS EKS Pod Identity agent",
    ),
    (Ipv4Addr::new(100, 100, 100, 200), "Alibaba Cloud metadata"),
    (Ipv4Addr::new(168, 63, 129, 16), "the Azure WireServer"),
    (Ipv4Addr::new(169, 254, 0, 23), "Tencent Cloud metadata"),
    (
        Ipv4Addr::new(192, 0, 0, 192),
        "Oracle Cloud legacy metadata",
    ),
];

/// IPv6 metadata endpoints.
const METADATA_V6: &[(Ipv6Addr, &str)] = &[
    (
        Ipv6Addr::new(0xfd00, 0x0ec2, 0, 0, 0, 0, 0, 0x0254),
        "AWS instance metadata (IPv6)",
    ),
    (
        Ipv6Addr::new(0xfd00, 0x0ec2, 0, 0, 0, 0, 0, 0x0023),
        "the AWS EKS Pod Identity agent (IPv6)",
    ),
    (
        Ipv6Addr::new(0xfd20, 0x00ce, 0, 0, 0, 0, 0, 0x0254),
        "GCP metadata (IPv6)",
    ),
];

/// Host names of metadata services (normalised: lower case, no trailing
/// dot).
pub const METADATA_HOSTNAMES: &[&str] = &[
    "metadata.google.internal",
    "metadata.goog",
    "metadata",
    "instance-data",
    "instance-data.ec2.internal",
    "metadata.tencentyun.com",
];

/// Which metadata service `ip` is, `None` for any other address. Mapped
/// and embedded IPv4 forms count as the IPv4 address they carry.
pub fn metadata_endpoint(ip: IpAddr) -> Option<&'static str> {
    match ip {
        IpAddr::V4(v4) => v4_endpoint(v4),
        IpAddr::V6(v6) => {
            if let Some((_, what)) = METADATA_V6.iter().find(|(addr, _)| *addr == v6) {
                return Some(what);
            }
            if let Some(v4) = v6.to_ipv4_mapped() {
                return v4_endpoint(v4);
            }
            embedded_v4(v6)
                .into_iter()
                .find_map(|(_, v4)| v4_endpoint(v4))
        }
    }
}

fn v4_endpoint(v4: Ipv4Addr) -> Option<&'static str> {
    METADATA_V4
        .iter()
        .find(|(addr, _)| *addr == v4)
        .map(|(_, what)| *what)
}

/// Whether a host name names a metadata service (compared normalised).
pub fn is_metadata_hostname(host: &str) -> bool {
    let h = normalize_hostname(host);
    METADATA_HOSTNAMES.contains(&h.as_str())
}
