//! `Gateway`: the shared state behind every surface (WebSocket, HTTP, MCP).

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock, RwLock, Weak};

use serde_json::{Value, json};
use talon_config::{ConfigLocation, TalonConfig};
use talon_hooks::approval::{ApprovalBroker, SqliteApprovalBroker};
use talon_journal::{CallJournal, RecoveryReport};
use talon_runtime::{Runtime, RuntimeBuilder};
use tokio::sync::{Notify, broadcast};

use crate::auth::{AuthLimiter, TokenSet, load_or_create_token, random_hex};
use crate::error::GatewayError;
use crate::metrics::Metrics;
use crate::runner::RunnerHub;
use crate::scope::Scope;
use crate::sessions::SessionRegistry;
use crate::settings::{GatewaySection, Limits};

/// The journal's file name inside the state directory.
pub const JOURNAL_FILE_NAME: &str = "gateway-journal.sqlite";

/// How the gateway starts.
#[derive(Debug, Clone, Default)]
pub struct GatewayOptions {
    /// `--config`: the config file (else `TALON_CONFIG`, else
    /// `~/.talon/talon.json`, else built-in defaults).
    pub config_path: Option<PathBuf>,
    /// The state directory (token, journal, approvals, cron and tasks).
    pub state_dir: PathBuf,
    /// `--bind`: overrides `gateway.bind` / `gateway.port`.
    pub bind: Option<std::net::SocketAddr>,
}

