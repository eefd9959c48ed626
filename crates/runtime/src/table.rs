//! `ToolTable`: one run's tools, and `invoke`.

use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use serde::Serialize;
use serde_json::{Map, Value};
use talon_hooks::approval::ApprovalResolution;
use talon_hooks::loop_detection::LoopOutcome;
use talon_hooks::{
    AfterCallTasks, AfterToolCallEvent, BeforeToolCallEvent, BlockedCall, DeniedReason,
    DiagnosticEvent, DiagnosticKind, Gate, GateVerdict, HookContext,
};
use talon_schema_dialects::decode_arguments;
use talon_tool_catalog::{
    ApprovalPin, Canceller, Tool, ToolCall, ToolContext, ToolError, ToolErrorCode, ToolResult,
    ToolSpec, json_result, normalize_tool_name, runs_commands,
};
use talon_tool_policy::PolicyOutcome;

use crate::family::ToolFamily;
use crate::narrowing::Narrowing;
use crate::run::RunSpec;
use crate::sandbox_decision::RunSandbox;

/// How long one assembly stage took.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct StageTiming {
    /// The stage (`tool-families`, `tool-policy`, `workspace-policy`,
    /// `schema-normalize`, `tool-construct`, `hook-wrap`).
    pub stage: &'static str,
    /// Microseconds.
    pub micros: u64,
}

/// A tool as the model sees it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolDefinition {
    /// The name to call.
    pub name: String,
    /// The description.
    pub description: String,
    /// The parameter schema, normalised for the run's provider.
    pub parameters: Value,
}

/// A call as the model made it.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelToolCall {
    /// The call id.
    pub id: String,
    /// The tool name as the model wrote it.
    pub name: String,
    /// The arguments: an object, a JSON string holding one, or `null`.
    pub arguments: Value,
}

impl ModelToolCall {
    /// A call.
    pub fn new(id: impl Into<String>, name: impl Into<String>, arguments: Value) -> Self {
        ModelToolCall {
            id: id.into(),
            name: name.into(),
            arguments,
        }
    }
}

/// How one call ended: a result, a block, or an error.
#[derive(Debug, Clone, PartialEq)]
pub enum InvokeOutcome {
    /// The tool ran and returned a result.
    Completed {
        /// The result.
        result: ToolResult,
        /// Whether a hook or policy rewrote the parameters.
        params_rewritten: bool,
        /// The approval that let the call through, if one was needed.
        approval: Option<ApprovalResolution>,
    },
    /// The call did not run.
    Blocked(BlockedCall),
    /// The call failed (bad input, unknown tool, or the tool failed).
    Failed(ToolError),
}

impl InvokeOutcome {
    /// What goes back to the model: the result; a structured `blocked`
    /// result; or `{status: "error", tool, error}` as OpenClaw sends, with
    /// the error's stable `code` (`fs.escape`, `web.timeout`, ...) added.
    pub fn to_model_result(&self, tool: &str) -> ToolResult {
        match self {
            InvokeOutcome::Completed { result, .. } => ToolResult {
                content: result.content.clone(),
                details: Value::Null,
                status: result.status,
            },
            InvokeOutcome::Blocked(b) => {
                let mut r = json_result(b.to_model_json(tool));
                r.details = Value::Null;
                r
            }
            InvokeOutcome::Failed(e) => {
                let mut r = json_result(serde_json::json!({
                    "status": "error",
                    "tool": tool,
                    "error": e.to_string(),
                    "code": e.code(),
                }));
                r.details = Value::Null;
                r
            }
        }
    }

    /// Whether the call was blocked.
    pub fn is_blocked(&self) -> bool {
        matches!(self, InvokeOutcome::Blocked(_))
    }
}

pub(crate) struct TableTool {
    pub(crate) spec: ToolSpec,
    pub(crate) definition: ToolDefinition,
    pub(crate) empty_object_args: bool,
    pub(crate) family: Arc<dyn ToolFamily>,
    pub(crate) built: OnceLock<Arc<dyn Tool>>,
    pub(crate) narrowing: Option<Narrowing>,
}

