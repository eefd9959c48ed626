//! Sub-agents and agent-to-agent messages: `sessions_spawn`,
//! `sessions_send`, `subagents` and `sessions_yield`.
//!
//! A spawn opens a child session (`agent:<id>:subagent:<uuid>`) through
//! the sessions area, so the child's tools are capped by its parent's
//! effective tools (the `inherited` layer) and by the sub-agent layer
//! (orchestrator below `maxSpawnDepth`, leaf at it). Its turn is handed to
//! the gateway's [`TurnRunner`] (the subscribed WebSocket runners, or an
//! embedder's) through [`talon_runtime::run_turn`], so it always ends by
//! its deadline. Every spawn and send is a ledger task (runtime
//! `subagent`) that ends in a terminal state, and a spawned child's end is
//! announced back to its parent session (recorded there, and delivered to
//! a subscribed runner).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};

use talon_runtime::{TurnRunner, TurnTrigger};
use talon_tool_catalog::CancellationToken;

mod manage;
mod params;
mod run;
mod send;
mod spawn;
mod suggest;

pub(crate) use manage::{subagents, yield_turn};
pub(crate) use run::mark_lost_left_running;
pub(crate) use send::send;
pub(crate) use spawn::spawn;
pub(crate) use suggest::{dismiss_task, spawn_task};

/// An embedder's [`TurnRunner`] for [`crate::GatewayOptions::turn_runner`].
#[derive(Clone)]
pub struct SharedTurnRunner(pub Arc<dyn TurnRunner>);

impl std::fmt::Debug for SharedTurnRunner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SharedTurnRunner(..)")
    }
}

/// The ledger's `taskKind` of a spawn and of a send.
const SPAWN_KIND: &str = "sessions_spawn";
const SEND_KIND: &str = "sessions_send";

/// One run in flight.
#[derive(Debug)]
pub(crate) struct RunEntry {
    pub(crate) run_id: String,
    pub(crate) task_id: Option<String>,
    /// The session the run works in.
    pub(crate) session_key: String,
    /// The session that asked for it.
    pub(crate) requester_key: String,
    pub(crate) agent_id: String,
    pub(crate) label: Option<String>,
    /// `sessions_spawn`'s `taskName`, a stable alias for `subagents`.
    pub(crate) task_name: Option<String>,
    pub(crate) trigger: TurnTrigger,
    pub(crate) cancel: CancellationToken,
}

/// The sub-agent and send runs in flight, and who runs their turns.
pub(crate) struct SubagentRuns {
    runner: Arc<dyn TurnRunner>,
    runs: Mutex<HashMap<String, Arc<RunEntry>>>,
}

impl std::fmt::Debug for SubagentRuns {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SubagentRuns").finish_non_exhaustive()
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    match m.lock() {
        Ok(g) => g,
        Err(p) => p.into_inner(),
    }
}

/// Why a spawn was not admitted.
enum Refused {
    Children(u32),
    Concurrent(u32),
}

impl SubagentRuns {
    pub(crate) fn new(runner: Arc<dyn TurnRunner>) -> Self {
        SubagentRuns {
            runner,
            runs: Mutex::new(HashMap::new()),
        }
    }

    /// Admit a spawn under both limits, counted and inserted under one
    /// lock.
    fn admit(
        &self,
        entry: Arc<RunEntry>,
        max_children: u32,
        max_concurrent: u32,
    ) -> Result<(), Refused> {
        let mut runs = lock(&self.runs);
        let spawns = runs.values().filter(|r| r.trigger == TurnTrigger::Subagent);
        let (mut total, mut children) = (0u32, 0u32);
        for r in spawns {
            total = total.saturating_add(1);
            if r.requester_key == entry.requester_key {
                children = children.saturating_add(1);
            }
        }
        if children >= max_children {
            return Err(Refused::Children(max_children));
        }
        if total >= max_concurrent {
            return Err(Refused::Concurrent(max_concurrent));
        }
        runs.insert(entry.run_id.clone(), entry);
        Ok(())
    }

    fn insert(&self, entry: Arc<RunEntry>) {
        lock(&self.runs).insert(entry.run_id.clone(), entry);
    }

    fn remove(&self, run_id: &str) {
        lock(&self.runs).remove(run_id);
    }

    /// The spawned runs `requester` has in flight.
    fn children_of(&self, requester: &str) -> Vec<Arc<RunEntry>> {
        lock(&self.runs)
            .values()
            .filter(|r| r.trigger == TurnTrigger::Subagent && r.requester_key == requester)
            .cloned()
            .collect()
    }

    /// Cancel every run in flight (shutdown).
    pub(crate) fn cancel_all(&self) {
        for r in lock(&self.runs).values() {
            r.cancel.cancel();
        }
    }
}

#[cfg(test)]
mod tests;
