//! The gate: loop detection → trusted policies → plugin hooks → approval.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Map, Value};

use talon_tool_catalog::normalize_tool_name;

use crate::approval::{ApprovalBroker, ApprovalDecision, ApprovalRequest, ApprovalResolution};
use crate::before::run_before_handlers;
use crate::diagnostics::{DiagnosticEvent, DiagnosticKind, Diagnostics};
use crate::event::{ApprovalSpec, BeforeToolCallEvent, HookContext, derive_paths};
use crate::exec_approvals::ExecApprovals;
use crate::guard::{run_guarded, run_sync_guarded};
use crate::loop_detection::{LoopDetector, LoopOutcome, LoopVerdict};
use crate::outcome::{BlockedCall, DeniedReason, GateOutcome, GateVerdict};
use crate::registry::Hooks;

/// OpenClaw's reason for a fail-closed block.
pub const HOOK_FAILURE_REASON: &str = "Tool call blocked because before_tool_call hook failed";

/// How long an approval waits when the request sets no timeout.
pub const DEFAULT_APPROVAL_TIMEOUT: Duration = Duration::from_secs(120);

/// The gate every tool call passes. Cheap to clone; share one per agent.
#[derive(Clone, Default)]
pub struct Gate {
    hooks: Arc<Hooks>,
    loop_detector: Option<Arc<LoopDetector>>,
    broker: Option<Arc<dyn ApprovalBroker>>,
    diagnostics: Diagnostics,
    approval_timeout: Option<Duration>,
    exec_approvals: Option<Arc<ExecApprovals>>,
}

impl std::fmt::Debug for Gate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Gate")
            .field("hooks", &self.hooks)
            .field("loop_detection", &self.loop_detector.is_some())
            .field("broker", &self.broker.is_some())
            .finish()
    }
}

impl Gate {
    /// A gate over `hooks` with no loop detection and no approval broker
    /// (every approval then denies as unresolved).
    pub fn new(hooks: Arc<Hooks>) -> Self {
        Gate {
            hooks,
            ..Gate::default()
        }
    }

    /// Builder: loop detection (ignored when the detector is disabled).
    pub fn with_loop_detector(mut self, detector: Arc<LoopDetector>) -> Self {
        self.loop_detector = detector.is_enabled().then_some(detector);
        self
    }

    /// Builder: the approval broker.
    pub fn with_broker(mut self, broker: Arc<dyn ApprovalBroker>) -> Self {
        self.broker = Some(broker);
        self
    }

    /// Builder: diagnostics sink.
    pub fn with_diagnostics(mut self, diagnostics: Diagnostics) -> Self {
        self.diagnostics = diagnostics;
        self
    }

    /// Builder: enforce `tools.exec.security` / `tools.exec.ask` and the
    /// exec allowlist on every `exec` call, after the plugin hooks (so on
    /// the parameters that will run).
    pub fn with_exec_approvals(mut self, exec: Arc<ExecApprovals>) -> Self {
        self.exec_approvals = Some(exec);
        self
    }

    /// Builder: the timeout of approvals that set none.
    pub fn with_approval_timeout(mut self, timeout: Duration) -> Self {
        self.approval_timeout = Some(timeout);
        self
    }

    /// The hooks.
    pub fn hooks(&self) -> &Arc<Hooks> {
        &self.hooks
    }

    /// The diagnostics sink.
    pub fn diagnostics(&self) -> &Diagnostics {
        &self.diagnostics
    }

    /// Whether the gate can only ever allow unchanged (no loop detection,
    /// no policies, no handlers).
    pub fn is_passthrough(&self) -> bool {
        self.loop_detector.is_none() && self.hooks.before_is_empty()
    }

    /// Steps 1–3: loop detection, trusted policies, plugin hooks. Returns
    /// one of the five outcomes without asking anyone.
    pub async fn before_tool_call(
        &self,
        event: BeforeToolCallEvent,
        ctx: &HookContext,
    ) -> GateOutcome {
        let mut event = event;
        // Matchers, policies and loop detection all see the normalised
        // name (`Bash` → `exec`), whoever calls the gate.
        event.tool_name = normalize_tool_name(&event.tool_name);
        self.before_normalised(event, ctx).await
    }