impl TableTool {
    pub(crate) fn instance(&self, run: &RunSpec) -> Result<Arc<dyn Tool>, ToolError> {
        if let Some(t) = self.built.get() {
            return Ok(Arc::clone(t));
        }
        let tool = self.family.construct(&self.spec.name, run)?;
        Ok(Arc::clone(self.built.get_or_init(|| tool)))
    }
}

/// One run's tools: deterministic order, provider-normalised schemas, every
/// call through the gate.
pub struct ToolTable {
    pub(crate) run: RunSpec,
    pub(crate) sandbox: Arc<RunSandbox>,
    pub(crate) tools: Vec<TableTool>,
    pub(crate) policy: PolicyOutcome,
    pub(crate) gate: Gate,
    pub(crate) ctx: HookContext,
    pub(crate) timings: Vec<StageTiming>,
    pub(crate) unavailable: Vec<String>,
    pub(crate) observers: Mutex<Vec<AfterCallTasks>>,
}

impl std::fmt::Debug for ToolTable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolTable")
            .field("session", &self.run.context.session_key)
            .field("sandboxed", &self.sandbox.sandboxed)
            .field("tools", &self.names())
            .field("timings", &self.timings)
            .finish()
    }
}

impl ToolTable {
    /// The tool names, in table order.
    pub fn names(&self) -> Vec<&str> {
        self.tools.iter().map(|t| t.spec.name.as_str()).collect()
    }

    /// The definitions to send to the model.
    pub fn definitions(&self) -> Vec<ToolDefinition> {
        self.tools.iter().map(|t| t.definition.clone()).collect()
    }

    /// The effective allowlist: what children spawned from this run and
    /// cron jobs created in it are capped by.
    pub fn effective_allowlist(&self) -> &[String] {
        &self.run.effective_tools
    }

    /// The policy audit (every layer, what it removed and why).
    pub fn policy(&self) -> &PolicyOutcome {
        &self.policy
    }

    /// How long each assembly stage took.
    pub fn timings(&self) -> &[StageTiming] {
        &self.timings
    }

    /// The run's sandbox decision: whether it is sandboxed, why, and the
    /// sandbox settings its file and shell tools use.
    pub fn sandbox(&self) -> &RunSandbox {
        &self.sandbox
    }

    /// The run.
    pub fn run(&self) -> &RunSpec {
        &self.run
    }

    /// The run's canceller: the loop detector's circuit breaker cancels
    /// it, and so does the embedder (`canceller().cancel("why")`). Every
    /// call after that fails as aborted with that reason, and each call in
    /// flight sees its token (a child of the run's) fire.
    pub fn canceller(&self) -> &Canceller {
        &self.ctx.abort
    }

    /// Whether `name` is an owner-only tool: its spec says so, or it is one
    /// of the owner-only core tools ([`talon_tool_policy::OWNER_ONLY_CORE_TOOLS`]).
    /// Such a tool is in a table only for a sender not known to be a
    /// non-owner; a front end that shares a session between callers checks
    /// each caller with this.
    pub fn is_owner_only(&self, name: &str) -> bool {
        let name = normalize_tool_name(name);
        talon_tool_policy::OWNER_ONLY_CORE_TOOLS.contains(&name.as_str())
            || self
                .tools
                .iter()
                .any(|t| t.spec.name == name && t.spec.owner_only)
    }

    /// Whether a tool is in the table.
    pub fn contains(&self, name: &str) -> bool {
        let name = normalize_tool_name(name);
        self.tools.iter().any(|t| t.spec.name == name)
    }

    /// Run one model call through coercion, the gate, trigger narrowing
    /// and the tool.
    pub async fn invoke(&self, call: ModelToolCall) -> InvokeOutcome {
        self.invoke_with(call, &self.ctx).await
    }

    /// [`ToolTable::invoke`] on behalf of `requester`: for a front end that
    /// shares one session between callers, so the hooks, approvals and
    /// observers of this call see who made it, not who opened the session.
    pub async fn invoke_as(
        &self,
        call: ModelToolCall,
        requester: talon_hooks::Requester,
    ) -> InvokeOutcome {
        let mut ctx = self.ctx.clone();
        ctx.requester = Some(requester);
        self.invoke_with(call, &ctx).await
    }

