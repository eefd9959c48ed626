//! The process-wide table of sandbox backends, by id.

use std::collections::BTreeMap;
use std::sync::{Arc, RwLock};

use crate::backend::SandboxBackend;
use crate::error::SandboxError;

/// Backends Talon ships (their crates register them).
pub const BUILT_IN_BACKENDS: &[&str] = &["docker", "local", "ssh"];

/// Sandbox backends by id. Cheap to share (`Arc` it); registering replaces
/// an earlier backend of the same id.
#[derive(Debug, Default)]
pub struct SandboxBackendRegistry {
    backends: RwLock<BTreeMap<String, Arc<dyn SandboxBackend>>>,
}

fn normalize_id(id: &str) -> String {
    id.trim().to_lowercase()
}

impl SandboxBackendRegistry {
    /// An empty registry.
    pub fn new() -> Self {
        Self::default()
    }

    /// Register `backend` under `id` (trimmed, lowercased). Returns the
    /// backend it replaced, if any.
    pub fn register(
        &self,
        id: &str,
        backend: Arc<dyn SandboxBackend>,
    ) -> Option<Arc<dyn SandboxBackend>> {
        let mut map = self
            .backends
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        map.insert(normalize_id(id), backend)
    }

    /// Remove the backend registered under `id`.
    pub fn unregister(&self, id: &str) -> Option<Arc<dyn SandboxBackend>> {
        let mut map = self
            .backends
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        map.remove(&normalize_id(id))
    }

    /// The registered ids, sorted.
    pub fn ids(&self) -> Vec<String> {
        let map = self
            .backends
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        map.keys().cloned().collect()
    }

    /// The backend registered under `id`, if any.
    pub fn get(&self, id: &str) -> Option<Arc<dyn SandboxBackend>> {
        let map = self
            .backends
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        map.get(&normalize_id(id)).cloned()
    }

    /// The backend registered under `id`, or an error telling the operator
    /// what to do: install / enable the plugin that provides it, or set
    /// the backend back to `docker`.
    pub fn require(&self, id: &str) -> Result<Arc<dyn SandboxBackend>, SandboxError> {
        if let Some(backend) = self.get(id) {
            return Ok(backend);
        }
        Err(SandboxError::backend_missing(missing_backend_message(
            id,
            &self.ids(),
        )))
    }
}

/// The operator-facing text of a missing backend.
pub fn missing_backend_message(id: &str, registered: &[String]) -> String {
    let wanted = normalize_id(id);
    let available = if registered.is_empty() {
        "none".to_owned()
    } else {
        registered.join(", ")
    };
    let fix = if BUILT_IN_BACKENDS.contains(&wanted.as_str()) {
        format!(
            "\"{wanted}\" is built into Talon but was not registered by this program (it needs the talon-sandbox-{wanted} crate wired in)"
        )
    } else {
        format!(
            "install and enable the plugin that provides the \"{wanted}\" sandbox backend (plugins.entries.{wanted})"
        )
    };
    format!(
        "Sandbox backend \"{wanted}\" is not registered (registered: {available}). To fix: {fix}, or set agents.defaults.sandbox.backend (or agents.list[].sandbox.backend) back to \"docker\"."
    )
}

#[cfg(test)]
#[path = "registry_tests.rs"]
mod tests;