    /// [`Gate::before_tool_call`] for an event whose name is normalised:
    /// steps 1–3, then the exec-approvals review of an `exec` call.
    async fn before_normalised(
        &self,
        event: BeforeToolCallEvent,
        ctx: &HookContext,
    ) -> GateOutcome {
        let tool = event.tool_name.clone();
        let outcome = self.before_hooks(event, ctx).await;
        match &self.exec_approvals {
            Some(exec) => exec.review(&tool, outcome, ctx, self.broker.is_some()),
            None => outcome,
        }
    }

    /// Steps 1–3 for an event whose name is normalised.
    async fn before_hooks(&self, event: BeforeToolCallEvent, ctx: &HookContext) -> GateOutcome {
        let mut event = event;
        if let Some(detector) = &self.loop_detector
            && let Some(blocked) = self.loop_step(detector, &event, ctx)
        {
            return GateOutcome::Blocked(blocked);
        }
        if self.hooks.before_is_empty() {
            return GateOutcome::Allow {
                params: event.params,
            };
        }
        let original = event.params.clone();
        let mut approval: Option<ApprovalSpec> = None;

        for policy in self.hooks.trusted.in_order() {
            if !policy.matcher.matches(&event.tool_name) {
                continue;
            }
            let copy = event.clone();
            let result =
                run_guarded(policy.policy.evaluate(&copy, ctx), Some(policy.timeout)).await;
            let decision = match result {
                Ok(Some(d)) => d,
                Ok(None) => continue,
                Err(failure) => {
                    tracing::warn!(
                        target: "talon::tools",
                        policy = %policy.full_id,
                        class = failure.class(),
                        "trusted tool policy failed; blocking (fail closed)"
                    );
                    // The failure's own text may quote the call; it goes to
                    // the debug log only, never to the model.
                    tracing::debug!(target: "talon::tools", policy = %policy.full_id, "{}", failure.describe());
                    let mut blocked = BlockedCall::new(
                        DeniedReason::HookFailure,
                        format!("blocked by {}: policy evaluation failed", policy.full_id),
                    )
                    .source(policy.full_id.clone());
                    blocked.failure = Some(failure.class().to_owned());
                    blocked.detail = Some(failure.describe());
                    return GateOutcome::Failed(blocked);
                }
            };
            if decision.allow == Some(false) || decision.block == Some(true) {
                let reason = decision
                    .reason
                    .unwrap_or_else(|| format!("blocked by {}", policy.full_id));
                return GateOutcome::Blocked(
                    BlockedCall::new(DeniedReason::TrustedPolicy, reason)
                        .source(policy.full_id.clone()),
                );
            }
            if let Some(params) = decision.params
                && approval.is_none()
            {
                event.derived_paths = derive_paths(&event.tool_name, &params);
                event.params = params;
            }
            if approval.is_none()
                && let Some(mut spec) = decision.require_approval
            {
                spec.plugin_id = Some(policy.full_id.clone());
                approval = Some(spec);
            }
        }

        let merged = run_before_handlers(&self.hooks.before, &event, ctx, approval.is_some()).await;
        if let Some((hook, failure)) = merged.failure {
            tracing::warn!(
                target: "talon::tools",
                hook = %hook,
                class = failure.class(),
                "before_tool_call handler failed; blocking (fail closed)"
            );
            tracing::debug!(target: "talon::tools", hook = %hook, "{}", failure.describe());
            let mut blocked =
                BlockedCall::new(DeniedReason::HookFailure, HOOK_FAILURE_REASON).source(hook);
            blocked.failure = Some(failure.class().to_owned());
            blocked.detail = Some(failure.describe());
            return GateOutcome::Failed(blocked);
        }
        if merged.block {
            let reason = merged
                .block_reason
                .unwrap_or_else(|| "Tool call blocked by plugin hook".to_owned());
            let mut blocked = BlockedCall::new(DeniedReason::PluginBeforeToolCall, reason);
            blocked.source = merged.blocked_by;
            return GateOutcome::Blocked(blocked);
        }
        let mut params = event.params;
        if let Some(hook_params) = merged.params {
            for (k, v) in hook_params {
                params.insert(k, v);
            }
        }
        let rewritten = params != original;
        // A trusted policy's approval and a plugin's are separate
        // questions, asked in that order; neither replaces the other.
        let approvals: Vec<ApprovalSpec> = approval.into_iter().chain(merged.approval).collect();
        if approvals.is_empty() {
            if rewritten {
                GateOutcome::AllowRewritten { params }
            } else {
                GateOutcome::Allow { params }
            }
        } else {
            GateOutcome::NeedsApproval {
                params,
                rewritten,
                approvals,
            }
        }
    }

