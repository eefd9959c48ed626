//! What the gate decides.

use serde::Serialize;
use serde_json::{Map, Value};

use crate::approval::ApprovalResolution;
use crate::event::ApprovalSpec;

/// Why a call was not run. The wire names are OpenClaw's `deniedReason`
/// values where OpenClaw has one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum DeniedReason {
    /// The loop detector vetoed the call.
    ToolLoop,
    /// The tool policy removed the tool from this run.
    ToolPolicy,
    /// A trusted tool policy blocked the call.
    TrustedPolicy,
    /// A plugin `before_tool_call` handler blocked the call.
    PluginBeforeToolCall,
    /// The approver denied the call.
    ApprovalDenied,
    /// Nobody answered the approval in time.
    ApprovalTimeout,
    /// The call was cancelled while waiting for approval.
    ApprovalCancelled,
    /// Approval was required and nobody can be asked.
    ApprovalUnavailable,
    /// A handler or policy failed (error, panic, timeout): fail closed.
    HookFailure,
    /// A trigger-based restriction of this run (memory flush, cron self
    /// scope).
    TriggerScope,
    /// `tools.exec.security` / the exec allowlist refused the command, or
    /// the approvals file is unusable (fail closed).
    ExecApproval,
}

impl DeniedReason {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            DeniedReason::ToolLoop => "tool-loop",
            DeniedReason::ToolPolicy => "tool-policy",
            DeniedReason::TrustedPolicy => "trusted-policy",
            DeniedReason::PluginBeforeToolCall => "plugin-before-tool-call",
            DeniedReason::ApprovalDenied => "approval-denied",
            DeniedReason::ApprovalTimeout => "approval-timeout",
            DeniedReason::ApprovalCancelled => "approval-cancelled",
            DeniedReason::ApprovalUnavailable => "approval-unavailable",
            DeniedReason::HookFailure => "hook-failure",
            DeniedReason::TriggerScope => "trigger-scope",
            DeniedReason::ExecApproval => "exec-approval",
        }
    }
}

/// A call that will not run, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BlockedCall {
    /// The category.
    pub denied_reason: DeniedReason,
    /// The sentence shown to the model and the operator.
    pub reason: String,
    /// The hook, plugin, policy id, loop detector or policy layer
    /// responsible.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// The config key that would change the outcome, when one does.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub config_key: Option<String>,
    /// For fail-closed blocks: how the hook failed (`error`, `panic`,
    /// `timeout`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failure: Option<String>,
    /// For fail-closed blocks: the failure's own message, for the operator
    /// (CLI, gateway). It may quote the call, so it is never part of the
    /// model-facing result ([`BlockedCall::to_model_json`]) nor of
    /// diagnostics.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
}

impl BlockedCall {
    /// A block.
    pub fn new(denied_reason: DeniedReason, reason: impl Into<String>) -> Self {
        BlockedCall {
            denied_reason,
            reason: reason.into(),
            source: None,
            config_key: None,
            failure: None,
            detail: None,
        }
    }

    /// Builder: the responsible hook / policy / layer.
    pub fn source(mut self, source: impl Into<String>) -> Self {
        self.source = Some(source.into());
        self
    }

    /// Builder: the config key.
    pub fn config_key(mut self, key: impl Into<String>) -> Self {
        self.config_key = Some(key.into());
        self
    }

    /// The structured "blocked" result fed back to the model.
    pub fn to_model_json(&self, tool: &str) -> Value {
        let mut map = Map::new();
        map.insert("status".into(), Value::String("blocked".into()));
        map.insert("tool".into(), Value::String(tool.to_owned()));
        map.insert(
            "deniedReason".into(),
            Value::String(self.denied_reason.as_str().to_owned()),
        );
        map.insert("reason".into(), Value::String(self.reason.clone()));
        if let Some(s) = &self.source {
            map.insert("source".into(), Value::String(s.clone()));
        }
        if let Some(k) = &self.config_key {
            map.insert("configKey".into(), Value::String(k.clone()));
        }
        Value::Object(map)
    }
}

/// The gate's answer before any approval is resolved: exactly one of the
/// five outcomes.
#[derive(Debug, Clone, PartialEq)]
pub enum GateOutcome {
    /// Run the call with its parameters unchanged.
    Allow {
        /// The parameters.
        params: Map<String, Value>,
    },
    /// Run the call with rewritten parameters.
    AllowRewritten {
        /// The rewritten parameters.
        params: Map<String, Value>,
    },
    /// Ask a human first; the parameters are frozen.
    NeedsApproval {
        /// The frozen parameter snapshot the approver reviews.
        params: Map<String, Value>,
        /// Whether they differ from the model's.
        rewritten: bool,
        /// The requests, in the order they are asked: a trusted policy's
        /// first, then the first plugin hook's (each stamped with its
        /// id). Every one must allow.
        approvals: Vec<ApprovalSpec>,
    },
    /// Vetoed: a structured "blocked" result goes back to the model.
    Blocked(BlockedCall),
    /// A handler or policy failed; the call is blocked (fail closed).
    Failed(BlockedCall),
}

/// The gate's final answer, after any approval.
#[derive(Debug, Clone, PartialEq)]
pub enum GateVerdict {
    /// Run the call.
    Run {
        /// The parameters to run with.
        params: Map<String, Value>,
        /// Whether a hook or policy rewrote them.
        rewritten: bool,
        /// The (last) approval that let it through, if one was needed.
        approval: Option<ApprovalResolution>,
        /// What an exec approval was bound to (working directory and file
        /// operands): the exec tool verifies it immediately before the
        /// command starts and refuses to run when it changed.
        exec_pin: Option<std::sync::Arc<crate::exec_approvals::ExecPin>>,
    },
    /// Do not run it.
    Blocked(BlockedCall),
}
