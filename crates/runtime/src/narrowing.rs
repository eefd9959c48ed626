//! Trigger-based narrowing: tool wrappers that shrink what a tool may do
//! in runs started by a memory flush or a cron job.

use std::sync::Arc;

use serde_json::Value;
use talon_tool_catalog::params::{StringOpts, read_string};
use talon_tool_catalog::{
    AbortSignal, Tool, ToolCall, ToolContext, ToolError, ToolResult, ToolSpec,
};

/// `write` in a `trigger: memory` run: only the configured memory file,
/// and only appending (the call is passed on with `append: true`; the
/// write tool appends when it sees it).
pub(crate) struct MemoryAppendOnly {
    pub(crate) inner: Arc<dyn Tool>,
    pub(crate) path: Option<String>,
}

fn normalise_rel(path: &str) -> String {
    let trimmed = path.trim();
    let mut out: Vec<&str> = Vec::new();
    for part in trimmed.split('/') {
        match part {
            "" | "." => {}
            other => out.push(other),
        }
    }
    let joined = out.join("/");
    if trimmed.starts_with('/') {
        format!("/{joined}")
    } else {
        joined
    }
}

#[async_trait::async_trait]
impl Tool for MemoryAppendOnly {
    fn spec(&self) -> &ToolSpec {
        self.inner.spec()
    }

    async fn execute(
        &self,
        call: &ToolCall,
        ctx: &ToolContext,
        abort: &AbortSignal,
    ) -> Result<ToolResult, ToolError> {
        let Some(allowed) = &self.path else {
            return Err(ToolError::unauthorized(
                "this memory-flush run has no memory file configured, so it may not write",
            ));
        };
        let requested =
            read_string(&call.params, "path", StringOpts::required())?.unwrap_or_default();
        if normalise_rel(&requested) != normalise_rel(allowed) {
            return Err(ToolError::unauthorized(format!(
                "memory-flush runs may only append to `{allowed}`, not `{requested}`"
            )));
        }
        let mut narrowed = call.clone();
        narrowed.params.insert("append".into(), Value::Bool(true));
        self.inner.execute(&narrowed, ctx, abort).await
    }
}

/// The `cron` tool in a `trigger: cron` run: only `get`, `runs` and
/// `remove`, and only for the run's own job.
pub(crate) struct CronSelfScope {
    pub(crate) inner: Arc<dyn Tool>,
    pub(crate) job_id: Option<String>,
}

/// The actions a cron-triggered run may use on its own job.
pub const CRON_SELF_ACTIONS: &[&str] = &["get", "runs", "remove"];

#[async_trait::async_trait]
impl Tool for CronSelfScope {
    fn spec(&self) -> &ToolSpec {
        self.inner.spec()
    }

    async fn execute(
        &self,
        call: &ToolCall,
        ctx: &ToolContext,
        abort: &AbortSignal,
    ) -> Result<ToolResult, ToolError> {
        let action =
            read_string(&call.params, "action", StringOpts::required())?.unwrap_or_default();
        if !CRON_SELF_ACTIONS.contains(&action.as_str()) {
            return Err(ToolError::unauthorized(format!(
                "a cron-triggered run may only {} its own job, not `{action}`",
                CRON_SELF_ACTIONS.join(" / ")
            )));
        }
        let target = match read_string(&call.params, "jobId", StringOpts::default())? {
            Some(id) => Some(id),
            None => read_string(&call.params, "id", StringOpts::default())?,
        };
        match (&self.job_id, target) {
            (Some(own), Some(target)) if *own == target => {
                self.inner.execute(call, ctx, abort).await
            }
            (Some(own), Some(target)) => Err(ToolError::unauthorized(format!(
                "a cron-triggered run may only act on its own job `{own}`, not `{target}`"
            ))),
            (Some(_), None) => Err(ToolError::input(
                "jobId",
                "jobId required (this run's own job)",
            )),
            (None, _) => Err(ToolError::unauthorized(
                "this cron-triggered run carries no job id, so the cron tool is unavailable",
            )),
        }
    }
}