/// One loaded configuration and everything compiled from it. Replaced as
/// a whole by a successful reload.
pub(crate) struct Generation {
    pub(crate) id: u64,
    pub(crate) config: Arc<TalonConfig>,
    pub(crate) origin: String,
    pub(crate) runtime: Arc<Runtime>,
    pub(crate) tokens: TokenSet,
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

/// What the last reload did.
#[derive(Debug, Clone, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ReloadReport {
    /// Whether the new config is active.
    pub ok: bool,
    /// The active generation after the attempt.
    pub generation: u64,
    /// Why it was rejected (the last good config stays active).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

pub(crate) struct Inner {
    pub(crate) options: GatewayOptions,
    pub(crate) location: ConfigLocation,
    pub(crate) current: RwLock<Arc<Generation>>,
    pub(crate) next_generation: AtomicU64,
    pub(crate) sessions: SessionRegistry,
    pub(crate) journal: CallJournal,
    pub(crate) recovery: RecoveryReport,
    /// Approval ids a crash left pending, denied at this start.
    pub(crate) approvals_denied_at_start: Vec<String>,
    pub(crate) broker: Arc<SqliteApprovalBroker>,
    pub(crate) metrics: Metrics,
    pub(crate) limiter: AuthLimiter,
    pub(crate) generated_token: String,
    pub(crate) token_path: PathBuf,
    pub(crate) events: broadcast::Sender<PushEvent>,
    pub(crate) runners: Arc<RunnerHub>,
    pub(crate) cron: Option<talon_cron::CronService>,
    pub(crate) tasks: Option<talon_tasks::TaskLedger>,
    pub(crate) shutting_down: AtomicBool,
    pub(crate) idle: Notify,
    pub(crate) call_seq: AtomicU64,
    pub(crate) nonce: String,
    pub(crate) last_reload: RwLock<Option<ReloadReport>>,
    pub(crate) started_at: std::time::Instant,
    pub(crate) link: Link,
    pub(crate) listen: std::net::SocketAddr,
    pub(crate) mcp_shutdown: talon_tasks::CancellationToken,
    pub(crate) sandbox_execs:
        std::sync::Mutex<std::collections::HashMap<String, Arc<tokio::sync::Semaphore>>>,
}

/// The gateway: cheap to clone; every clone is the same gateway.
#[derive(Clone)]
pub struct Gateway {
    pub(crate) inner: Arc<Inner>,
}

impl std::fmt::Debug for Gateway {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Gateway")
            .field("state_dir", &self.inner.options.state_dir)
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
        let (generated_token, token_path) = load_or_create_token(&state_dir)?;
        let journal_path = state_dir.join(JOURNAL_FILE_NAME);
        let (journal, recovery) = CallJournal::open_with(
            &journal_path,
            talon_journal::JournalOptions::with_durability(section.journal_durability),
        )
        .map_err(|e| GatewayError::State {
            path: journal_path.clone(),
            message: e.to_string(),
        })?;
        if !recovery.interrupted.is_empty() {
            tracing::warn!(
                calls = recovery.interrupted.len(),
                "calls in flight when the previous gateway stopped are recorded as interrupted; they are not re-run"
            );
        }
        let broker = SqliteApprovalBroker::open_in_state_dir(&state_dir).map_err(|e| {
            GatewayError::State {
                path: state_dir.clone(),
                message: format!("approvals: {e}"),
            }
        })?;
        // Approvals a crash left waiting are denied, never approved.
        let approvals_denied_at_start =
            broker
                .store()
                .recover_pending()
                .map_err(|e| GatewayError::State {
                    path: state_dir.clone(),
                    message: format!("approvals: {e}"),
                })?;
        if !approvals_denied_at_start.is_empty() {
            tracing::warn!(
                approvals = approvals_denied_at_start.len(),
                "approvals pending when the previous gateway stopped are resolved as denied"
            );
        }
        let limits = section.limits.clone();
        let (events, _) = broadcast::channel(1024);
        let runners = Arc::new(RunnerHub::new(limits.runner_wait, events.clone()));
        let db = state_dir.join(talon_tasks::DB_FILE_NAME);
        let cron_options = cron_options(&loaded.config);
        let cron = talon_cron::CronService::open(&db, Arc::clone(&runners) as _, cron_options)
            .map_err(|e| GatewayError::State {
                path: db.clone(),
                message: format!("cron: {e}"),
            })?;
        let tasks = talon_tasks::TaskLedger::open(&db).map_err(|e| GatewayError::State {
            path: db.clone(),
            message: format!("tasks: {e}"),
        })?;
        let link: Link = Arc::new(OnceLock::new());
        let broker = Arc::new(broker);
        let next_generation = AtomicU64::new(1);
        let first = build_generation(
            &Parts {
                broker: &broker,
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
        let inner = Arc::new(Inner {
            location,
            current: RwLock::new(Arc::new(first)),
            next_generation,
            sessions: SessionRegistry::default(),
            journal,
            recovery,
            approvals_denied_at_start,
            broker,
            metrics: Metrics::default(),
            limiter: AuthLimiter::new(limits.auth_max_failures, limits.auth_window),
            generated_token,
            token_path,
            events,
            runners,
            cron: Some(cron),
            tasks: Some(tasks),
            shutting_down: AtomicBool::new(false),
            idle: Notify::new(),
            call_seq: AtomicU64::new(0),
            nonce: random_hex(4).unwrap_or_else(|_| "0".into()),
            last_reload: RwLock::new(None),
            started_at: std::time::Instant::now(),
            link: Arc::clone(&link),
            listen: addr,
            mcp_shutdown: talon_tasks::CancellationToken::new(),
            sandbox_execs: std::sync::Mutex::new(std::collections::HashMap::new()),
            options,
        });
        let _ = link.set(Arc::downgrade(&inner));
        let gw = Gateway { inner };
        gw.forward_approval_events();
        gw.watch_tasks();
        gw.prune_sandboxes_periodically();
        if let Some(cron) = &gw.inner.cron {
            let report = cron
                .start()
                .map_err(|e| GatewayError::Internal(format!("cron: {e}")))?;
            tracing::info!(?report, "cron started");
        }
        Ok(gw)
    }

    /// Where the generated token is stored.
    pub fn token_path(&self) -> &Path {
        &self.inner.token_path
    }

    /// The state directory.
    pub fn state_dir(&self) -> &Path {
        &self.inner.options.state_dir
    }

    /// The address to listen on (`--bind`, else the config, else
    /// `127.0.0.1:18789`).
    pub fn listen_addr(&self) -> std::net::SocketAddr {
        self.inner.listen
    }

    /// The metrics.
    pub fn metrics(&self) -> &Metrics {
        &self.inner.metrics
    }

    /// The call journal.
    pub fn journal(&self) -> &CallJournal {
        &self.inner.journal
    }

    /// What the journal repaired at start.
    pub fn recovery(&self) -> &RecoveryReport {
        &self.inner.recovery
    }

    /// The approval broker.
    pub fn broker(&self) -> Arc<dyn ApprovalBroker> {
        Arc::clone(&self.inner.broker) as Arc<dyn ApprovalBroker>
    }

    pub(crate) fn generation(&self) -> Arc<Generation> {
        match self.inner.current.read() {
            Ok(g) => Arc::clone(&g),
            Err(p) => Arc::clone(&p.into_inner()),
        }
    }

    /// The active configuration's limits.
    pub fn limits(&self) -> Limits {
        self.generation().section.limits.clone()
    }

    /// The scope of a presented token under the active configuration.
    pub fn scope_of(&self, token: &str) -> Option<Scope> {
        self.generation().tokens.scope_of(token)
    }

    /// Reload the configuration. A config that does not load or compile is
    /// rejected and the last good one stays active; calls started after a
    /// successful reload use the new policy (calls already running finish
    /// under the table they started with).
    pub fn reload(&self) -> ReloadReport {
        let attempt = load_config(&self.inner.location).and_then(|loaded| {
            let section = GatewaySection::from_config(&loaded.config.gateway_config());
            let addr = section.listen_addr(self.inner.options.bind);
            let listening = self.listen_addr_at_start();
            if !listening.ip().is_loopback() && section.tokens.is_empty() {
                return Err(GatewayError::Config {
                    origin: loaded.origin.clone(),
                    message: format!(
                        "the gateway listens on {listening}, a non-loopback address; a config without gateway.auth tokens is refused"
                    ),
                });
            }
            if addr != listening {
                tracing::warn!(%addr, %listening, "the listen address changed in the config; it applies after a restart");
            }
            build_generation(&self.parts(), loaded, section)
        });
        let report = match attempt {
            Ok(generation) => {
                let id = generation.id;
                self.install(generation);
                self.inner.metrics.reloads.fetch_add(1, Ordering::Relaxed);
                tracing::info!(generation = id, "configuration reloaded");
                ReloadReport {
                    ok: true,
                    generation: id,
                    error: None,
                }
            }
            Err(e) => {
                self.inner
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
        if let Ok(mut last) = self.inner.last_reload.write() {
            *last = Some(report.clone());
        }
        let _ = self.inner.events.send(PushEvent {
            method: "config.reloaded",
            params: json!(report),
            min_scope: Scope::ReadOnly,
        });
        report
    }

    fn listen_addr_at_start(&self) -> std::net::SocketAddr {
        self.inner.listen
    }

    fn parts(&self) -> Parts<'_> {
        Parts {
            broker: &self.inner.broker,
            cron: self.inner.cron.as_ref(),
            link: &self.inner.link,
            generated_token: &self.inner.generated_token,
            location: &self.inner.location,
            next_generation: &self.inner.next_generation,
            previous: Some(self.generation()),
        }
    }

    fn install(&self, generation: Generation) {
        let generation = Arc::new(generation);
        let old = match self.inner.current.write() {
            Ok(mut g) => std::mem::replace(&mut *g, generation),
            Err(p) => std::mem::replace(&mut *p.into_inner(), generation),
        };
        drop(old);
    }

    fn forward_approval_events(&self) {
        let mut rx = self.inner.broker.subscribe();
        let events = self.inner.events.clone();
        tokio::spawn(async move {
            loop {
                match rx.recv().await {
                    Ok(event) => {
                        let method = event.method();
                        let params = serde_json::to_value(&event).unwrap_or(Value::Null);
                        let _ = events.send(PushEvent {
                            method,
                            params,
                            min_scope: Scope::ReadOnly,
                        });
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
                if inner.shutting_down.load(Ordering::Relaxed) {
                    break;
                }
                let Some(ledger) = inner.tasks.as_ref() else {
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
                        let _ = inner.events.send(PushEvent {
                            method: "task.updated",
                            params: json!({"task": v}),
                            min_scope: Scope::ReadOnly,
                        });
                    }
                    next.insert(t.task_id.clone(), text);
                }
                seen = next;
                first = false;
            }
        });
    }

    /// Push an event to every connection whose scope covers `min_scope`.
    pub(crate) fn push(&self, method: &'static str, params: Value, min_scope: Scope) {
        let _ = self.inner.events.send(PushEvent {
            method,
            params,
            min_scope,
        });
    }

    /// Whether a graceful stop has begun (new calls are refused).
    pub fn is_shutting_down(&self) -> bool {
        self.inner.shutting_down.load(Ordering::SeqCst)
    }

    /// Graceful stop: refuse new calls, wait up to `deadline` for the calls
    /// in flight, then abort the rest (they end `cancelled`), stop cron,
    /// kill every child process the tools started, and flush the journal.
    pub async fn shutdown(&self, deadline: std::time::Duration) {
        self.inner.shutting_down.store(true, Ordering::SeqCst);
        let wait = async {
            loop {
                let notified = self.inner.idle.notified();
                if self.inner.metrics.in_flight.load(Ordering::SeqCst) == 0 {
                    break;
                }
                notified.await;
            }
        };
        if tokio::time::timeout(deadline, wait).await.is_err() {
            tracing::warn!("drain deadline passed; cancelling the calls still running");
            for s in self.inner.sessions.list() {
                if let Some(t) = s.current_table() {
                    t.table.canceller().cancel("the gateway is shutting down");
                }
            }
            let settle = async {
                while self.inner.metrics.in_flight.load(Ordering::SeqCst) > 0 {
                    tokio::time::sleep(std::time::Duration::from_millis(10)).await;
                }
            };
            let _ = tokio::time::timeout(std::time::Duration::from_secs(3), settle).await;
        }
        self.inner.mcp_shutdown.cancel();
        if let Some(cron) = &self.inner.cron {
            cron.stop();
        }
        self.inner.runners.close_all("the gateway is shutting down");
        if let Some(registry) = self.generation().runtime.process_registry() {
            registry.shutdown().await;
        }
        // MCP stdio servers run in their own process groups: stop them so
        // none outlives the daemon.
        self.generation().runtime.mcp_manager().shutdown().await;
        if let Err(e) = self.inner.journal.flush().await {
            tracing::warn!(error = %e, "journal flush at shutdown failed");
        }
    }

    /// The limiter of concurrent sandboxed `exec` calls on one engine
    /// (sized by the limits in force when the engine was first used).
    pub(crate) fn sandbox_exec_permits(&self, backend: &str) -> Arc<tokio::sync::Semaphore> {
        let mut map = match self.inner.sandbox_execs.lock() {
            Ok(m) => m,
            Err(p) => p.into_inner(),
        };
        let n = self.limits().max_sandbox_execs;
        Arc::clone(
            map.entry(backend.to_owned())
                .or_insert_with(|| Arc::new(tokio::sync::Semaphore::new(n))),
        )
    }

    /// A new gateway-unique call id.
    pub(crate) fn next_call_id(&self) -> String {
        let n = self.inner.call_seq.fetch_add(1, Ordering::Relaxed);
        format!("gw-{}-{n}", self.inner.nonce)
    }

    /// Health summary.
    pub fn health(&self) -> Value {
        let g = self.generation();
        json!({
            "ok": !self.is_shutting_down(),
            "status": if self.is_shutting_down() { "draining" } else { "ok" },
            "version": env!("CARGO_PKG_VERSION"),
            "generation": g.id,
            "configOrigin": g.origin,
            "uptimeMs": u64::try_from(self.inner.started_at.elapsed().as_millis()).unwrap_or(u64::MAX),
            "sessions": self.inner.sessions.len(),
            "inFlight": self.inner.metrics.in_flight.load(Ordering::Relaxed),
            "runners": self.inner.runners.count(),
            "approvalsPending": self.inner.broker.pending().len(),
            "interruptedAtStart": self.inner.recovery.interrupted.len(),
            "approvalsDeniedAtStart": self.inner.approvals_denied_at_start.len(),
            "containment": containment(),
        })
    }
}

/// How this process contains the process trees it starts (`cgroup` or
/// `process-group`), `null` when no supervisor has started yet (the
/// gateway binary starts the shared one before it serves).
fn containment() -> Value {
    talon_proc_tree::Supervisor::shared_if_started().map_or(Value::Null, |s| {
        let mut out = json!({"mode": s.containment().mode()});
        if let talon_proc_tree::Containment::ProcessGroup { reason } = s.containment() {
            out["reason"] = json!(reason);
        }
        out
    })
}

fn load_config(location: &ConfigLocation) -> Result<talon_config::Loaded, GatewayError> {
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
pub(crate) type Link = Arc<OnceLock<Weak<Inner>>>;

/// What compiling a generation needs.
struct Parts<'a> {
    broker: &'a Arc<SqliteApprovalBroker>,
    cron: Option<&'a talon_cron::CronService>,
    link: &'a Link,
    generated_token: &'a str,
    location: &'a ConfigLocation,
    next_generation: &'a AtomicU64,
    /// The generation being replaced (on reload): its MCP servers are kept
    /// when the MCP configuration did not change, so a reload does not
    /// restart every server.
    previous: Option<Arc<Generation>>,
}

fn build_generation(
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
        .broker(Arc::clone(parts.broker) as Arc<dyn ApprovalBroker>);
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
    builder = builder.family(Arc::new(crate::tools_family::GatewayToolsFamily::new(
        Arc::clone(parts.link),
        Arc::clone(&config),
    )));
    let runtime = builder.build().map_err(err)?;
    let mut tokens = section.tokens.clone();
    tokens.add(parts.generated_token, Scope::Operator);
    let id = parts.next_generation.fetch_add(1, Ordering::SeqCst);
    Ok(Generation {
        id,
        config,
        origin,
        runtime: Arc::new(runtime),
        tokens,
        section,
        loaded_at_ms: crate::clock::now_ms(),
    })
}

#[cfg(test)]
#[path = "reload_tests.rs"]
mod reload_tests;
