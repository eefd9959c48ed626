//! The tools the gateway itself provides: `agents_list`, `sessions_list`
//! and `sessions_history` (from the call journal). `session_status` comes
//! with every runtime.

use std::sync::Arc;

use serde_json::{Map, Value, json};
use talon_config::TalonConfig;
use talon_runtime::{RunSpec, ToolFamily};
use talon_tool_catalog::{
    CancellationToken, Tool, ToolCall, ToolContext, ToolError, ToolResult, ToolSpec, json_result,
};

use crate::gateway::{Gateway, Link};

/// The id of the gateway's own tool family.
pub(crate) const GATEWAY_TOOLS_FAMILY_ID: &str = "gateway-sessions";

const NAMES: [&str; 3] = ["agents_list", "sessions_list", "sessions_history"];

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
        _abort: &CancellationToken,
    ) -> Result<ToolResult, ToolError> {
        match self.spec.name.as_str() {
            "agents_list" => {
                let default = self.config.default_agent_id();
                let mut ids = self.config.agent_ids();
                if ids.is_empty() {
                    ids.push(default.clone());
                }
                let agents: Vec<Value> = ids
                    .iter()
                    .map(|id| json!({"id": id, "default": *id == default}))
                    .collect();
                Ok(json_result(json!({"agents": agents})))
            }
            "sessions_list" => {
                let gw = self.gateway()?;
                let max = limit(&call.params, 50)?;
                let agent_filter = call.params.get("agentId").and_then(Value::as_str);
                let sessions: Vec<Value> = gw
                    .inner
                    .sessions
                    .registry
                    .list()
                    .into_iter()
                    .filter(|s| s.info.agent_id == ctx.agent_id)
                    .filter(|s| agent_filter.is_none_or(|a| a == s.info.agent_id))
                    .take(max)
                    .map(|s| {
                        json!({
                            "sessionKey": s.info.session_key,
                            "agentId": s.info.agent_id,
                            "createdAtMs": s.info.created_at_ms,
                            "parentSessionKey": s.info.params.parent_session_key,
                        })
                    })
                    .collect();
                Ok(json_result(json!({"sessions": sessions})))
            }
            "sessions_history" => {
                let gw = self.gateway()?;
                let max = limit(&call.params, 20)?;
                let target = call
                    .params
                    .get("sessionKey")
                    .and_then(Value::as_str)
                    .map(str::trim)
                    .filter(|s| !s.is_empty())
                    .unwrap_or(&ctx.session_key)
                    .to_owned();
                if target != ctx.session_key {
                    // Visible: this session and the sessions it spawned.
                    let child = gw.inner.sessions.registry.get(&target).is_some_and(|s| {
                        s.info.params.parent_session_key.as_deref()
                            == Some(ctx.session_key.as_str())
                    });
                    if !child {
                        return Err(ToolError::unauthorized(format!(
                            "session `{target}` is not visible from this session (only this session and the sessions it spawned are)"
                        )));
                    }
                }
                let records = gw
                    .inner
                    .calls
                    .journal
                    .history(&target, max)
                    .map_err(|e| ToolError::execution(format!("the call journal: {e}")))?;
                Ok(json_result(json!({"sessionKey": target, "calls": records})))
            }
            other => Err(ToolError::execution(format!("no gateway tool `{other}`"))),
        }
    }
}
