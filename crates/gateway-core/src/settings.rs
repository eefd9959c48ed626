//! The `gateway` config section, the listen address and the limits.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::num::NonZeroUsize;
use std::time::Duration;

use talon_config::{GatewayBind, GatewayConfig, GatewayTokenScope, JournalDurability};

use crate::auth::TokenSet;
use crate::scope::Scope;

/// The default port (OpenClaw's).
pub const DEFAULT_PORT: u16 = talon_config::DEFAULT_GATEWAY_PORT;

/// Resource limits. Every queue and buffer the gateway keeps is bounded by
/// one of these.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limits {
    /// Frames queued for one WebSocket client before it counts as a slow
    /// consumer and is disconnected.
    pub outbound_frames: usize,
    /// The largest tool result (text bytes) sent back; the rest is cut with
    /// a note.
    pub max_output_bytes: usize,
    /// Requests one connection may have executing at once (further frames
    /// wait unread).
    pub max_in_flight_per_connection: usize,
    /// The largest incoming frame.
    pub max_frame_bytes: usize,
    /// How long a graceful stop waits for in-flight calls.
    pub drain_timeout: Duration,
    /// How long a cron run waits for a subscribed runner client.
    pub runner_wait: Duration,
    /// Open sessions at most.
    pub max_sessions: usize,
    /// Concurrent `exec` calls in sandboxed sessions per sandbox engine
    /// (backend); further calls wait their turn.
    pub max_sandbox_execs: usize,
    /// Auth failures per address before it is locked out for the window.
    pub auth_max_failures: u32,
    /// The auth-failure window.
    pub auth_window: Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            outbound_frames: 1024,
            max_output_bytes: 256 * 1024,
            max_in_flight_per_connection: 64,
            max_frame_bytes: 4 * 1024 * 1024,
            drain_timeout: Duration::from_secs(10),
            runner_wait: Duration::from_secs(30),
            max_sessions: 10_000,
            max_sandbox_execs: 8,
            auth_max_failures: 10,
            auth_window: Duration::from_secs(60),
        }
    }
}

/// Tools `POST /tools/invoke` refuses unless `gateway.tools.allow` names
/// them (defined with the `gateway` section, so the security audit reads
/// the same list).
pub use talon_config::DEFAULT_HTTP_TOOL_DENY;

/// What the `gateway` section says, checked.
#[derive(Debug, Clone)]
pub struct GatewaySection {
    /// `gateway.port`.
    pub port: Option<u16>,
    /// `gateway.bind`: `loopback` (default), `lan` (all interfaces) or an
    /// IP address.
    pub bind: Option<IpAddr>,
    /// Tokens from `gateway.auth.token` (operator, id `operator`) and
    /// `gateway.auth.tokens[]` (each with its id and scope), as hashes.
    pub tokens: TokenSet,
    /// The limits.
    pub limits: Limits,
    /// `gateway.journal.durability`: `full` (default: every commit synced
    /// to the device) or `process-crash` (synced at checkpoints; survives
    /// the process being killed, not a power loss). Read at start only.
    pub journal_durability: talon_journal::Durability,
    /// `gateway.journal.retentionDays` / `maxBytes`: how much call history
    /// the journal keeps (default 30 days, 256 MiB). Read at start only.
    pub journal_retention: talon_journal::Retention,
    /// Tools `POST /tools/invoke` refuses (lowercase):
    /// [`DEFAULT_HTTP_TOOL_DENY`] minus `gateway.tools.allow`, plus
    /// `gateway.tools.deny`.
    pub http_tool_deny: Vec<String>,
}

impl Default for GatewaySection {
    fn default() -> Self {
        GatewaySection {
            port: None,
            bind: None,
            tokens: TokenSet::default(),
            limits: Limits::default(),
            journal_durability: talon_journal::Durability::default(),
            journal_retention: talon_journal::Retention::default(),
            http_tool_deny: DEFAULT_HTTP_TOOL_DENY
                .iter()
                .map(|t| (*t).to_owned())
                .collect(),
        }
    }
}

impl GatewaySection {
    /// Whether `POST /tools/invoke` refuses `tool`.
    pub fn http_denies(&self, tool: &str) -> bool {
        let name = tool.trim().to_ascii_lowercase();
        self.http_tool_deny.contains(&name)
    }
}

