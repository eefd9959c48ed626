//! The tools the gateway itself provides: `agents_list`, `sessions_list`,
//! `sessions_history` and `sessions_search` (sessions and messages from the session store,
//! tool calls from the call journal), each session filtered by the one
//! visibility rule (`talon_sessions::VisibilityPolicy`); and the
//! multi-agent tools (`sessions_spawn`, `sessions_send`, `sessions_yield`,
//! `subagents`, `spawn_task`, `dismiss_task`, in [`crate::subagents`]).
//! `session_status` comes with every runtime.

use std::collections::HashSet;
use std::sync::Arc;

use serde_json::{Map, Value, json};
use talon_config::TalonConfig;
use talon_runtime::{RunSpec, ToolFamily};
use talon_sessions::{
    ListQuery, SessionKind, SessionStore, Target, Viewer, channel_of, display_key,
};
use talon_tool_catalog::{
    CancellationToken, Tool, ToolCall, ToolContext, ToolError, ToolResult, ToolSpec, json_result,
};

use crate::gateway::{Gateway, Link};

/// The id of the gateway's own tool family.
pub(crate) const GATEWAY_TOOLS_FAMILY_ID: &str = "gateway-sessions";

/// The tools this family offers: the runtime's one list of them.
const NAMES: &[&str] = talon_runtime::GATEWAY_CORE_TOOLS;

/// Most records `sessions_history` returns.
const MAX_HISTORY: usize = 200;

pub(crate) struct GatewayToolsFamily {
    link: Link,
    config: Arc<TalonConfig>,
}

impl GatewayToolsFamily {
    pub(crate) fn new(link: Link, config: Arc<TalonConfig>) -> Self {
        GatewayToolsFamily { link, config }
    }
}

impl ToolFamily for GatewayToolsFamily {
    fn id(&self) -> &str {
        GATEWAY_TOOLS_FAMILY_ID
    }

    fn specs(&self, _run: &RunSpec) -> Vec<ToolSpec> {
        NAMES.iter().filter_map(|n| ToolSpec::core(n)).collect()
    }

    fn construct(&self, name: &str, _run: &RunSpec) -> Result<Arc<dyn Tool>, ToolError> {
        let spec = ToolSpec::core(name)
            .filter(|_| NAMES.contains(&name))
            .ok_or_else(|| {
                ToolError::execution(format!("the gateway provides no tool `{name}`"))
            })?;
        Ok(Arc::new(GatewaySessionTool {
            spec,
            link: Arc::clone(&self.link),
            config: Arc::clone(&self.config),
        }))
    }
}

struct GatewaySessionTool {
    spec: ToolSpec,
    link: Link,
    config: Arc<TalonConfig>,
}

impl GatewaySessionTool {
    fn gateway(&self) -> Result<Gateway, ToolError> {
        self.link
            .get()
            .and_then(std::sync::Weak::upgrade)
            .map(|inner| Gateway { inner })
            .ok_or_else(|| ToolError::execution("the gateway is not running"))
    }
}

fn store(gw: &Gateway) -> Result<&SessionStore, ToolError> {
    gw.inner
        .sessions
        .store()
        .ok_or_else(|| ToolError::unavailable("this gateway keeps no session store"))
}

fn store_error(e: talon_sessions::StoreError) -> ToolError {
    let base = if e.is_unavailable() {
        ToolError::new(
            talon_tool_catalog::ToolErrorCode::Unavailable,
            format!("the session store: {e}"),
        )
    } else {
        ToolError::execution(format!("the session store: {e}"))
    };
    base.with_detail("errorCode", e.code())
}

fn viewer(ctx: &ToolContext) -> Viewer<'_> {
    Viewer {
        session_key: &ctx.session_key,
        agent_id: &ctx.agent_id,
        sandboxed: ctx.sandboxed,
    }
}

