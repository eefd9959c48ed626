//! One configured server: start on first use, list tools, re-list on
//! `tools/list_changed` (debounced), call with a timeout, restart a dead
//! server with backoff, and kill a stdio server's whole process tree.

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use talon_config::secrets::SecretStore;

use rmcp::ServiceError;
use rmcp::model::{CallToolRequestParams, CallToolResult, Tool as McpTool};
use rmcp::service::{Peer, RoleClient, RunningService};
use serde_json::{Map, Value};
use talon_egress::HostResolver;
use talon_exec_env::EnvPolicy;
use talon_tool_catalog::{CancelExt, CancellationToken, ToolError, ToolErrorCode};

use crate::config::{McpServerConfig, Transport};
use crate::error::{StartError, StartErrorKind};
use crate::frame::{FrameError, FrameVerdict};
use crate::handler::ClientEvents;
use crate::launch::{Launched, launch};
use crate::tool_caps::cap_tool;

use crate::status::ServerState;

/// Quiet time before a re-list after `tools/list_changed`.
pub(crate) const LIST_CHANGED_DEBOUNCE: Duration = Duration::from_millis(150);
/// A storm that never goes quiet still gets a re-list this often.
pub(crate) const LIST_CHANGED_MAX_DELAY: Duration = Duration::from_secs(2);
/// First restart delay; doubles per consecutive failure.
const BACKOFF_BASE: Duration = Duration::from_millis(100);
/// Longest restart delay.
const BACKOFF_MAX: Duration = Duration::from_secs(10);
/// After this many timed-out calls in a row the server counts as hung:
/// its session is dropped (and a stdio server's group killed), and the next
/// call restarts it.
pub(crate) const HUNG_AFTER_TIMEOUTS: u32 = 3;
/// Bound on start-up (spawn, initialise, first listing).
const START_TIMEOUT_MAX: Duration = Duration::from_secs(30);

/// What the server looks like now (read by materialisation and status).
#[derive(Debug, Clone)]
pub(crate) struct Snapshot {
    pub(crate) state: ServerState,
    pub(crate) tools: Arc<Vec<McpTool>>,
    pub(crate) last_error: Option<String>,
    pub(crate) restarts: u32,
    pub(crate) list_requests: u64,
}

pub(crate) struct Shared {
    pub(crate) snapshot: Mutex<Snapshot>,
    /// Bumped (manager-wide) whenever some server's tool list changes.
    pub(crate) generation: Arc<AtomicU64>,
}

impl Shared {
    fn update(&self, f: impl FnOnce(&mut Snapshot)) {
        let mut guard = match self.snapshot.lock() {
            Ok(g) => g,
            Err(p) => p.into_inner(),
        };
        f(&mut guard);
    }

    pub(crate) fn get(&self) -> Snapshot {
        match self.snapshot.lock() {
            Ok(g) => g.clone(),
            Err(p) => p.into_inner().clone(),
        }
    }
}

/// A live connection. Dropping it stops the re-list task and kills a stdio
/// server's whole process tree.
struct Conn {
    service: RunningService<RoleClient, ClientEvents>,
    tree: Option<talon_proc_tree::Leaf>,
    /// The stdio child (kill-on-drop), held for the session's life.
    _child: Option<tokio::process::Child>,
    relist: tokio::task::JoinHandle<()>,
}

impl Conn {
    fn alive(&self) -> bool {
        !self.service.peer().is_transport_closed() && !self.relist.is_finished()
    }
}

impl Drop for Conn {
    fn drop(&mut self) {
        self.relist.abort();
        if let Some(tree) = &self.tree
            && let Err(e) = tree.kill()
        {
            tracing::warn!(target: "talon::mcp", error = %e, "an MCP server's process tree survived its kill");
        }
    }
}

#[derive(Default)]
struct Slot {
    conn: Option<Conn>,
    last_failure: Option<Instant>,
    started_before: bool,
}

/// One configured server of one agent.
pub(crate) struct Server {
    pub(crate) name: String,
    pub(crate) safe_name: String,
    pub(crate) config: McpServerConfig,
    /// The owning agent's exec environment policy (a stdio server's base
    /// environment).
    env_policy: Arc<EnvPolicy>,
    /// The secrets file `${secret:NAME}` references resolve from.
    secrets: Arc<SecretStore>,
    /// How an HTTP server's host name is resolved (vetted by the egress
    /// guard before any connection).
    resolver: Arc<dyn HostResolver>,
    slot: tokio::sync::Mutex<Slot>,
    pub(crate) shared: Arc<Shared>,
    failures: AtomicU32,
    timeouts: AtomicU32,
    /// The frame guard's verdict slot of the current stdio session.
    verdict: Mutex<Option<FrameVerdict>>,
}

