//! `health` (a summary across areas).

use std::sync::atomic::Ordering;

use talon_gateway_protocol::{Containment, HealthResponse, HookProblem, StateStatus};

use crate::gateway::{Areas, Generation};

/// `health`. The fleet (on a shared database) is read on a blocking
/// thread, never on the runtime's.
pub(crate) async fn health(areas: &Areas) -> HealthResponse {
    let state = match areas.fleet.clone() {
        Some(fleet) => tokio::task::spawn_blocking(move || fleet.status())
            .await
            .unwrap_or_else(|e| StateStatus {
                backend: "postgres".into(),
                target: None,
                member_id: None,
                members: Vec::new(),
                leases: Vec::new(),
                error: Some(format!("the fleet could not be read: {e}")),
            }),
        None => StateStatus {
            backend: "sqlite".into(),
            target: None,
            member_id: None,
            members: Vec::new(),
            leases: Vec::new(),
            error: None,
        },
    };
    let g = areas.config.generation();
    let draining = areas.calls.is_shutting_down();
    let hook_problems = hook_problems(&g);
    HealthResponse {
        ok: !draining,
        status: status(draining, &g).to_owned(),
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
        hook_problems,
        state: Some(state),
    }
}

/// `draining` while draining, else `degraded` when a configured hook of
/// the active generation cannot run, else `ok` (`health` and `/healthz`).
pub(crate) fn status(draining: bool, g: &Generation) -> &'static str {
    if draining {
        "draining"
    } else if g.runtime.hook_problems().is_empty() {
        "ok"
    } else {
        "degraded"
    }
}

/// The active generation's hook problems, as the protocol's type.
fn hook_problems(g: &Generation) -> Vec<HookProblem> {
    g.runtime
        .hook_problems()
        .iter()
        .map(|p| HookProblem {
            hook_id: p.hook_id.clone(),
            event: p.event.as_str().to_owned(),
            code: p.code().to_owned(),
            key_path: p.key_path.clone(),
            message: p.message.clone(),
        })
        .collect()
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
