//! Plugin `before_tool_call` handlers and OpenClaw's merge rules.

use std::sync::Arc;

use serde_json::{Map, Value};

use crate::error::HookError;
use crate::event::{ApprovalSpec, BeforeToolCallEvent, BeforeToolCallResult, HookContext};
use crate::guard::{HandlerFailure, run_guarded};
use crate::registration::{DEFAULT_BEFORE_TOOL_CALL_TIMEOUT, Registration};

/// A plugin's `before_tool_call` handler.
#[async_trait::async_trait]
pub trait BeforeToolCallHandler: Send + Sync {
    /// Decide on one call. `Ok(None)` is no decision; an `Err`, a panic or
    /// a timeout blocks the call (fail closed).
    async fn before_tool_call(
        &self,
        event: &BeforeToolCallEvent,
        ctx: &HookContext,
    ) -> Result<Option<BeforeToolCallResult>, HookError>;
}

/// The merged answer of every plugin handler for one call.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct MergedHooks {
    /// Sticky block: once set, later handlers did not run.
    pub(crate) block: bool,
    /// The last reason a handler gave.
    pub(crate) block_reason: Option<String>,
    /// The plugin that blocked.
    pub(crate) blocked_by: Option<String>,
    /// The last params a handler returned while params were not frozen.
    pub(crate) params: Option<Map<String, Value>>,
    /// The first approval request, stamped with its plugin id.
    pub(crate) approval: Option<ApprovalSpec>,
    /// A handler failed (the call is blocked, kind failure).
    pub(crate) failure: Option<(String, HandlerFailure)>,
}

/// Run the matching handlers by priority and merge their results:
/// - every handler sees its own copy of `event` (never an earlier rewrite);
/// - `block: true` is terminal and sticky, `block: false` is no decision;
/// - the last returned `params` wins, until the first `requireApproval`
///   freezes the snapshot: after it, only handlers of the plugin that asked
///   may still change params; any later handler may still block;
/// - the first `requireApproval` wins and is stamped with its plugin id;
/// - an error, panic or timeout stops the chain as a failure (fail closed);
/// - `frozen` (a trusted policy already asked for approval) freezes params
///   for every handler; a handler's own approval request is still kept and
///   asked separately.
pub(crate) async fn run_before_handlers(
    handlers: &[(Registration, Arc<dyn BeforeToolCallHandler>)],
    event: &BeforeToolCallEvent,
    ctx: &HookContext,
    frozen: bool,
) -> MergedHooks {
    let mut merged = MergedHooks::default();
    for (reg, handler) in handlers {
        if !reg.matcher.matches(&event.tool_name) {
            continue;
        }
        let copy = event.clone();
        let timeout = reg.timeout.unwrap_or(DEFAULT_BEFORE_TOOL_CALL_TIMEOUT);
        let outcome = run_guarded(handler.before_tool_call(&copy, ctx), Some(timeout)).await;
        let result = match outcome {
            Ok(Some(result)) => result,
            Ok(None) => continue,
            Err(failure) => {
                merged.failure = Some((reg.plugin_id.clone(), failure));
                return merged;
            }
        };
        if let Some(reason) = result.block_reason {
            merged.block_reason = Some(reason);
        }
        if let Some(params) = result.params {
            let frozen_by_other = frozen
                || merged
                    .approval
                    .as_ref()
                    .is_some_and(|a| a.plugin_id.as_deref() != Some(reg.plugin_id.as_str()));
            if frozen_by_other {
                tracing::info!(
                    target: "talon::tools",
                    hook = %reg.plugin_id,
                    "params rewrite ignored: an approval already froze the parameters"
                );
            } else {
                merged.params = Some(params);
            }
        }
        if merged.approval.is_none()
            && let Some(mut spec) = result.require_approval
        {
            spec.plugin_id = Some(reg.plugin_id.clone());
            merged.approval = Some(spec);
        }
        if result.block == Some(true) {
            merged.block = true;
            merged.blocked_by = Some(reg.plugin_id.clone());
            return merged;
        }
    }
    merged
}
