//! A small agent loop driven by a scripted "model": a fixed list of tool
//! calls instead of an LLM. It shows what an embedder gets from Talon:
//!
//! - a run's tool table assembled from the embedder's tools under a policy
//!   (`exec` is denied, so the model's `exec` call is explained, not
//!   "unknown tool");
//! - a plugin hook that blocks a dangerous write;
//! - a hook that asks a human before writing, answered here by a scripted
//!   approver through the approval broker;
//! - loop detection stopping a model that keeps repeating a fruitless
//!   call.
//!
//! Run it with `cargo run -p talon-runtime --example scripted_agent`.
#![allow(clippy::print_stdout, reason = "an example prints its transcript")]

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use talon_hooks::approval::{
    ApprovalBroker, ApprovalDecision, ApprovalEvent, MemoryApprovalBroker,
};
use talon_hooks::loop_detection::LoopDetectionConfig;
use talon_hooks::{
    ApprovalSpec, BeforeToolCallEvent, BeforeToolCallHandler, BeforeToolCallResult, HookContext,
    Registration, ToolMatcher,
};
use talon_runtime::{InvokeOutcome, ModelToolCall, RunSpec, RuntimeBuilder, ToolSet};
use talon_tool_catalog::params::{StringOpts, read_string};
use talon_tool_catalog::{
    CancellationToken, Tool, ToolCall, ToolContext, ToolError, ToolResult, ToolSpec, json_result,
    text_result,
};
use talon_tool_policy::config::ToolsConfig;
use talon_tool_policy::{PolicyConfig, RunContext};

/// An in-memory file system standing in for the workspace.
#[derive(Default)]
struct Notes {
    files: Mutex<BTreeMap<String, String>>,
}

struct ReadTool {
    spec: ToolSpec,
    notes: Arc<Notes>,
}

struct WriteTool {
    spec: ToolSpec,
    notes: Arc<Notes>,
}

fn core_spec(name: &str) -> Result<ToolSpec, ToolError> {
    ToolSpec::core(name).ok_or_else(|| ToolError::execution(format!("{name} is not a core tool")))
}

#[async_trait::async_trait]
impl Tool for ReadTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    async fn execute(
        &self,
        call: &ToolCall,
        _ctx: &ToolContext,
        _abort: &CancellationToken,
    ) -> Result<ToolResult, ToolError> {
        let path = read_string(&call.params, "path", StringOpts::required())?.unwrap_or_default();
        let files = self
            .notes
            .files
            .lock()
            .map_err(|_| ToolError::execution("notes poisoned"))?;
        match files.get(&path) {
            Some(text) => Ok(text_result(text.clone())),
            None => Err(ToolError::execution(format!("{path}: no such file"))),
        }
    }
}

#[async_trait::async_trait]
impl Tool for WriteTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    async fn execute(
        &self,
        call: &ToolCall,
        _ctx: &ToolContext,
        _abort: &CancellationToken,
    ) -> Result<ToolResult, ToolError> {
        let path = read_string(&call.params, "path", StringOpts::required())?.unwrap_or_default();
        let content = read_string(&call.params, "content", StringOpts::default().allow_empty())?
            .unwrap_or_default();
        let bytes = content.len();
        self.notes
            .files
            .lock()
            .map_err(|_| ToolError::execution("notes poisoned"))?
            .insert(path.clone(), content);
        Ok(json_result(
            json!({"status": "ok", "path": path, "bytes": bytes}),
        ))
    }
}

/// Blocks writes outside `notes/`, and asks a human for the rest.
struct WriteGuard;

#[async_trait::async_trait]
impl BeforeToolCallHandler for WriteGuard {
    async fn before_tool_call(
        &self,
        event: &BeforeToolCallEvent,
        _ctx: &HookContext,
    ) -> Result<Option<BeforeToolCallResult>, talon_hooks::HookError> {
        let path = event
            .params
            .get("path")
            .and_then(Value::as_str)
            .unwrap_or("");
        if !path.starts_with("notes/") {
            return Ok(Some(BeforeToolCallResult::block(format!(
                "writes are limited to notes/, not {path}"
            ))));
        }
        Ok(Some(BeforeToolCallResult::approval(ApprovalSpec {
            title: "Write a note".into(),
            description: format!("Allow writing {path}?"),
            ..ApprovalSpec::default()
        })))
    }
}

