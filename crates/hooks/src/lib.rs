//! The gate every tool call passes, and the hooks around it.
//!
//! [`Gate::check`] runs, in this fixed order, with an early exit when
//! nothing is configured:
//!
//! 1. **Loop detection** ([`loop_detection`]; `tools.loopDetection`, off by
//!    default): OpenClaw's five detectors. A warning is logged (once per
//!    bucket of ten) and the call proceeds; a critical verdict vetoes it
//!    with `deniedReason: "tool-loop"`. Unlike OpenClaw (#127701), the
//!    vetoed call is recorded too, so a run that keeps retrying trips the
//!    global circuit breaker, which also cancels the run (its
//!    `Canceller`, with reason `tool-loop: …`).
//! 2. **Trusted tool policies** ([`TrustedPolicies`]): host-level, built-ins
//!    first, then plugins in registration order; a plugin must declare each
//!    policy id it registers.
//! 3. **Plugin `before_tool_call` handlers** ([`BeforeToolCallHandler`]) by
//!    priority, each on its own copy of the event: `block: true` is
//!    terminal and sticky; the last `params` win (shallow-merged over the
//!    call's, so a hook replaces keys but cannot remove them) until the
//!    first `requireApproval` freezes them; an error, panic or timeout
//!    blocks the call (fail closed). [`CommandHook`]s are handlers written as
//!    programs (`tools.hooks`).
//! 4. **Approval** through an [`approval::ApprovalBroker`] (a trusted
//!    policy's request and a plugin's are asked in turn; both must allow):
//!    single use,
//!    bound to the call id and the hash of the frozen parameters;
//!    unresolved, timed-out and cancelled approvals deny; `allow-always`
//!    is remembered per scope (in SQLite with
//!    [`approval::SqliteApprovalBroker`], so it survives a restart). The
//!    broker's logic is written once over an [`approval::GrantStore`]; with
//!    the `postgres` feature a fleet of gateways shares one store on
//!    PostgreSQL (`approval::PostgresApprovalBroker`): a request raised on
//!    one gateway is resolved on any, the first decision wins in SQL, and a
//!    lost database never approves.
//!
//! [`Gate::before_tool_call`] stops before step 4 and returns one of the
//! five [`GateOutcome`]s: allow, allow with rewritten params, needs
//! approval, blocked, failed.
//!
//! Around the gate: [`Hooks::fire_after_tool_call`] (observers in parallel,
//! fire and forget), `resolve_exec_env` plugins ([`exec_env`]; their
//! variables pass `talon-exec-env`'s key policy), the synchronous [`Hooks::tool_result_persist`] and
//! [`Hooks::before_message_write`] with bounded `details`, diagnostic
//! events ([`Diagnostics`]) and failure-log redaction ([`redact`]).
//!
//! ```
//! use std::sync::Arc;
//! use serde_json::{Map, json};
//! use talon_hooks::{
//!     BeforeToolCallEvent, BeforeToolCallHandler, BeforeToolCallResult, Gate, GateVerdict,
//!     HookContext, HookError, Hooks, Registration, ToolMatcher,
//! };
//!
//! struct NoRm;
//! #[async_trait::async_trait]
//! impl BeforeToolCallHandler for NoRm {
//!     async fn before_tool_call(
//!         &self,
//!         event: &BeforeToolCallEvent,
//!         _ctx: &HookContext,
//!     ) -> Result<Option<BeforeToolCallResult>, HookError> {
//!         let cmd = event.params.get("command").and_then(|c| c.as_str()).unwrap_or("");
//!         Ok(cmd.contains("rm -rf").then(|| BeforeToolCallResult::block("no rm -rf")))
//!     }
//! }
//!
//! let mut hooks = Hooks::new();
//! hooks.on_before_tool_call(
//!     Registration::new("guard").matcher(ToolMatcher::ids(["exec"])),
//!     Arc::new(NoRm),
//! );
//! let gate = Gate::new(Arc::new(hooks));
//! let ctx = HookContext::new("main", "agent:main:main");
//! let mut params = Map::new();
//! params.insert("command".into(), json!("rm -rf /"));
//! let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
//! let verdict = rt.block_on(gate.check(BeforeToolCallEvent::new("exec", params), &ctx));
//! assert!(matches!(verdict, GateVerdict::Blocked(b) if b.reason == "no rm -rf"));
//! ```
//!
//! [`HooksConfig::check`] is the load-time check of the command hooks
//! (every front end runs it through `talon-runtime`): each hook whose
//! program is missing or not executable, whose `#!` interpreter or working
//! directory is missing, or whose settings are refused, as a
//! [`HookProblem`] with a stable code (`hook.missing_program`,
//! `hook.not_executable`, `hook.bad_cwd`, `hook.bad_config`). It changes
//! nothing at call time: such a hook stays registered and a
//! `before_tool_call` one blocks every call it matches.
//!
//! This crate does not decide which tools a run has (`talon-tool-policy`),
//! run tools, or assemble a run's table (`talon-runtime`).
#![deny(missing_docs)]

pub use crate::after::{
    AFTER_RESULT_TEXT_LIMIT, AfterCallTasks, AfterToolCallEvent, AfterToolCallHandler,
    redact_result,
};
pub use crate::before::BeforeToolCallHandler;
pub use crate::command::{CommandHook, MAX_HOOK_OUTPUT};
pub use crate::config::{CommandHookConfig, HooksConfig, MAX_COMMAND_HOOK_TIMEOUT_MS};
pub use crate::diagnostics::{DiagnosticEvent, DiagnosticKind, DiagnosticSubscriber, Diagnostics};
pub use crate::error::{Error, HookError, HookErrorKind, Result};
pub use crate::event::{
    ApprovalSpec, BeforeToolCallEvent, BeforeToolCallResult, HookContext, OnResolution, Requester,
    derive_paths,
};
pub use crate::gate::{DEFAULT_APPROVAL_TIMEOUT, Gate, HOOK_FAILURE_REASON};
pub use crate::health::{HookEvent, HookProblem, HookProblemKind};
pub use crate::outcome::{BlockedCall, DeniedReason, GateOutcome, GateVerdict};
pub use crate::persist::{
    BeforeMessageWriteHandler, MAX_PERSISTED_DETAILS_BYTES, MessageWrite, ToolResultMessage,
    ToolResultPersistHandler, WriteDecision, bound_details,
};
pub use crate::registration::{
    DEFAULT_AFTER_TOOL_CALL_TIMEOUT, DEFAULT_BEFORE_TOOL_CALL_TIMEOUT, Registration, ToolMatcher,
};
pub use crate::registry::Hooks;
pub use crate::trusted::{PluginDeclaration, TrustedDecision, TrustedPolicies, TrustedToolPolicy};

mod after;
pub mod approval;
mod before;
mod command;
mod config;
mod diagnostics;
mod error;
mod event;
pub mod exec_approvals;
pub mod exec_env;
mod gate;
mod guard;
mod health;
pub mod loop_detection;
mod outcome;
mod persist;
pub mod process;
pub mod redact;
mod registration;
mod registry;
mod trusted;
