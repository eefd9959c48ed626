//! `Hooks`: every handler and policy registered for a host.

use std::sync::Arc;

use crate::after::AfterToolCallHandler;
use crate::before::BeforeToolCallHandler;
use crate::exec_env::{ExecEnvHooks, ResolveExecEnvHandler};
use crate::persist::{BeforeMessageWriteHandler, ToolResultPersistHandler};
use crate::registration::{Registration, insert_by_priority};
use crate::trusted::TrustedPolicies;

/// Every handler and trusted policy of a host, sorted for running.
/// Build it once, then share it (`Arc`) between runs.
#[derive(Default)]
pub struct Hooks {
    pub(crate) trusted: TrustedPolicies,
    pub(crate) before: Vec<(Registration, Arc<dyn BeforeToolCallHandler>)>,
    pub(crate) after: Vec<(Registration, Arc<dyn AfterToolCallHandler>)>,
    pub(crate) exec_env: ExecEnvHooks,
    pub(crate) persist: Vec<(Registration, Arc<dyn ToolResultPersistHandler>)>,
    pub(crate) message_write: Vec<(Registration, Arc<dyn BeforeMessageWriteHandler>)>,
}

fn ids<T>(list: &[(Registration, T)]) -> Vec<String> {
    list.iter().map(|(r, _)| r.plugin_id.clone()).collect()
}

impl std::fmt::Debug for Hooks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Hooks")
            .field("trusted", &self.trusted)
            .field("before_tool_call", &ids(&self.before))
            .field("after_tool_call", &ids(&self.after))
            .field("tool_result_persist", &ids(&self.persist))
            .field("before_message_write", &ids(&self.message_write))
            .finish()
    }
}

impl Hooks {
    /// No hooks.
    pub fn new() -> Self {
        Self::default()
    }

    /// Register a `before_tool_call` handler.
    pub fn on_before_tool_call(
        &mut self,
        registration: Registration,
        handler: Arc<dyn BeforeToolCallHandler>,
    ) {
        insert_by_priority(&mut self.before, registration, handler);
    }

    /// Register an `after_tool_call` observer.
    pub fn on_after_tool_call(
        &mut self,
        registration: Registration,
        handler: Arc<dyn AfterToolCallHandler>,
    ) {
        insert_by_priority(&mut self.after, registration, handler);
    }

    /// Register a `resolve_exec_env` handler.
    pub fn on_resolve_exec_env(
        &mut self,
        registration: Registration,
        handler: Arc<dyn ResolveExecEnvHandler>,
    ) {
        self.exec_env.register(
            registration.plugin_id,
            registration.priority,
            registration.timeout,
            handler,
        );
    }

    /// Register a `tool_result_persist` handler (synchronous).
    pub fn on_tool_result_persist(
        &mut self,
        registration: Registration,
        handler: Arc<dyn ToolResultPersistHandler>,
    ) {
        insert_by_priority(&mut self.persist, registration, handler);
    }

    /// Register a `before_message_write` handler (synchronous).
    pub fn on_before_message_write(
        &mut self,
        registration: Registration,
        handler: Arc<dyn BeforeMessageWriteHandler>,
    ) {
        insert_by_priority(&mut self.message_write, registration, handler);
    }

    /// The trusted tool policies (register through this).
    pub fn trusted_mut(&mut self) -> &mut TrustedPolicies {
        &mut self.trusted
    }

    /// The trusted tool policies.
    pub fn trusted(&self) -> &TrustedPolicies {
        &self.trusted
    }

    /// The `resolve_exec_env` handlers.
    pub fn exec_env(&self) -> &ExecEnvHooks {
        &self.exec_env
    }

    /// Whether nothing can change a `before_tool_call` decision (the gate's
    /// fast path).
    pub fn before_is_empty(&self) -> bool {
        self.trusted.is_empty() && self.before.is_empty()
    }

    /// Whether any `after_tool_call` observer is registered (callers skip
    /// building the event when none is).
    pub fn has_after_observers(&self) -> bool {
        !self.after.is_empty()
    }

    /// The ids of the `before_tool_call` handlers in run order.
    pub fn before_tool_call_ids(&self) -> Vec<String> {
        self.before
            .iter()
            .map(|(r, _)| r.plugin_id.clone())
            .collect()
    }
}