/// One line of the transcript: the call and how it ended.
#[derive(Debug, Clone, PartialEq)]
pub struct Turn {
    /// The tool the model called.
    pub tool: String,
    /// `result`, `blocked:<deniedReason>` or `error`.
    pub outcome: String,
}

/// Run the scripted agent and return its transcript.
pub async fn run() -> anyhow::Result<Vec<Turn>> {
    let notes = Arc::new(Notes::default());
    let tools = ToolSet::new("workspace")
        .with(Arc::new(ReadTool {
            spec: core_spec("read")?,
            notes: Arc::clone(&notes),
        }))
        .with(Arc::new(WriteTool {
            spec: core_spec("write")?,
            notes: Arc::clone(&notes),
        }));
    let policy = PolicyConfig {
        tools: ToolsConfig {
            deny: Some(vec!["exec".into()]),
            ..ToolsConfig::default()
        },
        ..PolicyConfig::default()
    };
    let broker: Arc<dyn ApprovalBroker> = Arc::new(MemoryApprovalBroker::in_memory());
    let mut builder = RuntimeBuilder::new(policy)
        .family(Arc::new(tools))
        .broker(Arc::clone(&broker))
        .loop_detection(LoopDetectionConfig {
            enabled: Some(true),
            ..LoopDetectionConfig::default()
        });
    builder.hooks_mut().on_before_tool_call(
        Registration::new("write-guard").matcher(ToolMatcher::ids(["write"])),
        Arc::new(WriteGuard),
    );
    let runtime = builder.build()?;

    // The "human": approves every write request as it is announced.
    let mut requests = broker.subscribe();
    let approver = Arc::clone(&broker);
    tokio::spawn(async move {
        while let Ok(event) = requests.recv().await {
            if let ApprovalEvent::Requested(req) = event {
                println!("  [approver] {} → allow-once", req.description);
                approver.resolve(&req.id, ApprovalDecision::AllowOnce, None);
            }
        }
    });

    let run = RunSpec::new(RunContext {
        model_provider: Some("anthropic".into()),
        ..RunContext::new("main")
    })
    .run_id("scripted-1");
    let table = runtime.assemble(run);
    println!("tools offered to the model: {}", table.names().join(", "));

    // The scripted model: what it "decides" to call, in order.
    let mut script: Vec<(&str, Value)> = vec![
        (
            "write",
            json!({"path": "notes/todo.md", "content": "- ship talon"}),
        ),
        ("read", json!({"path": "notes/todo.md"})),
        (
            "write",
            json!({"path": "/etc/passwd", "content": "root::0:0"}),
        ),
        ("bash", json!({"command": "rm -rf /"})),
    ];
    // Then it gets stuck re-reading a file that does not exist.
    for _ in 0..25 {
        script.push(("read", json!({"path": "notes/missing.md"})));
    }

    let mut transcript = Vec::new();
    for (i, (tool, args)) in script.into_iter().enumerate() {
        let outcome = table
            .invoke(ModelToolCall::new(format!("call-{i}"), tool, args))
            .await;
        let label = match &outcome {
            InvokeOutcome::Completed { .. } => "result".to_owned(),
            InvokeOutcome::Blocked(b) => format!("blocked:{}", b.denied_reason.as_str()),
            InvokeOutcome::Failed(_) => "error".to_owned(),
        };
        println!(
            "model → {tool}: {label}\n  {}",
            outcome.to_model_result(tool).text().replace('\n', "\n  ")
        );
        let stop = matches!(&outcome, InvokeOutcome::Blocked(b) if b.denied_reason.as_str() == "tool-loop");
        transcript.push(Turn {
            tool: tool.to_owned(),
            outcome: label,
        });
        if stop {
            println!("the loop detector stopped the model after {} calls", i + 1);
            break;
        }
    }
    Ok(transcript)
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> anyhow::Result<()> {
    run().await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[tokio::test]
    async fn the_scripted_agent_shows_a_block_an_approval_and_a_loop_stop() {
        let transcript = run().await.unwrap();
        let outcomes: Vec<&str> = transcript.iter().map(|t| t.outcome.as_str()).collect();
        assert_eq!(
            &outcomes[..4],
            [
                "result",
                "result",
                "blocked:plugin-before-tool-call",
                "blocked:tool-policy"
            ]
        );
        // The stuck reads fail until the loop detector vetoes one.
        assert_eq!(outcomes.last(), Some(&"blocked:tool-loop"));
        assert!(
            outcomes[4..outcomes.len() - 1]
                .iter()
                .all(|o| *o == "error")
        );
    }
}
