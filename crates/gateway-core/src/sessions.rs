//! Sessions: what a session binds (agent, key, provider/model, sender,
//! group, trigger, parent) and its cached tool table.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

use talon_gateway_protocol::{SessionInfo, SessionParams, SessionTrigger};
use talon_hooks::Requester;
use talon_runtime::{RunSpec, Runtime, ToolTable};
use talon_tool_catalog::normalize_tool_name;
use talon_tool_policy::{RunContext, SubagentKind, Trigger};

use crate::rpc::RpcError;

/// A table built for one config generation.
#[derive(Debug)]
pub(crate) struct BuiltTable {
    pub(crate) generation: u64,
    /// The MCP manager's tool-list generation the table was built at.
    pub(crate) mcp_generation: u64,
    pub(crate) table: Arc<ToolTable>,
}

/// One session.
#[derive(Debug)]
pub(crate) struct Session {
    pub(crate) info: SessionInfo,
    spec: RunSpec,
    table: RwLock<Option<Arc<BuiltTable>>>,
    /// The config generation for which the agent's MCP servers all started.
    mcp_ready: AtomicU64,
    /// After a failed start: the generation and when to try again.
    mcp_retry: Mutex<Option<(u64, Instant)>>,
    /// When this gateway built it (before it was recorded in the store).
    pub(crate) opened: Instant,
}

/// How long a session waits before trying again to start an MCP server
/// that failed (so a broken server is not respawned on every call).
const MCP_RETRY: Duration = Duration::from_secs(10);
/// The most role ids `sessions.create` takes for one sender.
const MAX_ROLE_IDS: usize = 64;

impl Session {
    /// The table for `generation`, assembled on first use, after every
    /// reload and whenever an MCP server's tool list changed (calls already
    /// running keep the table they started with). The agent's MCP servers
    /// are started first, so their tools are in the table.
    pub(crate) async fn table(&self, generation: u64, runtime: &Runtime) -> Arc<BuiltTable> {
        self.ensure_mcp(generation, runtime).await;
        self.table_now(generation, runtime)
    }

    /// The table as [`Session::table`] builds it, without starting MCP
    /// servers first (their tools are included once started).
    pub(crate) fn table_now(&self, generation: u64, runtime: &Runtime) -> Arc<BuiltTable> {
        let mcp_generation = runtime.mcp_manager().generation();
        let fresh =
            |b: &BuiltTable| b.generation == generation && b.mcp_generation == mcp_generation;
        if let Ok(t) = self.table.read()
            && let Some(b) = t.as_ref()
            && fresh(b)
        {
            return Arc::clone(b);
        }
        let mut slot = match self.table.write() {
            Ok(s) => s,
            Err(p) => p.into_inner(),
        };
        if let Some(b) = slot.as_ref()
            && fresh(b)
        {
            return Arc::clone(b);
        }
        let built = Arc::new(BuiltTable {
            generation,
            mcp_generation,
            table: Arc::new(runtime.assemble(self.spec.clone())),
        });
        *slot = Some(Arc::clone(&built));
        built
    }

    /// Start the agent's MCP servers once per config generation (one atomic
    /// load when done). A server that fails to start is retried after
    /// [`MCP_RETRY`], not on every call; its tools are missing meanwhile
    /// and `mcp.status` says why.
    async fn ensure_mcp(&self, generation: u64, runtime: &Runtime) {
        if self.mcp_ready.load(Ordering::Acquire) == generation {
            return;
        }
        let now = Instant::now();
        {
            let retry = match self.mcp_retry.lock() {
                Ok(g) => g,
                Err(p) => p.into_inner(),
            };
            if let Some((g, at)) = *retry
                && g == generation
                && now < at
            {
                return;
            }
        }
        let manager = runtime.mcp_manager();
        let agent = &self.info.agent_id;
        if manager.has_servers(agent) {
            let failed: Vec<String> = manager
                .ensure_agent(agent)
                .await
                .into_iter()
                .filter(|r| r.error.is_some())
                .map(|r| r.server)
                .collect();
            if !failed.is_empty() {
                tracing::warn!(agent = %agent, servers = ?failed, "MCP servers failed to start; their tools are missing (see mcp.status)");
                let mut retry = match self.mcp_retry.lock() {
                    Ok(g) => g,
                    Err(p) => p.into_inner(),
                };
                *retry = Some((generation, now + MCP_RETRY));
                return;
            }
        }
        self.mcp_ready.store(generation, Ordering::Release);
    }

    /// Whether this is a cron run's session (its tools are its job's cap).
    pub(crate) fn is_cron_run(&self) -> bool {
        self.spec.cron_job_id.is_some()
    }

