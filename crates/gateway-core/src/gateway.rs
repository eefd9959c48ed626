//! `Gateway`: the per-area handlers composed into one service shared by
//! every surface (WebSocket, HTTP, MCP). Each area holds only its own
//! state ([`crate::handlers`]); what crosses areas (the active
//! generation, the session registry, the call path) is passed in by
//! [`crate::dispatch`].

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock, Weak};

use serde_json::{Value, json};
use talon_config::{ConfigLocation, TalonConfig};
use talon_gateway_protocol::{Audience, Notification, ReloadReport};
use talon_hooks::approval::{ApprovalBroker, Broker, DynApprovalBroker, SqliteApprovalBroker};
use talon_journal::{CallJournal, RecoveryReport};
use talon_runtime::{Runtime, RuntimeBuilder};
use tokio::sync::broadcast;

use crate::auth::{AuthLimiter, TokenSet, load_or_create_token};
use crate::error::GatewayError;
use crate::handlers::approvals::ApprovalsHandler;
use crate::handlers::config::{ConfigHandler, ConfigStart};
use crate::handlers::cron::CronHandler;
use crate::handlers::sessions::SessionsHandler;
use crate::handlers::tasks::TasksHandler;
use crate::invoke::CallPath;
use crate::metrics::Metrics;
use crate::runner::RunnerHub;
use crate::scope::Scope;
use crate::settings::{GatewaySection, Limits};

/// The journal's file name inside the state directory.
pub const JOURNAL_FILE_NAME: &str = talon_journal::FILE_NAME;

/// How the gateway starts.
#[derive(Debug, Clone, Default)]
pub struct GatewayOptions {
    /// `--config`: the config file (else `TALON_CONFIG`, else `talon.json`
    /// in the state directory, else built-in defaults).
    pub config_path: Option<PathBuf>,
    /// The state directory (token, journal, approvals, cron and tasks).
    pub state_dir: PathBuf,
    /// `--bind`: overrides `gateway.bind` / `gateway.port`.
    pub bind: Option<std::net::SocketAddr>,
    /// Who runs the agent turns the sub-agent tools hand out
    /// (`sessions_spawn`, `sessions_send`): an embedder's own loop. `None`
    /// (the daemon): the WebSocket runners that called `runner.subscribe`.
    pub turn_runner: Option<crate::subagents::SharedTurnRunner>,
}

/// One loaded configuration and everything compiled from it. Replaced as
/// a whole by a successful reload.
pub(crate) struct Generation {
    pub(crate) id: u64,
    pub(crate) config: Arc<TalonConfig>,
    pub(crate) origin: String,
    pub(crate) runtime: Arc<Runtime>,
    pub(crate) tokens: TokenSet,
    /// The owner list (`gateway.auth.ownerAllowFrom` +
    /// `commands.ownerAllowFrom`).
    pub(crate) owners: crate::identity::OwnerList,
    pub(crate) section: GatewaySection,
    pub(crate) loaded_at_ms: u64,
}

impl std::fmt::Debug for Generation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Generation")
            .field("id", &self.id)
            .field("origin", &self.origin)
            .finish_non_exhaustive()
    }
}

/// A server-pushed event and who may see it.
#[derive(Debug, Clone)]
pub(crate) struct PushEvent {
    pub(crate) method: &'static str,
    pub(crate) params: Value,
    pub(crate) min_scope: Scope,
}

/// The broadcast of server-pushed events to every connection.
#[derive(Debug, Clone)]
pub(crate) struct Events(broadcast::Sender<PushEvent>);

impl Events {
    pub(crate) fn new() -> Self {
        Events(broadcast::channel(1024).0)
    }

    /// Push `notification` to every connection its audience covers (a
    /// runner-only notification is never broadcast).
    pub(crate) fn push(&self, notification: Notification, params: Value) {
        let Audience::Scope(min_scope) = notification.audience() else {
            return;
        };
        let _ = self.0.send(PushEvent {
            method: notification.as_str(),
            params,
            min_scope,
        });
    }

    /// Push an event whose method another crate names (approval events).
    pub(crate) fn push_named(&self, method: &'static str, params: Value, min_scope: Scope) {
        let _ = self.0.send(PushEvent {
            method,
            params,
            min_scope,
        });
    }

    pub(crate) fn subscribe(&self) -> broadcast::Receiver<PushEvent> {
        self.0.subscribe()
    }
}

