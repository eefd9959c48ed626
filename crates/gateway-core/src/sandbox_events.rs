//! The gateway's sandbox event sink: each event a sandbox backend reports
//! (a container recycled after an OOM kill or repeated engine kills)
//! becomes one whole record in the call journal, tool
//! [`SANDBOX_RECYCLE_TOOL`], so an operator finds it next to the calls it
//! interrupted.

use std::sync::atomic::{AtomicU64, Ordering};

use talon_journal::{CallEnd, CallJournal, CallStart, Outcome};
use talon_sandbox_core::{SandboxEvent, SandboxEventSink};

/// The journal's tool name for a recycled sandbox.
pub const SANDBOX_RECYCLE_TOOL: &str = "sandbox.recycle";

/// Writes sandbox events into the call journal.
#[derive(Debug)]
pub(crate) struct JournalSandboxEvents {
    journal: CallJournal,
    seq: AtomicU64,
}

impl JournalSandboxEvents {
    pub(crate) fn new(journal: CallJournal) -> Self {
        JournalSandboxEvents {
            journal,
            seq: AtomicU64::new(0),
        }
    }
}

impl SandboxEventSink for JournalSandboxEvents {
    fn event(&self, event: &SandboxEvent) {
        let SandboxEvent::Recycled(recycled) = event else {
            return;
        };
        let n = self.seq.fetch_add(1, Ordering::Relaxed);
        // The agent is the scope's when the scope is one agent's
        // (`agent:<id>...`); a shared or odd scope is the backend's own.
        let agent_id = recycled
            .scope_key
            .strip_prefix("agent:")
            .and_then(|rest| rest.split(':').next())
            .filter(|id| !id.is_empty())
            .unwrap_or("sandbox")
            .to_owned();
        let session_key = if recycled.scope_key.is_empty() {
            "sandbox".to_owned()
        } else {
            recycled.scope_key.clone()
        };
        let params = serde_json::to_value(event).unwrap_or_default();
        let start = CallStart {
            call_id: format!("sandbox-recycle-{}-{}-{n}", recycled.name, recycled.at_ms),
            session_key,
            agent_id,
            tool: SANDBOX_RECYCLE_TOOL.to_owned(),
            params_digest: talon_journal::params_digest(&params),
            at_ms: recycled.at_ms,
            tool_call_id: None,
        };
        let summary = format!(
            "{} container {} ({}) {}: {} (exit {}); the next use creates a fresh one [{}]",
            recycled.backend_id,
            recycled.name,
            recycled.container_id,
            if recycled.removed {
                "removed"
            } else {
                "could not be removed"
            },
            recycled.reason,
            recycled.exit_code,
            recycled.reason.code()
        );
        let end = CallEnd {
            outcome: Outcome::Error,
            summary,
            at_ms: recycled.at_ms,
            duration_us: 0,
        };
        if let Err(e) = self.journal.record(start, end) {
            tracing::error!(container = %recycled.name, error = %e, "the call journal could not record a recycled sandbox");
        }
    }
}

#[cfg(test)]
#[path = "sandbox_events_tests.rs"]
mod tests;