    /// Who opened the session (the requester its calls run with unless a
    /// caller's own is given).
    pub(crate) fn requester(&self) -> Option<&Requester> {
        self.spec.requester.as_ref()
    }

    /// Set who opened the session (a restored session's stored opener);
    /// only before the session is shared.
    pub(crate) fn set_requester(&mut self, requester: Requester) {
        self.spec.requester = Some(requester);
    }

    /// Cancel the calls in flight on the current table and drop it, so the
    /// session's next call gets a fresh table (its canceller is not
    /// cancelled); the session stays open.
    pub(crate) fn interrupt(&self, reason: &str) {
        let old = match self.table.write() {
            Ok(mut slot) => slot.take(),
            Err(p) => p.into_inner().take(),
        };
        if let Some(t) = old {
            t.table.canceller().cancel(reason);
        }
    }

    /// The current table, if one was built.
    pub(crate) fn current_table(&self) -> Option<Arc<BuiltTable>> {
        self.table.read().ok().and_then(|t| t.clone())
    }
}

/// Every open session.
#[derive(Debug, Default)]
pub(crate) struct SessionRegistry {
    map: RwLock<HashMap<String, Arc<Session>>>,
}

impl SessionRegistry {
    pub(crate) fn get(&self, key: &str) -> Option<Arc<Session>> {
        self.map.read().ok().and_then(|m| m.get(key).cloned())
    }

    pub(crate) fn len(&self) -> usize {
        self.map.read().map(|m| m.len()).unwrap_or(0)
    }

    pub(crate) fn list(&self) -> Vec<Arc<Session>> {
        let mut v: Vec<Arc<Session>> = self
            .map
            .read()
            .map(|m| m.values().cloned().collect())
            .unwrap_or_default();
        v.sort_by(|a, b| a.info.session_key.cmp(&b.info.session_key));
        v
    }

    pub(crate) fn remove(&self, key: &str) -> Option<Arc<Session>> {
        match self.map.write() {
            Ok(mut m) => m.remove(key),
            Err(p) => p.into_inner().remove(key),
        }
    }

    /// Insert, or return the existing session when it was created with
    /// the same parameters; `true` with a session inserted now.
    pub(crate) fn insert(
        &self,
        session: Session,
        max: usize,
    ) -> Result<(Arc<Session>, bool), RpcError> {
        let mut m = match self.map.write() {
            Ok(m) => m,
            Err(p) => p.into_inner(),
        };
        if let Some(existing) = m.get(&session.info.session_key) {
            if existing.info.params == session.info.params
                || session.info.params.session_key.is_none()
            {
                return Ok((Arc::clone(existing), false));
            }
            return Err(RpcError::params(format!(
                "session `{}` already exists with other parameters; close it first (sessions.close) or pick another sessionKey",
                session.info.session_key
            )));
        }
        if m.len() >= max {
            return Err(RpcError::new(
                crate::rpc::UNAVAILABLE,
                format!(
                    "the gateway holds its maximum of {max} sessions (gateway.limits.maxSessions); close some first"
                ),
            ));
        }
        let arc = Arc::new(session);
        m.insert(arc.info.session_key.clone(), Arc::clone(&arc));
        Ok((arc, true))
    }
}

/// The agent whose main session `key` names, by the one rule
/// ([`talon_config::MainSession`]): an alias of the default agent's
/// main session (`main`, empty, `session.mainKey`, `global` under the
/// global scope) names the default agent; `agent:<id>:main` or
/// `agent:<id>:<mainKey>` names `<id>`; `None` for anything else.
pub(crate) fn main_session_agent(
    key: &str,
    default_agent: &str,
    main: &talon_config::MainSession,
) -> Option<String> {
    let key = key.trim().to_lowercase();
    if main.is_main_session(default_agent, &key) {
        return Some(default_agent.to_owned());
    }
    let (agent, tail) = key.strip_prefix("agent:")?.split_once(':')?;
    (!agent.is_empty() && !tail.contains(':') && main.is_main_session(agent, &key))
        .then(|| agent.to_owned())
}

/// The policy's trigger for a wire trigger.
fn trigger(t: SessionTrigger) -> Trigger {
    match t {
        SessionTrigger::User => Trigger::User,
        SessionTrigger::Cron => Trigger::Cron,
        SessionTrigger::Heartbeat => Trigger::Heartbeat,
        SessionTrigger::Memory => Trigger::Memory,
    }
}