/// Every area's handler, composed. Nothing here is shared state of the
/// whole gateway: each field is one area and holds only what that area
/// needs.
pub(crate) struct Areas {
    /// `config.*`, `gateway.reload`: the generations.
    pub(crate) config: ConfigHandler,
    /// `sessions.*`: the open sessions.
    pub(crate) sessions: SessionsHandler,
    /// `tools.invoke` and every other surface's calls: journal, call ids,
    /// engine permits, drain.
    pub(crate) calls: CallPath,
    /// `approvals.*`.
    pub(crate) approvals: ApprovalsHandler,
    /// `cron.*`.
    pub(crate) cron: CronHandler,
    /// `tasks.*`.
    pub(crate) tasks: TasksHandler,
    /// `runner.*`.
    pub(crate) runners: Arc<RunnerHub>,
    /// Sub-agent and agent-to-agent runs in flight (`sessions_spawn`,
    /// `sessions_send`, `subagents`).
    pub(crate) subagents: crate::subagents::SubagentRuns,
    /// Server-pushed events.
    pub(crate) events: Events,
    /// Authentication failures per peer.
    pub(crate) auth: AuthLimiter,
    /// Counters for `/metrics`.
    pub(crate) metrics: Metrics,
    /// Fired when the drain is over: every WebSocket connection waits for
    /// its own requests' replies, flushes them and closes.
    pub(crate) closing: talon_tasks::CancellationToken,
    pub(crate) started_at: std::time::Instant,
    /// This gateway's membership of a fleet on a shared PostgreSQL
    /// database (`state.backend: "postgres"`); `None` on SQLite.
    pub(crate) fleet: Option<crate::fleet::Fleet>,
}

/// The gateway: cheap to clone; every clone is the same gateway.
#[derive(Clone)]
pub struct Gateway {
    pub(crate) inner: Arc<Areas>,
}

impl std::fmt::Debug for Gateway {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Gateway")
            .field("state_dir", &self.inner.config.options.state_dir)
            .field("generation", &self.generation().id)
            .finish_non_exhaustive()
    }
}

