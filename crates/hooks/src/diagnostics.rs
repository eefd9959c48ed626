//! Diagnostic events: `tool.execution.started`, `.blocked` (also a
//! security event), `.error` and `.completed`, through `tracing` and a
//! subscriber API. Events carry names, ids, reasons and error classes —
//! never parameters or output.

use std::sync::{Arc, RwLock};

use serde::Serialize;

/// What happened.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum DiagnosticKind {
    /// The call passed the gate and is about to run.
    #[serde(rename = "tool.execution.started")]
    Started,
    /// The call was blocked (veto or fail-closed failure).
    #[serde(rename = "tool.execution.blocked")]
    Blocked,
    /// The tool ran and failed.
    #[serde(rename = "tool.execution.error")]
    Error,
    /// The tool ran and returned a result.
    #[serde(rename = "tool.execution.completed")]
    Completed,
}

impl DiagnosticKind {
    /// The event name.
    pub fn as_str(self) -> &'static str {
        match self {
            DiagnosticKind::Started => "tool.execution.started",
            DiagnosticKind::Blocked => "tool.execution.blocked",
            DiagnosticKind::Error => "tool.execution.error",
            DiagnosticKind::Completed => "tool.execution.completed",
        }
    }
}

/// One diagnostic event.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DiagnosticEvent {
    /// What happened.
    pub kind: DiagnosticKind,
    /// The normalised tool name.
    pub tool_name: String,
    /// The call id.
    pub tool_call_id: String,
    /// The session key.
    pub session_key: String,
    /// The run id.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub run_id: Option<String>,
    /// For blocks: `tool-loop`, `tool-policy`, `trusted-policy`,
    /// `plugin-before-tool-call`, `approval`, `hook-failure`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub denied_reason: Option<String>,
    /// For blocks: the reason; for errors: none (messages may carry
    /// output).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The hook, policy or layer responsible.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// For errors: the class (`input`, `unauthorized`, `aborted`,
    /// `execution`, `timeout`, `panic`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error_class: Option<String>,
    /// For errors and completions: how long the tool ran.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<u64>,
}

impl DiagnosticEvent {
    /// An event with only the identifying fields set.
    pub fn new(
        kind: DiagnosticKind,
        tool_name: &str,
        tool_call_id: &str,
        session_key: &str,
        run_id: Option<&str>,
    ) -> Self {
        DiagnosticEvent {
            kind,
            tool_name: tool_name.to_owned(),
            tool_call_id: tool_call_id.to_owned(),
            session_key: session_key.to_owned(),
            run_id: run_id.map(str::to_owned),
            denied_reason: None,
            reason: None,
            source: None,
            error_class: None,
            duration_ms: None,
        }
    }
}

/// Receives diagnostic events. Must be quick and must not block.
pub trait DiagnosticSubscriber: Send + Sync {
    /// One event.
    fn on_event(&self, event: &DiagnosticEvent);
}

impl<F> DiagnosticSubscriber for F
where
    F: Fn(&DiagnosticEvent) + Send + Sync,
{
    fn on_event(&self, event: &DiagnosticEvent) {
        self(event);
    }
}

/// Where diagnostic events go: `tracing` (target `talon::tools`, blocks
/// also to `talon::security`) and every subscriber.
#[derive(Default, Clone)]
pub struct Diagnostics {
    subscribers: Arc<RwLock<Vec<Arc<dyn DiagnosticSubscriber>>>>,
}

impl std::fmt::Debug for Diagnostics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let n = self.subscribers.read().map(|s| s.len()).unwrap_or(0);
        f.debug_struct("Diagnostics")
            .field("subscribers", &n)
            .finish()
    }
}

impl Diagnostics {
    /// Add a subscriber.
    pub fn subscribe(&self, subscriber: Arc<dyn DiagnosticSubscriber>) {
        match self.subscribers.write() {
            Ok(mut s) => s.push(subscriber),
            Err(poisoned) => poisoned.into_inner().push(subscriber),
        }
    }

    /// Emit one event.
    pub fn emit(&self, event: &DiagnosticEvent) {
        match event.kind {
            DiagnosticKind::Blocked => {
                tracing::info!(
                    target: "talon::tools",
                    event = event.kind.as_str(),
                    tool = %event.tool_name,
                    call_id = %event.tool_call_id,
                    denied_reason = event.denied_reason.as_deref().unwrap_or(""),
                    source = event.source.as_deref().unwrap_or(""),
                    reason = event.reason.as_deref().unwrap_or(""),
                    "tool call blocked"
                );
                tracing::warn!(
                    target: "talon::security",
                    tool = %event.tool_name,
                    session = %event.session_key,
                    denied_reason = event.denied_reason.as_deref().unwrap_or(""),
                    source = event.source.as_deref().unwrap_or(""),
                    "tool call blocked"
                );
            }
            DiagnosticKind::Error => tracing::warn!(
                target: "talon::tools",
                event = event.kind.as_str(),
                tool = %event.tool_name,
                call_id = %event.tool_call_id,
                error_class = event.error_class.as_deref().unwrap_or(""),
                duration_ms = event.duration_ms.unwrap_or(0),
                "tool call failed"
            ),
            DiagnosticKind::Started | DiagnosticKind::Completed => tracing::debug!(
                target: "talon::tools",
                event = event.kind.as_str(),
                tool = %event.tool_name,
                call_id = %event.tool_call_id,
            ),
        }
        let subscribers = match self.subscribers.read() {
            Ok(s) => s.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        };
        for s in subscribers {
            if crate::guard::run_sync_guarded(|| s.on_event(event)).is_err() {
                tracing::warn!(target: "talon::tools", "a diagnostic subscriber panicked");
            }
        }
    }
}