impl std::fmt::Debug for Server {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Server")
            .field("name", &self.name)
            .field("safe_name", &self.safe_name)
            .finish()
    }
}

fn backoff(failures: u32) -> Duration {
    let shift = failures.saturating_sub(1).min(16);
    BACKOFF_BASE.saturating_mul(1u32 << shift).min(BACKOFF_MAX)
}

impl Server {
    pub(crate) fn new(
        name: String,
        safe_name: String,
        config: McpServerConfig,
        env_policy: Arc<EnvPolicy>,
        secrets: Arc<SecretStore>,
        generation: Arc<AtomicU64>,
        resolver: Arc<dyn HostResolver>,
    ) -> Self {
        let state = if config.is_enabled() {
            ServerState::Idle
        } else {
            ServerState::Disabled
        };
        Server {
            name,
            safe_name,
            config,
            env_policy,
            secrets,
            resolver,
            slot: tokio::sync::Mutex::new(Slot::default()),
            shared: Arc::new(Shared {
                snapshot: Mutex::new(Snapshot {
                    state,
                    tools: Arc::new(Vec::new()),
                    last_error: None,
                    restarts: 0,
                    list_requests: 0,
                }),
                generation,
            }),
            failures: AtomicU32::new(0),
            timeouts: AtomicU32::new(0),
            verdict: Mutex::new(None),
        }
    }

    pub(crate) fn transport(&self) -> Transport {
        self.config.transport()
    }

    /// The peer of a live connection, starting (or restarting, after the
    /// backoff) the server when there is none.
    pub(crate) async fn ensure(&self) -> Result<Peer<RoleClient>, StartError> {
        if !self.config.is_enabled() {
            return Err(StartError::new(
                StartErrorKind::Disabled,
                "the server is disabled (`enabled: false`)",
            ));
        }
        let mut slot = self.slot.lock().await;
        if let Some(conn) = &slot.conn {
            if conn.alive() {
                return Ok(conn.service.peer().clone());
            }
            tracing::warn!(target: "talon::mcp", server = %self.name, "server connection lost; restarting");
            slot.conn = None;
            let failures = self.failures.fetch_add(1, Ordering::SeqCst) + 1;
            slot.last_failure = Some(Instant::now());
            self.shared.update(|s| {
                s.state = ServerState::Restarting;
                s.last_error = Some(format!("the server exited (failure {failures})"));
            });
        }
        let failures = self.failures.load(Ordering::SeqCst);
        if failures > 0
            && let Some(at) = slot.last_failure
        {
            let wait = backoff(failures).saturating_sub(at.elapsed());
            if !wait.is_zero() {
                tokio::time::sleep(wait).await;
            }
        }
        let restart = slot.started_before;
        self.shared.update(|s| s.state = ServerState::Starting);
        match tokio::time::timeout(self.start_timeout(), self.connect()).await {
            Ok(Ok(conn)) => {
                let peer = conn.service.peer().clone();
                slot.conn = Some(conn);
                slot.started_before = true;
                self.shared.update(|s| {
                    s.state = ServerState::Ready;
                    if restart {
                        s.restarts = s.restarts.saturating_add(1);
                    }
                });
                Ok(peer)
            }
            Ok(Err(error)) => Err(self.start_failed(&mut slot, error)),
            Err(_) => Err(self.start_failed(
                &mut slot,
                StartError::new(
                    StartErrorKind::Timeout,
                    format!(
                        "did not start within {} ms",
                        self.start_timeout().as_millis()
                    ),
                ),
            )),
        }
    }

    fn start_timeout(&self) -> Duration {
        self.config
            .timeout()
            .clamp(Duration::from_secs(1), START_TIMEOUT_MAX)
    }

    fn start_failed(&self, slot: &mut Slot, error: StartError) -> StartError {
        self.failures.fetch_add(1, Ordering::SeqCst);
        slot.last_failure = Some(Instant::now());
        slot.conn = None;
        tracing::warn!(target: "talon::mcp", server = %self.name, error = %error, "mcp server failed to start");
        self.shared.update(|s| {
            s.state = ServerState::Failed;
            s.last_error = Some(error.to_string());
        });
        error
    }

