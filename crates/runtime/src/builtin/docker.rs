//! The Docker backend, connected on first use: a runtime made from a config
//! always knows the `docker` backend, but talks to the engine only when a
//! sandboxed run first touches a file or runs a command (so unsandboxed
//! runs work on machines without Docker).

use std::sync::{Arc, OnceLock};

use talon_sandbox_core::{
    OwnedSandbox, SandboxBackend, SandboxError, SandboxHandle, SandboxRequest, SharedEventSink,
};
use talon_sandbox_docker::DockerBackend;
use tokio::sync::OnceCell;

/// `docker`, connecting (with `DOCKER_HOST` or the default socket) on first
/// use; a failed connection is retried by the next call. Its sandbox
/// events go to the sink installed in `events` (when one is, by the time
/// it connects).
#[derive(Debug)]
pub(crate) struct LazyDockerBackend {
    backend: OnceCell<Arc<DockerBackend>>,
    events: Arc<OnceLock<SharedEventSink>>,
}

impl LazyDockerBackend {
    pub(crate) fn new(events: Arc<OnceLock<SharedEventSink>>) -> Self {
        LazyDockerBackend {
            backend: OnceCell::new(),
            events,
        }
    }

    async fn backend(&self) -> Result<&Arc<DockerBackend>, SandboxError> {
        self.backend
            .get_or_try_init(|| async {
                let backend = DockerBackend::connect().await?;
                Ok(Arc::new(match self.events.get() {
                    Some(sink) => backend.with_event_sink(Arc::clone(sink)),
                    None => backend,
                }))
            })
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
