//! Name resolution for `web_fetch`: an injectable [`HostResolver`], and the
//! pinned resolver the HTTP client uses, which hands out only addresses
//! the SSRF policy vetted.

use std::collections::HashMap;
use std::fmt;
use std::io;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;

use reqwest::dns::{Addrs, Name, Resolve, Resolving};

use crate::web::ssrf::{SsrfPolicy, normalize_hostname};

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

/// The resolver given to the HTTP client: resolve, vet every address,
/// return only vetted ones. A refusal travels as an
/// [`crate::web::ssrf::SsrfBlocked`] inside the client's error, so no
/// connection is attempted.
#[derive(Debug, Clone)]
pub(crate) struct PinnedResolver {
    pub(crate) inner: Arc<dyn HostResolver>,
    pub(crate) policy: Arc<SsrfPolicy>,
}

impl Resolve for PinnedResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let inner = Arc::clone(&self.inner);
        let policy = Arc::clone(&self.policy);
        let host = normalize_hostname(name.as_str());
        Box::pin(async move {
            let found = inner.resolve(&host).await?;
            let vetted = policy.vet_addresses(&host, &found)?;
            tracing::debug!(host = %host, addresses = vetted.len(), "web_fetch: resolved and vetted");
            let addrs: Addrs = Box::new(vetted.into_iter().map(|ip| SocketAddr::new(ip, 0)));
            Ok(addrs)
        })
    }
}