impl Gateway {
    /// Open the state (token, journal with crash recovery, approvals,
    /// cron and task stores), load and compile the configuration, and
    /// start the cron timer. Must run inside a tokio runtime.
    pub fn open(options: GatewayOptions) -> Result<Gateway, GatewayError> {
        let state_dir = options.state_dir.clone();
        std::fs::create_dir_all(&state_dir).map_err(|e| GatewayError::State {
            path: state_dir.clone(),
            message: format!("cannot create the state directory: {e}"),
        })?;
        let location = talon_config::resolve_config_path(options.config_path.as_deref());
        let loaded = load_config(&location)?;
        let section = GatewaySection::from_config(&loaded.config.gateway_config());
        let addr = section.listen_addr(options.bind);
        if !addr.ip().is_loopback() && section.tokens.is_empty() {
            return Err(GatewayError::Bind {
                addr: addr.to_string(),
                message: "refusing to listen on a non-loopback address without a configured token: set gateway.auth.token (or gateway.auth.tokens) in the config, or bind 127.0.0.1".into(),
            });
        }
        // The shared database first: one that cannot be reached (or holds a
        // newer schema) stops the start before anything is opened.
        let fleet = crate::fleet::Fleet::open(loaded.config.state.as_ref(), &state_dir, addr)?;
        let (generated_token, token_path) = load_or_create_token(&state_dir)?;
        // Only its hash stays in memory.
        let generated_token = crate::auth::token_hash(&generated_token);
        let journal_path = state_dir.join(JOURNAL_FILE_NAME);
        let journal_options =
            talon_journal::JournalOptions::with_durability(section.journal_durability)
                .retention(section.journal_retention);
        let (journal, recovery) = match &fleet {
            Some(fleet) => {
                CallJournal::open_postgres(fleet.pool(), fleet.member_id(), journal_options)
                    .map_err(|e| fleet.store_error("journal", e))?
            }
            None => CallJournal::open_with(&journal_path, journal_options).map_err(|e| {
                GatewayError::State {
                    path: journal_path.clone(),
                    message: e.to_string(),
                }
            })?,
        };
        if !recovery.interrupted.is_empty() {
            tracing::warn!(
                calls = recovery.interrupted.len(),
                "calls in flight when the previous gateway stopped are recorded as interrupted; they are not re-run"
            );
        }
        let broker = match &fleet {
            Some(fleet) => Broker::open_postgres(fleet.pool(), fleet.member_id())
                .map_err(|e| fleet.store_error("approvals", e))?
                .into_dyn(),
            None => SqliteApprovalBroker::open_in_state_dir(&state_dir)
                .map_err(|e| GatewayError::State {
                    path: state_dir.clone(),
                    message: format!("approvals: {e}"),
                })?
                .into_dyn(),
        };
        // Approvals a crash left waiting are denied, never approved.
        let denied_at_start =
            broker
                .store()
                .recover_pending()
                .map_err(|e| GatewayError::State {
                    path: state_dir.clone(),
                    message: format!("approvals: {e}"),
                })?;
        if !denied_at_start.is_empty() {
            tracing::warn!(
                approvals = denied_at_start.len(),
                "approvals pending when the previous gateway stopped are resolved as denied"
            );
        }
        let limits = section.limits.clone();
        let events = Events::new();
        let link: Link = Arc::new(OnceLock::new());
        let runners = Arc::new(RunnerHub::new(
            limits.runner_wait,
            events.clone(),
            Arc::clone(&link),
        ));
        let db = state_dir.join(talon_tasks::DB_FILE_NAME);
        let cron_options = cron_options(&loaded.config);
        let cron = match &fleet {
            // One timer owner across the fleet, by the `cron` lease.
            Some(fleet) => talon_cron::CronService::open_postgres(
                fleet.pool(),
                fleet.member_id(),
                Arc::clone(&runners) as _,
                cron_options,
            )
            .map_err(|e| fleet.store_error("cron", e))?,
            None => talon_cron::CronService::open(&db, Arc::clone(&runners) as _, cron_options)
                .map_err(|e| GatewayError::State {
                    path: db.clone(),
                    message: format!("cron: {e}"),
                })?,
        };
        let (tasks, session_store) = match &fleet {
            Some(fleet) => (
                talon_tasks::TaskLedger::open_postgres(fleet.pool())
                    .map_err(|e| fleet.store_error("tasks", e))?
                    .with_member(fleet.member_id()),
                talon_sessions::SessionStore::open_postgres(fleet.pool())
                    .map_err(|e| fleet.store_error("sessions", e))?,
            ),
            None => (
                talon_tasks::TaskLedger::open(&db).map_err(|e| GatewayError::State {
                    path: db.clone(),
                    message: format!("tasks: {e}"),
                })?,
                talon_sessions::SessionStore::open(&db).map_err(|e| GatewayError::State {
                    path: db.clone(),
                    message: format!("sessions: {e}"),
                })?,
            ),
        };
        let broker = Arc::new(broker);
        let next_generation = AtomicU64::new(1);
        // A recycled sandbox is a journal record, whichever generation's
        // runtime recycled it.
        let sandbox_events: talon_sandbox_core::SharedEventSink = Arc::new(
            crate::sandbox_events::JournalSandboxEvents::new(journal.clone()),
        );
        let first = build_generation(
            &Parts {
                broker: &broker,
                sandbox_events: &sandbox_events,
                cron: Some(&cron),
                link: &link,
                generated_token: &generated_token,
                location: &location,
                next_generation: &next_generation,
                previous: None,
            },
            loaded,
            section,
        )?;
        let turn_runner: Arc<dyn talon_runtime::TurnRunner> = match &options.turn_runner {
            Some(r) => Arc::clone(&r.0),
            None => Arc::clone(&runners) as _,
        };
        // Alone, nothing a previous process ran can still be running; in a
        // fleet, only tasks of members that are gone (the maintenance owner
        // sweeps them).
        match &fleet {
            None => crate::subagents::mark_lost_left_running(&tasks, None),
            Some(fleet) => {
                if let Some(live) = fleet.live_member_ids() {
                    crate::subagents::mark_lost_left_running(&tasks, Some(&live));
                }
            }
        }
        let inner = Arc::new(Areas {
            config: ConfigHandler::new(ConfigStart {
                options,
                location,
                first,
                next_generation,
                generated_token,
                token_path,
                link: Arc::clone(&link),
                sandbox_events,
                listen: addr,
            }),
            sessions: SessionsHandler::with_store(session_store),
            calls: CallPath::new(journal, recovery),
            approvals: ApprovalsHandler {
                broker,
                denied_at_start,
            },
            cron: CronHandler {
                service: Some(cron),
            },
            tasks: TasksHandler {
                ledger: Some(tasks),
            },
            runners,
            subagents: crate::subagents::SubagentRuns::new(turn_runner),
            events,
            auth: AuthLimiter::new(limits.auth_max_failures, limits.auth_window),
            metrics: Metrics::default(),
            closing: talon_tasks::CancellationToken::new(),
            started_at: std::time::Instant::now(),
            fleet,
        });
        let _ = link.set(Arc::downgrade(&inner));
        let gw = Gateway { inner };
        // In a fleet the store holds every member's sessions: each opens
        // here on first use instead, and a restart reopens nothing (it
        // would close the cron-run sessions other members are running).
        let reopened = if gw.inner.fleet.is_none() {
            gw.inner.sessions.restore(&gw.generation())
        } else {
            0
        };
        if reopened > 0 {
            tracing::info!(
                sessions = reopened,
                "reopened the sessions open at the last stop"
            );
        }
        if let Some(fleet) = &gw.inner.fleet {
            fleet.heartbeat_periodically();
            gw.follow_fleet();
        }
        gw.forward_approval_events();
        // With a shared store: announce the requests other members raise
        // (returns at once on SQLite).
        {
            let broker = Arc::clone(&gw.inner.approvals.broker);
            let closing = gw.inner.closing.clone();
            tokio::spawn(async move { broker.follow_shared(&closing).await });
        }
        gw.watch_tasks();
        gw.prune_sandboxes_periodically();
        if let Some(cron) = &gw.inner.cron.service {
            let report = cron
                .start()
                .map_err(|e| GatewayError::Internal(format!("cron: {e}")))?;
            tracing::info!(?report, "cron started");
        }
        Ok(gw)
    }