impl GatewaySection {
    /// The runtime settings of a `gateway` section (typed and checked when
    /// the file was loaded, by `talon-config`).
    pub fn from_config(section: &GatewayConfig) -> GatewaySection {
        let mut tokens = TokenSet::new();
        let mut limits = Limits::default();
        if let Some(auth) = &section.auth {
            if let Some(t) = auth.token.as_deref() {
                tokens.add_named(t, Some(talon_config::OPERATOR_TOKEN_ID), Scope::Operator);
            }
            for e in &auth.tokens {
                let scope = token_scope(e.scope);
                match e.sha256() {
                    Some(hash) => tokens.add_hash(hash, e.id.as_deref(), scope),
                    None => tokens.add_named(&e.token, e.id.as_deref(), scope),
                }
            }
            if let Some(n) = auth.max_failures {
                limits.auth_max_failures = n.max(1);
            }
            if let Some(ms) = auth.window_ms {
                limits.auth_window = Duration::from_millis(ms.max(1));
            }
        }
        if let Some(l) = &section.limits {
            let set = |v: Option<NonZeroUsize>, cur: &mut usize| {
                if let Some(n) = v {
                    *cur = n.get();
                }
            };
            set(l.outbound_frames, &mut limits.outbound_frames);
            set(l.max_output_bytes, &mut limits.max_output_bytes);
            set(
                l.max_in_flight_per_connection,
                &mut limits.max_in_flight_per_connection,
            );
            set(l.max_frame_bytes, &mut limits.max_frame_bytes);
            set(l.max_sessions, &mut limits.max_sessions);
            set(l.max_sandbox_execs, &mut limits.max_sandbox_execs);
            if let Some(ms) = l.drain_timeout_ms {
                limits.drain_timeout = Duration::from_millis(ms);
            }
            if let Some(ms) = l.runner_wait_ms {
                limits.runner_wait = Duration::from_millis(ms);
            }
        }
        let journal_durability = match section.journal.as_ref().and_then(|j| j.durability) {
            None | Some(JournalDurability::Full) => talon_journal::Durability::Full,
            Some(JournalDurability::ProcessCrash) => talon_journal::Durability::ProcessCrash,
        };
        let journal_retention = {
            let j = section.journal.as_ref();
            let days = j
                .and_then(|j| j.retention_days)
                .unwrap_or(talon_journal::DEFAULT_RETENTION_DAYS);
            let max_bytes = j
                .and_then(|j| j.max_bytes)
                .unwrap_or(talon_journal::DEFAULT_MAX_BYTES);
            talon_journal::Retention::new(
                (days != 0).then(|| Duration::from_secs(u64::from(days) * 86_400)),
                (max_bytes != 0).then_some(max_bytes),
            )
        };
        let http_tool_deny = section.http_tool_deny();
        GatewaySection {
            port: section.port,
            bind: section.bind.and_then(GatewayBind::ip),
            tokens,
            limits,
            journal_durability,
            journal_retention,
            http_tool_deny,
        }
    }

    /// The address to listen on: `cli` (`--bind`) wins; else
    /// `gateway.bind` + `gateway.port`; else `127.0.0.1:18789`.
    pub fn listen_addr(&self, cli: Option<SocketAddr>) -> SocketAddr {
        cli.unwrap_or_else(|| talon_config::gateway_listen_addr(self.bind, self.port))
    }
}

/// The gateway scope of a configured token scope.
fn token_scope(scope: GatewayTokenScope) -> Scope {
    match scope {
        GatewayTokenScope::ReadOnly => Scope::ReadOnly,
        GatewayTokenScope::Runner => Scope::Runner,
        GatewayTokenScope::Owner => Scope::Owner,
        GatewayTokenScope::Operator => Scope::Operator,
    }
}

/// A `--bind` value that is none of the accepted shapes.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("--bind `{value}`: expected HOST:PORT (e.g. 127.0.0.1:18789), a port, or an IP address")]
pub struct BindParseError {
    /// The value as given (trimmed).
    pub value: String,
}

/// Parse a `--bind` value: `HOST:PORT`, a bare `PORT`, or a bare IP (port
/// 18789).
pub fn parse_bind(text: &str) -> Result<SocketAddr, BindParseError> {
    let t = text.trim();
    if let Ok(a) = t.parse::<SocketAddr>() {
        return Ok(a);
    }
    if let Ok(p) = t.parse::<u16>() {
        return Ok(SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), p));
    }
    if let Ok(ip) = t.trim_matches(['[', ']']).parse::<IpAddr>() {
        return Ok(SocketAddr::new(ip, DEFAULT_PORT));
    }
    if let Some(port) = t
        .strip_prefix("localhost:")
        .and_then(|p| p.parse::<u16>().ok())
    {
        return Ok(SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), port));
    }
    Err(BindParseError {
        value: t.to_owned(),
    })
}

#[cfg(test)]
#[path = "settings_tests.rs"]
mod tests;
