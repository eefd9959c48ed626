//! Trigger-based narrowing: what a tool may still do in runs started by a
//! memory flush or a cron job. Checked after the gate allowed the call and
//! before the tool runs; a refusal is a `trigger-scope` block.

use serde_json::{Map, Value};
use talon_hooks::{BlockedCall, DeniedReason};

/// The actions a cron-triggered run may use on its own job.
pub const CRON_SELF_ACTIONS: &[&str] = &["get", "runs", "remove"];

/// The `cron` actions a cron-triggered run may call without a job id, as in
/// OpenClaw: the cron tool filters their results to the run's own job.
pub const CRON_SCOPED_READS: &[&str] = &["status", "list"];

/// The parameters a memory-flush `write` may carry.
const MEMORY_WRITE_KEYS: &[&str] = &["path", "content", "append"];

/// How one tool of the table is narrowed in this run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Narrowing {
    /// `write` in a `trigger: memory` run: only appending to this file
    /// (workspace-relative); `None` means the run may not write.
    MemoryAppend(Option<String>),
    /// `cron` in a `trigger: cron` run: only this job (`None`: nothing).
    CronSelf(Option<String>),
}

fn block(source: &str, reason: String) -> Box<BlockedCall> {
    Box::new(BlockedCall::new(DeniedReason::TriggerScope, reason).source(source))
}

/// `a/./b//c` → `a/b/c`. No `..` handling: a path with `..` never equals
/// the configured one.
fn collapse(path: &str) -> String {
    let parts: Vec<&str> = path
        .split('/')
        .filter(|p| !p.is_empty() && *p != ".")
        .collect();
    let joined = parts.join("/");
    if path.starts_with('/') {
        format!("/{joined}")
    } else {
        joined
    }
}

impl Narrowing {
    /// The parameters the tool may run with, or the block.
    /// `tool_appends` says whether the tool declares an `append` parameter.
    pub(crate) fn apply(
        &self,
        params: Map<String, Value>,
        tool_appends: bool,
    ) -> Result<Map<String, Value>, Box<BlockedCall>> {
        match self {
            Narrowing::MemoryAppend(allowed) => {
                memory_append(allowed.as_deref(), params, tool_appends)
            }
            Narrowing::CronSelf(job) => cron_self(job.as_deref(), params),
        }
    }
}

fn memory_append(
    allowed: Option<&str>,
    params: Map<String, Value>,
    tool_appends: bool,
) -> Result<Map<String, Value>, Box<BlockedCall>> {
    const SOURCE: &str = "trigger-memory";
    let Some(allowed) = allowed else {
        return Err(block(
            SOURCE,
            "this memory-flush run has no memory file configured, so it may not write".into(),
        ));
    };
    if let Some(extra) = params
        .keys()
        .find(|k| !MEMORY_WRITE_KEYS.contains(&k.as_str()))
    {
        return Err(block(
            SOURCE,
            format!("memory-flush writes take only path and content, not `{extra}`"),
        ));
    }
    // The raw value, untrimmed: the tool receives exactly this string.
    let requested = match params.get("path") {
        Some(Value::String(p)) => p.clone(),
        _ => {
            return Err(block(
                SOURCE,
                "memory-flush writes need a string `path`".into(),
            ));
        }
    };
    if requested.split('/').any(|p| p == "..") || collapse(&requested) != collapse(allowed) {
        return Err(block(
            SOURCE,
            format!("memory-flush runs may only append to `{allowed}`, not `{requested}`"),
        ));
    }
    // Refused, not turned into an append: a model that meant to replace
    // the file would otherwise add a second copy of what it kept.
    if params.get("append") != Some(&Value::Bool(true)) {
        return Err(block(
            SOURCE,
            format!(
                "memory-flush runs may only append: call write with `append: true` to add the content to the end of `{allowed}` (replacing it is refused)"
            ),
        ));
    }
    if !tool_appends {
        return Err(block(
            SOURCE,
            "the write tool of this run cannot append, so a memory-flush run may not write".into(),
        ));
    }
    Ok(params)
}

fn cron_self(
    job: Option<&str>,
    params: Map<String, Value>,
) -> Result<Map<String, Value>, Box<BlockedCall>> {
    const SOURCE: &str = "trigger-cron";
    let Some(own) = job else {
        return Err(block(
            SOURCE,
            "this cron-triggered run carries no job id, so the cron tool is unavailable".into(),
        ));
    };
    let action = params.get("action").and_then(Value::as_str).unwrap_or("");
    if CRON_SCOPED_READS.contains(&action) {
        return Ok(params);
    }
    if !CRON_SELF_ACTIONS.contains(&action) {
        return Err(block(
            SOURCE,
            format!(
                "a cron-triggered run may only {} its own job (and {} it), not `{action}`",
                CRON_SELF_ACTIONS.join(" / "),
                CRON_SCOPED_READS.join(" / ")
            ),
        ));
    }
    // Every spelling a cron tool might read must name this job, whatever
    // its type: a tool reading `id` or a number must not see another job.
    let mut named = 0;
    for key in ["jobId", "job_id", "id"] {
        if let Some(v) = params.get(key) {
            named += 1;
            if v.as_str() != Some(own) {
                return Err(block(
                    SOURCE,
                    format!(
                        "a cron-triggered run may only act on its own job `{own}`, not {key}={v}"
                    ),
                ));
            }
        }
    }
    if named == 0 {
        return Err(block(
            SOURCE,
            format!("jobId required (this run's own job `{own}`)"),
        ));
    }
    Ok(params)
}

#[cfg(test)]
#[path = "narrowing_tests.rs"]
mod tests;