/// The sessions `key` spawned, at any depth.
fn viewer_tree(store: &SessionStore, key: &str) -> Result<HashSet<String>, ToolError> {
    Ok(store
        .descendants(key)
        .map_err(store_error)?
        .into_iter()
        .collect())
}

fn session_row(r: &talon_sessions::SessionRecord, kind: SessionKind) -> Value {
    let channel = channel_of(
        kind,
        &r.key,
        r.params.get("channel").and_then(Value::as_str),
    );
    json!({
        "key": r.key,
        "displayKey": display_key(&r.key),
        "kind": kind,
        "channel": channel,
        "agentId": r.agent_id,
        "label": r.label,
        "sessionId": r.key,
        "status": r.status,
        "parentSessionKey": r.parent_key,
        "spawnDepth": r.spawn_depth,
        "createdAt": r.created_at_ms,
        "updatedAt": r.updated_at_ms,
        "model": r.params.get("model"),
    })
}

/// Up to [`SNIPPET_CHARS`] characters of `text` around the first word of
/// `query` it holds (ASCII case-insensitive), with `…` where cut.
fn snippet(text: &str, query: &str) -> String {
    let lower = text.to_ascii_lowercase();
    let at = query
        .split_whitespace()
        .find_map(|w| lower.find(&w.to_ascii_lowercase()))
        .unwrap_or(0);
    let chars_before = text.get(..at).map_or(0, |t| t.chars().count());
    let start = chars_before.saturating_sub(SNIPPET_CHARS / 3);
    let total = text.chars().count();
    let body: String = text.chars().skip(start).take(SNIPPET_CHARS).collect();
    let mut out = String::new();
    if start > 0 {
        out.push('…');
    }
    out.push_str(&body);
    if start + SNIPPET_CHARS < total {
        out.push('…');
    }
    out
}

/// How long a search hit's snippet is, in characters.
const SNIPPET_CHARS: usize = 160;

/// `agents_list`: the agents the calling agent may target, each saying
/// how: `spawn` (itself, or listed in its `subagents.allowAgents`) and
/// `send` (itself, or both agents in `tools.agentToAgent`).
fn agents_list(config: &TalonConfig, requester: &str) -> Value {
    let default = config.default_agent_id();
    let mut ids = config.agent_ids();
    if ids.is_empty() {
        ids.push(default.clone());
    }
    let allow = config.subagent_allow_agents(requester);
    let allow_any = allow.iter().any(|a| a == "*");
    let a2a = config.session_visibility().agent_to_agent;
    let agents: Vec<Value> = ids
        .iter()
        .filter_map(|id| {
            let own = id.eq_ignore_ascii_case(requester);
            let spawn = own || allow_any || allow.contains(id);
            let send = own || a2a.check(requester, id).is_ok();
            (spawn || send).then(|| {
                let name = config.agent(id).and_then(|a| a.name);
                json!({
                    "id": id,
                    "name": name,
                    "configured": true,
                    "default": *id == default,
                    "spawn": spawn,
                    "send": send,
                })
            })
        })
        .collect();
    json!({"requester": requester, "allowAny": allow_any, "agents": agents})
}

fn string<'a>(params: &'a Map<String, Value>, key: &str) -> Option<&'a str> {
    params
        .get(key)
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|s| !s.is_empty())
}

fn positive(params: &Map<String, Value>, key: &str) -> Result<Option<u64>, ToolError> {
    match params.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => v
            .as_u64()
            .filter(|n| *n >= 1)
            .map(Some)
            .ok_or_else(|| ToolError::input(key, format!("{key} must be a positive integer"))),
    }
}

/// `messageLimit`: 0 (the default) for none, at most 20.
fn message_limit(params: &Map<String, Value>) -> Result<usize, ToolError> {
    match params.get("messageLimit") {
        None | Some(Value::Null) => Ok(0),
        Some(v) => v
            .as_u64()
            .map(|n| usize::try_from(n.min(20)).unwrap_or(20))
            .ok_or_else(|| {
                ToolError::input(
                    "messageLimit",
                    "messageLimit must be a non-negative integer",
                )
            }),
    }
}

