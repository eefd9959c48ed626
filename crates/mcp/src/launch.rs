//! Starting one server's session: a stdio child in its own contained
//! process tree (a `talon-proc-tree` leaf; environment filtered by the
//! exec-env policy), or a streamable-HTTP connection with its headers
//! through the `talon-egress` guard (its URL vetted first, every connection
//! pinned to vetted addresses, private networks only with
//! `allowPrivateNetwork`, metadata endpoints never); then the MCP
//! handshake.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;
use talon_config::secrets::SecretStore;

use rmcp::ServiceExt;
use rmcp::service::{RoleClient, RunningService};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use talon_egress::{EgressGuard, HostResolver, HttpOptions, Redirects, SsrfPolicy};
use talon_exec_env::{EnvPolicy, process_env, sanitize_env_overrides};
use talon_proc_tree::{Leaf, Limits, Supervisor};
use tokio::io::{AsyncBufReadExt, BufReader};

use crate::config::{McpServerConfig, Transport, expand};
use crate::error::{StartError, StartErrorKind};
use crate::frame::{FrameGuard, FrameLimits, FrameVerdict};
use crate::handler::ClientEvents;

/// A started session.
pub(crate) struct Launched {
    pub(crate) service: RunningService<RoleClient, ClientEvents>,
    /// The process tree of a stdio server: dropping it kills the server
    /// and everything it started (`setsid` and daemons included).
    pub(crate) tree: Option<Leaf>,
    /// The stdio child itself (killed on drop, after its tree).
    pub(crate) child: Option<tokio::process::Child>,
    /// Why the frame guard closed a stdio session, once it did.
    pub(crate) verdict: Option<FrameVerdict>,
}

/// Resolves a stdio server's program the way `execvp` would, so a missing
/// or non-executable program is reported as such before anything starts
/// (the leaf's wrapper would otherwise report it only on stderr).
fn resolve_program(
    program: &str,
    path: Option<&str>,
    cwd: Option<&Path>,
) -> std::io::Result<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let executable = |p: &Path| {
        std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    };
    if program.contains('/') {
        let candidate = match cwd {
            Some(dir) if !program.starts_with('/') => dir.join(program),
            _ => PathBuf::from(program),
        };
        return match std::fs::metadata(&candidate) {
            Err(e) => Err(e),
            Ok(_) if executable(&candidate) => Ok(candidate),
            Ok(_) => Err(std::io::Error::from(std::io::ErrorKind::PermissionDenied)),
        };
    }
    path.unwrap_or("/usr/local/bin:/usr/bin:/bin")
        .split(':')
        .filter(|dir| !dir.is_empty())
        .map(|dir| Path::new(dir).join(program))
        .find(|candidate| executable(candidate))
        .ok_or_else(|| std::io::Error::from(std::io::ErrorKind::NotFound))
}

/// An error and its sources, `: `-separated.
fn error_chain(e: &dyn std::error::Error) -> String {
    let mut out = e.to_string();
    let mut source = e.source();
    while let Some(inner) = source {
        out.push_str(": ");
        out.push_str(&inner.to_string());
        source = inner.source();
    }
    out
}

fn env_lookup(name: &str) -> Option<String> {
    std::env::var(name).ok()
}

/// The environment of a stdio server: the base the agent's exec
/// environment policy (`tools.exec.env`, with the agent's layer) builds
/// from the host environment (by default core variables only; never model
/// keys, the gateway token or another credential-looking or Talon
/// variable) plus the policy's `set`, then the server's configured `env`
/// (references expanded), which must pass the exec-env override policy. A
/// server that needs a secret names it in its `env` (`"${OPENAI_API_KEY}"`).
pub(crate) fn server_env(
    name: &str,
    config: &McpServerConfig,
    policy: &EnvPolicy,
    secrets: &SecretStore,
) -> Result<BTreeMap<String, String>, StartError> {
    server_env_from(name, config, policy, secrets, process_env())
}

/// [`server_env`] from an explicit host environment.
pub(crate) fn server_env_from(
    name: &str,
    config: &McpServerConfig,
    policy: &EnvPolicy,
    secrets: &SecretStore,
    host: Vec<(String, String)>,
) -> Result<BTreeMap<String, String>, StartError> {
    let mut env = policy.host_env(host);
    let mut overrides = BTreeMap::new();
    let lookup = secrets.lookup(env_lookup);
    for (key, raw) in &config.env {
        let value = expand(raw, &lookup).map_err(|e| {
            config_error(format!("env `{key}` (mcp.servers.{name}.env.{key}): {e}"))
        })?;
        overrides.insert(key.clone(), value);
    }
    let sanitized = sanitize_env_overrides(&overrides, true);
    if sanitized.has_rejections() {
        let mut keys = sanitized.rejected_blocked.clone();
        keys.extend(sanitized.rejected_invalid.iter().cloned());
        return Err(config_error(format!(
            "env keys {} of mcp.servers.{name}.env are refused by the exec env policy; remove them",
            keys.join(", ")
        )));
    }
    env.extend(sanitized.accepted);
    Ok(env)
}