    async fn invoke_with(&self, call: ModelToolCall, ctx: &HookContext) -> InvokeOutcome {
        let name = normalize_tool_name(&call.name);
        if ctx.abort.is_cancelled() {
            return InvokeOutcome::Failed(ctx.abort.abort_error());
        }
        let Some(tool) = self.tools.iter().find(|t| t.spec.name == name) else {
            return self.unknown_tool(&call, &name, ctx).await;
        };
        let raw = match decode_arguments(&call.arguments, tool.empty_object_args) {
            Ok(p) => p,
            Err(e) => {
                // Malformed arguments never reach the gate, but the loop
                // detector still sees them: a model stuck sending broken
                // JSON is stopped like any other loop.
                let mut seen = Map::new();
                seen.insert("arguments".into(), call.arguments.clone());
                let event = BeforeToolCallEvent::new(name.clone(), seen)
                    .with_call_id(call.id.clone())
                    .with_run_id(self.run.run_id.clone());
                if let Some(blocked) = self.gate.loop_check_only(&event, ctx) {
                    self.gate.emit_blocked(&name, &call.id, ctx, &blocked);
                    return InvokeOutcome::Blocked(blocked);
                }
                let err = ToolError::new(ToolErrorCode::InputMalformed, format!("{name}: {e}"));
                return self.finish_failed(
                    &name,
                    &call.id,
                    CallParams::none(),
                    err,
                    Duration::ZERO,
                    ctx,
                );
            }
        };
        // The model's own params are kept for the failure log only when
        // something could rewrite them; otherwise the gate hands them back.
        let original =
            (!self.gate.is_passthrough() || tool.narrowing.is_some()).then(|| raw.clone());
        let event = BeforeToolCallEvent::new(name.clone(), raw)
            .with_call_id(call.id.clone())
            .with_run_id(self.run.run_id.clone());
        let (mut params, rewritten, approval, exec_pin) = match self.gate.check(event, ctx).await {
            GateVerdict::Run {
                params,
                rewritten,
                approval,
                exec_pin,
            } => (params, rewritten, approval, exec_pin),
            GateVerdict::Blocked(blocked) => {
                return self.finish_blocked(&name, &call.id, blocked, ctx);
            }
        };
        if let Some(narrowing) = &tool.narrowing {
            match narrowing.apply(params, declares_param(&tool.spec, "append")) {
                Ok(p) => params = p,
                Err(blocked) => {
                    let blocked = *blocked;
                    self.gate.record_outcome(
                        ctx,
                        &call.id,
                        &name,
                        LoopOutcome::Blocked(&blocked.reason),
                    );
                    self.gate.emit_blocked(&name, &call.id, ctx, &blocked);
                    return self.finish_blocked(&name, &call.id, blocked, ctx);
                }
            }
        }
        self.emit(DiagnosticKind::Started, &name, &call.id, None, None);
        let started = Instant::now();
        let instance = match tool.instance(&self.run) {
            Ok(t) => t,
            Err(e) => {
                let raw = original.as_ref().unwrap_or(&params);
                let effective = rewritten.then_some(&params);
                return self.finish_failed(
                    &name,
                    &call.id,
                    CallParams { raw, effective },
                    e,
                    started.elapsed(),
                    ctx,
                );
            }
        };
        let tool_call = ToolCall {
            id: call.id.clone(),
            name: name.clone(),
            params,
        };
        let params = &tool_call.params;
        let tool_ctx = ToolContext::new(&self.run.context.agent_id, &self.run.context.session_key)
            .sandboxed(self.run.context.sandboxed)
            .with_approval_pin(exec_pin.map(|pin| ApprovalPin::new(pin)))
            // The caller of this call (a shared session's `invoke_as`),
            // else the run's sender.
            .with_sender_is_owner(
                ctx.requester
                    .as_ref()
                    .and_then(|r| r.sender_is_owner)
                    .or(self.run.context.sender_is_owner),
            );
        // The call's own token: it fires with the run's and detaches from
        // it when dropped here, so the run keeps nothing per finished call.
        let call_abort = ctx.abort.child_token();
        let outcome = instance.execute(&tool_call, &tool_ctx, &call_abort).await;
        drop(call_abort);
        let elapsed = started.elapsed();
        match outcome {
            Ok(result) => {
                self.gate
                    .record_outcome(ctx, &call.id, &name, LoopOutcome::Result(&result));
                self.emit(
                    DiagnosticKind::Completed,
                    &name,
                    &call.id,
                    None,
                    Some(elapsed),
                );
                if self.gate.hooks().has_after_observers() {
                    let mut ev = AfterToolCallEvent::new(&name, &call.id, params, elapsed)
                        .with_result(&result);
                    ev.run_id = self.run.run_id.clone();
                    self.observe(ev, ctx);
                }
                InvokeOutcome::Completed {
                    result,
                    params_rewritten: rewritten,
                    approval,
                }
            }
            Err(e) => {
                // A tool that saw its token fire cannot know why; the run's
                // canceller recorded it.
                let e = if e.is_aborted() && ctx.abort.is_cancelled() {
                    ctx.abort.abort_error()
                } else {
                    e
                };
                let raw = original.as_ref().unwrap_or(params);
                let effective = rewritten.then_some(params);
                self.finish_failed(
                    &name,
                    &call.id,
                    CallParams { raw, effective },
                    e,
                    elapsed,
                    ctx,
                )
            }
        }
    }

