//! The `process` tool: manage `exec`'s background sessions.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Map, Value, json};
use talon_tool_catalog::params::{
    Bounds, StringOpts, read_bool, read_non_negative_integer, read_positive_integer, read_string,
};
use talon_tool_catalog::{
    CancelExt, CancellationToken, ContentBlock, Section, Tool, ToolCall, ToolContext, ToolError,
    ToolFamily, ToolResult, ToolSpec,
};

use crate::exec::output::render_visible;
use crate::exec::tool::end_fields;
use crate::process::registry::ProcessRegistry;
use crate::process::session::{KillReason, Session};

/// The actions, in schema order.
const ACTIONS: [&str; 7] = ["list", "poll", "log", "write", "kill", "clear", "remove"];
/// `log` without offset and limit returns this many trailing lines.
const DEFAULT_LOG_LINES: usize = 200;
/// The longest `poll` wait.
const MAX_POLL_WAIT_MS: u64 = 30_000;
/// How long `kill` and `remove` wait for the process group to be reaped.
const KILL_WAIT: Duration = Duration::from_secs(5);
/// The largest `write` payload.
const MAX_WRITE_BYTES: usize = 1024 * 1024;

/// The `process` spec: what the model sees before the tool is constructed.
/// A flat object schema (no unions); only the actions and parameters this
/// implementation honours are listed.
pub fn process_spec() -> ToolSpec {
    let base = ToolSpec::core("process").unwrap_or_else(|| {
        ToolSpec::new(
            "process",
            ToolFamily::Core {
                section: Section::Runtime,
            },
        )
    });
    base.with_description(
        "Manage background exec sessions of this session: list, poll (new output and exit \
         status), log (whole output by lines), write (stdin), kill, clear (forget finished \
         sessions), remove (kill and forget).",
    )
    .with_parameters(json!({
        "type": "object",
        "properties": {
            "action": {"type": "string", "enum": ACTIONS, "description": "Process action to perform."},
            "sessionId": {"type": "string", "description": "Background session id from exec; required for every action except list and clear."},
            "data": {"type": "string", "description": "Data to write to stdin (write)."},
            "eof": {"type": "boolean", "description": "Close stdin after writing (write)."},
            "offset": {"type": "number", "description": "First line to return, 0-based (log)."},
            "limit": {"type": "number", "description": "Number of lines to return (log); without offset, the last lines."},
            "timeout": {"type": "number", "minimum": 0, "description": "Milliseconds to wait for new output before returning (poll); at most 30000."}
        },
        "required": ["action"]
    }))
}

/// The `process` tool over the registry `exec` fills.
pub struct ProcessTool {
    spec: ToolSpec,
    registry: Arc<ProcessRegistry>,
}

impl std::fmt::Debug for ProcessTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProcessTool").finish_non_exhaustive()
    }
}

impl ProcessTool {
    /// The tool over `registry` (the same one the `exec` tool uses).
    pub fn new(registry: Arc<ProcessRegistry>) -> Self {
        ProcessTool {
            spec: process_spec(),
            registry,
        }
    }

    fn session(&self, params: &Map<String, Value>, owner: &str) -> Result<Arc<Session>, ToolError> {
        let id = read_string(params, "sessionId", StringOpts::required())?
            .ok_or_else(|| ToolError::input("sessionId", "sessionId required"))?;
        self.registry.get(&id, owner).ok_or_else(|| {
            ToolError::input(
                "sessionId",
                format!(
                    "no background session {id:?} in this session (it may have finished and been cleaned up); call process with action \"list\" to see yours"
                ),
            )
        })
    }
}

fn result(text: String, details: Value) -> ToolResult {
    ToolResult {
        content: vec![ContentBlock::Text { text }],
        details,
        status: talon_tool_catalog::ResultStatus::Ok,
    }
}

fn status_details(session: &Session) -> (Map<String, Value>, Option<String>) {
    let snap = session.snapshot();
    let mut d = Map::new();
    d.insert("sessionId".into(), json!(session.info.id));
    d.insert("status".into(), json!(snap.status()));
    d.insert("pid".into(), json!(session.info.pid));
    d.insert("name".into(), json!(session.info.name));
    d.insert(
        "runtimeMs".into(),
        json!(u64::try_from(snap.runtime.as_millis()).unwrap_or(u64::MAX)),
    );
    d.insert("totalBytes".into(), json!(snap.total_bytes));
    d.insert("omittedBytes".into(), json!(snap.omitted_bytes));
    let footer = end_fields(&snap, &mut d);
    (d, footer)
}

