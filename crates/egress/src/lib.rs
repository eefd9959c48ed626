//! Talon's egress guard: which destinations Talon may connect to, decided
//! in one place for every way out.
//!
//! - [`SsrfPolicy`]: the SSRF rules (facts §15) with the operator's
//!   [`SsrfAllowlistConfig`] and the private-network opt-in
//!   ([`SsrfPolicy::with_private_network`]). Cloud metadata endpoints
//!   ([`metadata_endpoint`], [`METADATA_HOSTNAMES`]) are a class of their
//!   own ([`BlockKind::Metadata`], code [`METADATA_BLOCKED_CODE`]) that no
//!   allowlist or opt-in opens.
//! - [`EgressGuard`]: the rules, the resolver and the consumer's opt-in
//!   key: from a URL to the only addresses a connection may use
//!   ([`EgressGuard::destination`]); every refusal names the host and how
//!   to open it on purpose. With the `http` feature,
//!   [`EgressGuard::http_client`] is the `reqwest` client every HTTP
//!   consumer uses (`web_fetch` and its redirect hops, `web_search`
//!   providers, MCP streamable-HTTP servers): no proxy, names resolved and
//!   vetted by the guard (DNS pinning), followed redirects re-checked.
//! - [`EgressProxy`]: the host side of a local sandbox's network. A
//!   sandbox with `network` other than `none` on the local backend still
//!   has no network interface but loopback; its programs reach the outside
//!   through an HTTP proxy (`HTTP_PROXY`/`HTTPS_PROXY`) whose every
//!   `CONNECT` and absolute-form request is vetted by the same
//!   [`SsrfPolicy`] before the proxy opens a connection, to the vetted
//!   address only (a second DNS answer cannot swap in a private one).
//!   The proxy listens on a Unix socket that the sandbox sees bind-mounted;
//!   a small forwarder inside the sandbox's network namespace
//!   (`talon-sandbox-exec`) relays `127.0.0.1:3128` to it.
//! - [`HostResolver`]: the injectable name resolution behind both.
//!
//! ```no_run
//! use std::sync::Arc;
//! use talon_egress::{EgressProxy, SsrfPolicy, SystemResolver};
//!
//! # async fn demo() -> std::io::Result<()> {
//! let proxy = EgressProxy::start(
//!     std::path::Path::new("/run/talon/egress.sock"),
//!     Arc::new(SsrfPolicy::strict()),
//!     Arc::new(SystemResolver),
//! )?;
//! // ... give the sandbox the socket; dropping `proxy` stops it.
//! # drop(proxy); Ok(()) }
//! ```
#![deny(missing_docs)]

pub use crate::allowlist::{AllowlistError, SsrfAllowlistConfig};
pub use crate::guard::{Destination, EgressError, EgressGuard, RESOLVE_FAILED_CODE, blocked_in};
#[cfg(feature = "http")]
pub use crate::http::{GuardedClient, HttpOptions, Redirects};
pub use crate::metadata::{METADATA_HOSTNAMES, is_metadata_hostname, metadata_endpoint};
pub use crate::proxy::{EgressProxy, ProxyLimits};
pub use crate::request::{BadRequest, ProxyRequest};
pub use crate::resolver::{HostResolver, StaticResolver, SystemResolver};
pub use crate::ssrf::{
    BlockKind, HostLiteral, IpBlock, METADATA_BLOCKED_CODE, SSRF_BLOCKED_CODE, SsrfBlocked,
    SsrfPolicy, classify_ip, is_blocked_hostname, normalize_hostname, parse_host_literal,
};

mod allowlist;
mod guard;
#[cfg(feature = "http")]
mod http;
mod metadata;
mod proxy;
mod request;
mod resolver;
mod ssrf;
