//! The shared, thread-safe loop detector: one history per session.

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard};

use serde_json::{Map, Value};

use super::config::ResolvedLoopDetection;
use super::detectors::{self, Level, Query};
use super::hashing::{args_hash, is_known_poll_call, normalize_run_id, params_action};
use super::history::{CallRecord, SessionState};
use super::outcome_hash::{LoopOutcome, hash_outcome};
use super::verdict::{LoopDetectorKind, LoopVerdict};

/// Most sessions remembered at once; the least recently used is dropped.
pub(crate) const MAX_SESSIONS: usize = 1024;

/// Detects tool-call loops. One sliding-window history per session key
/// (at most 1024 sessions, the least recently used dropped first).
///
/// The gate calls [`check`](Self::check) before a call, then
/// [`record_call`](Self::record_call) (also for a call it vetoes), and
/// [`record_outcome`](Self::record_outcome) once the call has ended
/// ([`LoopOutcome::LoopVeto`] for its own veto). All methods take `&self`;
/// the internal lock is never held across an await.
#[derive(Debug)]
pub struct LoopDetector {
    config: ResolvedLoopDetection,
    sessions: Mutex<Sessions>,
}

#[derive(Debug, Default)]
struct Sessions {
    entries: HashMap<String, Entry>,
    clock: u64,
}

#[derive(Debug, Default)]
struct Entry {
    state: SessionState,
    last_used: u64,
}

impl Sessions {
    fn tick(&mut self) -> u64 {
        self.clock += 1;
        self.clock
    }

    /// The session's state if it exists, marked as just used.
    fn get(&mut self, key: &str) -> Option<&mut SessionState> {
        let now = self.tick();
        let entry = self.entries.get_mut(key)?;
        entry.last_used = now;
        Some(&mut entry.state)
    }

    /// The session's state, created (after evicting the least recently
    /// used session when full) if needed, marked as just used.
    fn get_or_insert(&mut self, key: &str) -> &mut SessionState {
        let now = self.tick();
        if !self.entries.contains_key(key) && self.entries.len() >= MAX_SESSIONS {
            let oldest = self
                .entries
                .iter()
                .min_by_key(|(_, entry)| entry.last_used)
                .map(|(k, _)| k.clone());
            if let Some(oldest) = oldest {
                self.entries.remove(&oldest);
            }
        }
        let entry = self.entries.entry(key.to_owned()).or_default();
        entry.last_used = now;
        &mut entry.state
    }
}

impl LoopDetector {
    /// A detector with these settings and no history.
    pub fn new(config: ResolvedLoopDetection) -> Self {
        Self {
            config,
            sessions: Mutex::new(Sessions::default()),
        }
    }

    /// Whether loop detection is on. When it is off, `check` always says
    /// [`LoopVerdict::Ok`] and nothing is recorded.
    pub fn is_enabled(&self) -> bool {
        self.config.enabled
    }

    /// The settings in use.
    pub fn config(&self) -> &ResolvedLoopDetection {
        &self.config
    }

    fn lock(&self) -> MutexGuard<'_, Sessions> {
        // A panic elsewhere while holding the lock leaves the data usable;
        // recover it rather than propagating the poison.
        self.sessions
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Checks a call before it runs, against the session's history of the
    /// same run (a call with no run id is checked against records without
    /// one). Runs the detectors in OpenClaw's order; a warning's `emit`
    /// flag follows the bucket-of-ten dedupe rule for its run-scoped key.
    pub fn check(
        &self,
        session_key: &str,
        run_id: Option<&str>,
        tool_name: &str,
        params: &Map<String, Value>,
    ) -> LoopVerdict {
        if !self.config.enabled {
            return LoopVerdict::Ok;
        }
        let run_id = normalize_run_id(run_id);
        let args_hash = args_hash(tool_name, params);
        let query = Query {
            tool_name,
            args_hash: &args_hash,
            known_poll: is_known_poll_call(tool_name, params_action(params)),
        };
        let mut sessions = self.lock();
        let Some(state) = sessions.get(session_key) else {
            return LoopVerdict::Ok;
        };
        let detection = detectors::detect(&self.config, &state.scoped(run_id), query);
        let Some(detection) = detection else {
            return LoopVerdict::Ok;
        };
        match detection.level {
            Level::Critical => LoopVerdict::Critical {
                detector: detection.detector,
                count: detection.count,
                message: detection.message,
                stop_run: detection.detector == LoopDetectorKind::GlobalCircuitBreaker,
            },
            Level::Warning => {
                let key = match run_id {
                    Some(run) => format!("{run}:{}", detection.warning_key),
                    None => detection.warning_key,
                };
                let emit = state.should_emit_warning(&key, detection.count);
                LoopVerdict::Warning {
                    detector: detection.detector,
                    count: detection.count,
                    message: detection.message,
                    key,
                    emit,
                }
            }
        }
    }

    /// Records a call that is about to run (or was just vetoed), keyed by
    /// its args hash `<toolName>:<sha256(canonical params)>`, and trims the
    /// session's window to the history size.
    pub fn record_call(
        &self,
        session_key: &str,
        run_id: Option<&str>,
        tool_name: &str,
        call_id: &str,
        params: &Map<String, Value>,
    ) {
        if !self.config.enabled {
            return;
        }
        let record = CallRecord {
            tool_name: tool_name.to_owned(),
            args_hash: args_hash(tool_name, params),
            call_id: call_id.to_owned(),
            run_id: normalize_run_id(run_id).map(str::to_owned),
            action: params_action(params).map(str::to_owned),
            result_hash: None,
            unknown_tool_name: None,
        };
        self.lock()
            .get_or_insert(session_key)
            .push(record, self.config.history_size);
    }

    /// Records how a call ended: sets the result hash of the newest
    /// unfinished record of the same run, tool and call id (any call id
    /// when `call_id` is empty). When no record matches, a finished record
    /// is appended instead (as OpenClaw does), with an args hash unique to
    /// the call id since the arguments are not known here.
    pub fn record_outcome(
        &self,
        session_key: &str,
        run_id: Option<&str>,
        call_id: &str,
        tool_name: &str,
        outcome: LoopOutcome<'_>,
    ) {
        if !self.config.enabled {
            return;
        }
        let run_id = normalize_run_id(run_id);
        let mut sessions = self.lock();
        let state = sessions.get_or_insert(session_key);
        let position = state.pending_position(run_id, call_id, tool_name);
        // The outcome digest depends on the call's `action`, known from the
        // record `record_call` stored.
        let action = position
            .and_then(|i| state.history.get(i))
            .and_then(|record| record.action.as_deref());
        let digest = hash_outcome(tool_name, action, &outcome);
        state.apply_outcome(
            position,
            run_id,
            call_id,
            tool_name,
            digest,
            self.config.history_size,
        );
    }

    /// Number of sessions remembered.
    #[cfg(test)]
    pub(crate) fn session_count(&self) -> usize {
        self.lock().entries.len()
    }

    /// Runs `f` on a session's state, if the session exists.
    #[cfg(test)]
    pub(crate) fn with_session<T>(
        &self,
        session_key: &str,
        f: impl FnOnce(&SessionState) -> T,
    ) -> Option<T> {
        self.lock().entries.get(session_key).map(|e| f(&e.state))
    }
}

#[cfg(test)]
#[path = "loop_detector_tests.rs"]
mod tests;
