//! `health` (a summary across areas).

use std::sync::atomic::Ordering;

use talon_gateway_protocol::{Containment, HealthResponse};

use crate::gateway::Areas;

/// `health`.
pub(crate) fn health(areas: &Areas) -> HealthResponse {
    let g = areas.config.generation();
    let draining = areas.calls.is_shutting_down();
    HealthResponse {
        ok: !draining,
        status: if draining { "draining" } else { "ok" }.to_owned(),
        version: env!("CARGO_PKG_VERSION").to_owned(),
        generation: g.id,
        config_origin: g.origin.clone(),
        uptime_ms: u64::try_from(areas.started_at.elapsed().as_millis()).unwrap_or(u64::MAX),
        sessions: areas.sessions.registry.len(),
        in_flight: areas.metrics.in_flight.load(Ordering::Relaxed),
        runners: areas.runners.count(),
        approvals_pending: areas.approvals.pending_count(),
        interrupted_at_start: areas.calls.recovery.interrupted.len(),
        approvals_denied_at_start: areas.approvals.denied_at_start.len(),
        containment: containment(),
    }
}

/// How this process contains the process trees it starts (`cgroup` or
/// `process-group`), `None` when no supervisor has started yet (the
/// gateway binary starts the shared one before it serves).
fn containment() -> Option<Containment> {
    talon_proc_tree::Supervisor::shared_if_started().map(|s| Containment {
        mode: s.containment().mode().to_string(),
        reason: if let talon_proc_tree::Containment::ProcessGroup { reason } = s.containment() {
            Some(reason.clone())
        } else {
            None
        },
    })
}
