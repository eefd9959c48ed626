//! Name resolution for `web_fetch`: the injectable [`HostResolver`] (from
//! `talon-egress`), and the pinned resolver the HTTP client uses, which hands out only addresses
//! the SSRF policy vetted.

use std::net::SocketAddr;
use std::sync::Arc;

use reqwest::dns::{Addrs, Name, Resolve, Resolving};
use talon_egress::{HostResolver, SsrfPolicy, normalize_hostname};

/// The resolver given to the HTTP client: resolve, vet every address,
/// return only vetted ones. A refusal travels as an
/// [`talon_egress::SsrfBlocked`] inside the client's error, so no
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
