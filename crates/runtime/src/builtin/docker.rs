//! The Docker backend, connected on first use: a runtime made from a config
//! always knows the `docker` backend, but talks to the engine only when a
//! sandboxed run first touches a file or runs a command (so unsandboxed
//! runs work on machines without Docker).

use std::sync::Arc;

use talon_sandbox_core::{
    OwnedSandbox, SandboxBackend, SandboxError, SandboxHandle, SandboxRequest,
};
use talon_sandbox_docker::DockerBackend;
use tokio::sync::OnceCell;

/// `docker`, connecting (with `DOCKER_HOST` or the default socket) on first
/// use; a failed connection is retried by the next call.
#[derive(Debug, Default)]
pub(crate) struct LazyDockerBackend {
    backend: OnceCell<Arc<DockerBackend>>,
}

impl LazyDockerBackend {
    async fn backend(&self) -> Result<&Arc<DockerBackend>, SandboxError> {
        self.backend
            .get_or_try_init(|| async { DockerBackend::connect().await.map(Arc::new) })
            .await
    }
}

#[async_trait::async_trait]
impl SandboxBackend for LazyDockerBackend {
    fn id(&self) -> &str {
        "docker"
    }

    async fn ensure(
        &self,
        request: &SandboxRequest,
    ) -> Result<Arc<dyn SandboxHandle>, SandboxError> {
        self.backend().await?.ensure(request).await
    }

    async fn list_owned(&self) -> Result<Vec<OwnedSandbox>, SandboxError> {
        self.backend().await?.list_owned().await
    }

    async fn remove(&self, name: &str) -> Result<(), SandboxError> {
        self.backend().await?.remove(name).await
    }
}
