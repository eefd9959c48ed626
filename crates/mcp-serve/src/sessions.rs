//! `CappedSessions`: rmcp's in-memory session manager with a hard cap on
//! live sessions, and each session bound to the caller that opened it.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

use futures::Stream;
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::WorkerTransport;
use rmcp::transport::streamable_http_server::SessionManager;
use rmcp::transport::streamable_http_server::session::local::{
    LocalSessionManager, LocalSessionManagerError, LocalSessionWorker, SessionConfig,
};
use rmcp::transport::streamable_http_server::session::{ServerSseMessage, SessionId};
use sha2::{Digest, Sha256};
use tokio_util::sync::CancellationToken;

use crate::config::ServeConfig;
use crate::source::McpCaller;

/// Why a session operation failed.
#[derive(Debug, thiserror::Error)]
pub(crate) enum SessionsError {
    /// The cap is reached.
    #[error("the MCP session limit ({0}) is reached")]
    Full(usize),
    /// rmcp's manager failed.
    #[error(transparent)]
    Local(#[from] LocalSessionManagerError),
}

/// Who opened a session: a hash of the credentials and the Talon session
/// named, so a session id alone does not let another caller use it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct CallerFingerprint([u8; 32]);

impl CallerFingerprint {
    pub(crate) fn of(caller: &McpCaller) -> Self {
        let mut h = Sha256::new();
        let auth = caller
            .headers
            .get(axum::http::header::AUTHORIZATION)
            .map(|v| v.as_bytes())
            .unwrap_or_default();
        h.update(auth);
        h.update([0]);
        h.update(caller.session_hint().unwrap_or_default().as_bytes());
        h.update([0]);
        CallerFingerprint(h.finalize().into())
    }
}

/// How a request's session id relates to its caller.
#[derive(Debug)]
pub(crate) enum Binding {
    /// The session was opened by this caller; the token fires when the
    /// session closes (DELETE, idle expiry, shutdown).
    Same(CancellationToken),
    /// The session was opened by another caller (or for another session).
    Other,
    /// No such live session.
    Unknown,
}

/// One bound session: who opened it, the token that ends its calls, and
/// what the idle reaper needs.
#[derive(Debug)]
struct Live {
    who: CallerFingerprint,
    closed: CancellationToken,
    last_used: Instant,
    in_flight: usize,
}

/// rmcp's [`LocalSessionManager`] with a cap, caller bindings, and an idle
/// expiry that never ends a session while one of its calls runs (rmcp's own
/// keep-alive would: a call waiting minutes on an approval sends nothing).
#[derive(Debug)]
pub(crate) struct CappedSessions {
    inner: LocalSessionManager,
    cap: usize,
    idle: Duration,
    unbound_grace: Duration,
    create: tokio::sync::Mutex<()>,
    live: Mutex<HashMap<SessionId, Live>>,
    reaper_started: AtomicBool,
    shutdown: CancellationToken,
}

impl CappedSessions {
    pub(crate) fn new(config: &ServeConfig) -> Self {
        let mut inner = LocalSessionManager::default();
        let mut session = SessionConfig::default();
        // Idle expiry is ours (see the type's docs).
        session.keep_alive = None;
        session.init_timeout = Some(config.init_timeout);
        session.sse_retry = None;
        inner.session_config = session;
        CappedSessions {
            inner,
            cap: config.max_sessions.max(1),
            idle: config.session_idle,
            unbound_grace: config.init_timeout.saturating_add(config.session_idle),
            create: tokio::sync::Mutex::new(()),
            live: Mutex::new(HashMap::new()),
            reaper_started: AtomicBool::new(false),
            shutdown: config.shutdown.clone(),
        }
    }

    /// Live sessions.
    pub(crate) async fn len(&self) -> usize {
        self.inner.sessions.read().await.len()
    }

    /// The cap.
    pub(crate) fn cap(&self) -> usize {
        self.cap
    }

    /// Record who opened session `id` (and start the idle reaper).
    pub(crate) fn bind(self: &Arc<Self>, id: &str, who: CallerFingerprint) {
        let live = Live {
            who,
            closed: self.shutdown.child_token(),
            last_used: Instant::now(),
            in_flight: 0,
        };
        self.with_live(|b| {
            b.insert(SessionId::from(id), live);
        });
        if !self.reaper_started.swap(true, Ordering::SeqCst) {
            tokio::spawn(reap_idle(
                Arc::downgrade(self),
                self.idle,
                self.shutdown.clone(),
            ));
        }
    }

    /// How session `id` relates to `who`; a match counts as use.
    pub(crate) fn binding(&self, id: &str, who: CallerFingerprint) -> Binding {
        self.with_live(|b| match b.get_mut(id) {
            Some(live) if live.who == who => {
                live.last_used = Instant::now();
                Binding::Same(live.closed.clone())
            }
            Some(_) => Binding::Other,
            None => Binding::Unknown,
        })
    }

