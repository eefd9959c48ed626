//! The `gateway` section: the daemon's listen address, tokens, limits,
//! journal durability and the HTTP tool deny list, as plain data. The
//! gateway (`talon-gateway-core`) turns it into its runtime settings; every
//! value it reads is checked here, at load, so a bad value is a load error
//! at its key (and a reload with one is refused).

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::num::NonZeroUsize;

use schemars::JsonSchema;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// The shortest gateway token accepted.
pub const MIN_GATEWAY_TOKEN_CHARS: usize = 16;

/// The gateway's port when `gateway.port` is not set.
pub const DEFAULT_GATEWAY_PORT: u16 = 18789;

/// The address the daemon listens on for `gateway.bind` (already turned
/// into an address; `None` is loopback) and `gateway.port`.
pub fn gateway_listen_addr(bind: Option<IpAddr>, port: Option<u16>) -> SocketAddr {
    SocketAddr::new(
        bind.unwrap_or(IpAddr::V4(Ipv4Addr::LOCALHOST)),
        port.unwrap_or(DEFAULT_GATEWAY_PORT),
    )
}

/// Tools `POST /tools/invoke` refuses unless `gateway.tools.allow` names
/// them: OpenClaw's HTTP hard deny (commands and shells, file writes,
/// deletes, moves and patches, the tools that pivot into other sessions or
/// change what runs later, nodes; GHSA-943q-mwmv-hhvh), plus Talon's
/// `sessions_yield` and `subagents`. A one-shot HTTP caller has no session
/// of its own to confine such a call. The WebSocket API and `/mcp` are
/// bound to a session and keep the session's policy.
pub const DEFAULT_HTTP_TOOL_DENY: &[&str] = &[
    "exec",
    "spawn",
    "shell",
    "fs_write",
    "fs_delete",
    "fs_move",
    "apply_patch",
    "sessions_spawn",
    "sessions_send",
    "sessions_yield",
    "subagents",
    "cron",
    "gateway",
    "nodes",
];

impl GatewayConfig {
    /// Where the daemon this section configures listens
    /// ([`gateway_listen_addr`]).
    pub fn listen_addr(&self) -> SocketAddr {
        gateway_listen_addr(self.bind.and_then(GatewayBind::ip), self.port)
    }

    /// The address a client on this host reaches that daemon at: its
    /// listen address, with every-interface binds (`lan`, `0.0.0.0`, `::`)
    /// reached through loopback.
    pub fn client_addr(&self) -> SocketAddr {
        let mut addr = self.listen_addr();
        if addr.ip().is_unspecified() {
            addr.set_ip(match addr.ip() {
                IpAddr::V6(_) => IpAddr::V6(std::net::Ipv6Addr::LOCALHOST),
                IpAddr::V4(_) => IpAddr::V4(Ipv4Addr::LOCALHOST),
            });
        }
        addr
    }

    /// The WebSocket URL a client on this host reaches that daemon at
    /// ([`GatewayConfig::client_addr`]).
    pub fn client_url(&self) -> String {
        format!("ws://{}/ws", self.client_addr())
    }

    /// The tools `POST /tools/invoke` refuses (lowercase):
    /// [`DEFAULT_HTTP_TOOL_DENY`] minus `gateway.tools.allow`, plus
    /// `gateway.tools.deny`. The gateway and the security audit both take
    /// the HTTP surface's deny list from here.
    pub fn http_tool_deny(&self) -> Vec<String> {
        let mut deny: Vec<String> = DEFAULT_HTTP_TOOL_DENY
            .iter()
            .map(|t| (*t).to_owned())
            .collect();
        if let Some(t) = &self.tools {
            let normalise = |list: &[String]| -> Vec<String> {
                list.iter()
                    .map(|name| name.trim().to_ascii_lowercase())
                    .filter(|n| !n.is_empty())
                    .collect()
            };
            let allow = normalise(&t.allow);
            deny.retain(|d| !allow.contains(d));
            for d in normalise(&t.deny) {
                if !deny.contains(&d) {
                    deny.push(d);
                }
            }
        }
        deny
    }
}

/// `gateway`. OpenClaw keys this version does not use (`mode`, `remote`,
/// `tailscale`, …) are removed at load with a notice, here and in `auth`,
/// and those that would restrict access (`tls`, `controlUi.allowedOrigins`,
/// `roles`, `auth.rateLimit`) are refused; any other key is an error.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct GatewayConfig {
    /// The port (default 18789).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub port: Option<u16>,
    /// `loopback` (default), `lan` / `all` (every interface) or an IP
    /// address.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bind: Option<GatewayBind>,
    /// Tokens and the auth-failure lockout.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub auth: Option<GatewayAuthConfig>,
    /// Queue, buffer and time limits.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limits: Option<GatewayLimitsConfig>,
    /// The call journal.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub journal: Option<GatewayJournalConfig>,
    /// Adjusts the tools `POST /tools/invoke` refuses.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<GatewayToolsConfig>,
}