fn status_line(session: &Session) -> String {
    let snap = session.snapshot();
    let mut d = Map::new();
    let how = end_fields(&snap, &mut d);
    let state = match (snap.finish.is_some(), how) {
        (false, _) => "running".to_owned(),
        (true, None) => "completed (exit code 0)".to_owned(),
        (true, Some(how)) => how
            .trim_start_matches("(Command ")
            .trim_end_matches(')')
            .to_owned(),
    };
    format!("{} [{}]", session.info.id, state)
}

/// `log`: lines `offset..offset+limit` of the retained output.
fn slice_lines(
    text: &str,
    offset: Option<usize>,
    limit: Option<usize>,
) -> (String, usize, usize, usize) {
    let lines: Vec<&str> = text.lines().collect();
    let total = lines.len();
    let (start, end) = match (offset, limit) {
        (None, None) => (total.saturating_sub(DEFAULT_LOG_LINES), total),
        (None, Some(l)) => (total.saturating_sub(l), total),
        (Some(o), None) => (o.min(total), total),
        (Some(o), Some(l)) => (o.min(total), o.saturating_add(l).min(total)),
    };
    (lines[start..end].join("\n"), start, end, total)
}

impl ProcessTool {
    fn list(&self, owner: &str) -> ToolResult {
        let sessions = self.registry.list(owner);
        let entries: Vec<Value> = sessions
            .iter()
            .map(|s| {
                let (mut d, _) = status_details(s);
                d.insert(
                    "command".into(),
                    json!(render_visible(s.info.command.as_bytes())),
                );
                d.insert("startedAt".into(), json!(s.info.started_at_ms));
                Value::Object(d)
            })
            .collect();
        let text = if sessions.is_empty() {
            "No background sessions.".to_owned()
        } else {
            sessions
                .iter()
                .map(|s| {
                    format!(
                        "{} :: {}",
                        status_line(s),
                        render_visible(s.info.name.as_bytes())
                    )
                })
                .collect::<Vec<_>>()
                .join("\n")
        };
        result(text, json!({"status": "ok", "sessions": entries}))
    }

    async fn poll(
        &self,
        params: &Map<String, Value>,
        owner: &str,
    ) -> Result<ToolResult, ToolError> {
        let session = self.session(params, owner)?;
        let wait = read_non_negative_integer(
            params,
            "timeout",
            Bounds::inclusive(0.0, MAX_POLL_WAIT_MS as f64),
        )?
        .unwrap_or(0);
        if wait > 0 {
            session.wait_for_news(Duration::from_millis(wait)).await;
        }
        let new = session.take_new_output();
        let (mut d, footer) = status_details(&session);
        let output = new.render();
        d.insert("output".into(), json!(output));
        let mut text = if output.is_empty() {
            "(no new output)".to_owned()
        } else {
            output
        };
        if !text.ends_with('\n') {
            text.push('\n');
        }
        text.push('\n');
        text.push_str(&match (session.is_finished(), footer) {
            (false, _) => "Process still running.".to_owned(),
            (true, None) => "Process exited with code 0.".to_owned(),
            (true, Some(f)) => f,
        });
        Ok(result(text, Value::Object(d)))
    }

    fn log(&self, params: &Map<String, Value>, owner: &str) -> Result<ToolResult, ToolError> {
        let session = self.session(params, owner)?;
        let offset = read_non_negative_integer(params, "offset", Bounds::default())?;
        let limit = read_positive_integer(params, "limit", Bounds::default())?;
        let as_usize = |v: Option<u64>| v.map(|v| usize::try_from(v).unwrap_or(usize::MAX));
        let whole = session.output().render();
        let (text, start, end, total) = slice_lines(&whole, as_usize(offset), as_usize(limit));
        let (mut d, _) = status_details(&session);
        d.insert("offset".into(), json!(start));
        d.insert("lines".into(), json!(end - start));
        d.insert("totalLines".into(), json!(total));
        let mut out = if text.is_empty() {
            "(no output)".to_owned()
        } else {
            text
        };
        if offset.is_none() && limit.is_none() && start > 0 {
            out.push_str(&format!(
                "\n\n[showing lines {start}..{end} of {total}; pass offset and limit to page]"
            ));
        }
        Ok(result(out, Value::Object(d)))
    }