/// `kinds`: the session kinds to list (all when absent).
fn kinds(params: &Map<String, Value>) -> Result<Option<Vec<SessionKind>>, ToolError> {
    let Some(v) = params.get("kinds").filter(|v| !v.is_null()) else {
        return Ok(None);
    };
    let bad = || {
        ToolError::input(
            "kinds",
            "kinds must be a list of main, group, cron, hook, node, other",
        )
    };
    let list = v.as_array().ok_or_else(bad)?;
    list.iter()
        .map(|k| k.as_str().and_then(SessionKind::parse).ok_or_else(bad))
        .collect::<Result<Vec<_>, _>>()
        .map(Some)
}

fn limit(params: &Map<String, Value>, default: usize) -> Result<usize, ToolError> {
    match params.get("limit") {
        None | Some(Value::Null) => Ok(default),
        Some(v) => v
            .as_u64()
            .filter(|n| *n >= 1)
            .map(|n| usize::try_from(n).unwrap_or(usize::MAX).min(MAX_HISTORY))
            .ok_or_else(|| ToolError::input("limit", "limit must be a positive integer")),
    }
}

#[async_trait::async_trait]
impl Tool for GatewaySessionTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    async fn execute(
        &self,
        call: &ToolCall,
        ctx: &ToolContext,
        abort: &CancellationToken,
    ) -> Result<ToolResult, ToolError> {
        match self.spec.name.as_str() {
            "agents_list" => Ok(json_result(agents_list(&self.config, &ctx.agent_id))),
            "sessions_spawn" => {
                let gw = self.gateway()?;
                crate::subagents::spawn(&gw, ctx, &call.params)
                    .await
                    .map(json_result)
            }
            "sessions_send" => {
                let gw = self.gateway()?;
                crate::subagents::send(&gw, ctx, &call.params, abort)
                    .await
                    .map(json_result)
            }
            "subagents" => {
                let gw = self.gateway()?;
                crate::subagents::subagents(&gw, ctx, &call.params).map(json_result)
            }
            "spawn_task" => {
                let gw = self.gateway()?;
                crate::subagents::spawn_task(&gw, ctx, &call.params).map(json_result)
            }
            "dismiss_task" => {
                let gw = self.gateway()?;
                crate::subagents::dismiss_task(&gw, ctx, &call.params).map(json_result)
            }
            "sessions_yield" => {
                let gw = self.gateway()?;
                Ok(json_result(crate::subagents::yield_turn(
                    &gw,
                    ctx,
                    &call.params,
                )))
            }
            "sessions_list" => {
                let gw = self.gateway()?;
                let store = store(&gw)?;
                let max = limit(&call.params, 50)?;
                let kinds = kinds(&call.params)?;
                let messages = message_limit(&call.params)?;
                let active = positive(&call.params, "activeMinutes")?;
                let agent_filter = string(&call.params, "agentId");
                let label_filter = string(&call.params, "label");
                let search = string(&call.params, "search").map(str::to_lowercase);
                let updated_since_ms =
                    active.map(|m| crate::clock::now_ms().saturating_sub(m.saturating_mul(60_000)));
                let records = store
                    .list(&ListQuery {
                        agent_id: agent_filter.map(str::to_lowercase),
                        updated_since_ms,
                        include_closed: true,
                        limit: 0,
                    })
                    .map_err(store_error)?;
                let tree = viewer_tree(store, &ctx.session_key)?;
                let policy = self.config.session_visibility();
                let main = self.config.main_session();
                let viewer = viewer(ctx);
                let mut rows = Vec::new();
                for r in records {
                    if rows.len() >= max {
                        break;
                    }
                    let target = Target {
                        session_key: &r.key,
                        agent_id: &r.agent_id,
                        in_viewer_tree: tree.contains(&r.key),
                    };
                    if policy.check(viewer, target).is_err() {
                        continue;
                    }
                    let kind = SessionKind::of(&main, &r.agent_id, &r.key);
                    if kinds.as_ref().is_some_and(|k| !k.contains(&kind)) {
                        continue;
                    }
                    if label_filter.is_some() && r.label.as_deref() != label_filter {
                        continue;
                    }
                    if let Some(q) = &search {
                        let hit = r.key.to_lowercase().contains(q)
                            || r.label
                                .as_deref()
                                .is_some_and(|l| l.to_lowercase().contains(q));
                        if !hit {
                            continue;
                        }
                    }
                    let mut row = session_row(&r, kind);
                    if messages > 0 {
                        let recent = store
                            .messages(&r.key, messages, None)
                            .map_err(store_error)?;
                        row["messages"] = json!(recent);
                    }
                    rows.push(row);
                }
                Ok(json_result(json!({"count": rows.len(), "sessions": rows})))
            }
            "sessions_history" => {
                let gw = self.gateway()?;
                let store = store(&gw)?;
                let max = limit(&call.params, 20)?;
                let include_tools = match call.params.get("includeTools") {
                    None | Some(Value::Null) => true,
                    Some(Value::Bool(b)) => *b,
                    Some(_) => {
                        return Err(ToolError::input(
                            "includeTools",
                            "includeTools must be true or false",
                        ));
                    }
                };
                let named = string(&call.params, "sessionKey").unwrap_or(&ctx.session_key);
                let g = gw.generation();
                let target = gw.inner.sessions.journal_key(&g, named);
                let record = store.get(&target).map_err(store_error)?;
                if target != ctx.session_key {
                    // An unknown key and an invisible one answer alike, so
                    // the refusal does not reveal which sessions exist.
                    let visible = match &record {
                        Some(r) => {
                            let t = Target {
                                session_key: &r.key,
                                agent_id: &r.agent_id,
                                in_viewer_tree: store
                                    .is_descendant(&ctx.session_key, &r.key)
                                    .map_err(store_error)?,
                            };
                            self.config.session_visibility().check(viewer(ctx), t)
                        }
                        None => Err(talon_sessions::Refusal::NotVisible {
                            target: target.clone(),
                            visibility: self.config.session_visibility().effective(ctx.sandboxed).0,
                            clamped: false,
                        }),
                    };
                    if let Err(refusal) = visible {
                        return Err(ToolError::unauthorized(refusal.to_string())
                            .with_detail("errorCode", refusal.code())
                            .with_param("sessionKey"));
                    }
                }
                let messages = store.messages(&target, max, None).map_err(store_error)?;
                let mut out = json!({"sessionKey": target, "messages": messages});
                if include_tools {
                    let records = gw
                        .inner
                        .calls
                        .journal
                        .history(&target, max)
                        .map_err(|e| ToolError::execution(format!("the call journal: {e}")))?;
                    out["calls"] = json!(records);
                }
                Ok(json_result(out))
            }
            "sessions_search" => {
                let gw = self.gateway()?;
                let store = store(&gw)?;
                let query = string(&call.params, "query").ok_or_else(|| {
                    ToolError::input("query", "query must name at least one word to look for")
                })?;
                let max = match positive(&call.params, "limit")? {
                    None => 10,
                    Some(n) => usize::try_from(n.min(25)).unwrap_or(25),
                };
                let policy = self.config.session_visibility();
                let viewer = viewer(ctx);
                // The candidate sessions, read once (no lookup per key).
                let candidates: Vec<talon_sessions::SessionRecord> =
                    match string(&call.params, "sessionKey") {
                        Some(named) => {
                            let g = gw.generation();
                            let key = gw.inner.sessions.journal_key(&g, named);
                            store.get(&key).map_err(store_error)?.into_iter().collect()
                        }
                        None => store
                            .list(&ListQuery {
                                include_closed: true,
                                ..ListQuery::default()
                            })
                            .map_err(store_error)?,
                    };
                let tree = viewer_tree(store, &ctx.session_key)?;
                let visible: Vec<String> = candidates
                    .into_iter()
                    .filter(|r| {
                        let t = Target {
                            session_key: &r.key,
                            agent_id: &r.agent_id,
                            in_viewer_tree: tree.contains(&r.key),
                        };
                        policy.check(viewer, t).is_ok()
                    })
                    .map(|r| r.key)
                    .collect();
                let hits: Vec<Value> = store
                    .search_messages(&visible, query, max)
                    .map_err(store_error)?
                    .into_iter()
                    .map(|m| {
                        json!({
                            "sessionKey": m.session_key,
                            "seq": m.seq,
                            "role": m.role,
                            "source": m.source,
                            "at": m.at_ms,
                            "snippet": snippet(&m.text, query),
                        })
                    })
                    .collect();
                Ok(json_result(
                    json!({"query": query, "count": hits.len(), "hits": hits}),
                ))
            }
            other => Err(ToolError::execution(format!("no gateway tool `{other}`"))),
        }
    }
}

