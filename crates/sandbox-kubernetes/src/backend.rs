//! [`KubernetesBackend`]: the [`SandboxBackend`] over a [`ClusterApi`].

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use talon_sandbox_core::{
    OwnedSandbox, SandboxBackend, SandboxError, SandboxHandle, SandboxRequest, SecurityEnv,
    ensure_request_security,
};

use crate::cluster::{ClaimInfo, ClusterApi};
use crate::error::KubernetesError;
use crate::handle::KubernetesSandbox;
use crate::manifests::{network_policy, sandbox_claim, sandbox_template};
use crate::names::{
    ANNOTATION_CONFIG_HASH, ANNOTATION_SCOPE_KEY, ClaimIdentity, LABEL_SANDBOX, owned_selector,
};
use crate::settings::KubernetesSettings;

/// The backend id it would be registered under (it is not registered).
pub const KUBERNETES_BACKEND_ID: &str = "kubernetes";

/// The `kubernetes` sandbox backend over `api`. A skeleton: no real
/// [`ClusterApi`] exists, no runtime registers it, and its handles run
/// scripts but not the `exec` tool's streaming commands (see the crate
/// docs).
#[derive(Debug)]
pub struct KubernetesBackend {
    api: Arc<dyn ClusterApi>,
    settings: KubernetesSettings,
    home: Option<PathBuf>,
    now_ms: fn() -> u64,
}

fn system_now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
        .unwrap_or(0)
}

fn is_owned(claim: &ClaimInfo) -> bool {
    claim.labels.get(LABEL_SANDBOX).map(String::as_str) == Some("1")
}

impl KubernetesBackend {
    /// A backend over `api` with `settings`; `home` is the gateway user's
    /// home (its credentials are refused as workspace sources).
    pub fn new(
        api: Arc<dyn ClusterApi>,
        settings: KubernetesSettings,
        home: Option<PathBuf>,
    ) -> Self {
        KubernetesBackend {
            api,
            settings,
            home,
            now_ms: system_now_ms,
        }
    }

    /// Use `clock` for claims' shutdown times (tests).
    pub fn with_clock(mut self, clock: fn() -> u64) -> Self {
        self.now_ms = clock;
        self
    }

    /// Its settings.
    pub fn settings(&self) -> &KubernetesSettings {
        &self.settings
    }

    async fn ensure_claim(
        &self,
        request: &SandboxRequest,
    ) -> Result<KubernetesSandbox, KubernetesError> {
        let ns = &self.settings.namespace;
        let identity = ClaimIdentity::of(request, &self.settings)?;
        let template = sandbox_template(request, &self.settings, &identity)?;
        let policy = network_policy(request, &self.settings, &identity)?;
        self.api.apply_template(ns, &template, &policy).await?;
        match self.api.get_claim(ns, &identity.name).await? {
            Some(claim) if !is_owned(&claim) => {
                return Err(KubernetesError::NotOwned {
                    namespace: ns.clone(),
                    name: identity.name,
                });
            }
            Some(claim)
                if claim.annotations.get(ANNOTATION_CONFIG_HASH) != Some(&identity.config_hash) =>
            {
                // A claim of an older configuration: replaced. (The
                // design keeps one that is in use; the skeleton does not
                // track use yet.)
                self.api.delete_claim(ns, &identity.name).await?;
                let claim = sandbox_claim(&self.settings, &identity, (self.now_ms)());
                self.api.create_claim(ns, &claim).await?;
            }
            Some(_) => {}
            None => {
                let claim = sandbox_claim(&self.settings, &identity, (self.now_ms)());
                self.api.create_claim(ns, &claim).await?;
            }
        }
        let ready = self
            .api
            .wait_ready(ns, &identity.name, self.settings.ready_timeout)
            .await?;
        let pod = ready
            .pod
            .ok_or_else(|| KubernetesError::NoPod(identity.name.clone()))?;
        Ok(KubernetesSandbox::new(
            Arc::clone(&self.api),
            ns.clone(),
            identity.name,
            pod,
            self.workdir(request),
        ))
    }
}

#[async_trait::async_trait]
impl SandboxBackend for KubernetesBackend {
    fn id(&self) -> &str {
        KUBERNETES_BACKEND_ID
    }

    async fn ensure(
        &self,
        request: &SandboxRequest,
    ) -> Result<Arc<dyn SandboxHandle>, SandboxError> {
        let homes: Vec<PathBuf> = self.home.iter().cloned().collect();
        ensure_request_security(request, &SecurityEnv::for_request(request, &homes))?;
        Ok(Arc::new(self.ensure_claim(request).await?) as Arc<dyn SandboxHandle>)
    }

    async fn list_owned(&self) -> Result<Vec<OwnedSandbox>, SandboxError> {
        let claims = self
            .api
            .list_claims(&self.settings.namespace, &owned_selector())
            .await
            .map_err(KubernetesError::from)?;
        Ok(claims
            .into_iter()
            .filter(is_owned)
            .map(|claim| {
                let mut owned = OwnedSandbox::new(KUBERNETES_BACKEND_ID, &claim.name);
                owned.scope_key = claim.annotations.get(ANNOTATION_SCOPE_KEY).cloned();
                owned.config_hash = claim.annotations.get(ANNOTATION_CONFIG_HASH).cloned();
                owned.running = claim.ready;
                owned.created_at_ms = claim.created_at_ms;
                owned
            })
            .collect())
    }

    async fn remove(&self, name: &str) -> Result<(), SandboxError> {
        let ns = &self.settings.namespace;
        match self
            .api
            .get_claim(ns, name)
            .await
            .map_err(KubernetesError::from)?
        {
            Some(claim) if is_owned(&claim) => {
                self.api
                    .delete_claim(ns, name)
                    .await
                    .map_err(KubernetesError::from)?;
                Ok(())
            }
            Some(_) => Err(KubernetesError::NotOwned {
                namespace: ns.clone(),
                name: name.to_owned(),
            }
            .into()),
            None => Err(SandboxError::config(format!(
                "no SandboxClaim Talon owns is named `{name}` in namespace {ns}"
            ))),
        }
    }
}

#[cfg(test)]
#[path = "backend_tests.rs"]
mod tests;
