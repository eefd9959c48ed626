//! SSH sandbox settings: the file form ([`SshConfig`], every field
//! optional, unknown keys an error) and the resolved form
//! ([`SshSettings`], defaults applied).
//!
//! Merge rule (an agent's block over `agents.defaults.sandbox.ssh`): each
//! field is the agent's value if set, else the defaults', else the
//! built-in default. With `scope: "shared"` the agent's block is ignored
//! (the caller passes `None` for it).
//!
//! [`SshConfig::validate`] reports values out of range with the key to
//! change; [`SshSettings::resolve`] never fails (an invalid host-key
//! policy resolves to `strict`, the safe side) and the backend refuses
//! what validation would have reported.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The remote directory holding per-scope workspaces when none is
/// configured.
pub const DEFAULT_SSH_WORKSPACE_ROOT: &str = "/tmp/talon-sandboxes";
/// The SSH port when none is configured.
pub const DEFAULT_SSH_PORT: u16 = 22;
/// Seconds allowed to establish a connection.
pub const DEFAULT_SSH_CONNECT_TIMEOUT_SECS: u64 = 10;
/// Seconds a backend-internal remote command (sync listing, marker, kill,
/// remove) may run.
pub const DEFAULT_SSH_COMMAND_TIMEOUT_SECS: u64 = 120;
/// Seconds between keepalive probes (`ServerAliveInterval`).
pub const DEFAULT_SSH_KEEPALIVE_SECS: u64 = 15;

const CONNECT_TIMEOUT_RANGE: (u64, u64) = (1, 300);
const COMMAND_TIMEOUT_RANGE: (u64, u64) = (1, 86_400);
const KEEPALIVE_RANGE: (u64, u64) = (0, 3_600);

/// `strictHostKeyChecking` as written: `true` / `"yes"` / `"strict"`
/// (strict) or `"accept-new"`. `false` / `"no"` are refused: Talon never
/// connects to a host whose key it cannot check.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum HostKeyCheckingValue {
    /// `true` (strict) or `false` (refused).
    Flag(bool),
    /// `"yes"`, `"strict"`, `"accept-new"`.
    Text(String),
}

/// How the remote host's key is checked.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum HostKeyPolicy {
    /// The key must already be in the known-hosts file (the default).
    #[default]
    Strict,
    /// An unknown host's key is added on first connect; a changed key is
    /// still refused.
    AcceptNew,
}

impl HostKeyPolicy {
    /// The config spelling (`strict`, `accept-new`).
    pub fn as_str(self) -> &'static str {
        match self {
            HostKeyPolicy::Strict => "strict",
            HostKeyPolicy::AcceptNew => "accept-new",
        }
    }
}

/// A `strictHostKeyChecking` value that would turn checking off.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "host-key checking cannot be turned off (got {}); use `true` (strict, the default) \
     or `\"accept-new\"` and add the host's key to the known-hosts file",
    match value {
        HostKeyCheckingValue::Flag(b) => b.to_string(),
        HostKeyCheckingValue::Text(t) => format!("`{t}`"),
    }
)]
pub struct HostKeyCheckingOff {
    /// The refused value.
    pub value: HostKeyCheckingValue,
}

impl HostKeyCheckingValue {
    /// The policy this value means, or why it is refused.
    pub fn policy(&self) -> Result<HostKeyPolicy, HostKeyCheckingOff> {
        match self {
            HostKeyCheckingValue::Flag(true) => Ok(HostKeyPolicy::Strict),
            HostKeyCheckingValue::Text(t)
                if matches!(
                    t.trim().to_ascii_lowercase().as_str(),
                    "yes" | "strict" | "true"
                ) =>
            {
                Ok(HostKeyPolicy::Strict)
            }
            HostKeyCheckingValue::Text(t) if t.trim().eq_ignore_ascii_case("accept-new") => {
                Ok(HostKeyPolicy::AcceptNew)
            }
            other => Err(HostKeyCheckingOff {
                value: other.clone(),
            }),
        }
    }
}