    async fn write(
        &self,
        params: &Map<String, Value>,
        owner: &str,
    ) -> Result<ToolResult, ToolError> {
        let session = self.session(params, owner)?;
        let data = read_string(
            params,
            "data",
            StringOpts::default().untrimmed().allow_empty(),
        )?
        .unwrap_or_default();
        let eof = read_bool(params, "eof")?.unwrap_or(false);
        if data.is_empty() && !eof {
            return Err(ToolError::input(
                "data",
                "data required (or eof: true to close stdin)",
            ));
        }
        if data.len() > MAX_WRITE_BYTES {
            return Err(ToolError::input(
                "data",
                format!(
                    "data is {} bytes; at most {MAX_WRITE_BYTES} per write",
                    data.len()
                ),
            ));
        }
        if session.is_finished() {
            return Err(ToolError::input(
                "sessionId",
                format!(
                    "session {} has already exited; nothing can be written",
                    session.info.id
                ),
            ));
        }
        let written = session
            .write_stdin(data.as_bytes(), eof)
            .await
            .map_err(|e| e.context(format_args!("session {}", session.info.id)))?;
        let text = format!(
            "Wrote {written} bytes to session {}{}.",
            session.info.id,
            if eof { " and closed its stdin" } else { "" }
        );
        Ok(result(
            text,
            json!({"status": "ok", "sessionId": session.info.id, "bytes": written, "eof": eof}),
        ))
    }

    async fn kill(
        &self,
        params: &Map<String, Value>,
        owner: &str,
        forget: bool,
    ) -> Result<ToolResult, ToolError> {
        let session = self.session(params, owner)?;
        let was_running = !session.is_finished();
        if was_running {
            session.request_kill(KillReason::User);
            if tokio::time::timeout(KILL_WAIT, session.wait_finished())
                .await
                .is_err()
            {
                tracing::warn!(session = %session.info.id, "killed session not reaped in time");
            }
        }
        if forget {
            self.registry.forget(&session.info.id);
        }
        let (mut d, _) = status_details(&session);
        d.insert("removed".into(), json!(forget));
        let id = &session.info.id;
        let text = match (was_running, forget) {
            (true, false) => format!("Killed session {id} and its process group."),
            (true, true) => format!("Killed and removed session {id}."),
            (false, false) => format!(
                "Session {id} had already exited: {}.",
                status_line(&session)
            ),
            (false, true) => format!("Removed finished session {id}."),
        };
        Ok(result(text, Value::Object(d)))
    }

    fn clear(&self, params: &Map<String, Value>, owner: &str) -> Result<ToolResult, ToolError> {
        let cleared = if read_string(params, "sessionId", StringOpts::default())?.is_some() {
            let session = self.session(params, owner)?;
            if !session.is_finished() {
                return Err(ToolError::input(
                    "sessionId",
                    format!(
                        "session {} is still running; use kill or remove to stop it",
                        session.info.id
                    ),
                ));
            }
            self.registry.forget(&session.info.id);
            vec![session.info.id.clone()]
        } else {
            self.registry.clear_finished(owner)
        };
        let text = if cleared.is_empty() {
            "No finished sessions to clear.".to_owned()
        } else {
            format!(
                "Cleared {} finished session(s): {}.",
                cleared.len(),
                cleared.join(", ")
            )
        };
        Ok(result(text, json!({"status": "ok", "cleared": cleared})))
    }
}

#[async_trait::async_trait]
impl Tool for ProcessTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    async fn execute(
        &self,
        call: &ToolCall,
        ctx: &ToolContext,
        abort: &CancellationToken,
    ) -> Result<ToolResult, ToolError> {
        abort.check()?;
        let params = &call.params;
        let action = read_string(params, "action", StringOpts::required())?
            .ok_or_else(|| ToolError::input("action", "action required"))?
            .to_ascii_lowercase();
        let owner = ctx.session_key.as_str();
        match action.as_str() {
            "list" => Ok(self.list(owner)),
            "poll" => {
                tokio::select! {
                    r = self.poll(params, owner) => r,
                    () = abort.cancelled() => abort.check().map(|()| result(String::new(), Value::Null)),
                }
            }
            "log" => self.log(params, owner),
            "write" => self.write(params, owner).await,
            "kill" => self.kill(params, owner, false).await,
            "remove" => self.kill(params, owner, true).await,
            "clear" => self.clear(params, owner),
            other => Err(ToolError::input(
                "action",
                format!(
                    "unknown action {other:?}; use one of {}",
                    ACTIONS.join(", ")
                ),
            )),
        }
    }
}

#[cfg(test)]
#[path = "tool_tests.rs"]
mod tests;