/// The headers of an HTTP server, references expanded.
pub(crate) fn server_headers(
    name: &str,
    config: &McpServerConfig,
    secrets: &SecretStore,
) -> Result<HashMap<reqwest::header::HeaderName, reqwest::header::HeaderValue>, StartError> {
    let mut out = HashMap::new();
    let lookup = secrets.lookup(env_lookup);
    for (key, raw) in &config.headers {
        let value = expand(raw, &lookup).map_err(|e| {
            config_error(format!(
                "header `{key}` (mcp.servers.{name}.headers.{key}): {e}"
            ))
        })?;
        let header = reqwest::header::HeaderName::from_bytes(key.as_bytes()).map_err(|_| {
            config_error(format!(
                "header name `{key}` is not a valid HTTP header name"
            ))
        })?;
        let mut value = reqwest::header::HeaderValue::from_str(&value).map_err(|_| {
            config_error(format!(
                "the value of header `{key}` is not a valid HTTP header value"
            ))
        })?;
        value.set_sensitive(true);
        out.insert(header, value);
    }
    Ok(out)
}

/// The most same-origin 307/308 hops one request follows (rmcp's own
/// default client follows as many).
const MAX_REDIRECTS: usize = 10;

/// The egress guard of an HTTP server: the strict rules, or with the
/// private networks open when the server sets `allowPrivateNetwork`
/// (metadata endpoints stay refused either way).
pub(crate) fn server_guard(
    name: &str,
    config: &McpServerConfig,
    resolver: Arc<dyn HostResolver>,
) -> EgressGuard {
    let policy = SsrfPolicy::strict().with_private_network(config.allows_private_network());
    EgressGuard::new(Arc::new(policy), resolver).with_opt_in(format!(
        "set `allowPrivateNetwork: true` on MCP server `{name}` (mcp.servers.{name}, or its entry under agents.list[].mcp.servers)"
    ))
}

/// The reqwest client an HTTP server's session uses: the guard's (no
/// proxy, names resolved and vetted by the guard, same-origin 307/308
/// redirects re-checked), after the server's URL itself was vetted.
async fn guarded_client(
    name: &str,
    config: &McpServerConfig,
    resolver: Arc<dyn HostResolver>,
) -> Result<reqwest::Client, StartError> {
    let raw = config.url.clone().unwrap_or_default();
    let url =
        url::Url::parse(&raw).map_err(|e| config_error(format!("`{raw}` is not a URL: {e}")))?;
    let guarded = server_guard(name, config, resolver)
        .http_client(HttpOptions {
            user_agent: None,
            redirects: Redirects::SameOrigin { max: MAX_REDIRECTS },
            // rmcp's default: no idle pooling (it avoids delayed-ACK stalls
            // when a body was not read to the end).
            pool_max_idle_per_host: Some(0),
        })
        .map_err(|e| {
            StartError::new(
                StartErrorKind::Start,
                format!("cannot build the HTTP client: {}", error_chain(&e)),
            )
        })?;
    guarded.client_for(&url).await.map_err(|e| {
        tracing::warn!(target: "talon::mcp", server = %name, code = e.code(), "mcp server URL refused by the egress guard");
        StartError::new(StartErrorKind::Egress, e.to_string())
    })
}

/// A [`StartErrorKind::Config`] error.
fn config_error(message: String) -> StartError {
    StartError::new(StartErrorKind::Config, message)
}

/// A [`StartErrorKind::Start`] error for `program`.
fn cannot_start(program: &str, why: impl std::fmt::Display) -> StartError {
    StartError::new(
        StartErrorKind::Start,
        format!("cannot start `{program}`: {why}"),
    )
}

/// How long a failed start waits for the rest of the server's stderr.
const STDERR_GRACE: std::time::Duration = std::time::Duration::from_millis(500);

/// The last lines a stdio server wrote to stderr (at most
/// [`StderrTail::LINES`] lines of at most [`StderrTail::LINE_BYTES`] bytes
/// each), kept so a failed start can say why.
#[derive(Debug, Clone, Default)]
pub(crate) struct StderrTail(Arc<std::sync::Mutex<std::collections::VecDeque<String>>>);

impl StderrTail {
    const LINES: usize = 20;
    const LINE_BYTES: usize = 512;

    pub(crate) fn push(&self, line: &str) {
        let mut cut: String = line.chars().filter(|c| !c.is_control()).collect();
        if cut.len() > Self::LINE_BYTES {
            let mut end = Self::LINE_BYTES;
            while !cut.is_char_boundary(end) {
                end -= 1;
            }
            cut.truncate(end);
            cut.push('…');
        }
        let mut lines = match self.0.lock() {
            Ok(l) => l,
            Err(p) => p.into_inner(),
        };
        if lines.len() == Self::LINES {
            lines.pop_front();
        }
        lines.push_back(cut);
    }

