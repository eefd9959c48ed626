//! [`SshSandbox`]: the handle of one ready remote sandbox.

use std::sync::Arc;
use std::time::Duration;

use talon_fs_bridge::{
    Access, DirEntry, EditFn, FileContents, FileStat, FsBridge, FsError, FsErrorCode, ResolvedPath,
    WriteOptions, WriteReport,
};
use talon_sandbox_core::{ProcessLauncher, SandboxError, SandboxHandle, ScriptOutput};

use crate::bridge::RemoteBridge;
use crate::connection::SshConnection;
use crate::exec::{ExecHooks, SshLauncher};
use crate::sync::{SyncReport, WorkspaceSync};

/// Runs the workspace sync around commands and file operations.
#[derive(Debug)]
pub(crate) struct SyncHooks {
    pub(crate) sync: Arc<WorkspaceSync>,
}

#[async_trait::async_trait]
impl ExecHooks for SyncHooks {
    async fn before_exec(&self) -> Result<(), SandboxError> {
        self.sync.sync().await.map(|_| ())
    }

    async fn after_exec(&self) {
        if self.sync.roots().iter().any(|r| r.sync_back)
            && let Err(e) = self.sync.sync().await
        {
            tracing::warn!("syncing the sandbox workspace back after a command failed: {e}");
        }
    }
}

/// The remote bridge with the workspace synced before each operation and
/// (for a `rw` workspace) after each mutation.
#[derive(Debug)]
pub(crate) struct SyncedBridge {
    pub(crate) inner: RemoteBridge,
    pub(crate) sync: Arc<WorkspaceSync>,
}

impl SyncedBridge {
    async fn before(&self, path: &str) -> Result<(), FsError> {
        self.sync.sync().await.map(|_| ()).map_err(|e| {
            FsError::new(
                FsErrorCode::Unavailable,
                path,
                format!("the sandbox workspace could not be synced: {e}"),
            )
        })
    }

    async fn after<T>(&self, result: Result<T, FsError>) -> Result<T, FsError> {
        if result.is_ok()
            && self.sync.roots().iter().any(|r| r.sync_back)
            && let Err(e) = self.sync.sync().await
        {
            tracing::warn!("syncing the sandbox workspace back after a file change failed: {e}");
        }
        result
    }
}

#[async_trait::async_trait]
impl FsBridge for SyncedBridge {
    fn cwd(&self) -> &str {
        self.inner.cwd()
    }

    async fn resolve(&self, path: &str, access: Access) -> Result<ResolvedPath, FsError> {
        self.inner.resolve(path, access).await
    }

    async fn read(&self, path: &str, max_bytes: Option<u64>) -> Result<FileContents, FsError> {
        self.before(path).await?;
        self.inner.read(path, max_bytes).await
    }

    async fn write(
        &self,
        path: &str,
        data: &[u8],
        options: WriteOptions,
    ) -> Result<WriteReport, FsError> {
        self.before(path).await?;
        let r = self.inner.write(path, data, options).await;
        self.after(r).await
    }

    async fn edit(&self, path: &str, edit: &EditFn<'_>) -> Result<WriteReport, FsError> {
        self.before(path).await?;
        let r = self.inner.edit(path, edit).await;
        self.after(r).await
    }

    async fn stat(&self, path: &str) -> Result<FileStat, FsError> {
        self.before(path).await?;
        self.inner.stat(path).await
    }

    async fn list(&self, path: &str) -> Result<Vec<DirEntry>, FsError> {
        self.before(path).await?;
        self.inner.list(path).await
    }

    async fn mkdir(&self, path: &str, recursive: bool) -> Result<(), FsError> {
        self.before(path).await?;
        let r = self.inner.mkdir(path, recursive).await;
        self.after(r).await
    }

    async fn remove(&self, path: &str, recursive: bool) -> Result<(), FsError> {
        self.before(path).await?;
        let r = self.inner.remove(path, recursive).await;
        self.after(r).await
    }

    async fn rename(&self, from: &str, to: &str, overwrite: bool) -> Result<(), FsError> {
        self.before(from).await?;
        let r = self.inner.rename(from, to, overwrite).await;
        self.after(r).await
    }
}

/// One ready remote sandbox: its connection, launcher, bridge and sync.
#[derive(Debug)]
pub struct SshSandbox {
    pub(crate) name: String,
    pub(crate) remote_dir: String,
    pub(crate) workdir: String,
    pub(crate) config_hash: String,
    pub(crate) conn: Arc<SshConnection>,
    pub(crate) launcher: Arc<SshLauncher>,
    pub(crate) bridge: Arc<SyncedBridge>,
    pub(crate) sync: Arc<WorkspaceSync>,
    pub(crate) capabilities: Vec<String>,
}

impl SshSandbox {
    /// The sandbox's remote directory (`<workspaceRoot>/<name>`).
    pub fn remote_dir(&self) -> &str {
        &self.remote_dir
    }

    /// The connection.
    pub fn connection(&self) -> &Arc<SshConnection> {
        &self.conn
    }

    /// The launcher, typed.
    pub fn ssh_launcher(&self) -> &Arc<SshLauncher> {
        &self.launcher
    }

    /// The remote file bridge without the automatic sync (for tests and
    /// callers that sync themselves).
    pub fn remote_bridge(&self) -> &RemoteBridge {
        &self.bridge.inner
    }

    /// Sync the workspace now (both ways; see [`crate::sync`]).
    pub async fn sync(&self) -> Result<SyncReport, SandboxError> {
        self.sync.sync().await
    }

    /// The config hash it was ensured with.
    pub fn config_hash(&self) -> &str {
        &self.config_hash
    }
}

#[async_trait::async_trait]
impl SandboxHandle for SshSandbox {
    fn backend_id(&self) -> &str {
        "ssh"
    }

    fn name(&self) -> &str {
        &self.name
    }

    fn workdir(&self) -> &str {
        &self.workdir
    }

    fn capabilities(&self) -> &[String] {
        &self.capabilities
    }

    fn launcher(&self) -> Arc<dyn ProcessLauncher> {
        Arc::clone(&self.launcher) as Arc<dyn ProcessLauncher>
    }

    fn fs_bridge(&self) -> Option<Arc<dyn FsBridge>> {
        Some(Arc::clone(&self.bridge) as Arc<dyn FsBridge>)
    }

    async fn run_script(
        &self,
        script: &str,
        args: &[String],
        stdin: Option<Vec<u8>>,
        timeout: Duration,
    ) -> Result<ScriptOutput, SandboxError> {
        self.launcher.run_script(script, args, stdin, timeout).await
    }
}
