//! `sessions.*`: the registry of open sessions, and the one way a session
//! key is resolved (an open session, or an agent's main session created on
//! first use).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};

use talon_gateway_protocol::{
    SessionInfo, SessionParams, SessionRef, SessionsCloseResponse, SessionsCreateResponse,
    SessionsListParams, SessionsListResponse,
};
use talon_sessions::{ListQuery, SessionRecord, SessionStatus, SessionStore};

use crate::gateway::Generation;
use crate::rpc::RpcError;
use crate::sessions::{
    CronRunBinding, Session, SessionRegistry, build_cron_run_session, build_session,
    is_cron_run_key, main_session_agent,
};

/// The open sessions, the store that keeps them across restarts, and the
/// cron runs in flight whose sessions the gateway binds (by lowercased
/// session key).
#[derive(Debug, Default)]
pub(crate) struct SessionsHandler {
    pub(crate) registry: SessionRegistry,
    cron_runs: Mutex<HashMap<String, CronRunBinding>>,
    /// Where sessions persist (the gateway's `talon.db`); `None` only in
    /// unit tests of the handler.
    store: Option<SessionStore>,
}

/// Where a stored session's parameters keep the token that opened it (its
/// id and scope), beside the creation parameters.
const OPENER_ACCOUNT: &str = "openerAccountId";
const OPENER_SCOPE: &str = "openerScope";
/// How long after a session is built here before a close in the shared
/// store is taken as meant for it (its own open is recorded by then).
const SETTLE: std::time::Duration = std::time::Duration::from_secs(2);

/// Take the opener out of stored parameters (so they read back as
/// `SessionParams`), as the identity that opened the session.
fn take_opener(params: &mut serde_json::Value) -> Option<crate::auth::Identity> {
    let map = params.as_object_mut()?;
    let account = map.remove(OPENER_ACCOUNT);
    let scope = map.remove(OPENER_SCOPE);
    let account = account?.as_str()?.to_owned();
    let scope = talon_gateway_protocol::Scope::parse(scope?.as_str()?)?;
    Some(crate::auth::Identity::new(account, scope))
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    match m.lock() {
        Ok(g) => g,
        Err(p) => p.into_inner(),
    }
}

impl SessionsHandler {
    /// A handler whose sessions persist in `store`.
    pub(crate) fn with_store(store: SessionStore) -> Self {
        SessionsHandler {
            store: Some(store),
            ..SessionsHandler::default()
        }
    }

    /// The session store, when there is one.
    pub(crate) fn store(&self) -> Option<&SessionStore> {
        self.store.as_ref()
    }

    /// Reopen the sessions that were open when the gateway last stopped,
    /// parents before children, each rebuilt from its creation parameters
    /// under the current configuration. A session that cannot be rebuilt
    /// (its agent's policy now refuses it, its parent is gone, a cron run's
    /// session whose run cannot have survived) is closed in the store and
    /// stays readable as history. Returns how many reopened.
    pub(crate) fn restore(&self, g: &Generation) -> usize {
        let Some(store) = &self.store else { return 0 };
        let mut records = match store.list(&ListQuery::default()) {
            Ok(r) => r,
            Err(e) => {
                tracing::error!(error = %e, "cannot read the session store; no session was reopened");
                return 0;
            }
        };
        records.sort_by_key(|r| r.spawn_depth);
        let mut reopened = 0;
        for record in records {
            let outcome = if is_cron_run_key(&record.key) {
                Err("a cron run does not survive a restart".to_owned())
            } else {
                self.reopen(g, &record).map(drop).map_err(|e| e.message)
            };
            match outcome {
                Ok(_) => reopened += 1,
                Err(why) => {
                    tracing::warn!(session = %record.key, reason = %why, "a stored session was not reopened; it is closed and kept as history");
                    if let Err(e) = store.close(&record.key, crate::clock::now_ms()) {
                        tracing::error!(session = %record.key, error = %e, "cannot close a stored session");
                    }
                }
            }
        }
        reopened
    }

