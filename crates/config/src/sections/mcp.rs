//! The `mcp` config section (`mcp.servers.<name>`, and the same under
//! `agents.list[].mcp`), with OpenClaw's key names.

use std::collections::BTreeMap;
use std::fmt;
use std::time::Duration;

use serde::de::{MapAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize};

/// The default per-call timeout.
pub const DEFAULT_TIMEOUT_MS: u64 = 60_000;
/// The longest per-call timeout accepted (one hour).
pub const MAX_TIMEOUT_MS: u64 = 3_600_000;
/// The default cap on a call's result (text and data bytes together).
pub const DEFAULT_MAX_OUTPUT_BYTES: usize = 200_000;
/// The smallest cap accepted.
pub const MIN_MAX_OUTPUT_BYTES: usize = 1_024;
/// The largest cap accepted.
pub const MAX_MAX_OUTPUT_BYTES: usize = 16 * 1024 * 1024;

/// `mcp` (global) or `agents.list[].mcp` (one agent).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct McpConfig {
    /// The servers, in declaration order (the order decides which of two
    /// colliding names keeps the plain form).
    #[serde(default)]
    pub servers: McpServers,
}

/// Servers in declaration order.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(transparent)]
pub struct McpServers(pub Vec<(String, McpServerConfig)>);

impl<'de> Deserialize<'de> for McpServers {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Ordered;
        impl<'de> Visitor<'de> for Ordered {
            type Value = McpServers;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an object mapping server names to server settings")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<McpServers, A::Error> {
                let mut out: Vec<(String, McpServerConfig)> = Vec::new();
                while let Some(key) = map.next_key::<String>()? {
                    let value = map.next_value::<McpServerConfig>()?;
                    if out.iter().any(|(k, _)| *k == key) {
                        return Err(serde::de::Error::custom(format!(
                            "server `{key}` is declared twice"
                        )));
                    }
                    out.push((key, value));
                }
                Ok(McpServers(out))
            }
        }
        d.deserialize_map(Ordered)
    }
}

/// One server: stdio (`command`, `args`, `env`, `cwd`) or streamable HTTP
/// (`url`, `headers`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct McpServerConfig {
    /// The program of a stdio server (looked up on `PATH` when bare).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    /// Its arguments.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub args: Vec<String>,
    /// Extra environment of a stdio server (filtered by the exec-env
    /// policy; values may be `${VAR}` references).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub env: BTreeMap<String, String>,
    /// The working directory of a stdio server.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    /// The endpoint of a streamable-HTTP server (`http` or `https`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// Extra HTTP headers (values may be `${VAR}` references).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub headers: BTreeMap<String, String>,
    /// `false` turns the server off (default on).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enabled: Option<bool>,
    /// Per-call timeout in milliseconds (1 ..= 3 600 000; default 60 000).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 3_600_000))]
    pub timeout_ms: Option<u64>,
    /// Whether the server's tools may run in parallel with other calls.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub supports_parallel_tool_calls: Option<bool>,
    /// Cap on one call's result in bytes (1 024 ..= 16 MiB; default
    /// 200 000); a longer result is cut with a note.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1_024, max = 16_777_216))]
    pub max_output_bytes: Option<usize>,
    /// Talon, `url` servers only: `true` lets the server's URL reach a
    /// private network (loopback, RFC 1918, link-local, CGNAT, unique-local
    /// addresses and names like `localhost` or `*.internal`), which the
    /// egress guard refuses otherwise. Cloud metadata endpoints
    /// (`169.254.169.254`, `fd00:ec2::254`, `metadata.google.internal`,
    /// ...) stay refused even then. Default false.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allow_private_network: Option<bool>,
}

impl schemars::JsonSchema for McpServers {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "McpServers".into()
    }

    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        let server = generator.subschema_for::<McpServerConfig>();
        schemars::json_schema!({
            "description": "Servers by name, in declaration order.",
            "type": "object",
            "additionalProperties": server,
        })
    }
}

/// How a server is reached.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Transport {
    /// A child process speaking MCP on stdin/stdout.
    Stdio,
    /// Streamable HTTP.
    StreamableHttp,
}

impl McpServerConfig {
    /// Whether the server is on.
    pub fn is_enabled(&self) -> bool {
        self.enabled != Some(false)
    }

    /// The transport (`url` wins only when there is no `command`;
    /// [`McpConfig::validate`] rejects both or neither).
    pub fn transport(&self) -> Transport {
        if self.command.is_none() && self.url.is_some() {
            Transport::StreamableHttp
        } else {
            Transport::Stdio
        }
    }

    /// The per-call timeout.
    pub fn timeout(&self) -> Duration {
        Duration::from_millis(self.timeout_ms.unwrap_or(DEFAULT_TIMEOUT_MS))
    }

    /// Whether the server's URL may reach a private network
    /// (`allowPrivateNetwork`, default false).
    pub fn allows_private_network(&self) -> bool {
        self.allow_private_network == Some(true)
    }

    /// The result cap in bytes.
    pub fn max_output_bytes(&self) -> usize {
        self.max_output_bytes.unwrap_or(DEFAULT_MAX_OUTPUT_BYTES)
    }

