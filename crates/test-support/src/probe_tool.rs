//! One configurable tool for tests of the call path (runtime, MCP face,
//! gateway): it answers as its [`Reply`] says and records every call in a
//! shared [`Probe`], so a test can assert what reached the tool.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use talon_tool_catalog::{
    CancellationToken, Tool, ToolCall, ToolContext, ToolError, ToolFamily, ToolResult, ToolSpec,
    json_result, text_result,
};
use tokio::sync::Notify;

/// What a [`ProbeTool`] answers.
#[derive(Debug, Clone)]
pub enum Reply {
    /// A JSON result `{"tool": <name>, "params": <params>}`; a call whose
    /// params have a `fail` key fails with an execution error instead.
    EchoParams,
    /// A text result `echo: <params.text>`.
    EchoText,
    /// This result, every time.
    Fixed(ToolResult),
    /// An execution error with this message, every time.
    Fail(String),
    /// Sleep this long, then a text result `slept`; whether the call's
    /// future was dropped first is recorded in the probe.
    Sleep(Duration),
}

/// What the tools sharing it saw, for assertions.
#[derive(Debug, Default)]
pub struct Probe {
    /// Calls that reached a tool.
    pub calls: AtomicUsize,
    /// Their call ids, in order.
    pub call_ids: Mutex<Vec<String>>,
    /// Notified when a [`Reply::Sleep`] call starts.
    pub sleep_started: Notify,
    /// A [`Reply::Sleep`] call's future was dropped before it finished.
    pub sleep_dropped: AtomicBool,
    /// Notified when that happens.
    pub sleep_dropped_notify: Notify,
    /// A [`Reply::Sleep`] call finished its sleep.
    pub sleep_finished: AtomicBool,
}

impl Probe {
    /// How many calls reached a tool so far.
    pub fn count(&self) -> usize {
        self.calls.load(Ordering::SeqCst)
    }
}

/// A tool that answers as its [`Reply`] says and, once given a probe
/// ([`ProbeTool::with_probe`]), records each call in it. Without one it
/// records nothing (a benchmark's fake tool costs only its answer).
#[derive(Debug)]
pub struct ProbeTool {
    spec: ToolSpec,
    reply: Reply,
    probe: Option<Arc<Probe>>,
}

impl ProbeTool {
    /// A tool with `spec` answering `reply`, recording nothing.
    pub fn new(spec: ToolSpec, reply: Reply) -> ProbeTool {
        ProbeTool {
            spec,
            reply,
            probe: None,
        }
    }

    /// The core tool `name` (its catalog spec); panics when `name` is not
    /// a core tool.
    pub fn core(name: &str, reply: Reply) -> ProbeTool {
        let spec = ToolSpec::core(name).unwrap_or_else(|| panic!("{name} is not a core tool"));
        ProbeTool::new(spec, reply)
    }

    /// A tool of plugin `plugin` with its description and JSON Schema.
    pub fn plugin(
        name: &str,
        plugin: &str,
        description: &str,
        parameters: Value,
        reply: Reply,
    ) -> ProbeTool {
        let spec = ToolSpec::new(
            name,
            ToolFamily::Plugin {
                plugin_id: plugin.into(),
            },
        )
        .with_description(description)
        .with_parameters(parameters);
        ProbeTool::new(spec, reply)
    }

    /// Record into `probe` (shared with other tools or the test).
    pub fn with_probe(mut self, probe: &Arc<Probe>) -> ProbeTool {
        self.probe = Some(Arc::clone(probe));
        self
    }

    /// Record into a new probe of its own (see [`ProbeTool::probe`]).
    pub fn recorded(self) -> ProbeTool {
        self.with_probe(&Arc::default())
    }

    /// The spec, for a test that adjusts its schema.
    pub fn spec_mut(&mut self) -> &mut ToolSpec {
        &mut self.spec
    }

    /// The probe this tool records into, if any.
    pub fn probe(&self) -> Option<&Arc<Probe>> {
        self.probe.as_ref()
    }
}

/// Marks a sleeping call dropped unless it finished.
struct DropFlag(Arc<Probe>);

impl Drop for DropFlag {
    fn drop(&mut self) {
        if !self.0.sleep_finished.load(Ordering::SeqCst) {
            self.0.sleep_dropped.store(true, Ordering::SeqCst);
            self.0.sleep_dropped_notify.notify_one();
        }
    }
}

#[async_trait::async_trait]
impl Tool for ProbeTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    async fn execute(
        &self,
        call: &ToolCall,
        _ctx: &ToolContext,
        _abort: &CancellationToken,
    ) -> Result<ToolResult, ToolError> {
        if let Some(probe) = &self.probe {
            probe.calls.fetch_add(1, Ordering::SeqCst);
            if let Ok(mut ids) = probe.call_ids.lock() {
                ids.push(call.id.clone());
            }
        }
        match &self.reply {
            Reply::EchoParams => {
                if call.params.contains_key("fail") {
                    return Err(ToolError::execution("it failed"));
                }
                Ok(json_result(
                    json!({"tool": call.name, "params": Value::Object(call.params.clone())}),
                ))
            }
            Reply::EchoText => {
                let text = call
                    .params
                    .get("text")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                Ok(text_result(format!("echo: {text}")))
            }
            Reply::Fixed(result) => Ok(result.clone()),
            Reply::Fail(message) => Err(ToolError::execution(message.clone())),
            Reply::Sleep(duration) => {
                let _flag = self.probe.as_ref().map(|p| {
                    p.sleep_started.notify_one();
                    DropFlag(Arc::clone(p))
                });
                tokio::time::sleep(*duration).await;
                if let Some(p) = &self.probe {
                    p.sleep_finished.store(true, Ordering::SeqCst);
                }
                Ok(text_result("slept"))
            }
        }
    }
}
