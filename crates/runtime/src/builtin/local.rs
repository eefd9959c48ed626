//! The local backend (`backend: "local"`), set up on first use: a runtime
//! made from a config always knows `local`, but looks for bubblewrap and
//! compiles the seccomp filter only when a sandboxed run first touches a
//! file or runs a command, so a machine without bubblewrap runs
//! unsandboxed (or Docker-sandboxed) agents as before. A missing `bwrap`
//! fails that run with the fix; it never falls back to the host.

use std::sync::Arc;

use talon_sandbox_core::{
    OwnedSandbox, SandboxBackend, SandboxError, SandboxHandle, SandboxRequest,
};
use talon_sandbox_local::LocalBackend;
use tokio::sync::OnceCell;

/// `local`, built on first use; a failed build is retried by the next call.
#[derive(Debug, Default)]
pub(crate) struct LazyLocalBackend {
    backend: OnceCell<Arc<LocalBackend>>,
}

impl LazyLocalBackend {
    async fn backend(&self) -> Result<&Arc<LocalBackend>, SandboxError> {
        self.backend
            .get_or_try_init(|| async { LocalBackend::new().map(Arc::new) })
            .await
    }
}

#[async_trait::async_trait]
impl SandboxBackend for LazyLocalBackend {
    fn id(&self) -> &str {
        "local"
    }

    async fn ensure(
        &self,
        request: &SandboxRequest,
    ) -> Result<Arc<dyn SandboxHandle>, SandboxError> {
        self.backend().await?.ensure(request).await
    }

    /// Nothing to list, and no need for bubblewrap to say so (so
    /// `sandbox.list` on a machine without it reports no error).
    async fn list_owned(&self) -> Result<Vec<OwnedSandbox>, SandboxError> {
        Ok(Vec::new())
    }

    async fn remove(&self, name: &str) -> Result<(), SandboxError> {
        Err(talon_sandbox_local::nothing_to_remove(name))
    }
}