    /// `; its stderr ended with: …` (lines joined by ` | `), or nothing.
    pub(crate) fn describe(&self) -> String {
        let lines = match self.0.lock() {
            Ok(l) => l,
            Err(p) => p.into_inner(),
        };
        if lines.is_empty() {
            return String::new();
        }
        let joined: Vec<&str> = lines.iter().map(String::as_str).collect();
        format!("; its stderr ended with: {}", joined.join(" | "))
    }
}

/// Start the session of one server; an HTTP server's names resolve through
/// `resolver` (vetted by the egress guard).
pub(crate) async fn launch(
    name: &str,
    config: &McpServerConfig,
    env_policy: &EnvPolicy,
    secrets: &SecretStore,
    events: ClientEvents,
    resolver: Arc<dyn HostResolver>,
) -> Result<Launched, StartError> {
    match config.transport() {
        Transport::Stdio => {
            let program = config.command.clone().unwrap_or_default();
            let env = server_env(name, config, env_policy, secrets)?;
            let resolved = resolve_program(
                &program,
                env.get("PATH").map(String::as_str),
                config.cwd.as_deref().map(Path::new),
            )
            .map_err(|e| cannot_start(&program, e))?;
            let supervisor =
                Supervisor::shared().map_err(|e| cannot_start(&program, error_chain(&e)))?;
            // Until the session is handed out, dropping `tree` (an error or
            // a start-up timeout) kills the server's whole tree.
            let tree = supervisor
                .leaf(&Limits::NONE)
                .map_err(|e| cannot_start(&program, error_chain(&e)))?;
            let mut cmd =
                tokio::process::Command::from(tree.command(&resolved, &config.args, &env));
            cmd.kill_on_drop(true);
            if let Some(cwd) = &config.cwd {
                cmd.current_dir(cwd);
            }
            cmd.stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped());
            let mut child = cmd.spawn().map_err(|e| cannot_start(&program, e))?;
            if let Some(pid) = child.id() {
                tree.set_root_pid(pid);
            }
            let (Some(stdout), Some(stdin)) = (child.stdout.take(), child.stdin.take()) else {
                return Err(cannot_start(&program, "its stdio pipes were not set up"));
            };
            // Every message is bounded while it is read (long strings cut,
            // oversized structure refused), before rmcp buffers or parses it.
            let verdict = FrameVerdict::default();
            let limits = FrameLimits::for_output_cap(config.max_output_bytes());
            let transport = (FrameGuard::new(stdout, limits, verdict.clone()), stdin);
            let tail = StderrTail::default();
            let mut stderr_done = None;
            if let Some(stderr) = child.stderr.take() {
                let server = name.to_owned();
                let tail = tail.clone();
                let (done_tx, done_rx) = tokio::sync::oneshot::channel::<()>();
                stderr_done = Some(done_rx);
                tokio::spawn(async move {
                    let mut lines = BufReader::new(stderr).lines();
                    while let Ok(Some(line)) = lines.next_line().await {
                        tracing::debug!(target: "talon::mcp::stderr", server = %server, "{line}");
                        tail.push(&line);
                    }
                    let _ = done_tx.send(());
                });
            }
            let service = match events.serve(transport).await {
                Ok(s) => s,
                Err(e) => {
                    // What the server said before it failed is usually the
                    // reason: wait briefly for the rest of it.
                    if let Some(done) = stderr_done {
                        let _ = tokio::time::timeout(STDERR_GRACE, done).await;
                    }
                    return Err(StartError::new(
                        StartErrorKind::Handshake,
                        format!("the MCP handshake failed: {e}{}", tail.describe()),
                    ));
                }
            };
            Ok(Launched {
                service,
                tree: Some(tree),
                child: Some(child),
                verdict: Some(verdict),
            })
        }
        Transport::StreamableHttp => {
            let url = config.url.clone().unwrap_or_default();
            // Vetted before the headers (which may carry a token) are even
            // read.
            let client = guarded_client(name, config, resolver).await?;
            let headers = server_headers(name, config, secrets)?;
            // rmcp reads each JSON body and SSE event within a byte limit
            // before parsing; hold it to the same hard budget as a stdio
            // message (a larger answer fails the call instead of growing
            // memory).
            let limits = FrameLimits::for_output_cap(config.max_output_bytes());
            let cfg = StreamableHttpClientTransportConfig::with_uri(url)
                .custom_headers(headers)
                .max_sse_event_size(limits.hard_line)
                .max_json_response_size(limits.hard_line);
            let transport = StreamableHttpClientTransport::with_client(client, cfg);
            let service = events.serve(transport).await.map_err(|e| {
                StartError::new(
                    StartErrorKind::Handshake,
                    format!("the MCP handshake failed: {e}"),
                )
            })?;
            Ok(Launched {
                service,
                tree: None,
                child: None,
                verdict: None,
            })
        }
    }
}

#[cfg(test)]
#[path = "launch_tests.rs"]
mod tests;