    async fn connect(&self) -> Result<Conn, StartError> {
        let events = ClientEvents::new();
        let Launched {
            service,
            tree,
            child,
            verdict,
        } = launch(
            &self.name,
            &self.config,
            &self.env_policy,
            &self.secrets,
            events.clone(),
            Arc::clone(&self.resolver),
        )
        .await?;
        match self.verdict.lock() {
            Ok(mut v) => *v = verdict,
            Err(p) => *p.into_inner() = verdict,
        }
        // Until the connection is handed out, dropping `tree` (an error or
        // a start-up timeout) kills the server's whole tree.
        let peer = service.peer().clone();
        let tools = list_tools(&peer, &self.shared).await?;
        tracing::debug!(target: "talon::mcp", server = %self.name, tools = tools.len(), "mcp server ready");
        self.shared.update(|s| {
            s.tools = Arc::new(tools);
            s.last_error = None;
        });
        self.shared.generation.fetch_add(1, Ordering::SeqCst);
        let relist = tokio::spawn(relist_loop(
            self.name.clone(),
            peer,
            Arc::clone(&self.shared),
            events,
        ));
        Ok(Conn {
            service,
            tree,
            _child: child,
            relist,
        })
    }

    /// One call: a per-call timeout, the abort token, and an error for
    /// this call only when the server hangs or dies.
    pub(crate) async fn call(
        &self,
        tool: &str,
        args: Map<String, Value>,
        abort: &CancellationToken,
    ) -> Result<CallToolResult, ToolError> {
        abort.check()?;
        let peer = self.ensure().await.map_err(|e| {
            ToolError::new(ToolErrorCode::McpServerUnavailable, format!(
                "mcp server `{}` is unavailable: {e}. Check `mcp.servers.{}` and the server's own logs",
                self.name, self.name
            ))
        })?;
        let params = CallToolRequestParams::new(tool.to_owned()).with_arguments(args);
        let timeout = self.config.timeout();
        let outcome = tokio::select! {
            r = tokio::time::timeout(timeout, peer.call_tool(params)) => r,
            () = abort.cancelled() => {
                return Err(abort.abort_error());
            }
        };
        match outcome {
            Ok(Ok(result)) => {
                self.failures.store(0, Ordering::SeqCst);
                self.timeouts.store(0, Ordering::SeqCst);
                Ok(result)
            }
            Ok(Err(ServiceError::McpError(e))) => Err(ToolError::new(
                ToolErrorCode::McpCallRejected,
                format!(
                    "mcp server `{}` rejected the call of `{tool}`: {} (code {})",
                    self.name, e.message, e.code.0
                ),
            )),
            Ok(Err(e @ (ServiceError::TransportClosed | ServiceError::TransportSend(_)))) => {
                // A frame the guard refused closes the transport: say so.
                if let Some(frame) = self.frame_error() {
                    self.shared.update(|s| {
                        s.state = ServerState::Restarting;
                        s.last_error = Some(frame.to_string());
                    });
                    Err(ToolError::new(
                        ToolErrorCode::McpCallFailed,
                        format!(
                            "mcp server `{}`: the answer to `{tool}` was refused while it was read: {frame} (limits follow mcp.servers.{}.maxOutputBytes); it will be restarted on the next call",
                            self.name, self.name
                        ),
                    ))
                } else {
                    self.shared.update(|s| {
                        s.state = ServerState::Restarting;
                        s.last_error = Some(format!("connection lost during a call: {e}"));
                    });
                    Err(ToolError::new(
                        ToolErrorCode::McpConnectionLost,
                        format!(
                            "mcp server `{}` went away during the call of `{tool}` ({e}); it will be restarted on the next call",
                            self.name
                        ),
                    ))
                }
            }
            Ok(Err(e)) => Err(ToolError::new(
                ToolErrorCode::McpCallFailed,
                format!(
                    "mcp server `{}`: the call of `{tool}` failed: {e}",
                    self.name
                ),
            )),
            Err(_) => {
                let hung = self.timeouts.fetch_add(1, Ordering::SeqCst) + 1 >= HUNG_AFTER_TIMEOUTS;
                if hung {
                    self.drop_hung_session().await;
                }
                Err(ToolError::new(
                    ToolErrorCode::McpTimeout,
                    format!(
                        "mcp server `{}`: `{tool}` did not answer within {} ms (mcp.servers.{}.timeoutMs); the call was cancelled{}",
                        self.name,
                        timeout.as_millis(),
                        self.name,
                        if hung {
                            format!(
                                "; after {HUNG_AFTER_TIMEOUTS} timeouts in a row the server is restarted on the next call"
                            )
                        } else {
                            String::new()
                        }
                    ),
                ))
            }
        }
    }