    /// Rebuild a stored session from its creation parameters under the
    /// current configuration.
    fn reopen(&self, g: &Generation, record: &SessionRecord) -> Result<Arc<Session>, RpcError> {
        let mut raw = record.params.clone();
        let opener = take_opener(&mut raw);
        let mut params = serde_json::from_value::<SessionParams>(raw).map_err(|e| {
            RpcError::internal(format!("its stored parameters are unreadable: {e}"))
        })?;
        params.session_key = Some(record.key.clone());
        self.open_inner(g, params, None, Some((record, opener.as_ref())))
    }

    /// A session another gateway of the fleet opened (it is open in the
    /// shared store but not here): reopened here on first use, exactly as
    /// a restart would reopen it. `None` when the store does not hold it
    /// open (or there is no store); a cron run's session is never taken
    /// over this way.
    pub(crate) fn open_from_store(&self, g: &Generation, key: &str) -> Option<Arc<Session>> {
        let store = self.store.as_ref()?;
        if is_cron_run_key(key) {
            return None;
        }
        let record = match store.get(key) {
            Ok(Some(r)) if r.status == SessionStatus::Open => r,
            Ok(_) => return None,
            Err(e) => {
                tracing::error!(session = %key, error = %e, "cannot read the session store");
                return None;
            }
        };
        // Its parent first, so a child keeps its place in the tree.
        if let Some(parent) = &record.parent_key
            && self.registry.get(parent).is_none()
            && self.open_from_store(g, parent).is_none()
        {
            return None;
        }
        match self.reopen(g, &record) {
            Ok(s) => {
                tracing::info!(session = %key, "opened a session another gateway created");
                Some(s)
            }
            // Another request opened it here meanwhile.
            Err(_) if self.registry.get(key).is_some() => self.registry.get(key),
            Err(why) => {
                tracing::warn!(session = %key, reason = %why.message, "a stored session could not be opened here");
                None
            }
        }
    }

    /// Record a message the gateway saw in session `key` (a cron run's
    /// message and result, a system event). A session the store does not
    /// hold yet is recorded first when `agent_id` is given (a cron run's
    /// session exists before its runner opens it); otherwise the message is
    /// dropped with a debug note. A store failure is logged, never fatal to
    /// what carried the message. Returns whether it was recorded.
    pub(crate) fn record_message(
        &self,
        key: &str,
        agent_id: Option<&str>,
        role: talon_sessions::Role,
        source: Option<&str>,
        text: &str,
    ) -> bool {
        let Some(store) = &self.store else {
            return false;
        };
        let now = crate::clock::now_ms();
        let known = match store.get(key) {
            Ok(r) => r.is_some(),
            Err(e) => {
                tracing::error!(session = %key, error = %e, "cannot read the session store");
                return false;
            }
        };
        if !known {
            let Some(agent) = agent_id else {
                tracing::debug!(session = %key, "a message for a session the gateway never opened was not recorded");
                return false;
            };
            let record = SessionRecord {
                key: key.to_owned(),
                agent_id: agent.to_owned(),
                parent_key: None,
                spawn_depth: 0,
                label: None,
                status: SessionStatus::Open,
                created_at_ms: now,
                updated_at_ms: now,
                params: serde_json::json!({"sessionKey": key, "agentId": agent}),
            };
            if let Err(e) = store.save(&record) {
                tracing::error!(session = %key, error = %e, "cannot record a session");
                return false;
            }
        }
        match store.append_message(key, role, source, text, now) {
            Ok(_) => true,
            Err(e) => {
                tracing::error!(session = %key, error = %e, "cannot record a message");
                false
            }
        }
    }

    /// In a fleet, the sessions open here that another gateway closed in
    /// the shared store close here too, their calls in flight cancelled
    /// (as `sessions.close` does), so a close holds on every member within
    /// a tick of [`crate::fleet`]'s follower. A session built here in the
    /// last [`SETTLE`] is left for the next tick: the store may still hold
    /// an earlier close of its key until its open is recorded. Returns the
    /// keys closed.
    pub(crate) fn close_those_closed_elsewhere(&self) -> Vec<String> {
        let Some(store) = &self.store else {
            return Vec::new();
        };
        let keys: Vec<String> = self
            .registry
            .list()
            .iter()
            .filter(|s| s.opened.elapsed() >= SETTLE)
            .map(|s| s.info.session_key.clone())
            .collect();
        if keys.is_empty() {
            return Vec::new();
        }
        let closed = match store.closed_among(&keys) {
            Ok(closed) => closed,
            Err(e) => {
                tracing::warn!(error = %e, "cannot read which sessions other gateways closed");
                return Vec::new();
            }
        };
        let mut done = Vec::new();
        for key in closed {
            if let Some(s) = self.registry.remove(&key) {
                if let Some(t) = s.current_table() {
                    t.table
                        .canceller()
                        .cancel("the session was closed on another gateway");
                }
                tracing::info!(session = %key, "closed here: another gateway closed it");
                done.push(key);
            }
        }
        done
    }

