//! [`EgressGuard`]: the one way from a URL to the addresses Talon may
//! connect to. Every outbound connection (web_fetch and its redirect hops,
//! web_search providers, MCP streamable-HTTP servers, the local sandbox's
//! egress proxy) asks it; none carries its own copy of the rules.

use std::fmt;
use std::io;
use std::net::IpAddr;
use std::sync::Arc;

use url::{Host, Url};

use crate::resolver::{HostResolver, SystemResolver};
use crate::ssrf::{
    BlockKind, HostLiteral, SsrfBlocked, SsrfPolicy, normalize_hostname, parse_host_literal,
};

/// What the guard says to a refused metadata endpoint.
const METADATA_FIX: &str = "cloud metadata endpoints stay blocked whatever the configuration says: no allowlist entry or private-network opt-in opens them";

/// Why the guard did not hand out an address.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum EgressError {
    /// The SSRF rules refused the URL or an address its name resolved to.
    #[error("{0}")]
    Blocked(SsrfBlocked),
    /// The host name could not be resolved.
    #[error("cannot resolve {host}: {source}")]
    Resolve {
        /// The host name.
        host: String,
        /// The resolver's error.
        #[source]
        source: io::Error,
    },
}

/// The stable code of a name that could not be resolved.
pub const RESOLVE_FAILED_CODE: &str = "resolve_failed";

impl EgressError {
    /// The stable code: the refusal's ([`SsrfBlocked::code`]) or
    /// [`RESOLVE_FAILED_CODE`].
    pub fn code(&self) -> &'static str {
        match self {
            EgressError::Blocked(b) => b.code(),
            EgressError::Resolve { .. } => RESOLVE_FAILED_CODE,
        }
    }

    /// The refusal, when it is one.
    pub fn blocked(&self) -> Option<&SsrfBlocked> {
        match self {
            EgressError::Blocked(b) => Some(b),
            EgressError::Resolve { .. } => None,
        }
    }
}

impl From<SsrfBlocked> for EgressError {
    fn from(b: SsrfBlocked) -> Self {
        EgressError::Blocked(b)
    }
}

/// A vetted destination: the host as written in the URL and the only
/// addresses a connection to it may use.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Destination {
    /// The host (a name, or an IP literal as the URL spells it).
    pub host: String,
    /// The vetted addresses (one for an IP literal).
    pub addrs: Vec<IpAddr>,
}

/// The SSRF rules, the resolver behind them, and what a refused consumer
/// can do about it. Cheap to clone.
#[derive(Clone)]
pub struct EgressGuard {
    policy: Arc<SsrfPolicy>,
    resolver: Arc<dyn HostResolver>,
    opt_in: Option<Arc<str>>,
}

impl fmt::Debug for EgressGuard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("EgressGuard")
            .field("policy", &self.policy)
            .field("resolver", &self.resolver)
            .field("opt_in", &self.opt_in)
            .finish()
    }
}

impl EgressGuard {
    /// A guard over `policy`, resolving names with `resolver`.
    pub fn new(policy: Arc<SsrfPolicy>, resolver: Arc<dyn HostResolver>) -> Self {
        EgressGuard {
            policy,
            resolver,
            opt_in: None,
        }
    }

    /// The strict rules with the system resolver.
    pub fn strict() -> Self {
        Self::new(Arc::new(SsrfPolicy::strict()), Arc::new(SystemResolver))
    }

    /// Builder: how this consumer opens a private destination on purpose,
    /// named in every refusal the opt-in could lift (e.g. "add the host to
    /// `tools.web.search.ssrfAllowlist.hosts` or its address to `.cidrs`").
    pub fn with_opt_in(mut self, how: impl Into<String>) -> Self {
        self.opt_in = Some(Arc::from(how.into()));
        self
    }

    /// The compiled rules.
    pub fn policy(&self) -> &SsrfPolicy {
        &self.policy
    }

    /// The rules, shared.
    pub fn policy_arc(&self) -> Arc<SsrfPolicy> {
        Arc::clone(&self.policy)
    }

    /// The resolver names go through.
    pub fn resolver(&self) -> Arc<dyn HostResolver> {
        Arc::clone(&self.resolver)
    }

    /// The refusal with what the consumer can do about it.
    pub fn explain(&self, mut blocked: SsrfBlocked) -> SsrfBlocked {
        if blocked.fix.is_none() {
            blocked.fix = match blocked.kind {
                BlockKind::Metadata => Some(METADATA_FIX.to_owned()),
                BlockKind::Private => self
                    .opt_in
                    .as_ref()
                    .map(|how| format!("to reach it on purpose, {how}")),
                BlockKind::Invalid => None,
            };
        }
        blocked
    }

    /// Check a URL before any request (scheme, userinfo, blocked and
    /// metadata names, IP literals). A name still has to resolve to vetted
    /// addresses ([`Self::resolve_name`]) before anything connects to it.
    pub fn check_url(&self, url: &Url) -> Result<(), SsrfBlocked> {
        self.policy.check_url(url).map_err(|b| self.explain(b))
    }

    /// Resolve a host name and vet every answer: one refused address
    /// refuses the name. The result is the only set a connection may use.
    pub async fn resolve_name(&self, host: &str) -> Result<Vec<IpAddr>, EgressError> {
        let host = normalize_hostname(host);
        let found = self
            .resolver
            .resolve(&host)
            .await
            .map_err(|source| EgressError::Resolve {
                host: host.clone(),
                source,
            })?;
        let vetted = self
            .policy
            .vet_addresses(&host, &found)
            .map_err(|b| self.explain(b))?;
        tracing::debug!(host = %host, addresses = vetted.len(), "egress: resolved and vetted");
        Ok(vetted)
    }

    /// The whole check for one URL: [`Self::check_url`], then the vetted
    /// addresses of its host (an IP literal is its own single address).
    pub async fn destination(&self, url: &Url) -> Result<Destination, EgressError> {
        self.check_url(url)?;
        match url.host() {
            Some(Host::Ipv4(v4)) => Ok(Destination {
                host: v4.to_string(),
                addrs: vec![IpAddr::V4(v4)],
            }),
            Some(Host::Ipv6(v6)) => Ok(Destination {
                host: format!("[{v6}]"),
                addrs: vec![IpAddr::V6(v6)],
            }),
            Some(Host::Domain(name)) => {
                if let HostLiteral::Ip(ip) = parse_host_literal(name) {
                    return Ok(Destination {
                        host: name.to_owned(),
                        addrs: vec![ip],
                    });
                }
                let addrs = self.resolve_name(name).await?;
                Ok(Destination {
                    host: name.to_owned(),
                    addrs,
                })
            }
            None => Err(EgressError::Blocked(self.explain(SsrfBlocked {
                url: url.to_string(),
                reason: "Blocked: the URL has no host".to_owned(),
                kind: BlockKind::Invalid,
                fix: None,
            }))),
        }
    }
}

/// The refusal inside an error's source chain (an HTTP client's error
/// whose resolver or redirect policy refused), if there is one.
pub fn blocked_in(err: &(dyn std::error::Error + 'static)) -> Option<SsrfBlocked> {
    let mut current = Some(err);
    while let Some(e) = current {
        if let Some(blocked) = e.downcast_ref::<SsrfBlocked>() {
            return Some(blocked.clone());
        }
        if let Some(EgressError::Blocked(blocked)) = e.downcast_ref::<EgressError>() {
            return Some(blocked.clone());
        }
        current = e.source();
    }
    None
}

#[cfg(test)]
#[path = "guard_tests.rs"]
mod tests;