/// `gateway.bind`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GatewayBind {
    /// `loopback` (or empty): 127.0.0.1.
    Loopback,
    /// `lan` / `all`: every interface (0.0.0.0).
    Lan,
    /// An IP address.
    Ip(IpAddr),
}

impl GatewayBind {
    /// Parse a `gateway.bind` value.
    pub fn parse(text: &str) -> Option<GatewayBind> {
        match text.trim() {
            "loopback" | "" => Some(GatewayBind::Loopback),
            "lan" | "all" => Some(GatewayBind::Lan),
            other => other.parse::<IpAddr>().ok().map(GatewayBind::Ip),
        }
    }

    /// The address to listen on (`None` for loopback, the default).
    pub fn ip(self) -> Option<IpAddr> {
        match self {
            GatewayBind::Loopback => None,
            GatewayBind::Lan => Some(IpAddr::V4(Ipv4Addr::UNSPECIFIED)),
            GatewayBind::Ip(ip) => Some(ip),
        }
    }
}

impl fmt::Display for GatewayBind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GatewayBind::Loopback => f.write_str("loopback"),
            GatewayBind::Lan => f.write_str("lan"),
            GatewayBind::Ip(ip) => write!(f, "{ip}"),
        }
    }
}

impl Serialize for GatewayBind {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for GatewayBind {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        GatewayBind::parse(&text).ok_or_else(|| {
            serde::de::Error::custom(format!(
                "`{text}` is not `loopback`, `lan` or an IP address"
            ))
        })
    }
}

impl JsonSchema for GatewayBind {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "GatewayBind".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "description": "`loopback` (default), `lan` / `all` (every interface) or an IP address.",
            "type": "string",
        })
    }
}

/// `gateway.auth`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct GatewayAuthConfig {
    /// The operator token (at least 16 characters; identity `operator`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token: Option<String>,
    /// More tokens, each with its identity and scope.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tokens: Vec<GatewayTokenConfig>,
    /// Sender ids that are the owner when a `runner` token relays them
    /// (`sessions.create` `sender`): such a session gets the owner-only
    /// tools. Compared trimmed and case-insensitively; `*` lists every
    /// sender (a wildcard the security audit reports). OpenClaw's
    /// `commands.ownerAllowFrom` adds to this list.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub owner_allow_from: Vec<String>,
    /// Auth failures per address before it is locked out (default 10; 0
    /// counts as 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_failures: Option<u32>,
    /// The auth-failure window in ms (default 60 000; 0 counts as 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window_ms: Option<u64>,
}

/// One `gateway.auth.tokens[]` entry: `token` (the secret itself) or
/// `tokenSha256` (its SHA-256, hex), never both.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct GatewayTokenConfig {
    /// The identity the gateway knows the caller by (hook context
    /// `requester.accountId`, logs, errors): 1–64 characters of
    /// `A-Z a-z 0-9 . _ : @ -`, unique among the tokens. Default
    /// `token-<first 8 hex digits of the token's SHA-256>` (never the
    /// token's text).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// The token in plain text (at least 16 characters). Prefer
    /// `tokenSha256`: the audit reports plain-text tokens.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub token: String,
    /// The token's SHA-256 as 64 hex digits (`talon gateway token new`
    /// prints one; `printf %s TOKEN | sha256sum` computes one). The
    /// gateway keeps only hashes in memory either way.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_sha256: Option<String>,
    /// What it may do.
    pub scope: GatewayTokenScope,
}

impl GatewayTokenConfig {
    /// The SHA-256 this entry names, as 32 bytes: `tokenSha256` decoded,
    /// or `None` when the entry gives `token` (the gateway hashes that
    /// itself) or a malformed hash (a load error, see
    /// [`GatewayConfig::validate`]).
    pub fn sha256(&self) -> Option<[u8; 32]> {
        parse_sha256_hex(self.token_sha256.as_deref()?)
    }
}

/// 64 hex digits (either case, blanks around trimmed) as 32 bytes.
pub fn parse_sha256_hex(text: &str) -> Option<[u8; 32]> {
    let text = text.trim();
    if text.len() != 64 || !text.is_ascii() {
        return None;
    }
    let mut out = [0u8; 32];
    for (i, byte) in out.iter_mut().enumerate() {
        *byte = u8::from_str_radix(text.get(2 * i..2 * i + 2)?, 16).ok()?;
    }
    Some(out)
}