    /// Record that `key` closed (kept as history).
    fn persist_close(&self, key: &str) {
        if let Some(store) = &self.store
            && let Err(e) = store.close(key, crate::clock::now_ms())
        {
            tracing::error!(session = %key, error = %e, "cannot record a closed session");
        }
    }

    /// Record a session opened now, with its place in the spawn tree.
    fn persist_open(&self, s: &Session) -> Result<(), RpcError> {
        let Some(store) = &self.store else {
            return Ok(());
        };
        let parent_key = s.info.params.parent_session_key.clone();
        let spawn_depth = match &parent_key {
            Some(pk) => store
                .get(pk)
                .ok()
                .flatten()
                .map_or(1, |p| p.spawn_depth.saturating_add(1)),
            None => 0,
        };
        let mut params = serde_json::to_value(&s.info.params).map_err(|e| {
            RpcError::internal(format!("cannot encode the session's parameters: {e}"))
        })?;
        if let Some(r) = s.requester()
            && let (Some(account), Some(scope)) = (&r.account_id, &r.scope)
        {
            params[OPENER_ACCOUNT] = serde_json::json!(account);
            params[OPENER_SCOPE] = serde_json::json!(scope);
        }
        let record = SessionRecord {
            key: s.info.session_key.clone(),
            agent_id: s.info.agent_id.clone(),
            parent_key,
            spawn_depth,
            label: s.info.params.label.clone(),
            status: SessionStatus::Open,
            created_at_ms: s.info.created_at_ms,
            updated_at_ms: crate::clock::now_ms(),
            params,
        };
        store.save(&record).map_err(|e| {
            RpcError::internal(format!(
                "the session store refused session `{}`, so it was not opened: {e}",
                record.key
            ))
        })
    }

    /// `sessions.list`: the open sessions, and with `includeClosed` the
    /// stored ones kept as history (a store that cannot be read lists the
    /// open ones and logs why).
    pub(crate) fn list(&self, p: &SessionsListParams) -> SessionsListResponse {
        let agent = p.agent_id.as_deref().map(|a| a.trim().to_lowercase());
        let wanted = |a: &str| agent.as_deref().is_none_or(|w| w == a);
        let mut sessions: Vec<SessionInfo> = self
            .registry
            .list()
            .iter()
            .filter(|s| wanted(&s.info.agent_id))
            .map(|s| SessionInfo {
                status: Some("open".to_owned()),
                ..s.info.clone()
            })
            .collect();
        if p.include_closed == Some(true)
            && let Some(store) = &self.store
        {
            let query = ListQuery {
                agent_id: agent.clone(),
                include_closed: true,
                ..ListQuery::default()
            };
            match store.list(&query) {
                Ok(records) => {
                    for r in records {
                        if self.registry.get(&r.key).is_some() {
                            continue;
                        }
                        let mut raw = r.params.clone();
                        let _ = take_opener(&mut raw);
                        let params =
                            serde_json::from_value::<SessionParams>(raw).unwrap_or_else(|_| {
                                SessionParams {
                                    session_key: Some(r.key.clone()),
                                    agent_id: Some(r.agent_id.clone()),
                                    ..SessionParams::default()
                                }
                            });
                        sessions.push(SessionInfo {
                            session_key: r.key,
                            agent_id: r.agent_id,
                            params,
                            sandboxed: false,
                            created_at_ms: r.created_at_ms,
                            status: Some("closed".to_owned()),
                        });
                    }
                    sessions.sort_by(|a, b| a.session_key.cmp(&b.session_key));
                }
                Err(e) => {
                    tracing::error!(error = %e, "cannot read the session store; sessions.list shows the open sessions only");
                }
            }
        }
        SessionsListResponse { sessions }
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
                self.persist_close(&s.info.session_key);
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
        if let Some(s) = self.registry.remove(&key) {
            if let Some(t) = s.current_table() {
                t.table.canceller().cancel(reason);
            }
            self.persist_close(&s.info.session_key);
        }
        // Commands the run moved to the background end with it too.
        if let Some(registry) = processes {
            let killed = registry.kill_owner(&key);
            if killed > 0 {
                tracing::info!(session = %key, killed, "cron run ended: its background commands were killed");
            }
        }
    }