    /// Where the generated token is stored.
    pub fn token_path(&self) -> &Path {
        &self.inner.config.token_path
    }

    /// The state directory.
    pub fn state_dir(&self) -> &Path {
        &self.inner.config.options.state_dir
    }

    /// The address to listen on (`--bind`, else the config, else
    /// `127.0.0.1:18789`).
    pub fn listen_addr(&self) -> std::net::SocketAddr {
        self.inner.config.listen
    }

    /// The metrics.
    pub fn metrics(&self) -> &Metrics {
        &self.inner.metrics
    }

    /// The call journal.
    pub fn journal(&self) -> &CallJournal {
        &self.inner.calls.journal
    }

    /// What the journal repaired at start.
    pub fn recovery(&self) -> &RecoveryReport {
        &self.inner.calls.recovery
    }

    /// The approval broker.
    pub fn broker(&self) -> Arc<dyn ApprovalBroker> {
        Arc::clone(&self.inner.approvals.broker) as Arc<dyn ApprovalBroker>
    }

    pub(crate) fn generation(&self) -> Arc<Generation> {
        self.inner.config.generation()
    }

    /// The active configuration's limits.
    pub fn limits(&self) -> Limits {
        self.generation().section.limits.clone()
    }

    /// The scope of a presented token under the active configuration.
    pub fn scope_of(&self, token: &str) -> Option<Scope> {
        self.generation().tokens.scope_of(token)
    }

    /// Who a presented token is under the active configuration.
    pub fn identify(&self, token: &str) -> Option<crate::auth::Identity> {
        self.generation().tokens.identify(token)
    }

    /// Reload the configuration. A config that does not load or compile is
    /// rejected and the last good one stays active; calls started after a
    /// successful reload use the new policy (calls already running finish
    /// under the table they started with).
    pub fn reload(&self) -> ReloadReport {
        let areas = &self.inner;
        let attempt = areas
            .config
            .compile_next(&areas.approvals.broker, areas.cron.service.as_ref());
        let report = match attempt {
            Ok(generation) => {
                let id = generation.id;
                areas.config.install(generation);
                areas.metrics.reloads.fetch_add(1, Ordering::Relaxed);
                tracing::info!(generation = id, "configuration reloaded");
                ReloadReport {
                    ok: true,
                    generation: id,
                    error: None,
                }
            }
            Err(e) => {
                areas
                    .metrics
                    .reload_failures
                    .fetch_add(1, Ordering::Relaxed);
                tracing::warn!(error = %e, "configuration reload rejected; the last good configuration stays active");
                ReloadReport {
                    ok: false,
                    generation: self.generation().id,
                    error: Some(e.to_string()),
                }
            }
        };
        areas.config.record_reload(&report);
        areas
            .events
            .push(Notification::ConfigReloaded, json!(report));
        report
    }