/// `agents.defaults.sandbox.ssh` / `agents.list[].sandbox.ssh` as written.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SshConfig {
    /// The remote host name or address (required to use the backend).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
    /// The SSH port (default 22; 1–65535).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub port: Option<u32>,
    /// The remote user (default: the ssh client's default).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user: Option<String>,
    /// The private key file (`~/` expands to the home directory).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub identity_file: Option<String>,
    /// The known-hosts file (default: the ssh client's own).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub known_hosts_file: Option<String>,
    /// `true` (default) or `"accept-new"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub strict_host_key_checking: Option<HostKeyCheckingValue>,
    /// The remote directory holding per-scope workspaces (absolute POSIX
    /// path; default `/tmp/talon-sandboxes`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workspace_root: Option<String>,
    /// Seconds allowed to connect (default 10; 1–300).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connect_timeout_seconds: Option<u64>,
    /// Seconds a backend-internal remote command may run (default 120;
    /// 1–86400).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command_timeout_seconds: Option<u64>,
    /// Seconds between keepalive probes (default 15; 0 turns them off;
    /// at most 3600).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub keepalive_seconds: Option<u64>,
}

fn range_problem(key: &str, value: u64, (min, max): (u64, u64)) -> Option<(String, String)> {
    (value < min || value > max).then(|| {
        (
            key.to_owned(),
            format!("`{key}` is {value}; it must be between {min} and {max}"),
        )
    })
}

/// Why a remote workspace root is refused, if it is.
pub fn remote_root_problem(root: &str) -> Option<String> {
    let trimmed = root.trim();
    if !trimmed.starts_with('/') {
        return Some(format!(
            "`{root}` is not an absolute POSIX path; write it like `{DEFAULT_SSH_WORKSPACE_ROOT}`"
        ));
    }
    if trimmed.split('/').any(|s| s == ".." || s == ".") {
        return Some(format!(
            "`{root}` contains `.` or `..` segments; write the plain absolute path"
        ));
    }
    if trimmed.trim_end_matches('/').is_empty() {
        return Some("`/` cannot hold sandbox workspaces; use a dedicated directory".to_owned());
    }
    if trimmed.chars().any(|c| c.is_control()) {
        return Some(format!(
            "`{}` contains control characters; remove them",
            trimmed.escape_default()
        ));
    }
    None
}

impl SshConfig {
    /// Problems a value has, as `(field, message)` (`field` camelCase,
    /// relative to the `ssh` block). Empty when every set value is valid.
    pub fn validate(&self) -> Vec<(String, String)> {
        let mut out = Vec::new();
        if let Some(host) = &self.host
            && let Some(problem) = host_problem(host)
        {
            out.push(("host".to_owned(), problem));
        }
        if let Some(user) = &self.user
            && let Some(problem) = user_problem(user)
        {
            out.push(("user".to_owned(), problem));
        }
        if let Some(port) = self.port
            && !(1..=65_535).contains(&port)
        {
            out.push((
                "port".to_owned(),
                format!("`port` is {port}; it must be between 1 and 65535"),
            ));
        }
        if let Some(v) = &self.strict_host_key_checking
            && let Err(problem) = v.policy()
        {
            out.push(("strictHostKeyChecking".to_owned(), problem.to_string()));
        }
        if let Some(root) = &self.workspace_root
            && let Some(problem) = remote_root_problem(root)
        {
            out.push(("workspaceRoot".to_owned(), problem));
        }
        out.extend(
            self.connect_timeout_seconds
                .and_then(|v| range_problem("connectTimeoutSeconds", v, CONNECT_TIMEOUT_RANGE)),
        );
        out.extend(
            self.command_timeout_seconds
                .and_then(|v| range_problem("commandTimeoutSeconds", v, COMMAND_TIMEOUT_RANGE)),
        );
        out.extend(
            self.keepalive_seconds
                .and_then(|v| range_problem("keepaliveSeconds", v, KEEPALIVE_RANGE)),
        );
        out
    }
}

/// Why a host name is refused (empty, whitespace, leading `-`, control
/// characters: it goes on the `ssh` command line).
fn host_problem(host: &str) -> Option<String> {
    let h = host.trim();
    if h.is_empty() {
        return Some("`host` is empty; give the remote host name or address".to_owned());
    }
    if h.starts_with('-')
        || h.chars()
            .any(|c| c.is_whitespace() || c.is_control() || c == '@')
    {
        return Some(format!(
            "`host` `{}` is not a host name (no leading `-`, spaces, `@` or control characters; \
             put the user in `user`)",
            h.escape_default()
        ));
    }
    None
}

fn user_problem(user: &str) -> Option<String> {
    let u = user.trim();
    if u.is_empty()
        || u.starts_with('-')
        || u.chars()
            .any(|c| c.is_whitespace() || c.is_control() || c == '@' || c == ':')
    {
        return Some(format!(
            "`user` `{}` is not a user name (no leading `-`, spaces, `@`, `:` or control characters)",
            u.escape_default()
        ));
    }
    None
}

