//! `session_status`: what this run is.

use serde::Serialize;
use serde_json::Value;
use talon_tool_catalog::params::{StringOpts, read_string};
use talon_tool_catalog::{
    CancelExt, CancellationToken, Tool, ToolCall, ToolContext, ToolError, ToolResult, ToolSpec,
    json_result,
};

/// The facts `session_status` reports, captured when the run's tool table
/// is assembled.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionSnapshot {
    /// The agent.
    pub agent_id: String,
    /// The session key.
    pub session_key: String,
    /// The run id.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub run_id: Option<String>,
    /// The model provider.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub provider: Option<String>,
    /// The model.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Why the run started (`user`, `cron`, `heartbeat`, `memory`).
    pub trigger: String,
    /// Whether the run is sandboxed.
    pub sandboxed: bool,
    /// The tools the run has, in table order.
    pub tools: Vec<String>,
}

/// What a host knows about a session beyond its run (a gateway: the
/// session's parent, spawn depth, label, origin, its tasks). Its fields are
/// added to `session_status`'s answer; they never replace the run's own.
pub trait StatusSource: Send + Sync {
    /// The fields for `session_key`.
    fn status(&self, session_key: &str) -> serde_json::Map<String, Value>;
}

/// The `session_status` tool for one run.
#[derive(Clone)]
pub struct SessionStatusTool {
    spec: ToolSpec,
    snapshot: SessionSnapshot,
    source: Option<std::sync::Arc<dyn StatusSource>>,
}

impl std::fmt::Debug for SessionStatusTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SessionStatusTool")
            .field("snapshot", &self.snapshot)
            .field("source", &self.source.is_some())
            .finish()
    }
}

impl SessionStatusTool {
    /// The tool, reporting `snapshot`.
    pub fn new(snapshot: SessionSnapshot) -> Self {
        let spec = ToolSpec::core("session_status").unwrap_or_else(|| {
            ToolSpec::new(
                "session_status",
                talon_tool_catalog::ToolFamily::Core {
                    section: talon_tool_catalog::Section::Sessions,
                },
            )
        });
        SessionStatusTool {
            spec,
            snapshot,
            source: None,
        }
    }

    /// Builder: add the host's fields from `source` to every answer.
    pub fn with_source(mut self, source: std::sync::Arc<dyn StatusSource>) -> Self {
        self.source = Some(source);
        self
    }
}

/// One line per fact, OpenClaw's `statusText` in plain form.
fn status_text(map: &serde_json::Map<String, Value>) -> String {
    let mut lines = Vec::new();
    for (k, v) in map {
        let shown = match v {
            Value::String(s) => s.clone(),
            Value::Array(items) => format!("{} item(s)", items.len()),
            Value::Null => continue,
            other => other.to_string(),
        };
        lines.push(format!("{k}: {shown}"));
    }
    lines.join("\n")
}

#[async_trait::async_trait]
impl Tool for SessionStatusTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    async fn execute(
        &self,
        call: &ToolCall,
        _ctx: &ToolContext,
        abort: &CancellationToken,
    ) -> Result<ToolResult, ToolError> {
        abort.check()?;
        if let Some(key) = read_string(&call.params, "sessionKey", StringOpts::default())?
            && key != self.snapshot.session_key
        {
            return Err(ToolError::input(
                "sessionKey",
                format!(
                    "this host can only report the current session `{}`; omit sessionKey",
                    self.snapshot.session_key
                ),
            ));
        }
        if read_string(&call.params, "model", StringOpts::default())?.is_some() {
            return Err(ToolError::input(
                "model",
                "changing the session's model is not available through this host; omit model",
            ));
        }
        let payload = serde_json::to_value(&self.snapshot)
            .map_err(|e| ToolError::execution(format!("cannot encode the status: {e}")))?;
        let mut payload = payload;
        if let Value::Object(map) = &mut payload {
            if let Some(source) = &self.source {
                for (k, v) in source.status(&self.snapshot.session_key) {
                    map.entry(k).or_insert(v);
                }
            }
            let text = status_text(map);
            map.insert("status".into(), Value::String("ok".into()));
            map.insert("ok".into(), Value::Bool(true));
            map.insert("changedModel".into(), Value::Bool(false));
            map.insert("statusText".into(), Value::String(text));
        }
        Ok(json_result(payload))
    }
}