    fn validate(&self, key: &str, out: &mut Vec<(String, String)>) {
        match (&self.command, &self.url) {
            (Some(_), Some(_)) => out.push((
                key.to_owned(),
                "set either `command` (stdio) or `url` (streamable HTTP), not both".to_owned(),
            )),
            (None, None) => out.push((
                key.to_owned(),
                "set `command` for a stdio server or `url` for a streamable-HTTP server".to_owned(),
            )),
            (Some(c), None) if c.trim().is_empty() => {
                out.push((format!("{key}.command"), "must not be empty".to_owned()))
            }
            (None, Some(u)) => {
                let lower = u.trim().to_ascii_lowercase();
                if !(lower.starts_with("http://") || lower.starts_with("https://")) {
                    out.push((
                        format!("{key}.url"),
                        format!("`{u}` is not an http:// or https:// URL"),
                    ));
                }
            }
            _ => {}
        }
        if self.command.is_some() && !self.headers.is_empty() {
            out.push((
                format!("{key}.headers"),
                "headers only apply to `url` servers".to_owned(),
            ));
        }
        if self.command.is_some() && self.allow_private_network.is_some() {
            out.push((
                format!("{key}.allowPrivateNetwork"),
                "allowPrivateNetwork only applies to `url` servers (a stdio server makes no connection through Talon); remove it".to_owned(),
            ));
        }
        if self.url.is_some()
            && (!self.env.is_empty() || !self.args.is_empty() || self.cwd.is_some())
        {
            out.push((
                key.to_owned(),
                "`args`, `env` and `cwd` only apply to `command` servers".to_owned(),
            ));
        }
        if let Some(t) = self.timeout_ms
            && !(1..=MAX_TIMEOUT_MS).contains(&t)
        {
            out.push((
                format!("{key}.timeoutMs"),
                format!("{t} is out of range (1 ..= {MAX_TIMEOUT_MS})"),
            ));
        }
        if let Some(m) = self.max_output_bytes
            && !(MIN_MAX_OUTPUT_BYTES..=MAX_MAX_OUTPUT_BYTES).contains(&m)
        {
            out.push((
                format!("{key}.maxOutputBytes"),
                format!("{m} is out of range ({MIN_MAX_OUTPUT_BYTES} ..= {MAX_MAX_OUTPUT_BYTES})"),
            ));
        }
        for (k, v) in self.env.iter().chain(&self.headers) {
            if let Err(e) = check_env_refs(v) {
                out.push((format!("{key}.{k}"), e.to_string()));
            }
        }
    }
}

impl McpConfig {
    /// Range and shape checks serde cannot express, as `(key, message)`
    /// pairs with keys relative to the section (`servers.<name>.timeoutMs`).
    pub fn validate(&self) -> Vec<(String, String)> {
        let mut out = Vec::new();
        for (name, server) in &self.servers.0 {
            if name.trim().is_empty() {
                out.push(("servers".to_owned(), "a server name is empty".to_owned()));
            }
            server.validate(&format!("servers.{name}"), &mut out);
        }
        out
    }
}

/// Why a `${VAR}` reference cannot be expanded. The caller names the key
/// it came from.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum EnvRefError {
    /// `${` without a closing `}`.
    #[error("an unterminated `${{` reference")]
    Unterminated,
    /// The name between `${` and `}` is not a variable name.
    #[error("`${{{0}}}` is not a valid variable reference")]
    InvalidName(String),
    /// The variable is not set.
    #[error("environment variable `{0}` is not set")]
    Unset(String),
    /// A `${secret:NAME}` reference names no entry of the secrets file.
    #[error(
        "secret `{0}` is not in the secrets file (<state dir>/secrets.json, a JSON object of name to value, mode 0600)"
    )]
    MissingSecret(String),
}

/// The prefix of a reference to the secrets file: `${secret:NAME}`.
pub const SECRET_REF_PREFIX: &str = "secret:";

/// Whether `name` may be a secret's name (`[A-Za-z0-9_.-]+`).
pub fn valid_secret_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
}

/// Check the `${VAR}` references of a value are well formed.
fn check_env_refs(value: &str) -> Result<(), EnvRefError> {
    expand_env_refs(value, |_| Some(String::new())).map(|_| ())
}

/// Expand `${VAR}` and `${secret:NAME}` references with `lookup` (which
/// gets `VAR`, or `secret:NAME` whole); `$$` is not special. An
/// unterminated or empty reference, an unset variable or a missing secret
/// is an error (the error says which; never the value).
pub fn expand_env_refs(
    value: &str,
    lookup: impl Fn(&str) -> Option<String>,
) -> Result<String, EnvRefError> {
    let mut out = String::with_capacity(value.len());
    let mut rest = value;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let Some(end) = after.find('}') else {
            return Err(EnvRefError::Unterminated);
        };
        let name = &after[..end];
        let secret = name.strip_prefix(SECRET_REF_PREFIX);
        let valid = match secret {
            Some(s) => valid_secret_name(s),
            None => {
                !name.is_empty()
                    && name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
                    && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            }
        };
        if !valid {
            return Err(EnvRefError::InvalidName(name.to_owned()));
        }
        match (lookup(name), secret) {
            (Some(v), _) => out.push_str(&v),
            (None, Some(s)) => return Err(EnvRefError::MissingSecret(s.to_owned())),
            (None, None) => return Err(EnvRefError::Unset(name.to_owned())),
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}
