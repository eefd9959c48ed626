//! A sandbox that is created on first use: the run's tools hold adapters
//! that ask for the sandbox only when a file or exec operation happens, so
//! assembling a sandboxed run never starts a container.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use talon_fs_bridge::{
    Access, DirEntry, EditFn, FileContents, FileStat, FsBridge, FsError, FsErrorCode, ResolvedPath,
    WriteOptions, WriteReport,
};
use talon_sandbox_core::{
    LaunchRequest, LaunchedProcess, ProcessLauncher, SandboxError, SandboxHandle,
};
use tokio::sync::Mutex;

/// What makes the sandbox: called until it succeeds (a failure is not
/// cached, so the next call retries, e.g. after the engine comes back).
pub(crate) type EnsureFn = dyn Fn() -> Pin<Box<dyn Future<Output = Result<Arc<dyn SandboxHandle>, SandboxError>> + Send>>
    + Send
    + Sync;

/// One scope's sandbox, ensured on first use and then shared. A handle
/// whose container died (killed, removed, engine restarted) is dropped when
/// a launch reports it, and the sandbox is ensured again.
pub(crate) struct LazySandbox {
    backend_id: String,
    workdir: String,
    ensure: Box<EnsureFn>,
    handle: Mutex<Option<Arc<dyn SandboxHandle>>>,
}

impl std::fmt::Debug for LazySandbox {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LazySandbox")
            .field("backend", &self.backend_id)
            .field("workdir", &self.workdir)
            .field(
                "ready",
                &self.handle.try_lock().map(|h| h.is_some()).unwrap_or(true),
            )
            .finish()
    }
}

impl LazySandbox {
    /// A sandbox of `backend_id` whose commands start in `workdir`.
    pub(crate) fn new(
        backend_id: impl Into<String>,
        workdir: impl Into<String>,
        ensure: Box<EnsureFn>,
    ) -> Self {
        LazySandbox {
            backend_id: backend_id.into(),
            workdir: workdir.into(),
            ensure,
            handle: Mutex::new(None),
        }
    }

    /// The sandbox, creating it if this is the first use.
    pub(crate) async fn handle(&self) -> Result<Arc<dyn SandboxHandle>, SandboxError> {
        let mut slot = self.handle.lock().await;
        if let Some(h) = slot.as_ref() {
            return Ok(Arc::clone(h));
        }
        let h = (self.ensure)().await?;
        *slot = Some(Arc::clone(&h));
        Ok(h)
    }

    /// Drop `stale` (if it is still the cached handle) so the next use
    /// ensures the sandbox again.
    async fn forget(&self, stale: &Arc<dyn SandboxHandle>) {
        let mut slot = self.handle.lock().await;
        if slot.as_ref().is_some_and(|h| Arc::ptr_eq(h, stale)) {
            *slot = None;
        }
    }

    async fn bridge(&self, path: &str) -> Result<Arc<dyn FsBridge>, FsError> {
        let handle = self.handle().await.map_err(|e| {
            FsError::new(
                FsErrorCode::Unavailable,
                path,
                format!("the sandbox is not available: {e}"),
            )
        })?;
        handle.fs_bridge().ok_or_else(|| {
            FsError::new(
                FsErrorCode::Unavailable,
                path,
                format!(
                    "the `{}` sandbox backend has no file bridge, so file tools cannot run in it",
                    self.backend_id
                ),
            )
        })
    }
}

/// The sandbox's file bridge, reached on first use.
#[derive(Debug, Clone)]
pub(crate) struct LazySandboxBridge(pub(crate) Arc<LazySandbox>);

#[async_trait::async_trait]
impl FsBridge for LazySandboxBridge {
    fn cwd(&self) -> &str {
        &self.0.workdir
    }

    async fn resolve(&self, path: &str, access: Access) -> Result<ResolvedPath, FsError> {
        self.0.bridge(path).await?.resolve(path, access).await
    }

    async fn read(&self, path: &str, max_bytes: Option<u64>) -> Result<FileContents, FsError> {
        self.0.bridge(path).await?.read(path, max_bytes).await
    }

    async fn write(
        &self,
        path: &str,
        data: &[u8],
        options: WriteOptions,
    ) -> Result<WriteReport, FsError> {
        self.0.bridge(path).await?.write(path, data, options).await
    }

    async fn edit(&self, path: &str, edit: &EditFn<'_>) -> Result<WriteReport, FsError> {
        self.0.bridge(path).await?.edit(path, edit).await
    }

    async fn stat(&self, path: &str) -> Result<FileStat, FsError> {
        self.0.bridge(path).await?.stat(path).await
    }

    async fn list(&self, path: &str) -> Result<Vec<DirEntry>, FsError> {
        self.0.bridge(path).await?.list(path).await
    }

    async fn mkdir(&self, path: &str, recursive: bool) -> Result<(), FsError> {
        self.0.bridge(path).await?.mkdir(path, recursive).await
    }

    async fn remove(&self, path: &str, recursive: bool) -> Result<(), FsError> {
        self.0.bridge(path).await?.remove(path, recursive).await
    }

    async fn rename(&self, from: &str, to: &str, overwrite: bool) -> Result<(), FsError> {
        self.0.bridge(from).await?.rename(from, to, overwrite).await
    }
}

/// The sandbox's process launcher, reached on first use.
#[derive(Debug, Clone)]
pub(crate) struct LazySandboxLauncher(pub(crate) Arc<LazySandbox>);

#[async_trait::async_trait]
impl ProcessLauncher for LazySandboxLauncher {
    fn id(&self) -> &str {
        &self.0.backend_id
    }

    async fn launch(&self, request: LaunchRequest) -> Result<LaunchedProcess, SandboxError> {
        let handle = self.0.handle().await?;
        match handle.launcher().launch(request.clone()).await {
            // The backend says the container is gone or stopped: ensure
            // the sandbox again (recreate or start it) and retry once, so
            // a dead container does not wedge the session.
            Err(SandboxError::Gone(_)) => {
                tracing::warn!(
                    target: "talon::runtime",
                    backend = %self.0.backend_id,
                    "the sandbox container is gone; ensuring it again"
                );
                self.0.forget(&handle).await;
                let handle = self.0.handle().await?;
                handle.launcher().launch(request).await
            }
            other => other,
        }
    }
}