    /// Mark a call of session `id` running until the guard drops.
    pub(crate) fn call_running(self: &Arc<Self>, id: &str) -> RunningCall {
        self.with_live(|b| {
            if let Some(live) = b.get_mut(id) {
                live.in_flight += 1;
            }
        });
        RunningCall {
            sessions: Arc::clone(self),
            id: SessionId::from(id),
        }
    }

    fn with_live<T>(&self, f: impl FnOnce(&mut HashMap<SessionId, Live>) -> T) -> T {
        match self.live.lock() {
            Ok(mut b) => f(&mut b),
            Err(poisoned) => f(&mut poisoned.into_inner()),
        }
    }

    /// Sessions to close now: bound ones idle past the limit with no call
    /// running, and rmcp sessions never bound (a handshake that failed)
    /// past a grace period.
    async fn expired(&self, unbound_since: &mut HashMap<SessionId, Instant>) -> Vec<SessionId> {
        let now = Instant::now();
        let mut out: Vec<SessionId> = self.with_live(|b| {
            b.iter()
                .filter(|(_, l)| l.in_flight == 0 && now.duration_since(l.last_used) >= self.idle)
                .map(|(id, _)| id.clone())
                .collect()
        });
        let known: Vec<SessionId> = self.inner.sessions.read().await.keys().cloned().collect();
        let bound: Vec<SessionId> = self.with_live(|b| b.keys().cloned().collect());
        unbound_since.retain(|id, _| known.contains(id) && !bound.contains(id));
        for id in known {
            if bound.contains(&id) {
                continue;
            }
            let since = *unbound_since.entry(id.clone()).or_insert(now);
            if now.duration_since(since) >= self.unbound_grace {
                out.push(id);
            }
        }
        out
    }
}

/// A call in flight in a session (the reaper leaves the session alone).
#[derive(Debug)]
pub(crate) struct RunningCall {
    sessions: Arc<CappedSessions>,
    id: SessionId,
}

impl Drop for RunningCall {
    fn drop(&mut self) {
        self.sessions.with_live(|b| {
            if let Some(live) = b.get_mut(&self.id) {
                live.in_flight = live.in_flight.saturating_sub(1);
                live.last_used = Instant::now();
            }
        });
    }
}

/// Close idle sessions until the manager is gone or the server shuts down.
async fn reap_idle(sessions: Weak<CappedSessions>, idle: Duration, shutdown: CancellationToken) {
    let tick = (idle / 4).clamp(Duration::from_millis(10), Duration::from_secs(30));
    let mut unbound_since = HashMap::new();
    loop {
        tokio::select! {
            () = shutdown.cancelled() => return,
            () = tokio::time::sleep(tick) => {}
        }
        let Some(sessions) = sessions.upgrade() else {
            return;
        };
        for id in sessions.expired(&mut unbound_since).await {
            tracing::debug!(session = %id, "mcp: closing an idle session");
            if let Err(e) = sessions.close_session(&id).await {
                tracing::warn!(session = %id, error = %e, "mcp: closing an idle session failed");
            }
        }
    }
}

impl SessionManager for CappedSessions {
    type Error = SessionsError;
    type Transport = WorkerTransport<LocalSessionWorker>;

    async fn create_session(&self) -> Result<(SessionId, Self::Transport), Self::Error> {
        // Serialised so two concurrent `initialize`s cannot both take the
        // last slot.
        let _one_at_a_time = self.create.lock().await;
        if self.len().await >= self.cap {
            return Err(SessionsError::Full(self.cap));
        }
        Ok(self.inner.create_session().await?)
    }

    async fn initialize_session(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<ServerJsonRpcMessage, Self::Error> {
        Ok(self.inner.initialize_session(id, message).await?)
    }

    async fn has_session(&self, id: &SessionId) -> Result<bool, Self::Error> {
        Ok(self.inner.has_session(id).await?)
    }

    async fn close_session(&self, id: &SessionId) -> Result<(), Self::Error> {
        // rmcp lets a closed session's handlers run on for a drain period;
        // Talon ends its calls now.
        if let Some(live) = self.with_live(|b| b.remove(id)) {
            live.closed.cancel();
        }
        Ok(self.inner.close_session(id).await?)
    }

    async fn create_stream(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        Ok(self.inner.create_stream(id, message).await?)
    }

    async fn accept_message(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<(), Self::Error> {
        Ok(self.inner.accept_message(id, message).await?)
    }

    async fn create_standalone_stream(
        &self,
        id: &SessionId,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        Ok(self.inner.create_standalone_stream(id).await?)
    }

    async fn resume(
        &self,
        id: &SessionId,
        last_event_id: String,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        Ok(self.inner.resume(id, last_event_id).await?)
    }
}
