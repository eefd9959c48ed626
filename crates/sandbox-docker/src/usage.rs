//! When each container was last used by this process (the "hot window"
//! that keeps a stale-config container alive while someone works in it).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

/// Last use per container name, shared by a backend and its handles.
#[derive(Debug, Clone, Default)]
pub(crate) struct UsageClock(Arc<Mutex<HashMap<String, Instant>>>);

impl UsageClock {
    pub(crate) fn touch(&self, name: &str) {
        let mut map = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        map.insert(name.to_owned(), Instant::now());
    }

    pub(crate) fn last(&self, name: &str) -> Option<Instant> {
        let map = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        map.get(name).copied()
    }

    pub(crate) fn forget(&self, name: &str) {
        let mut map = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        map.remove(name);
    }
}