    fn forward_approval_events(&self) {
        let mut rx = self.inner.approvals.broker.subscribe();
        let events = self.inner.events.clone();
        tokio::spawn(async move {
            loop {
                match rx.recv().await {
                    Ok(event) => {
                        let method = event.method();
                        let params = serde_json::to_value(&event).unwrap_or(Value::Null);
                        events.push_named(method, params, Scope::ReadOnly);
                    }
                    Err(broadcast::error::RecvError::Lagged(n)) => {
                        tracing::warn!(
                            missed = n,
                            "approval events were dropped for slow listeners"
                        );
                    }
                    Err(broadcast::error::RecvError::Closed) => break,
                }
            }
        });
    }

    /// Push `task.updated` for every task whose record changed (the ledger
    /// is shared with cron and other writers, so it is polled: the newest
    /// 100 tasks every 500 ms).
    fn watch_tasks(&self) {
        let weak = Arc::downgrade(&self.inner);
        tokio::spawn(async move {
            let mut seen: std::collections::HashMap<String, String> =
                std::collections::HashMap::new();
            let mut first = true;
            let mut tick = tokio::time::interval(std::time::Duration::from_millis(500));
            loop {
                tick.tick().await;
                let Some(inner) = weak.upgrade() else { break };
                if inner.calls.is_shutting_down() {
                    break;
                }
                let Some(ledger) = inner.tasks.ledger.as_ref() else {
                    break;
                };
                let filter = talon_tasks::TaskFilter {
                    limit: 100,
                    ..Default::default()
                };
                let Ok(tasks) = ledger.list(&filter) else {
                    continue;
                };
                let mut next = std::collections::HashMap::with_capacity(tasks.len());
                for t in tasks {
                    let v = serde_json::to_value(&t).unwrap_or(Value::Null);
                    let text = v.to_string();
                    if !first && seen.get(&t.task_id) != Some(&text) {
                        inner
                            .events
                            .push(Notification::TaskUpdated, json!({"task": v}));
                    }
                    next.insert(t.task_id.clone(), text);
                }
                seen = next;
                first = false;
            }
        });
    }

    /// Whether a graceful stop has begun (new calls are refused).
    pub fn is_shutting_down(&self) -> bool {
        self.inner.calls.is_shutting_down()
    }

    /// Graceful stop: refuse new calls, wait up to `deadline` for the calls
    /// in flight, then abort the rest (they end `cancelled`), stop cron,
    /// kill every child process the tools started, and flush the journal.
    pub async fn shutdown(&self, deadline: std::time::Duration) {
        let areas = &self.inner;
        areas.calls.begin_drain();
        if !areas.calls.drained(&areas.metrics, deadline).await {
            tracing::warn!("drain deadline passed; cancelling the calls still running");
            areas.sessions.cancel_all("the gateway is shutting down");
            let _ = areas
                .calls
                .drained(&areas.metrics, std::time::Duration::from_secs(3))
                .await;
        }
        if let Some(cron) = &areas.cron.service {
            cron.stop();
        }
        areas.subagents.cancel_all();
        areas.runners.close_all("the gateway is shutting down");
        if let Some(registry) = self.generation().runtime.process_registry() {
            registry.shutdown().await;
        }
        // MCP stdio servers run in their own process groups: stop them so
        // none outlives the daemon.
        self.generation().runtime.mcp_manager().shutdown().await;
        if let Err(e) = areas.calls.journal.flush().await {
            tracing::warn!(error = %e, "journal flush at shutdown failed");
        }
        if let Some(fleet) = areas.fleet.clone() {
            let _ = tokio::task::spawn_blocking(move || fleet.leave()).await;
        }
        areas.closing.cancel();
    }