    /// The whole gate: steps 1–3, then the approval (an unresolved,
    /// timed-out or cancelled approval denies). Emits `blocked`
    /// diagnostics; a blocked call's outcome is recorded for loop
    /// detection.
    pub async fn check(&self, event: BeforeToolCallEvent, ctx: &HookContext) -> GateVerdict {
        let mut event = event;
        event.tool_name = normalize_tool_name(&event.tool_name);
        let tool = event.tool_name.clone();
        let call_id = event.tool_call_id.clone().unwrap_or_default();
        let verdict = match self.before_normalised(event, ctx).await {
            GateOutcome::Allow { params } => GateVerdict::Run {
                params,
                rewritten: false,
                approval: None,
                exec_pin: None,
            },
            GateOutcome::AllowRewritten { params } => GateVerdict::Run {
                params,
                rewritten: true,
                approval: None,
                exec_pin: None,
            },
            GateOutcome::NeedsApproval {
                params,
                rewritten,
                approvals,
            } => {
                self.resolve_approvals(&tool, &call_id, params, rewritten, approvals, ctx)
                    .await
            }
            GateOutcome::Blocked(b) | GateOutcome::Failed(b) => GateVerdict::Blocked(b),
        };
        if let GateVerdict::Blocked(blocked) = &verdict {
            self.emit_blocked(&tool, &call_id, ctx, blocked);
            if blocked.denied_reason != DeniedReason::ToolLoop {
                self.record_outcome(ctx, &call_id, &tool, LoopOutcome::Blocked(&blocked.reason));
            }
        }
        verdict
    }

    /// Tell loop detection how a call ended (after it ran, or was blocked
    /// outside the gate).
    pub fn record_outcome(
        &self,
        ctx: &HookContext,
        call_id: &str,
        tool_name: &str,
        outcome: LoopOutcome<'_>,
    ) {
        if let Some(detector) = &self.loop_detector {
            detector.record_outcome(
                &ctx.session_key,
                ctx.run_id.as_deref(),
                call_id,
                tool_name,
                outcome,
            );
        }
    }

    /// Emit a `tool.execution.blocked` diagnostic (also used by the runtime
    /// for policy blocks).
    pub fn emit_blocked(
        &self,
        tool: &str,
        call_id: &str,
        ctx: &HookContext,
        blocked: &BlockedCall,
    ) {
        let mut ev = DiagnosticEvent::new(
            DiagnosticKind::Blocked,
            tool,
            call_id,
            &ctx.session_key,
            ctx.run_id.as_deref(),
        );
        ev.denied_reason = Some(blocked.denied_reason.as_str().to_owned());
        ev.reason = Some(blocked.reason.clone());
        ev.source = blocked.source.clone();
        self.diagnostics.emit(&ev);
    }

    /// Only the loop-detection step (records the call). The runtime uses
    /// it for calls of tools that are not in the table, so a model that
    /// keeps calling an unknown tool is stopped.
    pub fn loop_check_only(
        &self,
        event: &BeforeToolCallEvent,
        ctx: &HookContext,
    ) -> Option<BlockedCall> {
        let detector = self.loop_detector.as_ref()?;
        self.loop_step(detector, event, ctx)
    }

    fn loop_step(
        &self,
        detector: &LoopDetector,
        event: &BeforeToolCallEvent,
        ctx: &HookContext,
    ) -> Option<BlockedCall> {
        let run_id = ctx.run_id.as_deref().or(event.run_id.as_deref());
        let call_id = event.tool_call_id.as_deref().unwrap_or_default();
        let verdict = detector.check(&ctx.session_key, run_id, &event.tool_name, &event.params);
        // Unlike OpenClaw (#127701), a vetoed call is recorded too, so the
        // global circuit breaker can escalate a run that keeps retrying.
        detector.record_call(
            &ctx.session_key,
            run_id,
            &event.tool_name,
            call_id,
            &event.params,
        );
        match verdict {
            LoopVerdict::Ok => None,
            LoopVerdict::Warning {
                detector: kind,
                count,
                message,
                emit,
                ..
            } => {
                if emit {
                    tracing::warn!(
                        target: "talon::tools",
                        detector = kind.as_str(),
                        count,
                        tool = %event.tool_name,
                        "{message}"
                    );
                }
                None
            }
            LoopVerdict::Critical {
                detector: kind,
                message,
                stop_run,
                ..
            } => {
                detector.record_outcome(
                    &ctx.session_key,
                    run_id,
                    call_id,
                    &event.tool_name,
                    LoopOutcome::LoopVeto,
                );
                if stop_run {
                    ctx.abort.cancel(format!("tool-loop: {}", kind.as_str()));
                }
                Some(
                    BlockedCall::new(DeniedReason::ToolLoop, message)
                        .source(kind.as_str())
                        .config_key("tools.loopDetection"),
                )
            }
        }
    }

