//! Starting one server's session: a stdio child in its own process group
//! (environment filtered by the exec-env policy), or a streamable-HTTP
//! connection with its headers; then the MCP handshake.

use std::collections::{BTreeMap, HashMap};
use std::process::Stdio;

use rmcp::ServiceExt;
use rmcp::service::{RoleClient, RunningService};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use talon_hooks::exec_env::{filter_inherited_env, sanitize_env_overrides};
use tokio::io::{AsyncBufReadExt, BufReader};

use crate::config::{McpServerConfig, Transport, expand};
use crate::handler::ClientEvents;

/// A started session.
pub(crate) struct Launched {
    pub(crate) service: RunningService<RoleClient, ClientEvents>,
    /// The process group of a stdio server.
    pub(crate) pgid: Option<i32>,
}

/// Kill a process group with SIGKILL (a missing group is fine).
pub(crate) fn kill_group(pgid: i32) {
    if pgid <= 1 {
        return;
    }
    let _ = nix::sys::signal::killpg(
        nix::unistd::Pid::from_raw(pgid),
        nix::sys::signal::Signal::SIGKILL,
    );
}

/// Kills a process group when dropped, unless disarmed.
pub(crate) struct GroupGuard(pub(crate) Option<i32>);

impl GroupGuard {
    pub(crate) fn disarm(mut self) {
        self.0 = None;
    }
}

impl Drop for GroupGuard {
    fn drop(&mut self) {
        if let Some(pgid) = self.0 {
            kill_group(pgid);
        }
    }
}

fn env_lookup(name: &str) -> Option<String> {
    std::env::var(name).ok()
}

/// The environment of a stdio server: the host environment filtered as
/// for exec children, plus the configured `env` (references expanded),
/// which must pass the exec-env override policy.
pub(crate) fn server_env(
    name: &str,
    config: &McpServerConfig,
) -> Result<BTreeMap<String, String>, String> {
    let mut env = filter_inherited_env(std::env::vars());
    let mut overrides = BTreeMap::new();
    for (key, raw) in &config.env {
        let value = expand(raw, env_lookup)
            .map_err(|e| format!("env `{key}` (mcp.servers.{name}.env.{key}): {e}"))?;
        overrides.insert(key.clone(), value);
    }
    let sanitized = sanitize_env_overrides(&overrides, true);
    if sanitized.has_rejections() {
        let mut keys = sanitized.rejected_blocked.clone();
        keys.extend(sanitized.rejected_invalid.iter().cloned());
        return Err(format!(
            "env keys {} of mcp.servers.{name}.env are refused by the exec env policy; remove them",
            keys.join(", ")
        ));
    }
    env.extend(sanitized.accepted);
    Ok(env)
}

/// The headers of an HTTP server, references expanded.
pub(crate) fn server_headers(
    name: &str,
    config: &McpServerConfig,
) -> Result<HashMap<reqwest::header::HeaderName, reqwest::header::HeaderValue>, String> {
    let mut out = HashMap::new();
    for (key, raw) in &config.headers {
        let value = expand(raw, env_lookup)
            .map_err(|e| format!("header `{key}` (mcp.servers.{name}.headers.{key}): {e}"))?;
        let header = reqwest::header::HeaderName::from_bytes(key.as_bytes())
            .map_err(|_| format!("header name `{key}` is not a valid HTTP header name"))?;
        let mut value = reqwest::header::HeaderValue::from_str(&value)
            .map_err(|_| format!("the value of header `{key}` is not a valid HTTP header value"))?;
        value.set_sensitive(true);
        out.insert(header, value);
    }
    Ok(out)
}

/// Start the session of one server.
pub(crate) async fn launch(
    name: &str,
    config: &McpServerConfig,
    events: ClientEvents,
) -> Result<Launched, String> {
    match config.transport() {
        Transport::Stdio => {
            let program = config.command.clone().unwrap_or_default();
            let env = server_env(name, config)?;
            let mut cmd = tokio::process::Command::new(&program);
            cmd.args(&config.args)
                .env_clear()
                .envs(env)
                .process_group(0)
                .kill_on_drop(true);
            if let Some(cwd) = &config.cwd {
                cmd.current_dir(cwd);
            }
            let (transport, stderr) = TokioChildProcess::builder(cmd)
                .stderr(Stdio::piped())
                .spawn()
                .map_err(|e| format!("cannot start `{program}`: {e}"))?;
            let pgid = transport.id().and_then(|p| i32::try_from(p).ok());
            let guard = GroupGuard(pgid);
            if let Some(stderr) = stderr {
                let server = name.to_owned();
                tokio::spawn(async move {
                    let mut lines = BufReader::new(stderr).lines();
                    while let Ok(Some(line)) = lines.next_line().await {
                        tracing::debug!(target: "talon::mcp::stderr", server = %server, "{line}");
                    }
                });
            }
            let service = events
                .serve(transport)
                .await
                .map_err(|e| format!("the MCP handshake failed: {e}"))?;
            guard.disarm();
            Ok(Launched { service, pgid })
        }
        Transport::StreamableHttp => {
            let url = config.url.clone().unwrap_or_default();
            let headers = server_headers(name, config)?;
            let cfg = StreamableHttpClientTransportConfig::with_uri(url).custom_headers(headers);
            let transport = StreamableHttpClientTransport::from_config(cfg);
            let service = events
                .serve(transport)
                .await
                .map_err(|e| format!("the MCP handshake failed: {e}"))?;
            Ok(Launched {
                service,
                pgid: None,
            })
        }
    }
}