/// Whether `id` is a valid token identity (1–64 of `A-Z a-z 0-9 . _ : @ -`).
pub fn is_valid_token_id(id: &str) -> bool {
    (1..=64).contains(&id.len())
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | ':' | '@' | '-'))
}

/// The scope of a gateway token, least to most. Each includes the ones
/// before it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum GatewayTokenScope {
    /// `read-only` (also `readonly`, `read_only`, `read`): inspect.
    ReadOnly,
    /// `runner` (also `agent`, the name before owner identities): run
    /// sessions and tools; a session is the owner's only when the sender
    /// it relays is in the owner list.
    Runner,
    /// `owner`: a runner that is the owner (its sessions get the
    /// owner-only tools).
    Owner,
    /// `operator` (also `admin`): the owner, plus administration
    /// (approvals, cron changes, reloads, sandboxes).
    Operator,
}

impl GatewayTokenScope {
    /// The runner scope's former name, still accepted in configs.
    #[allow(non_upper_case_globals, reason = "the former variant's name")]
    pub const Agent: GatewayTokenScope = GatewayTokenScope::Runner;

    /// Parse a scope name (trimmed, any case).
    pub fn parse(text: &str) -> Option<GatewayTokenScope> {
        match text.trim().to_ascii_lowercase().as_str() {
            "read-only" | "readonly" | "read_only" | "read" => Some(GatewayTokenScope::ReadOnly),
            "runner" | "agent" => Some(GatewayTokenScope::Runner),
            "owner" => Some(GatewayTokenScope::Owner),
            "operator" | "admin" => Some(GatewayTokenScope::Operator),
            _ => None,
        }
    }

    /// The canonical name.
    pub fn as_str(self) -> &'static str {
        match self {
            GatewayTokenScope::ReadOnly => "read-only",
            GatewayTokenScope::Runner => "runner",
            GatewayTokenScope::Owner => "owner",
            GatewayTokenScope::Operator => "operator",
        }
    }
}

impl Serialize for GatewayTokenScope {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for GatewayTokenScope {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        GatewayTokenScope::parse(&text).ok_or_else(|| {
            serde::de::Error::custom(format!(
                "`{text}` is not operator, owner, runner (formerly agent) or read-only"
            ))
        })
    }
}

impl JsonSchema for GatewayTokenScope {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "GatewayTokenScope".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "description": "`operator`, `owner`, `runner` (`agent` is accepted as `runner`) or `read-only`.",
            "type": "string",
        })
    }
}

/// `commands`: of OpenClaw's chat-command settings Talon reads only
/// `ownerAllowFrom` (the other keys are dropped at load with a notice:
/// Talon has no chat commands).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CommandsConfig {
    /// Sender ids that are the owner, as `gateway.auth.ownerAllowFrom`
    /// (both lists count).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub owner_allow_from: Vec<String>,
}

/// `gateway.limits` (every count at least 1).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct GatewayLimitsConfig {
    /// Frames queued for one WebSocket client before it is disconnected.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outbound_frames: Option<NonZeroUsize>,
    /// The largest tool result (text bytes) sent back.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_output_bytes: Option<NonZeroUsize>,
    /// Requests one connection may have executing at once.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_in_flight_per_connection: Option<NonZeroUsize>,
    /// The largest incoming frame.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_frame_bytes: Option<NonZeroUsize>,
    /// How long a graceful stop waits for in-flight calls (ms).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub drain_timeout_ms: Option<u64>,
    /// How long a cron run waits for a subscribed runner client (ms).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runner_wait_ms: Option<u64>,
    /// Open sessions at most.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_sessions: Option<NonZeroUsize>,
    /// Concurrent sandboxed `exec` calls per sandbox engine.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_sandbox_execs: Option<NonZeroUsize>,
}

/// `gateway.journal`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct GatewayJournalConfig {
    /// `full` (default) or `process-crash`. Read at start only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub durability: Option<JournalDurability>,
    /// Days a finished call's record is kept (default 30; 0: no age
    /// limit). Calls in flight are never deleted. Read at start only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retention_days: Option<u32>,
    /// The journal's live data kept at most, in bytes (default 256 MiB;
    /// 0: no size limit; otherwise at least 1 MiB). Over it, the oldest
    /// finished records go, read-only and refused calls first. Read at
    /// start only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_bytes: Option<u64>,
}

/// The smallest `gateway.journal.maxBytes` other than 0 (1 MiB).
pub const MIN_JOURNAL_MAX_BYTES: u64 = 1024 * 1024;

/// `gateway.journal.durability`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum JournalDurability {
    /// Every commit synced to the device.
    #[default]
    Full,
    /// Synced at checkpoints: survives the process being killed, not a
    /// power loss.
    ProcessCrash,
}