    /// Ask each approval in turn (a trusted policy's first); the first
    /// that does not allow blocks the call, and the ones not yet asked are
    /// told `cancelled`.
    async fn resolve_approvals(
        &self,
        tool: &str,
        call_id: &str,
        params: Map<String, Value>,
        rewritten: bool,
        approvals: Vec<ApprovalSpec>,
        ctx: &HookContext,
    ) -> GateVerdict {
        let mut last = None;
        let mut exec_pin = None;
        let mut queue = approvals.into_iter();
        while let Some(spec) = queue.next() {
            if spec.exec_pin.is_some() {
                exec_pin.clone_from(&spec.exec_pin);
            }
            match self
                .resolve_approval(tool, call_id, &params, spec, ctx)
                .await
            {
                Ok(resolution) => last = Some(resolution),
                Err(blocked) => {
                    for rest in queue {
                        notify_resolution(&rest, ApprovalDecision::Cancelled);
                    }
                    return GateVerdict::Blocked(blocked);
                }
            }
        }
        GateVerdict::Run {
            params,
            rewritten,
            approval: last,
            exec_pin,
        }
    }

    async fn resolve_approval(
        &self,
        tool: &str,
        call_id: &str,
        params: &Map<String, Value>,
        approval: ApprovalSpec,
        ctx: &HookContext,
    ) -> Result<ApprovalResolution, BlockedCall> {
        let source = approval.plugin_id.clone().unwrap_or_default();
        let Some(broker) = &self.broker else {
            notify_resolution(&approval, ApprovalDecision::Cancelled);
            return Err(BlockedCall::new(
                DeniedReason::ApprovalUnavailable,
                format!(
                    "{} requires approval (\"{}\") and no approver is attached; unresolved approvals deny",
                    if source.is_empty() { "a hook" } else { source.as_str() },
                    approval.title
                ),
            )
            .source(source));
        };
        let request = ApprovalRequest::new(
            &approval,
            call_id,
            tool,
            params,
            &ctx.agent_id,
            &ctx.session_key,
            self.approval_timeout.unwrap_or(DEFAULT_APPROVAL_TIMEOUT),
        );
        if let Some(shown) = request.too_large_to_show() {
            // Never ask about something the approver cannot see whole.
            notify_resolution(&approval, ApprovalDecision::Cancelled);
            return Err(BlockedCall::new(
                DeniedReason::ApprovalUnavailable,
                format!(
                    "the call needs approval but what the approver must read is {shown} bytes, \
                     more than the {} that are shown whole; nothing was asked or run. Split the \
                     command or move its content into a file",
                    crate::approval::APPROVAL_DISPLAY_MAX_BYTES
                ),
            )
            .source(source));
        }
        let resolution = broker.request(request, ctx.abort.token()).await;
        notify_resolution(&approval, resolution.decision);
        let decision = resolution.decision;
        let denied = match decision {
            ApprovalDecision::AllowOnce | ApprovalDecision::AllowAlways => return Ok(resolution),
            ApprovalDecision::Deny => DeniedReason::ApprovalDenied,
            ApprovalDecision::Timeout => DeniedReason::ApprovalTimeout,
            ApprovalDecision::Cancelled => DeniedReason::ApprovalCancelled,
        };
        Err(BlockedCall::new(
            denied,
            format!(
                "approval \"{}\" ended with {}",
                approval.title,
                decision.as_str()
            ),
        )
        .source(source))
    }
}

fn notify_resolution(approval: &ApprovalSpec, decision: ApprovalDecision) {
    if let Some(cb) = &approval.on_resolution
        && run_sync_guarded(|| cb(decision)).is_err()
    {
        tracing::warn!(target: "talon::tools", "an onResolution callback panicked");
    }
}