/// The SSH settings of one agent's sandbox, defaults applied.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SshSettings {
    /// The remote host (`None`: not configured; the backend refuses).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
    /// The port.
    pub port: u16,
    /// The remote user, when configured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user: Option<String>,
    /// The private key file, when configured (as written; `~/` expanded by
    /// the backend).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub identity_file: Option<String>,
    /// The known-hosts file, when configured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub known_hosts_file: Option<String>,
    /// The host-key policy.
    pub host_key_policy: HostKeyPolicy,
    /// The remote workspace root, trailing `/` removed.
    pub workspace_root: String,
    /// Connect timeout in seconds.
    pub connect_timeout_seconds: u64,
    /// Backend-internal command timeout in seconds.
    pub command_timeout_seconds: u64,
    /// Keepalive interval in seconds (0: off).
    pub keepalive_seconds: u64,
}

impl Default for SshSettings {
    fn default() -> Self {
        SshSettings::resolve(None, None)
    }
}

impl SshSettings {
    /// Apply `agent` over `defaults` over the built-in defaults. Pass
    /// `None` for `agent` when the scope is `shared`.
    pub fn resolve(defaults: Option<&SshConfig>, agent: Option<&SshConfig>) -> Self {
        fn pick<T: Clone>(
            agent: Option<&SshConfig>,
            defaults: Option<&SshConfig>,
            get: impl Fn(&SshConfig) -> Option<&T>,
        ) -> Option<T> {
            agent
                .and_then(&get)
                .or_else(|| defaults.and_then(&get))
                .cloned()
        }
        let text = |get: fn(&SshConfig) -> Option<&String>| {
            pick(agent, defaults, get)
                .map(|s| s.trim().to_owned())
                .filter(|s| !s.is_empty())
        };
        let root = text(|c| c.workspace_root.as_ref())
            .filter(|r| remote_root_problem(r).is_none())
            .map(|r| r.trim_end_matches('/').to_owned())
            .unwrap_or_else(|| DEFAULT_SSH_WORKSPACE_ROOT.to_owned());
        SshSettings {
            host: text(|c| c.host.as_ref()),
            port: pick(agent, defaults, |c| c.port.as_ref())
                .and_then(|p| u16::try_from(p).ok())
                .filter(|p| *p != 0)
                .unwrap_or(DEFAULT_SSH_PORT),
            user: text(|c| c.user.as_ref()),
            identity_file: text(|c| c.identity_file.as_ref()),
            known_hosts_file: text(|c| c.known_hosts_file.as_ref()),
            host_key_policy: pick(agent, defaults, |c| c.strict_host_key_checking.as_ref())
                .and_then(|v| v.policy().ok())
                .unwrap_or_default(),
            workspace_root: root,
            connect_timeout_seconds: pick(agent, defaults, |c| c.connect_timeout_seconds.as_ref())
                .unwrap_or(DEFAULT_SSH_CONNECT_TIMEOUT_SECS)
                .clamp(CONNECT_TIMEOUT_RANGE.0, CONNECT_TIMEOUT_RANGE.1),
            command_timeout_seconds: pick(agent, defaults, |c| c.command_timeout_seconds.as_ref())
                .unwrap_or(DEFAULT_SSH_COMMAND_TIMEOUT_SECS)
                .clamp(COMMAND_TIMEOUT_RANGE.0, COMMAND_TIMEOUT_RANGE.1),
            keepalive_seconds: pick(agent, defaults, |c| c.keepalive_seconds.as_ref())
                .unwrap_or(DEFAULT_SSH_KEEPALIVE_SECS)
                .min(KEEPALIVE_RANGE.1),
        }
    }

    /// The remote directory of one sandbox: `<workspaceRoot>/<name>`.
    pub fn remote_sandbox_dir(&self, sandbox_name: &str) -> String {
        format!("{}/{sandbox_name}", self.workspace_root)
    }

    /// The remote workspace copy of one sandbox (its workdir):
    /// `<workspaceRoot>/<name>/workspace`.
    pub fn remote_workdir(&self, sandbox_name: &str) -> String {
        format!("{}/workspace", self.remote_sandbox_dir(sandbox_name))
    }

    /// `user@host:port` for messages (`?` when no host is configured).
    pub fn target(&self) -> String {
        let host = self.host.as_deref().unwrap_or("?");
        match &self.user {
            Some(user) => format!("{user}@{host}:{}", self.port),
            None => format!("{host}:{}", self.port),
        }
    }
}

#[cfg(test)]
#[path = "ssh_config_tests.rs"]
mod tests;