/// What the gateway adds to `session_status`: the session's place in the
/// spawn tree and its label (from the session store), where it came from
/// (channel, the opening token's account), and its tasks on the ledger
/// (OpenClaw's task line and route details).
pub(crate) struct GatewayStatus {
    link: Link,
}

impl GatewayStatus {
    pub(crate) fn new(link: Link) -> Self {
        GatewayStatus { link }
    }
}

impl talon_runtime::StatusSource for GatewayStatus {
    fn status(&self, session_key: &str) -> Map<String, Value> {
        let mut out = Map::new();
        let Some(gw) = self
            .link
            .get()
            .and_then(std::sync::Weak::upgrade)
            .map(|inner| Gateway { inner })
        else {
            return out;
        };
        let g = gw.generation();
        if let Some(store) = gw.inner.sessions.store()
            && let Ok(Some(r)) = store.get(session_key)
        {
            let kind = SessionKind::of(&g.config.main_session(), &r.agent_id, &r.key);
            out.insert("kind".into(), json!(kind));
            out.insert("parentSessionKey".into(), json!(r.parent_key));
            out.insert("spawnDepth".into(), json!(r.spawn_depth));
            out.insert("label".into(), json!(r.label));
            if r.parent_key.is_some() {
                let leaf = r.params.get("leaf").and_then(Value::as_bool) == Some(true);
                out.insert(
                    "subagentRole".into(),
                    json!(if leaf { "leaf" } else { "orchestrator" }),
                );
            }
            let channel = channel_of(
                kind,
                &r.key,
                r.params.get("channel").and_then(Value::as_str),
            );
            let mut origin = Map::new();
            origin.insert("provider".into(), json!(channel));
            if let Some(a) = r.params.get("openerAccountId").and_then(Value::as_str) {
                origin.insert("accountId".into(), json!(a));
            }
            out.insert("origin".into(), Value::Object(origin));
        }
        if let Some(ledger) = gw.inner.tasks.ledger.as_ref()
            && let Ok(tasks) = ledger.list(&talon_tasks::TaskFilter {
                owner_key: Some(session_key.to_owned()),
                limit: 50,
                ..talon_tasks::TaskFilter::default()
            })
        {
            let active = tasks.iter().filter(|t| !t.status.is_terminal()).count();
            let failures = tasks.iter().filter(|t| t.status.is_failure()).count();
            let latest = tasks.first().map(|t| {
                json!({
                    "taskId": t.task_id,
                    "runtime": t.runtime.as_str(),
                    "status": t.status.as_str(),
                    "label": t.label,
                    "childSessionKey": t.child_session_key,
                })
            });
            out.insert(
                "tasks".into(),
                json!({"active": active, "recentFailures": failures, "latest": latest}),
            );
        }
        out
    }
}