    /// Wait until every WebSocket connection has flushed its replies and
    /// closed (after [`Self::shutdown`]), at most `limit`.
    pub(crate) async fn connections_closed(&self, limit: std::time::Duration) -> bool {
        let deadline = tokio::time::Instant::now() + limit;
        while self
            .inner
            .metrics
            .connections
            .load(std::sync::atomic::Ordering::SeqCst)
            > 0
        {
            if tokio::time::Instant::now() >= deadline {
                return false;
            }
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
        true
    }
}

pub(crate) fn load_config(location: &ConfigLocation) -> Result<talon_config::Loaded, GatewayError> {
    location.load().map_err(|e| GatewayError::Config {
        origin: location
            .path()
            .map(|p| p.display().to_string())
            .unwrap_or_else(|| "<built-in defaults>".into()),
        message: e.to_string(),
    })
}

fn cron_options(config: &TalonConfig) -> talon_cron::CronOptions {
    talon_cron::CronOptions::from_config(&config.cron_config())
}

/// A late-bound handle to the gateway for the tools it provides (they are
/// compiled into a generation before the gateway exists).
pub(crate) type Link = Arc<OnceLock<Weak<Areas>>>;

/// What compiling a generation needs.
pub(crate) struct Parts<'a> {
    pub(crate) broker: &'a Arc<DynApprovalBroker>,
    pub(crate) sandbox_events: &'a talon_sandbox_core::SharedEventSink,
    pub(crate) cron: Option<&'a talon_cron::CronService>,
    pub(crate) link: &'a Link,
    pub(crate) generated_token: &'a crate::auth::TokenHash,
    pub(crate) location: &'a ConfigLocation,
    pub(crate) next_generation: &'a AtomicU64,
    /// The generation being replaced (on reload): its MCP servers are kept
    /// when the MCP configuration did not change, so a reload does not
    /// restart every server.
    pub(crate) previous: Option<Arc<Generation>>,
}

pub(crate) fn build_generation(
    parts: &Parts<'_>,
    loaded: talon_config::Loaded,
    section: GatewaySection,
) -> Result<Generation, GatewayError> {
    let origin = loaded.origin.clone();
    let config = Arc::new(loaded.config);
    let config_dir = match parts.location.path() {
        Some(p) => p
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or_else(|| PathBuf::from(".")),
        None => std::env::current_dir().unwrap_or_else(|_| PathBuf::from(".")),
    };
    let err = |e: talon_runtime::Error| GatewayError::Config {
        origin: origin.clone(),
        message: e.to_string(),
    };
    let mut builder = RuntimeBuilder::from_config(&config, &config_dir)
        .map_err(err)?
        .broker(Arc::clone(parts.broker) as Arc<dyn ApprovalBroker>)
        .sandbox_events(Arc::clone(parts.sandbox_events));
    if let Some(file) = parts.location.path() {
        // Sandboxes keep every mount away from the config file.
        builder = builder.config_file(file);
    }
    if let Some(cron) = parts.cron {
        builder = builder.cron_service(cron.clone());
    }
    if let Some(previous) = &parts.previous
        && previous.config.mcp == config.mcp
        && previous.config.agent_mcp_sections() == config.agent_mcp_sections()
    {
        builder = builder.mcp_manager(Arc::clone(previous.runtime.mcp_manager()));
    }
    builder = builder.status_source(Arc::new(crate::tools_family::GatewayStatus::new(
        Arc::clone(parts.link),
    )));
    builder = builder.family(Arc::new(crate::tools_family::GatewayToolsFamily::new(
        Arc::clone(parts.link),
        Arc::clone(&config),
    )));
    let runtime = builder.build().map_err(err)?;
    // `from_config` logged each problem; this says what it does to the
    // gateway (`health` is `degraded` until a reload fixes it).
    let broken = runtime.hook_problems();
    if !broken.is_empty() {
        let mut ids: Vec<&str> = broken.iter().map(|p| p.hook_id.as_str()).collect();
        ids.dedup();
        tracing::error!(
            origin = %origin,
            hooks = %ids.join(", "),
            "the gateway is degraded: {} configured hook problem(s); a before_tool_call hook that cannot run blocks every call it matches",
            broken.len()
        );
    }
    let mut tokens = section.tokens.clone();
    tokens.add_hash(
        *parts.generated_token,
        Some(talon_config::STATE_TOKEN_ID),
        Scope::Operator,
    );
    let owners = crate::identity::OwnerList::from_config(&config);
    let id = parts.next_generation.fetch_add(1, Ordering::SeqCst);
    Ok(Generation {
        id,
        config,
        origin,
        runtime: Arc::new(runtime),
        tokens,
        owners,
        section,
        loaded_at_ms: crate::clock::now_ms(),
    })
}

#[cfg(test)]
#[path = "reload_tests.rs"]
mod reload_tests;