    /// Wait (at most `limit`) for the `after_tool_call` observers started
    /// by this table's calls. Observers are fire-and-forget; a short-lived
    /// host (the CLI) calls this before exiting so they are not cut off.
    pub async fn wait_for_observers(&self, limit: Duration) {
        let tasks: Vec<AfterCallTasks> = match self.observers.lock() {
            Ok(mut o) => std::mem::take(&mut *o),
            Err(poisoned) => std::mem::take(&mut *poisoned.into_inner()),
        };
        let all = async {
            for t in tasks {
                t.join().await;
            }
        };
        let _ = tokio::time::timeout(limit, all).await;
    }

    fn observe(&self, event: AfterToolCallEvent, ctx: &HookContext) {
        let tasks = self.gate.hooks().fire_after_tool_call(event, ctx);
        if tasks.is_empty() {
            return;
        }
        let mut pending = match self.observers.lock() {
            Ok(o) => o,
            Err(poisoned) => poisoned.into_inner(),
        };
        pending.retain(|t| !t.is_finished());
        pending.push(tasks);
    }

    fn finish_blocked(
        &self,
        name: &str,
        call_id: &str,
        blocked: BlockedCall,
        ctx: &HookContext,
    ) -> InvokeOutcome {
        if self.gate.hooks().has_after_observers() {
            let mut ev = AfterToolCallEvent::new(name, call_id, &Map::new(), Duration::ZERO);
            ev.blocked = Some(blocked.denied_reason.as_str().to_owned());
            ev.run_id = self.run.run_id.clone();
            self.observe(ev, ctx);
        }
        InvokeOutcome::Blocked(blocked)
    }

    /// A failed call: loop record, diagnostics, OpenClaw's failure log line
    /// (the model's params as `raw_params`, the hook-adjusted ones as
    /// `effective_params`, both redacted), observers.
    fn finish_failed(
        &self,
        name: &str,
        call_id: &str,
        params: CallParams<'_>,
        err: ToolError,
        elapsed: Duration,
        ctx: &HookContext,
    ) -> InvokeOutcome {
        let CallParams { raw, effective } = params;
        let message = err.to_string();
        self.gate
            .record_outcome(ctx, call_id, name, LoopOutcome::Error(&message));
        self.emit(
            DiagnosticKind::Error,
            name,
            call_id,
            Some(err.kind().as_str()),
            Some(elapsed),
        );
        if tracing::enabled!(target: "talon::tools", tracing::Level::WARN) {
            let effective = effective.map(|p| Value::Object(p.clone()));
            let line = talon_hooks::redact::failure_log_line(
                name,
                &message,
                &Value::Object(raw.clone()),
                effective.as_ref(),
            );
            tracing::warn!(target: "talon::tools", "{line}");
        }
        if self.gate.hooks().has_after_observers() {
            let params = effective.unwrap_or(raw);
            let mut ev = AfterToolCallEvent::new(name, call_id, params, elapsed)
                .with_error(observer_error_text(name, &message));
            ev.run_id = self.run.run_id.clone();
            self.observe(ev, ctx);
        }
        InvokeOutcome::Failed(err)
    }

