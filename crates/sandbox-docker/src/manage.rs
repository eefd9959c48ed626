//! Listing and removing the containers Talon owns (for `talon sandbox
//! list|remove|recreate`). Ownership is decided by the `talon.sandbox=1`
//! label only; a container without it is never listed or removed.

use std::collections::HashMap;
use std::sync::Arc;

use bollard::query_parameters::ListContainersOptionsBuilder;
use talon_sandbox_core::SandboxError;

use crate::backend::DockerBackend;
use crate::engine_error::{engine_error, is_not_found};
use crate::handle::DockerSandbox;
use crate::labels;
use crate::spec::{ContainerSpec, check_container_name};

/// One container Talon owns, as the engine reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct SandboxContainer {
    /// Container name (without the leading `/`).
    pub name: String,
    /// Engine id.
    pub id: String,
    /// The scope key it serves (`talon.sessionKey`).
    pub scope_key: Option<String>,
    /// The config hash it was created with (`talon.configHash`).
    pub config_hash: Option<String>,
    /// Creation time, ms since the epoch (`talon.createdAtMs`).
    pub created_at_ms: Option<u64>,
    /// Its image.
    pub image: Option<String>,
    /// Whether it is running.
    pub running: bool,
    /// All its labels.
    pub labels: HashMap<String, String>,
}

impl DockerBackend {
    /// Every container labelled `talon.sandbox=1`, running or not, sorted
    /// by name.
    pub async fn list_containers(&self) -> Result<Vec<SandboxContainer>, SandboxError> {
        let filters = HashMap::from([("label", vec![format!("{}=1", labels::SANDBOX)])]);
        let options = ListContainersOptionsBuilder::default()
            .all(true)
            .filters(&filters)
            .build();
        let found = self
            .docker
            .list_containers(Some(options))
            .await
            .map_err(|e| engine_error(&self.addr, "list sandbox containers", e))?;
        let mut out: Vec<SandboxContainer> = found
            .into_iter()
            .filter_map(|c| {
                let labels = c.labels.unwrap_or_default();
                // The engine filtered already; check again, cheaply.
                if labels.get(labels::SANDBOX).map(String::as_str) != Some("1") {
                    return None;
                }
                let name = c
                    .names
                    .unwrap_or_default()
                    .into_iter()
                    .next()?
                    .trim_start_matches('/')
                    .to_owned();
                Some(SandboxContainer {
                    name,
                    id: c.id.unwrap_or_default(),
                    scope_key: labels.get(labels::SESSION_KEY).cloned(),
                    config_hash: labels.get(labels::CONFIG_HASH).cloned(),
                    created_at_ms: labels
                        .get(labels::CREATED_AT_MS)
                        .and_then(|v| v.parse().ok()),
                    image: c.image,
                    running: c.state.map(|s| s.to_string()) == Some("running".to_owned()),
                    labels,
                })
            })
            .collect();
        out.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(out)
    }

    /// Remove one container Talon owns (force: a running one is killed).
    /// `Ok(false)` when there is no such container; an error when the
    /// container exists but is not Talon's. The next `ensure` of its scope
    /// creates it again (this is what "recreate" means).
    pub async fn remove_owned(&self, name: &str) -> Result<bool, SandboxError> {
        check_container_name(name)?;
        let info = match self.docker.inspect_container(name, None).await {
            Ok(info) => info,
            Err(e) if is_not_found(&e) => return Ok(false),
            Err(e) => {
                return Err(engine_error(
                    &self.addr,
                    &format!("inspect container {name}"),
                    e,
                ));
            }
        };
        let owned = info
            .config
            .and_then(|c| c.labels)
            .and_then(|l| l.get(labels::SANDBOX).cloned())
            .as_deref()
            == Some("1");
        if !owned {
            return Err(SandboxError::config(format!(
                "refusing to remove container {name}: it is not a Talon sandbox (no {}=1 label)",
                labels::SANDBOX
            )));
        }
        self.force_remove(name).await?;
        tracing::info!(container = %name, "sandbox container removed");
        Ok(true)
    }

    /// Remove the container of `spec` (when Talon owns it) and create it
    /// again with the current config: `talon sandbox recreate` for a
    /// container that must change now rather than on its next use.
    pub async fn recreate_container(
        &self,
        spec: &ContainerSpec,
    ) -> Result<Arc<DockerSandbox>, SandboxError> {
        self.remove_owned(&spec.name).await?;
        self.ensure_container(spec).await
    }

    /// Remove every container of one scope key (`talon sandbox recreate
    /// --session KEY`); returns the names removed.
    pub async fn remove_scope(&self, scope_key: &str) -> Result<Vec<String>, SandboxError> {
        let mut removed = Vec::new();
        for container in self.list_containers().await? {
            if container.scope_key.as_deref() == Some(scope_key)
                && self.remove_owned(&container.name).await?
            {
                removed.push(container.name);
            }
        }
        Ok(removed)
    }

    /// Remove every container Talon owns (`talon sandbox recreate --all`);
    /// returns the names removed.
    pub async fn remove_all(&self) -> Result<Vec<String>, SandboxError> {
        let mut removed = Vec::new();
        for container in self.list_containers().await? {
            if self.remove_owned(&container.name).await? {
                removed.push(container.name);
            }
        }
        Ok(removed)
    }
}
