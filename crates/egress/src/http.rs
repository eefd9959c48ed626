//! The HTTP client every Talon consumer uses to reach a URL (feature
//! `http`): a `reqwest` client that ignores proxy variables, resolves
//! names only through the guard (so it connects only to vetted addresses),
//! and re-checks every redirect hop it follows.
//!
//! An IP-literal URL never reaches a resolver, so [`GuardedClient::request`]
//! checks the URL itself before handing out a request; a library that needs
//! the bare `reqwest::Client` gets it from [`GuardedClient::client_for`],
//! which vets the one URL that library will request first.

use std::net::SocketAddr;

use reqwest::dns::{Addrs, Name, Resolve, Resolving};
use url::Url;

use crate::guard::{EgressError, EgressGuard};
use crate::ssrf::SsrfBlocked;

/// Which redirects the client follows itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Redirects {
    /// None: a 3xx is returned to the caller (which re-checks the
    /// `Location` with the guard before requesting it, as web_fetch does).
    None,
    /// Same-origin 307 and 308 only (method and body kept), at most `max`
    /// hops, each re-checked; any other redirect is returned to the caller.
    /// What an MCP streamable-HTTP session needs.
    SameOrigin {
        /// The most hops followed for one request.
        max: usize,
    },
}

/// How to build a [`GuardedClient`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpOptions {
    /// The `User-Agent` header (none when `None`).
    pub user_agent: Option<String>,
    /// Which redirects are followed.
    pub redirects: Redirects,
    /// Idle connections kept per host (`Some(0)` turns pooling off).
    pub pool_max_idle_per_host: Option<usize>,
}

impl Default for HttpOptions {
    fn default() -> Self {
        HttpOptions {
            user_agent: None,
            redirects: Redirects::None,
            pool_max_idle_per_host: None,
        }
    }
}

/// The resolver given to `reqwest`: resolve, vet every address, return
/// only vetted ones. A refusal travels as an [`SsrfBlocked`] inside the
/// client's error ([`crate::blocked_in`] finds it), and nothing connects.
#[derive(Debug, Clone)]
struct PinnedResolver {
    guard: EgressGuard,
}

impl Resolve for PinnedResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let guard = self.guard.clone();
        let host = name.as_str().to_owned();
        Box::pin(async move {
            let vetted = guard.resolve_name(&host).await.map_err(
                |e| -> Box<dyn std::error::Error + Send + Sync> {
                    match e {
                        EgressError::Blocked(b) => Box::new(b),
                        EgressError::Resolve { source, .. } => Box::new(source),
                    }
                },
            )?;
            let addrs: Addrs = Box::new(vetted.into_iter().map(|ip| SocketAddr::new(ip, 0)));
            Ok(addrs)
        })
    }
}

fn redirect_policy(guard: &EgressGuard, redirects: Redirects) -> reqwest::redirect::Policy {
    match redirects {
        Redirects::None => reqwest::redirect::Policy::none(),
        Redirects::SameOrigin { max } => {
            let guard = guard.clone();
            reqwest::redirect::Policy::custom(move |attempt| {
                let keeps_body = matches!(
                    attempt.status(),
                    reqwest::StatusCode::TEMPORARY_REDIRECT
                        | reqwest::StatusCode::PERMANENT_REDIRECT
                );
                let same_origin = attempt
                    .previous()
                    .first()
                    .is_some_and(|first| first.origin() == attempt.url().origin());
                if !keeps_body || !same_origin {
                    return attempt.stop();
                }
                if attempt.previous().len() > max {
                    return attempt.error(format!("exceeded {max} redirects"));
                }
                if let Err(blocked) = guard.check_url(attempt.url()) {
                    return attempt.error(blocked);
                }
                tracing::debug!(
                    status = %attempt.status(),
                    to = attempt.url().path(),
                    "egress: following same-origin redirect"
                );
                attempt.follow()
            })
        }
    }
}

/// A `reqwest` client that reaches only what its [`EgressGuard`] vetted.
#[derive(Debug, Clone)]
pub struct GuardedClient {
    client: reqwest::Client,
    guard: EgressGuard,
}

impl EgressGuard {
    /// The HTTP client of this guard: no proxy (environment variables
    /// ignored), names resolved and vetted by the guard, redirects as
    /// `options` says, each followed hop re-checked.
    pub fn http_client(&self, options: HttpOptions) -> Result<GuardedClient, reqwest::Error> {
        let mut builder = reqwest::Client::builder()
            .no_proxy()
            .redirect(redirect_policy(self, options.redirects))
            .dns_resolver(PinnedResolver {
                guard: self.clone(),
            });
        if let Some(ua) = options.user_agent {
            builder = builder.user_agent(ua);
        }
        if let Some(idle) = options.pool_max_idle_per_host {
            builder = builder.pool_max_idle_per_host(idle);
        }
        Ok(GuardedClient {
            client: builder.build()?,
            guard: self.clone(),
        })
    }
}

impl GuardedClient {
    /// The guard behind the client.
    pub fn guard(&self) -> &EgressGuard {
        &self.guard
    }

    /// A request to `url`, once the URL passed [`EgressGuard::check_url`]
    /// (its name's addresses are vetted when the client connects).
    pub fn request(
        &self,
        method: reqwest::Method,
        url: Url,
    ) -> Result<reqwest::RequestBuilder, SsrfBlocked> {
        self.guard.check_url(&url)?;
        Ok(self.client.request(method, url))
    }

    /// A GET of `url` ([`Self::request`]).
    pub fn get(&self, url: Url) -> Result<reqwest::RequestBuilder, SsrfBlocked> {
        self.request(reqwest::Method::GET, url)
    }

    /// A POST to `url` ([`Self::request`]).
    pub fn post(&self, url: Url) -> Result<reqwest::RequestBuilder, SsrfBlocked> {
        self.request(reqwest::Method::POST, url)
    }

    /// The bare client, for a library that requests only `url` (and its
    /// same-origin redirects): `url` is checked and its name resolved and
    /// vetted now, so a refusal is reported before the library starts, and
    /// every later connection still resolves through the guard.
    pub async fn client_for(&self, url: &Url) -> Result<reqwest::Client, EgressError> {
        self.guard.destination(url).await?;
        Ok(self.client.clone())
    }
}