/// A key that names a group conversation
/// (`agent:<agent>:<channel>:group:<id>`) decides the session's channel and
/// group: absent ones are taken from it, and ones that name another
/// channel or group are refused, so a caller cannot pick a laxer group's
/// policy for that conversation (OpenClaw trusts a group id only when the
/// session key vouches for it).
fn held_to_key(mut params: SessionParams, key: &str) -> Result<SessionParams, RpcError> {
    let Some((channel, group)) = talon_sessions::group_conversation(key) else {
        return Ok(params);
    };
    let refuse = |param: &str, given: &str, want: &str| {
        RpcError::params(format!(
            "{param} `{given}` does not match the session key `{key}`, which names {param} `{want}`; omit {param} (it is taken from the key) or use a key for that conversation"
        ))
        .with_data(serde_json::json!({"param": param, "errorCode": "session.group_mismatch"}))
    };
    match params.channel.as_deref().map(str::trim) {
        None => params.channel = Some(channel.clone()),
        Some(c) if c.eq_ignore_ascii_case(&channel) => {}
        Some(c) => return Err(refuse("channel", c, &channel)),
    }
    match params.group.as_deref().map(str::trim) {
        None => params.group = Some(group),
        Some(g) if g == group => {}
        Some(g) => return Err(refuse("group", g, &group)),
    }
    Ok(params)
}

/// Build a session from its parameters. Whether it is sandboxed is the
/// runtime's decision (`runtime.run_sandbox`), never the gateway's.
pub(crate) fn build_session(
    params: SessionParams,
    default_agent: &str,
    runtime: &Runtime,
    parent: Option<(&Session, &[String])>,
    key_suffix: &str,
    caller: Option<&crate::auth::Identity>,
) -> Result<Session, RpcError> {
    let agent = params
        .agent_id
        .as_deref()
        .unwrap_or(default_agent)
        .trim()
        .to_lowercase();
    if agent.is_empty() || agent.len() > 128 || agent.chars().any(char::is_control) {
        return Err(RpcError::params(
            "agentId must be 1–128 printable characters",
        ));
    }
    if let Some(label) = &params.label
        && (label.trim().is_empty()
            || label.chars().count() > talon_sessions::MAX_LABEL_CHARS
            || label.chars().any(char::is_control))
    {
        return Err(RpcError::params(format!(
            "label must be 1–{} printable characters",
            talon_sessions::MAX_LABEL_CHARS
        ))
        .with_data(serde_json::json!({"param": "label"})));
    }
    if let Some(roles) = &params.role_ids
        && (roles.len() > MAX_ROLE_IDS
            || roles.iter().any(|r| {
                r.trim().is_empty() || r.chars().count() > 128 || r.chars().any(char::is_control)
            }))
    {
        return Err(RpcError::params(format!(
            "roleIds must hold at most {MAX_ROLE_IDS} role ids of 1–128 printable characters each"
        ))
        .with_data(serde_json::json!({"param": "roleIds"})));
    }
    let key = match params.session_key.as_deref().map(str::trim) {
        Some(k) if k.is_empty() || k.len() > 512 || k.chars().any(char::is_control) => {
            return Err(RpcError::params(
                "sessionKey must be 1–512 printable characters",
            ));
        }
        Some(k) => k.to_owned(),
        None => format!("agent:{agent}:gw:{key_suffix}"),
    };
    let params = held_to_key(params, &key)?;
    let mut ctx = RunContext::new(agent.clone());
    ctx.session_key.clone_from(&key);
    ctx.model_provider.clone_from(&params.provider);
    ctx.model.clone_from(&params.model);
    ctx.sender_id.clone_from(&params.sender);
    ctx.sender_is_owner = params.sender_is_owner;
    ctx.group_id.clone_from(&params.group);
    ctx.message_provider.clone_from(&params.channel);
    ctx.channel_account.clone_from(&params.account);
    ctx.sender_name.clone_from(&params.sender_name);
    ctx.sender_username.clone_from(&params.sender_username);
    ctx.sender_e164.clone_from(&params.sender_e164);
    ctx.trigger = params.trigger.map(trigger).unwrap_or_default();
    let mut parent_context = None;
    let sandboxed = match parent {
        Some((parent, parent_tools)) => {
            ctx.subagent = Some(if params.leaf.unwrap_or(false) {
                SubagentKind::Leaf
            } else {
                SubagentKind::Orchestrator
            });
            ctx.inherited = Some(parent_tools.to_vec());
            // Whatever key or agent the child names, its sandbox is at
            // most the parent's; the runtime decides and refuses.
            let decision = runtime
                .child_sandbox(&parent.spec.context, &ctx)
                .map_err(|e| {
                    RpcError::params(e.to_string()).with_data(serde_json::json!({
                        "errorCode": e.code(),
                        "param": "parentSessionKey",
                    }))
                })?;
            parent_context = Some(parent.spec.context.clone());
            decision.sandboxed
        }
        None => runtime.run_sandbox(&ctx).sandboxed,
    };
    let mut spec = RunSpec::new(ctx);
    spec.parent_context = parent_context;
    spec.session_id = Some(key.clone());
    spec.run_id = Some(format!("gw-{key_suffix}"));
    spec.requester = Some(match caller {
        Some(c) => crate::identity::requester(c, &params),
        None => Requester {
            channel: Some(
                params
                    .channel
                    .clone()
                    .unwrap_or_else(|| "gateway".to_owned()),
            ),
            sender_id: params.sender.clone(),
            sender_is_owner: params.sender_is_owner,
            role_ids: params.role_ids.clone(),
            ..Requester::default()
        },
    });
    Ok(Session {
        info: SessionInfo {
            session_key: key,
            agent_id: agent,
            params,
            sandboxed,
            created_at_ms: crate::clock::now_ms(),
            status: None,
        },
        spec,
        table: RwLock::new(None),
        mcp_ready: AtomicU64::new(0),
        mcp_retry: Mutex::new(None),
        opened: Instant::now(),
    })
}

