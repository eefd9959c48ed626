//! `CappedSessions`: rmcp's in-memory session manager with a hard cap on
//! live sessions, and each session bound to the caller that opened it.

use std::collections::HashMap;
use std::sync::Mutex;

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

/// rmcp's [`LocalSessionManager`] with a cap and caller bindings.
#[derive(Debug)]
pub(crate) struct CappedSessions {
    inner: LocalSessionManager,
    cap: usize,
    create: tokio::sync::Mutex<()>,
    bindings: Mutex<HashMap<SessionId, (CallerFingerprint, CancellationToken)>>,
    shutdown: CancellationToken,
}

impl CappedSessions {
    pub(crate) fn new(config: &ServeConfig) -> Self {
        let mut inner = LocalSessionManager::default();
        let mut session = SessionConfig::default();
        session.keep_alive = Some(config.session_idle);
        session.init_timeout = Some(config.init_timeout);
        session.sse_retry = None;
        inner.session_config = session;
        CappedSessions {
            inner,
            cap: config.max_sessions.max(1),
            create: tokio::sync::Mutex::new(()),
            bindings: Mutex::new(HashMap::new()),
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

    /// Record who opened session `id`.
    pub(crate) fn bind(&self, id: &str, who: CallerFingerprint) {
        let closed = self.shutdown.child_token();
        self.with_bindings(|b| {
            b.insert(SessionId::from(id), (who, closed));
        });
    }

    pub(crate) fn binding(&self, id: &str, who: CallerFingerprint) -> Binding {
        self.with_bindings(|b| match b.get(id) {
            Some((f, closed)) if *f == who => Binding::Same(closed.clone()),
            Some(_) => Binding::Other,
            None => Binding::Unknown,
        })
    }

    fn with_bindings<T>(
        &self,
        f: impl FnOnce(&mut HashMap<SessionId, (CallerFingerprint, CancellationToken)>) -> T,
    ) -> T {
        match self.bindings.lock() {
            Ok(mut b) => f(&mut b),
            Err(poisoned) => f(&mut poisoned.into_inner()),
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
        if let Some((_, closed)) = self.with_bindings(|b| b.remove(id)) {
            closed.cancel();
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