    /// The "unknown tool" translation: a tool the policy removed is
    /// reported as blocked with the layer, rule and config key to change.
    async fn unknown_tool(
        &self,
        call: &ModelToolCall,
        name: &str,
        ctx: &HookContext,
    ) -> InvokeOutcome {
        // The loop detector sees unknown-tool calls too (its
        // unknown_tool_repeat detector stops a model that keeps guessing).
        let params = match &call.arguments {
            Value::Object(m) => m.clone(),
            _ => Map::new(),
        };
        let event = BeforeToolCallEvent::new(name.to_owned(), params)
            .with_call_id(call.id.clone())
            .with_run_id(self.run.run_id.clone());
        if let Some(blocked) = self.gate.loop_check_only(&event, ctx) {
            self.gate.emit_blocked(name, &call.id, ctx, &blocked);
            return InvokeOutcome::Blocked(blocked);
        }
        if let Some(why) = self.policy.removed_by(name) {
            let blocked = BlockedCall::new(
                DeniedReason::ToolPolicy,
                format!(
                    "Tool `{name}` is not available in this session: the `{}` policy layer removed it ({}). To allow it, change `{}` in the configuration.",
                    why.layer, why.rule, why.config_key
                ),
            )
            .source(why.layer)
            .config_key(why.config_key);
            self.gate.record_outcome(
                ctx,
                &call.id,
                name,
                LoopOutcome::Error(&format!("unknown tool: {name}")),
            );
            self.gate.emit_blocked(name, &call.id, ctx, &blocked);
            return InvokeOutcome::Blocked(blocked);
        }
        let message = if self.unavailable.iter().any(|u| u == name) {
            let missing = crate::cargo_features::missing_tool_feature(name)
                .map(|f| format!("; to add it, {}", crate::cargo_features::enable_hint(f)))
                .unwrap_or_default();
            format!(
                "unknown tool: {name} (the policy allows it, but this build of Talon does not provide it{missing}). Available tools: {}",
                self.names().join(", ")
            )
        } else {
            format!(
                "unknown tool: {name}. Available tools: {}",
                self.names().join(", ")
            )
        };
        self.gate
            .record_outcome(ctx, &call.id, name, LoopOutcome::Error(&message));
        InvokeOutcome::Failed(ToolError::new(ToolErrorCode::ToolUnknown, message))
    }

    fn emit(
        &self,
        kind: DiagnosticKind,
        name: &str,
        call_id: &str,
        error_class: Option<&str>,
        elapsed: Option<Duration>,
    ) {
        let mut ev = DiagnosticEvent::new(
            kind,
            name,
            call_id,
            &self.run.context.session_key,
            self.run.run_id.as_deref(),
        );
        ev.error_class = error_class.map(str::to_owned);
        ev.duration_ms = elapsed.map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX));
        self.gate.diagnostics().emit(&ev);
    }
}

/// A failed call's parameters: as the model gave them, and as the hooks
/// left them (when the call got that far).
struct CallParams<'a> {
    raw: &'a Map<String, Value>,
    effective: Option<&'a Map<String, Value>>,
}

impl CallParams<'_> {
    /// No parameters (the arguments could not be decoded).
    fn none() -> CallParams<'static> {
        static EMPTY: OnceLock<Map<String, Value>> = OnceLock::new();
        CallParams {
            raw: EMPTY.get_or_init(Map::new),
            effective: None,
        }
    }
}

/// Whether a tool's schema declares a top-level parameter.
fn declares_param(spec: &ToolSpec, key: &str) -> bool {
    spec.parameters
        .get("properties")
        .and_then(Value::as_object)
        .is_some_and(|p| p.contains_key(key))
}

/// What observers see of an error. The error of a tool that runs commands
/// (a catalog fact) may echo the command line and the credentials in it,
/// so it is summarised like the command is in failure logs: length and a
/// hash prefix.
fn observer_error_text(tool: &str, message: &str) -> String {
    if runs_commands(tool) {
        let hash = talon_canonical_json::sha256_hex(message);
        format!(
            "{tool} failed (message omitted: may contain command credentials; {} chars, sha256 {})",
            message.chars().count(),
            hash.get(..16).unwrap_or(&hash)
        )
    } else {
        message.to_owned()
    }
}
