//! Name resolution behind the SSRF guard: an injectable [`HostResolver`]
//! whose every answer is vetted ([`crate::SsrfPolicy::vet_addresses`])
//! before anything connects to it.

use std::collections::HashMap;
use std::fmt;
use std::io;
use std::net::IpAddr;

use crate::ssrf::normalize_hostname;

/// Resolves a host name to addresses. `web_fetch` vets every address it
/// returns before connecting to any of them.
#[async_trait::async_trait]
pub trait HostResolver: Send + Sync + fmt::Debug {
    /// The addresses of `host` (a normalised name, never an IP literal).
    async fn resolve(&self, host: &str) -> io::Result<Vec<IpAddr>>;
}

/// The system resolver (`getaddrinfo` through tokio).
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemResolver;

#[async_trait::async_trait]
impl HostResolver for SystemResolver {
    async fn resolve(&self, host: &str) -> io::Result<Vec<IpAddr>> {
        let addrs = tokio::net::lookup_host((host, 0)).await?;
        let mut out: Vec<IpAddr> = Vec::new();
        for a in addrs {
            if !out.contains(&a.ip()) {
                out.push(a.ip());
            }
        }
        Ok(out)
    }
}

/// A fixed name → addresses table (tests, or pinned names). Unknown names
/// fail to resolve.
#[derive(Debug, Clone, Default)]
pub struct StaticResolver {
    table: HashMap<String, Vec<IpAddr>>,
}

impl StaticResolver {
    /// An empty table.
    pub fn new() -> Self {
        Self::default()
    }

    /// Builder: `host` resolves to `addrs`.
    pub fn with(mut self, host: &str, addrs: impl IntoIterator<Item = IpAddr>) -> Self {
        self.table
            .insert(normalize_hostname(host), addrs.into_iter().collect());
        self
    }
}

#[async_trait::async_trait]
impl HostResolver for StaticResolver {
    async fn resolve(&self, host: &str) -> io::Result<Vec<IpAddr>> {
        self.table
            .get(&normalize_hostname(host))
            .cloned()
            .ok_or_else(|| io::Error::new(io::ErrorKind::NotFound, format!("unknown host {host}")))
    }
}
