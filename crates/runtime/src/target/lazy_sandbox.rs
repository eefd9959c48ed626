//! A sandbox that is created on first use: the run's tools hold adapters
//! that ask for the sandbox only when a file or exec operation happens, so
//! assembling a sandboxed run never starts a container.
//!
//! This is also the one place every backend's use goes through, so it is
//! where use is tracked for pruning: each file operation and each launched
//! process holds a [`SandboxLease`] while it runs (a launched process until
//! it ends or its handle is dropped), and its start and end are recorded in
//! the [`UsageStore`] (with a busy heartbeat every [`BUSY_HEARTBEAT`] while
//! a process runs). A sandbox removed by pruning moves its generation on,
//! and the cached handle is ensured again instead of used.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use talon_fs_bridge::{
    Access, DirEntry, EditFn, FileContents, FileStat, FsBridge, FsError, FsErrorCode, ResolvedPath,
    WriteOptions, WriteReport,
};
use talon_sandbox_core::{
    BUSY_HEARTBEAT, ExitStatus, LaunchRequest, LaunchedProcess, ProcessControl, ProcessLauncher,
    SandboxActivity, SandboxError, SandboxErrorKind, SandboxHandle, SandboxKey, SandboxLease,
    UsageStore, now_ms,
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
    key: SandboxKey,
    workdir: String,
    ensure: Box<EnsureFn>,
    /// The handle and the removal generation it was ensured in.
    handle: Mutex<Option<(Arc<dyn SandboxHandle>, u64)>>,
    activity: Arc<SandboxActivity>,
    usage: Arc<UsageStore>,
    running: Arc<AtomicUsize>,
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

/// One use of the sandbox: its lease, and the record of its end.
#[derive(Debug)]
pub(crate) struct SandboxUse {
    lease: Option<SandboxLease>,
    usage: Arc<UsageStore>,
    /// Processes running in the sandbox (launched through this adapter).
    running: Arc<AtomicUsize>,
    /// This use is a running process (counted in `running`).
    process: bool,
}

impl SandboxUse {
    /// This use is a launched process: the sandbox is busy until it ends.
    fn into_process(mut self) -> Self {
        self.running.fetch_add(1, Ordering::SeqCst);
        self.process = true;
        self.heartbeat();
        self
    }

    /// Refresh the busy heartbeat (a process is still running).
    fn heartbeat(&self) {
        if let Some(lease) = &self.lease {
            record(&self.usage, lease.key(), true);
        }
    }
}

impl Drop for SandboxUse {
    fn drop(&mut self) {
        let Some(lease) = self.lease.take() else {
            return;
        };
        if self.process {
            self.running.fetch_sub(1, Ordering::SeqCst);
        }
        let key = lease.key().clone();
        drop(lease);
        record(&self.usage, &key, self.running.load(Ordering::SeqCst) > 0);
    }
}

/// Write a use to the usage file (throttled by the store). A failure is
/// logged: it must not fail the call, and pruning refuses to run on a file
/// it cannot read.
fn record(usage: &UsageStore, key: &SandboxKey, busy: bool) {
    if let Err(e) = usage.record_use(key, now_ms(), busy) {
        tracing::warn!(
            target: "talon::runtime",
            sandbox = %key.name,
            "cannot record the sandbox's last use: {e}"
        );
    }
}

impl LazySandbox {
    /// The sandbox `name` of `backend_id` whose commands start in
    /// `workdir`; its uses are recorded in `usage` and its calls in flight
    /// in the process's [`SandboxActivity`].
    pub(crate) fn new(
        backend_id: impl Into<String>,
        name: &str,
        workdir: impl Into<String>,
        usage: Arc<UsageStore>,
        ensure: Box<EnsureFn>,
    ) -> Self {
        let backend_id = backend_id.into();
        LazySandbox {
            key: SandboxKey::new(&backend_id, name),
            backend_id,
            workdir: workdir.into(),
            ensure,
            handle: Mutex::new(None),
            activity: SandboxActivity::process(),
            usage,
            running: Arc::default(),
        }
    }

    /// The sandbox (created if this is the first use, or ensured again
    /// after pruning removed it) and a lease held for this use.
    pub(crate) async fn handle(
        &self,
    ) -> Result<(Arc<dyn SandboxHandle>, SandboxUse), SandboxError> {
        // The lease comes first: creating the sandbox is a use, and a
        // removal in progress finishes before it.
        let lease = self.activity.lease(&self.key).await;
        let generation = lease.generation();
        let used = SandboxUse {
            lease: Some(lease),
            usage: Arc::clone(&self.usage),
            running: Arc::clone(&self.running),
            process: false,
        };
        let handle = {
            let mut slot = self.handle.lock().await;
            match slot.as_ref() {
                Some((h, g)) if *g == generation => Arc::clone(h),
                _ => {
                    let h = (self.ensure)().await?;
                    *slot = Some((Arc::clone(&h), generation));
                    h
                }
            }
        };
        record(
            &self.usage,
            &self.key,
            self.running.load(Ordering::SeqCst) > 0,
        );
        Ok((handle, used))
    }

    /// Drop `stale` (if it is still the cached handle) so the next use
    /// ensures the sandbox again.
    async fn forget(&self, stale: &Arc<dyn SandboxHandle>) {
        let mut slot = self.handle.lock().await;
        if slot.as_ref().is_some_and(|(h, _)| Arc::ptr_eq(h, stale)) {
            *slot = None;
        }
    }

    async fn bridge(&self, path: &str) -> Result<(Arc<dyn FsBridge>, SandboxUse), FsError> {
        let (handle, used) = self.handle().await.map_err(|e| {
            FsError::new(
                FsErrorCode::Unavailable,
                path,
                format!("the sandbox is not available: {e}"),
            )
        })?;
        let bridge = handle.fs_bridge().ok_or_else(|| {
            FsError::new(
                FsErrorCode::Unavailable,
                path,
                format!(
                    "the `{}` sandbox backend has no file bridge, so file tools cannot run in it",
                    self.backend_id
                ),
            )
        })?;
        Ok((bridge, used))
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
        let (bridge, _use) = self.0.bridge(path).await?;
        bridge.resolve(path, access).await
    }

    async fn read(&self, path: &str, max_bytes: Option<u64>) -> Result<FileContents, FsError> {
        let (bridge, _use) = self.0.bridge(path).await?;
        bridge.read(path, max_bytes).await
    }

    async fn write(
        &self,
        path: &str,
        data: &[u8],
        options: WriteOptions,
    ) -> Result<WriteReport, FsError> {
        let (bridge, _use) = self.0.bridge(path).await?;
        bridge.write(path, data, options).await
    }

    async fn edit(&self, path: &str, edit: &EditFn<'_>) -> Result<WriteReport, FsError> {
        let (bridge, _use) = self.0.bridge(path).await?;
        bridge.edit(path, edit).await
    }

    async fn stat(&self, path: &str) -> Result<FileStat, FsError> {
        let (bridge, _use) = self.0.bridge(path).await?;
        bridge.stat(path).await
    }

    async fn list(&self, path: &str) -> Result<Vec<DirEntry>, FsError> {
        let (bridge, _use) = self.0.bridge(path).await?;
        bridge.list(path).await
    }

    async fn mkdir(&self, path: &str, recursive: bool) -> Result<(), FsError> {
        let (bridge, _use) = self.0.bridge(path).await?;
        bridge.mkdir(path, recursive).await
    }

    async fn remove(&self, path: &str, recursive: bool) -> Result<(), FsError> {
        let (bridge, _use) = self.0.bridge(path).await?;
        bridge.remove(path, recursive).await
    }

    async fn rename(&self, from: &str, to: &str, overwrite: bool) -> Result<(), FsError> {
        let (bridge, _use) = self.0.bridge(from).await?;
        bridge.rename(from, to, overwrite).await
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

    /// The launched process holds its lease until it ends (or its handle
    /// is dropped), so pruning never removes the sandbox under it.
    async fn launch(&self, request: LaunchRequest) -> Result<LaunchedProcess, SandboxError> {
        let (handle, used) = self.0.handle().await?;
        let (launched, used) = match handle.launcher().launch(request.clone()).await {
            // The backend says the container is gone or stopped: ensure
            // the sandbox again (recreate or start it) and retry once, so
            // a dead container does not wedge the session.
            Err(e) if e.kind() == SandboxErrorKind::Gone => {
                tracing::warn!(
                    target: "talon::runtime",
                    backend = %self.0.backend_id,
                    "the sandbox container is gone; ensuring it again"
                );
                self.0.forget(&handle).await;
                drop(used);
                let (handle, used) = self.0.handle().await?;
                (handle.launcher().launch(request).await?, used)
            }
            other => (other?, used),
        };
        Ok(LaunchedProcess {
            stdin: launched.stdin,
            stdout: launched.stdout,
            stderr: launched.stderr,
            control: Box::new(LeasedControl {
                inner: launched.control,
                used: std::sync::Mutex::new(Some(used.into_process())),
            }),
        })
    }
}

/// A launched process's control that holds the sandbox's lease until the
/// process ends, refreshing the busy heartbeat while it runs.
#[derive(Debug)]
struct LeasedControl {
    inner: Box<dyn ProcessControl>,
    used: std::sync::Mutex<Option<SandboxUse>>,
}

impl LeasedControl {
    fn with_use(&self, f: impl FnOnce(&mut Option<SandboxUse>)) {
        let mut used = self
            .used
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        f(&mut used);
    }
}

#[async_trait::async_trait]
impl ProcessControl for LeasedControl {
    fn pid(&self) -> Option<u32> {
        self.inner.pid()
    }

    async fn wait(&self) -> Result<ExitStatus, SandboxError> {
        let wait = self.inner.wait();
        tokio::pin!(wait);
        let mut beat = tokio::time::interval(BUSY_HEARTBEAT);
        beat.tick().await;
        let status = loop {
            tokio::select! {
                status = &mut wait => break status,
                _ = beat.tick() => self.with_use(|u| {
                    if let Some(u) = u.as_ref() {
                        u.heartbeat();
                    }
                }),
            }
        };
        // The process has ended: release the lease (and record the use).
        self.with_use(|u| drop(u.take()));
        status
    }

    async fn kill(&self) -> Result<(), SandboxError> {
        self.inner.kill().await
    }
}
