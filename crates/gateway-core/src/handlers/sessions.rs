//! `sessions.*`: the registry of open sessions, and the one way a session
//! key is resolved (an open session, or an agent's main session created on
//! first use).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};

use talon_gateway_protocol::{
    SessionParams, SessionRef, SessionsCloseResponse, SessionsCreateResponse, SessionsListResponse,
};

use crate::gateway::Generation;
use crate::rpc::RpcError;
use crate::sessions::{
    CronRunBinding, Session, SessionRegistry, build_cron_run_session, build_session,
    is_cron_run_key, main_session_agent,
};

/// The open sessions, and the cron runs in flight whose sessions the
/// gateway binds (by lowercased session key).
#[derive(Debug, Default)]
pub(crate) struct SessionsHandler {
    pub(crate) registry: SessionRegistry,
    cron_runs: Mutex<HashMap<String, CronRunBinding>>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    match m.lock() {
        Ok(g) => g,
        Err(p) => p.into_inner(),
    }
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
        caller: &crate::auth::Identity,
    ) -> Result<SessionsCreateResponse, RpcError> {
        let s = self.open(g, params, Some(caller))?;
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

    /// A cron run is in flight: from now on its session key opens only as
    /// the run's session, capped by the job's tools. A session already
    /// open under that key (it cannot have come from this run) is closed.
    pub(crate) fn bind_cron_run(&self, binding: CronRunBinding) {
        let key = binding.session_key.to_lowercase();
        if let Some(stale) = self.registry.remove(&binding.session_key) {
            tracing::warn!(session = %binding.session_key, "a session was open under a cron run's key before the run; closed");
            if let Some(t) = stale.current_table() {
                t.table.canceller().cancel("the key belongs to a cron run");
            }
        }
        lock(&self.cron_runs).insert(key, binding);
    }

    /// A cron run ended (result, timeout, cancellation, lost runner): its
    /// session closes and the calls in flight in it are cancelled (their
    /// processes end with them); the key opens nothing any more.
    pub(crate) fn end_cron_run(
        &self,
        session_key: &str,
        reason: &str,
        processes: Option<&talon_tools::ProcessRegistry>,
    ) {
        let binding = lock(&self.cron_runs).remove(&session_key.to_lowercase());
        let key = binding.map_or_else(|| session_key.to_owned(), |b| b.session_key);
        if let Some(s) = self.registry.remove(&key)
            && let Some(t) = s.current_table()
        {
            t.table.canceller().cancel(reason);
        }
        // Commands the run moved to the background end with it too.
        if let Some(registry) = processes {
            let killed = registry.kill_owner(&key);
            if killed > 0 {
                tracing::info!(session = %key, killed, "cron run ended: its background commands were killed");
            }
        }
    }

    /// The binding of the cron run in flight under `key`, if any.
    fn cron_run(&self, key: &str) -> Option<CronRunBinding> {
        lock(&self.cron_runs)
            .get(&key.trim().to_lowercase())
            .cloned()
    }

    /// Open a session under generation `g` (a sub-agent's tools are capped
    /// by its parent's effective tools; a cron run's session by its job's).
    /// With a `caller`, its `senderIsOwner` is decided from the caller's
    /// token and the owner list (a claim the token lacks is refused), and
    /// the caller is the session's requester; without one (a main session
    /// opened on first use) nothing about the sender is proven.
    pub(crate) fn open(
        &self,
        g: &Generation,
        mut params: SessionParams,
        caller: Option<&crate::auth::Identity>,
    ) -> Result<Arc<Session>, RpcError> {
        let cron_run = match params.session_key.as_deref() {
            Some(key) => match self.cron_run(key) {
                Some(b) => Some(b),
                None if is_cron_run_key(key) => {
                    return Err(RpcError::params(format!(
                        "sessionKey `{key}` is a cron run's key, but no such run is in flight (it ended, timed out or never started); a cron run's session opens only while the gateway runs it"
                    ))
                    .with_data(serde_json::json!({"param": "sessionKey", "errorCode": "session.cron_run_not_in_flight"})));
                }
                None => None,
            },
            None => None,
        };
        if let Some(c) = caller {
            let owner = crate::identity::resolve_sender_is_owner(c, &params, &g.owners)?;
            // A cron run's tools are its job's cap, whoever serves it: the
            // claim is checked, but the caller decides nothing more.
            if cron_run.is_none() {
                params.sender_is_owner = Some(owner);
            }
        }
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
        let parent = parent.as_ref().map(|(p, t)| (p.as_ref(), t.as_slice()));
        let default_agent = g.config.default_agent_id();
        let session = match &cron_run {
            Some(binding) => build_cron_run_session(
                params,
                binding,
                &default_agent,
                &g.runtime,
                parent,
                &suffix,
                caller,
            )?,
            None => build_session(params, &default_agent, &g.runtime, parent, &suffix, caller)?,
        };
        let opened = self
            .registry
            .insert(session, g.section.limits.max_sessions)?;
        // The run may have ended while the session was being built: then
        // the session goes again and nothing runs in it.
        if let Some(binding) = cron_run
            && self.cron_run(&binding.session_key).is_none()
        {
            self.end_cron_run(
                &binding.session_key,
                "the cron run ended",
                g.runtime.process_registry().map(AsRef::as_ref),
            );
            return Err(RpcError::params(format!(
                "cron run `{}` ended while its session was being opened",
                binding.run_id
            ))
            .with_data(serde_json::json!({"param": "sessionKey", "errorCode": "session.cron_run_not_in_flight"})));
        }
        Ok(opened)
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
        // A cron run's session opens on first use, bound to its run.
        if let Some(binding) = self.cron_run(key) {
            if let Some(s) = self.registry.get(&binding.session_key) {
                return Ok(s);
            }
            let params = SessionParams {
                session_key: Some(binding.session_key),
                ..Default::default()
            };
            return self.open(g, params, None);
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
        self.open(g, params, None)
    }

    /// The key a session's calls are journalled under: an open session's
    /// own key, a main-session alias (`main`, `agent:<id>:main`) as its
    /// canonical key, anything else as given (a closed session's calls stay
    /// in the journal under the key it had).
    pub(crate) fn journal_key(&self, g: &Generation, key: &str) -> String {
        if let Some(s) = self.registry.get(key) {
            return s.info.session_key.clone();
        }
        let default_agent = g.config.default_agent_id();
        let main = g.config.main_session();
        match main_session_agent(key, &default_agent, &main) {
            Some(agent) => format!("agent:{agent}:{}", main.main_key()),
            None => key.trim().to_owned(),
        }
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
