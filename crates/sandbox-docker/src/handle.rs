//! [`DockerSandbox`]: the handle for one ready container.

use std::sync::Arc;
use std::time::Duration;

use talon_fs_bridge::{FsBridge, Mount, MountBridge};
use talon_sandbox_core::{ProcessLauncher, SandboxError, SandboxHandle, ScriptOutput};

use crate::exec::{DockerLauncher, ExecTarget};
use crate::spec::BindMount;

/// One ready container: its launcher, its mounts and its script runner.
#[derive(Debug)]
pub struct DockerSandbox {
    launcher: Arc<DockerLauncher>,
    name: String,
    workdir: String,
    id: String,
    binds: Vec<BindMount>,
    created: bool,
    stale_config: bool,
    capabilities: Vec<String>,
    bridge: Arc<MountBridge>,
}

impl DockerSandbox {
    pub(crate) fn new(
        target: ExecTarget,
        id: String,
        binds: Vec<BindMount>,
        created: bool,
        stale_config: bool,
    ) -> Result<Self, SandboxError> {
        let mounts = binds
            .iter()
            .map(|b| Mount {
                container_path: b.container.clone(),
                host_root: b.host.clone(),
                read_only: b.read_only,
            })
            .collect();
        let bridge = MountBridge::new(mounts, &target.workdir).map_err(|e| {
            SandboxError::config(format!(
                "cannot build the file bridge over container {}'s mounts: {e}",
                target.container
            ))
        })?;
        Ok(DockerSandbox {
            name: target.container.to_string(),
            workdir: target.workdir.to_string(),
            launcher: Arc::new(DockerLauncher { target }),
            id,
            binds,
            created,
            stale_config,
            capabilities: Vec::new(),
            bridge: Arc::new(bridge),
        })
    }

    /// The file bridge over the container's mount table, typed: container
    /// paths resolved to the host directories behind the binds, read-only
    /// binds refused for writes.
    pub fn mount_bridge(&self) -> &MountBridge {
        &self.bridge
    }

    /// The engine's container id.
    pub fn container_id(&self) -> &str {
        &self.id
    }

    /// The mounts the container was ensured with (host dir → container
    /// path, read-only or not): the file bridge's mount table.
    pub fn binds(&self) -> &[BindMount] {
        &self.binds
    }

    /// Whether this `ensure` created the container (rather than reusing it).
    pub fn created(&self) -> bool {
        self.created
    }

    /// Whether the container was kept although its config hash is stale
    /// (it was running and recently used; a warning was logged).
    pub fn stale_config(&self) -> bool {
        self.stale_config
    }

    /// The launcher, typed.
    pub fn docker_launcher(&self) -> &DockerLauncher {
        &self.launcher
    }
}

#[async_trait::async_trait]
impl SandboxHandle for DockerSandbox {
    fn backend_id(&self) -> &str {
        "docker"
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
        self.launcher
            .target
            .run_script(script, args, stdin, timeout)
            .await
    }
}
