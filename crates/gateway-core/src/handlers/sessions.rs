//! `sessions.*`: the registry of open sessions, and the one way a session
//! key is resolved (an open session, or an agent's main session created on
//! first use).

use std::sync::Arc;

use talon_gateway_protocol::{
    SessionParams, SessionRef, SessionsCloseResponse, SessionsCreateResponse, SessionsListResponse,
};

use crate::gateway::Generation;
use crate::rpc::RpcError;
use crate::sessions::{Session, SessionRegistry, build_session, main_session_agent};

/// The open sessions.
#[derive(Debug, Default)]
pub(crate) struct SessionsHandler {
    pub(crate) registry: SessionRegistry,
}

impl SessionsHandler {
    /// `sessions.list`.
    pub(crate) fn list(&self) -> SessionsListResponse {
        SessionsListResponse {
            sessions: self
                .registry
                .list()
                .iter()
                .map(|s| s.info.clone())
                .collect(),
        }
    }

    /// `sessions.create`: the session and its tool names.
    pub(crate) async fn create(
        &self,
        g: &Generation,
        params: SessionParams,
    ) -> Result<SessionsCreateResponse, RpcError> {
        let s = self.open(g, params)?;
        let built = s.table(g.id, &g.runtime).await;
        Ok(SessionsCreateResponse {
            session: s.info.clone(),
            tools: built.table.names().into_iter().map(str::to_owned).collect(),
        })
    }

    /// `sessions.close`: cancels the session's calls in flight.
    pub(crate) fn close(&self, p: SessionRef) -> Result<SessionsCloseResponse, RpcError> {
        match self.registry.remove(&p.session_key) {
            Some(s) => {
                if let Some(t) = s.current_table() {
                    t.table.canceller().cancel("the session was closed");
                }
                Ok(SessionsCloseResponse {
                    closed: true,
                    session_key: p.session_key,
                })
            }
            None => Err(RpcError::not_found(format!(
                "no session `{}` is open (sessions.list shows the open ones)",
                p.session_key
            ))),
        }
    }

    /// Open a session under generation `g` (a sub-agent's tools are capped
    /// by its parent's effective tools).
    pub(crate) fn open(
        &self,
        g: &Generation,
        params: SessionParams,
    ) -> Result<Arc<Session>, RpcError> {
        let parent = match params.parent_session_key.as_deref() {
            Some(pk) => {
                let p = self.registry.get(pk).ok_or_else(|| {
                    RpcError::not_found(format!("parent session `{pk}` is not open"))
                })?;
                let tools: Vec<String> = p
                    .table_now(g.id, &g.runtime)
                    .table
                    .effective_allowlist()
                    .to_vec();
                Some((p, tools))
            }
            None => None,
        };
        let suffix = crate::auth::random_hex(6).map_err(|e| RpcError::internal(e.to_string()))?;
        let session = build_session(
            params,
            &g.config.default_agent_id(),
            &g.runtime,
            parent.as_ref().map(|(p, t)| (p.as_ref(), t.as_slice())),
            &suffix,
        )?;
        self.registry.insert(session, g.section.limits.max_sessions)
    }

    /// The session named, or — for an agent's main session
    /// (`agent:<id>:main`, or `main` for the default agent) — that
    /// session, created on first use.
    pub(crate) fn session_or_main(
        &self,
        g: &Generation,
        key: &str,
    ) -> Result<Arc<Session>, RpcError> {
        if let Some(s) = self.registry.get(key) {
            return Ok(s);
        }
        let default_agent = g.config.default_agent_id();
        let main = g.config.main_session();
        let Some(agent) = main_session_agent(key, &default_agent, &main) else {
            return Err(RpcError::not_found(format!(
                "unknown session `{key}`: create it with sessions.create (an agent's main session, agent:<id>:main or agent:<id>:<session.mainKey>, is created on first use)"
            )));
        };
        let canonical = format!("agent:{agent}:{}", main.main_key());
        if let Some(s) = self.registry.get(&canonical) {
            return Ok(s);
        }
        let params = SessionParams {
            session_key: Some(canonical),
            agent_id: Some(agent),
            ..Default::default()
        };
        self.open(g, params)
    }

    /// How many sessions run sandboxed with a built table.
    pub(crate) fn sandboxed_count(&self) -> usize {
        self.registry
            .list()
            .iter()
            .filter(|s| {
                s.current_table()
                    .is_some_and(|built| built.table.sandbox().sandboxed)
            })
            .count()
    }

    /// Cancel every session's calls in flight (the drain deadline passed).
    pub(crate) fn cancel_all(&self, reason: &str) {
        for s in self.registry.list() {
            if let Some(t) = s.current_table() {
                t.table.canceller().cancel(reason);
            }
        }
    }
}
