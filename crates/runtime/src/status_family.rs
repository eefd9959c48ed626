//! The built-in family of this build: `session_status`.

use std::sync::Arc;

use talon_tool_catalog::{Tool, ToolError, ToolSpec};
use talon_tools::{SessionSnapshot, SessionStatusTool, StatusSource};

use crate::family::ToolFamily;
use crate::run::RunSpec;

/// `session_status`, reporting the run it was built for (and, with a
/// [`StatusSource`], what the host knows about the session).
#[derive(Default, Clone)]
pub struct StatusFamily {
    source: Option<Arc<dyn StatusSource>>,
}

impl std::fmt::Debug for StatusFamily {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StatusFamily")
            .field("source", &self.source.is_some())
            .finish()
    }
}

impl StatusFamily {
    /// The family whose `session_status` adds `source`'s fields.
    pub fn with_source(source: Arc<dyn StatusSource>) -> Self {
        StatusFamily {
            source: Some(source),
        }
    }
}

/// The id of [`StatusFamily`].
pub const STATUS_FAMILY_ID: &str = "status";

impl ToolFamily for StatusFamily {
    fn id(&self) -> &str {
        STATUS_FAMILY_ID
    }

    fn specs(&self, _run: &RunSpec) -> Vec<ToolSpec> {
        ToolSpec::core("session_status").into_iter().collect()
    }

    fn construct(&self, name: &str, run: &RunSpec) -> Result<Arc<dyn Tool>, ToolError> {
        if name != "session_status" {
            return Err(ToolError::execution(format!(
                "the status family has no tool `{name}`"
            )));
        }
        let ctx = &run.context;
        let trigger = serde_json::to_value(ctx.trigger)
            .ok()
            .and_then(|v| v.as_str().map(str::to_owned))
            .unwrap_or_default();
        let tool = SessionStatusTool::new(SessionSnapshot {
            agent_id: ctx.agent_id.clone(),
            session_key: ctx.session_key.clone(),
            run_id: run.run_id.clone(),
            provider: ctx.model_provider.clone(),
            model: ctx.model.clone(),
            trigger,
            sandboxed: ctx.sandboxed,
            tools: run.effective_tools.clone(),
        });
        Ok(Arc::new(match &self.source {
            Some(s) => tool.with_source(Arc::clone(s)),
            None => tool,
        }))
    }
}