    /// The frame guard's reason for closing the current session, if any.
    fn frame_error(&self) -> Option<FrameError> {
        let slot = match self.verdict.lock() {
            Ok(v) => v.clone(),
            Err(p) => p.into_inner().clone(),
        }?;
        match slot.lock() {
            Ok(v) => v.clone(),
            Err(p) => p.into_inner().clone(),
        }
    }

    /// Drop a session that stopped answering (the next call restarts it).
    async fn drop_hung_session(&self) {
        let mut slot = self.slot.lock().await;
        if slot.conn.take().is_some() {
            tracing::warn!(target: "talon::mcp", server = %self.name, "mcp server stopped answering; its session was dropped");
            self.timeouts.store(0, Ordering::SeqCst);
            self.failures.fetch_add(1, Ordering::SeqCst);
            slot.last_failure = Some(Instant::now());
            self.shared.update(|s| {
                s.state = ServerState::Restarting;
                s.last_error = Some(format!("{HUNG_AFTER_TIMEOUTS} calls in a row timed out"));
            });
        }
    }

    /// Stop the server (a later call starts it again): cancel the
    /// session (closing a stdio server's stdin), give it a moment, then kill
    /// what is left of its process tree.
    pub(crate) async fn stop(&self) {
        let mut slot = self.slot.lock().await;
        if let Some(conn) = slot.conn.take() {
            conn.relist.abort();
            let peer = conn.service.peer().clone();
            conn.service.cancellation_token().cancel();
            let deadline = Instant::now() + Duration::from_millis(500);
            while !peer.is_transport_closed() && Instant::now() < deadline {
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
            drop(conn);
        }
        if self.config.is_enabled() {
            self.shared.update(|s| s.state = ServerState::Stopped);
        }
    }
}

/// `tools/list`, following cursors, counted.
async fn list_tools(peer: &Peer<RoleClient>, shared: &Shared) -> Result<Vec<McpTool>, StartError> {
    shared.update(|s| s.list_requests += 1);
    let mut tools = peer
        .list_all_tools()
        .await
        .map_err(|e| StartError::new(StartErrorKind::List, format!("tools/list failed: {e}")))?;
    for tool in &mut tools {
        if let Some(note) = cap_tool(tool) {
            tracing::warn!(target: "talon::mcp", tool = %tool.name, %note, "mcp tool listing cut to its caps");
        }
    }
    Ok(tools)
}

/// Re-list after `tools/list_changed`: wait until notifications stop for
/// the debounce time (at most the max delay), then list once; a storm
/// becomes one re-list.
async fn relist_loop(
    name: String,
    peer: Peer<RoleClient>,
    shared: Arc<Shared>,
    events: ClientEvents,
) {
    let mut listed_at = 0u64;
    loop {
        events.notify().notified().await;
        let started = Instant::now();
        loop {
            let seen = events.changes();
            tokio::time::sleep(LIST_CHANGED_DEBOUNCE).await;
            if events.changes() == seen || started.elapsed() >= LIST_CHANGED_MAX_DELAY {
                break;
            }
        }
        let current = events.changes();
        if current == listed_at {
            continue;
        }
        listed_at = current;
        match list_tools(&peer, &shared).await {
            Ok(tools) => {
                tracing::debug!(target: "talon::mcp", server = %name, tools = tools.len(), "tool list changed");
                shared.update(|s| s.tools = Arc::new(tools));
                shared.generation.fetch_add(1, Ordering::SeqCst);
            }
            Err(e) => {
                tracing::warn!(target: "talon::mcp", server = %name, error = %e, "re-list after tools/list_changed failed");
                shared.update(|s| s.last_error = Some(e.to_string()));
                if peer.is_transport_closed() {
                    return;
                }
            }
        }
    }
}