/// A cron run in flight, bound by the gateway to the session key it
/// issued for the run (`agent:<agent>:cron:<job>:run:<run>`). The binding,
/// not anything the runner sends, decides the run's session: its agent,
/// `trigger: cron`, the job (for the `cron` tool's self-scope) and the
/// job's effective tools as the `inherited` cap.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CronRunBinding {
    pub(crate) run_id: String,
    pub(crate) job_id: String,
    pub(crate) agent_id: String,
    pub(crate) session_key: String,
    /// The job's effective tools (its allow list capped by its creator);
    /// `None` only for an operator's job (CLI), which has no cap.
    pub(crate) tools: Option<Vec<String>>,
}

/// Whether `key` has the shape of a cron run's session key. Such keys are
/// reserved: a session under one opens only while its run is in flight,
/// and then always with the run's cap.
pub(crate) fn is_cron_run_key(key: &str) -> bool {
    let key = key.trim().to_lowercase();
    key.strip_prefix("agent:")
        .and_then(|rest| rest.split_once(":cron:"))
        .is_some_and(|(_, tail)| tail.contains(":run:"))
}

/// Build the session of a cron run in flight. The runner may name the
/// run's key, its agent and `trigger: cron` (anything else is refused,
/// never silently replaced); the agent, trigger, job and tool cap come
/// from the binding. With a parent as well, the cap is the intersection
/// of both.
pub(crate) fn build_cron_run_session(
    mut params: SessionParams,
    binding: &CronRunBinding,
    default_agent: &str,
    runtime: &Runtime,
    parent: Option<(&Session, &[String])>,
    key_suffix: &str,
    caller: Option<&crate::auth::Identity>,
) -> Result<Session, RpcError> {
    if let Some(agent) = params.agent_id.as_deref()
        && !agent.trim().eq_ignore_ascii_case(&binding.agent_id)
    {
        return Err(RpcError::params(format!(
            "agentId: session `{}` belongs to cron run `{}` of agent `{}`, not `{agent}`",
            binding.session_key, binding.run_id, binding.agent_id
        ))
        .with_data(
            serde_json::json!({"param": "agentId", "errorCode": "session.cron_run_mismatch"}),
        ));
    }
    if let Some(t) = params.trigger
        && t != SessionTrigger::Cron
    {
        return Err(RpcError::params(format!(
            "trigger: session `{}` belongs to cron run `{}`, whose trigger is `cron`; omit trigger or pass \"cron\"",
            binding.session_key, binding.run_id
        ))
        .with_data(serde_json::json!({"param": "trigger", "errorCode": "session.cron_run_mismatch"})));
    }
    params.agent_id = Some(binding.agent_id.clone());
    params.trigger = Some(SessionTrigger::Cron);
    params.session_key = Some(binding.session_key.clone());
    let mut session = build_session(params, default_agent, runtime, parent, key_suffix, caller)?;
    if let Some(cap) = &binding.tools {
        let cap: Vec<String> = cap.iter().map(|t| normalize_tool_name(t)).collect();
        let inherited = match session.spec.context.inherited.take() {
            Some(parent) => parent
                .into_iter()
                .filter(|t| cap.contains(&normalize_tool_name(t)))
                .collect(),
            None => cap,
        };
        session.spec.context.inherited = Some(inherited);
    }
    session.spec.cron_job_id = Some(binding.job_id.clone());
    session.spec.run_id = Some(binding.run_id.clone());
    Ok(session)
}

#[cfg(test)]
#[path = "sessions_tests.rs"]
mod tests;