    /// A sub-agent's run ended badly (cancelled, timed out, its runner
    /// lost): the session's calls in flight are cancelled, the commands it
    /// started (background ones too) are killed, and it closes (kept as
    /// history). Returns whether it was open.
    pub(crate) fn stop_session(
        &self,
        key: &str,
        reason: &str,
        processes: Option<&talon_tools::ProcessRegistry>,
    ) -> bool {
        let was_open = match self.registry.remove(key) {
            Some(s) => {
                if let Some(t) = s.current_table() {
                    t.table.canceller().cancel(reason);
                }
                self.persist_close(&s.info.session_key);
                true
            }
            None => false,
        };
        if let Some(registry) = processes {
            let killed = registry.kill_owner(key);
            if killed > 0 {
                tracing::info!(session = %key, killed, "session stopped: its commands were killed");
            }
        }
        was_open
    }

    /// A run handed to a session it does not own (a `sessions_send`) was
    /// cancelled: the session's calls in flight are cancelled and the
    /// commands it started (background ones too) are killed, but it stays
    /// open (its next call gets a fresh table). Returns whether it was open.
    pub(crate) fn interrupt_session(
        &self,
        key: &str,
        reason: &str,
        processes: Option<&talon_tools::ProcessRegistry>,
    ) -> bool {
        let was_open = match self.registry.get(key) {
            Some(s) => {
                s.interrupt(reason);
                true
            }
            None => false,
        };
        if let Some(registry) = processes {
            let killed = registry.kill_owner(key);
            if killed > 0 {
                tracing::info!(session = %key, killed, "run cancelled: the session's commands were killed");
            }
        }
        was_open
    }

    /// Close a session whose work is done (`cleanup: "delete"`), kept as
    /// history.
    pub(crate) fn close_quietly(&self, key: &str) {
        if let Some(s) = self.registry.remove(key) {
            self.persist_close(&s.info.session_key);
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
        params: SessionParams,
        caller: Option<&crate::auth::Identity>,
    ) -> Result<Arc<Session>, RpcError> {
        self.open_inner(g, params, caller, None)
    }

    /// [`Self::open`], or reopen a stored session (`restored`: it keeps
    /// its creation time and is not written again, and its `senderIsOwner`
    /// is the one the gateway decided when it was created).
    fn open_inner(
        &self,
        g: &Generation,
        mut params: SessionParams,
        caller: Option<&crate::auth::Identity>,
        restored: Option<(&SessionRecord, Option<&crate::auth::Identity>)>,
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
        let mut session = match &cron_run {
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
        if let Some((r, opener)) = restored {
            session.info.created_at_ms = r.created_at_ms;
            // The token that opened it is still who opened it: hooks and
            // approvals keep seeing that account after a restart.
            if let Some(o) = opener {
                session.set_requester(crate::identity::requester(o, &session.info.params));
            }
        }
        let (opened, created) = self
            .registry
            .insert(session, g.section.limits.max_sessions)?;
        if created
            && restored.is_none()
            && let Err(e) = self.persist_open(&opened)
        {
            self.registry.remove(&opened.info.session_key);
            return Err(e);
        }
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
        let default_agent = g.config.default_agent_id();
        let main = g.config.main_session();
        let main_agent = main_session_agent(key, &default_agent, &main);
        // An alias of a main session held here (`main`): no store lookup
        // of the alias, which is never a stored key, on every call.
        if let Some(agent) = &main_agent
            && let Some(s) = self
                .registry
                .get(&format!("agent:{agent}:{}", main.main_key()))
        {
            return Ok(s);
        }
        // Opened by another gateway of the fleet (or before a restart).
        if let Some(s) = self.open_from_store(g, key) {
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
        let Some(agent) = main_agent else {
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
