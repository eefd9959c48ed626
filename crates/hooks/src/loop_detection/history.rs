//! One session's loop-detection state: the sliding window of recent calls
//! and the warning dedupe buckets.

use std::collections::VecDeque;

use super::outcome_hash::OutcomeDigest;

/// Warnings for one key are emitted once per this many counts.
pub(crate) const WARNING_BUCKET_SIZE: usize = 10;
/// Most warning keys remembered per session (the oldest key is dropped).
pub(crate) const MAX_WARNING_KEYS: usize = 256;
/// Result hash given to a vetoed call that has no earlier outcome to repeat.
pub(crate) const VETO_MARKER_HASH: &str = "loop-veto";

/// One recorded tool call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CallRecord {
    /// The tool name.
    pub(crate) tool_name: String,
    /// `<toolName>:<sha256 of the canonical params>`.
    pub(crate) args_hash: String,
    /// The call id the host gave the call (may be empty).
    pub(crate) call_id: String,
    /// The normalised run id, if the call belongs to a run.
    pub(crate) run_id: Option<String>,
    /// The `action` parameter, which selects the outcome digest.
    pub(crate) action: Option<String>,
    /// The outcome digest, once the call has finished.
    pub(crate) result_hash: Option<String>,
    /// The missing tool named by the call's error, if any.
    pub(crate) unknown_tool_name: Option<String>,
}

/// A session's history and warning buckets.
#[derive(Debug, Default)]
pub(crate) struct SessionState {
    /// Recent calls, oldest first.
    pub(crate) history: VecDeque<CallRecord>,
    /// Last emitted bucket per warning key, in first-insertion order.
    warning_buckets: VecDeque<(String, usize)>,
}

impl SessionState {
    /// The records of one run (or, for `None`, the records of no run),
    /// oldest first.
    pub(crate) fn scoped(&self, run_id: Option<&str>) -> Vec<&CallRecord> {
        self.history
            .iter()
            .filter(|record| record.run_id.as_deref() == run_id)
            .collect()
    }

    /// Appends `record` and trims the window to `history_size`.
    pub(crate) fn push(&mut self, record: CallRecord, history_size: usize) {
        self.history.push_back(record);
        self.trim(history_size);
    }

    fn trim(&mut self, history_size: usize) {
        while self.history.len() > history_size {
            self.history.pop_front();
        }
    }

    /// Index of the newest unfinished record of the same run, tool and call
    /// id (any call id when `call_id` is empty).
    pub(crate) fn pending_position(
        &self,
        run_id: Option<&str>,
        call_id: &str,
        tool_name: &str,
    ) -> Option<usize> {
        self.history.iter().rposition(|record| {
            record.run_id.as_deref() == run_id
                && (call_id.is_empty() || record.call_id == call_id)
                && record.tool_name == tool_name
                && record.result_hash.is_none()
        })
    }

    /// Stores an outcome on the record at `position` (from
    /// [`Self::pending_position`]). When there is none, appends a finished
    /// record instead, as OpenClaw does; its arguments are unknown here, so
    /// it gets an args hash unique to the call id and never counts as a
    /// repeat of another call.
    ///
    /// `digest` is `None` for the loop detector's own veto: the record then
    /// repeats the latest outcome of the same call in the run (or a fixed
    /// marker), so a vetoed retry counts as one more call without progress.
    pub(crate) fn apply_outcome(
        &mut self,
        position: Option<usize>,
        run_id: Option<&str>,
        call_id: &str,
        tool_name: &str,
        digest: Option<OutcomeDigest>,
        history_size: usize,
    ) {
        let (result_hash, unknown_tool_name) = match digest {
            Some(d) => (d.result_hash, d.unknown_tool_name),
            None => (self.veto_hash(position, run_id), None),
        };
        if let Some(record) = position.and_then(|i| self.history.get_mut(i)) {
            record.result_hash = Some(result_hash);
            record.unknown_tool_name = unknown_tool_name;
            return;
        }
        self.push(
            CallRecord {
                tool_name: tool_name.to_owned(),
                args_hash: format!("{tool_name}:unrecorded:{call_id}"),
                call_id: call_id.to_owned(),
                run_id: run_id.map(str::to_owned),
                action: None,
                result_hash: Some(result_hash),
                unknown_tool_name,
            },
            history_size,
        );
    }

    /// The hash a vetoed call inherits: the latest result hash of another
    /// record of the same run with the same args hash as the record at
    /// `position`, or the veto marker.
    fn veto_hash(&self, position: Option<usize>, run_id: Option<&str>) -> String {
        let Some(args_hash) = position
            .and_then(|i| self.history.get(i))
            .map(|record| &record.args_hash)
        else {
            return VETO_MARKER_HASH.to_owned();
        };
        self.history
            .iter()
            .enumerate()
            .rev()
            .filter(|(i, record)| {
                Some(*i) != position
                    && record.run_id.as_deref() == run_id
                    && &record.args_hash == args_hash
            })
            .find_map(|(_, record)| record.result_hash.clone())
            .unwrap_or_else(|| VETO_MARKER_HASH.to_owned())
    }

    /// Whether a warning with this (run-scoped) key and count should be
    /// logged: once per bucket of ten counts (at 10, 20, …; counts below
    /// ten are never logged, as in OpenClaw). Remembers at most
    /// [`MAX_WARNING_KEYS`] keys, dropping the oldest.
    pub(crate) fn should_emit_warning(&mut self, key: &str, count: usize) -> bool {
        let bucket = count / WARNING_BUCKET_SIZE;
        let slot = self.warning_buckets.iter_mut().find(|(k, _)| k == key);
        let last = slot.as_ref().map_or(0, |(_, b)| *b);
        if bucket <= last {
            return false;
        }
        match slot {
            Some((_, b)) => *b = bucket,
            None => {
                self.warning_buckets.push_back((key.to_owned(), bucket));
                if self.warning_buckets.len() > MAX_WARNING_KEYS {
                    self.warning_buckets.pop_front();
                }
            }
        }
        true
    }

    /// Number of warning keys remembered.
    #[cfg(test)]
    pub(crate) fn warning_key_count(&self) -> usize {
        self.warning_buckets.len()
    }
}

#[cfg(test)]
#[path = "history_tests.rs"]
mod tests;
