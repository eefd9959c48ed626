//! The calls this handle has open: started and not yet finished, or with a
//! terminal record queued but not yet committed. It lets `finish` refuse a
//! second terminal record without reading the database, and it only ever
//! holds calls in flight, so it stays small.

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard, PoisonError};

use crate::record::Outcome;

/// Where a call stands in this handle.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Phase {
    /// `started` was asked for (maybe not yet committed); no terminal yet.
    Open,
    /// A terminal record with this outcome is queued.
    Ending(Outcome),
}

#[derive(Debug, Default)]
pub(crate) struct InFlight {
    calls: Mutex<HashMap<String, Phase>>,
}

impl InFlight {
    pub(crate) fn lock(&self) -> MutexGuard<'_, HashMap<String, Phase>> {
        // The map holds plain data; a panic elsewhere cannot leave it torn.
        self.calls.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Forget `call_id` if it is still in `phase`.
    pub(crate) fn forget_if(&self, call_id: &str, phase: Phase) {
        let mut calls = self.lock();
        if calls.get(call_id) == Some(&phase) {
            calls.remove(call_id);
        }
    }

    /// Forget every call whose terminal record is now committed.
    pub(crate) fn forget_committed<'a>(&self, ids: impl Iterator<Item = &'a str>) {
        let mut calls = self.lock();
        for id in ids {
            if matches!(calls.get(id), Some(Phase::Ending(_))) {
                calls.remove(id);
            }
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.lock().len()
    }
}