/// `gateway.tools`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct GatewayToolsConfig {
    /// Tools to take off the default HTTP deny list.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub allow: Vec<String>,
    /// Tools to add to it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub deny: Vec<String>,
}

impl GatewayConfig {
    /// Checks serde cannot express, as `(key path below gateway, message)`.
    pub fn validate(&self) -> Vec<(String, String)> {
        let mut out = Vec::new();
        if let Some(auth) = &self.auth {
            if let Some(t) = &auth.token {
                check_token(t, "auth.token", &mut out);
            }
            check_tokens(&auth.tokens, &mut out);
            for (i, sender) in auth.owner_allow_from.iter().enumerate() {
                if sender.trim().is_empty() {
                    out.push((
                        format!("auth.ownerAllowFrom[{i}]"),
                        "an owner sender id cannot be empty (use `*` for every sender, knowingly)"
                            .to_owned(),
                    ));
                }
            }
        }
        if let Some(max) = self.journal.as_ref().and_then(|j| j.max_bytes)
            && max != 0
            && max < MIN_JOURNAL_MAX_BYTES
        {
            out.push((
                "journal.maxBytes".to_owned(),
                format!(
                    "{max} bytes is too small to keep a useful call history; use at least {MIN_JOURNAL_MAX_BYTES} (1 MiB), or 0 for no size limit"
                ),
            ));
        }
        if let Some(tools) = &self.tools {
            for (key, list) in [("allow", &tools.allow), ("deny", &tools.deny)] {
                for (i, name) in list.iter().enumerate() {
                    if name.trim().is_empty() {
                        out.push((
                            format!("tools.{key}[{i}]"),
                            "a tool name cannot be empty".to_owned(),
                        ));
                    }
                }
            }
        }
        out
    }
}

fn check_token(token: &str, key: &str, out: &mut Vec<(String, String)>) {
    if token.trim().chars().count() < MIN_GATEWAY_TOKEN_CHARS {
        out.push((
            key.to_owned(),
            format!(
                "a gateway token must have at least {MIN_GATEWAY_TOKEN_CHARS} characters (generate one with `openssl rand -hex 32`)"
            ),
        ));
    }
}

fn check_tokens(tokens: &[GatewayTokenConfig], out: &mut Vec<(String, String)>) {
    let mut ids: Vec<(&str, usize)> = Vec::new();
    for (i, e) in tokens.iter().enumerate() {
        let plain = !e.token.trim().is_empty();
        match (&e.token_sha256, plain) {
            (Some(_), true) => out.push((
                format!("auth.tokens[{i}]"),
                "give `token` or `tokenSha256`, not both (keep only `tokenSha256`: the hash is enough to check a token)".to_owned(),
            )),
            (None, false) => out.push((
                format!("auth.tokens[{i}]"),
                "a token entry needs `token` or `tokenSha256` (`talon gateway token new` prints a fresh token and its entry)".to_owned(),
            )),
            (Some(hash), false) => {
                if parse_sha256_hex(hash).is_none() {
                    out.push((
                        format!("auth.tokens[{i}].tokenSha256"),
                        "must be a SHA-256 as 64 hex digits (`printf %s TOKEN | sha256sum`)"
                            .to_owned(),
                    ));
                }
            }
            (None, true) => check_token(&e.token, &format!("auth.tokens[{i}].token"), out),
        }
        if let Some(id) = &e.id {
            if !is_valid_token_id(id) {
                out.push((
                    format!("auth.tokens[{i}].id"),
                    format!(
                        "`{id}` is not a token id: use 1–64 characters of A-Z a-z 0-9 . _ : @ -"
                    ),
                ));
            } else if let Some((_, first)) = ids.iter().find(|(seen, _)| *seen == id.as_str()) {
                out.push((
                    format!("auth.tokens[{i}].id"),
                    format!("`{id}` is already the id of auth.tokens[{first}]; each token needs its own id"),
                ));
            } else if id == OPERATOR_TOKEN_ID || id == STATE_TOKEN_ID {
                out.push((
                    format!("auth.tokens[{i}].id"),
                    format!("`{id}` is reserved (`{OPERATOR_TOKEN_ID}` is gateway.auth.token, `{STATE_TOKEN_ID}` the generated token file); pick another id"),
                ));
            } else {
                ids.push((id.as_str(), i));
            }
        }
    }
}

/// The identity of `gateway.auth.token`.
pub const OPERATOR_TOKEN_ID: &str = "operator";

/// The identity of the token the gateway generates in its state directory.
pub const STATE_TOKEN_ID: &str = "state-token";
