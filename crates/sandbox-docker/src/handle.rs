//! [`DockerSandbox`]: the handle for one ready container.

use std::sync::Arc;
use std::time::Duration;

use talon_fs_bridge::FsBridge;
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
}

impl DockerSandbox {
    pub(crate) fn new(
        target: ExecTarget,
        id: String,
        binds: Vec<BindMount>,
        created: bool,
        stale_config: bool,
    ) -> Self {
        DockerSandbox {
            name: target.container.to_string(),
            workdir: target.workdir.to_string(),
            launcher: Arc::new(DockerLauncher { target }),
            id,
            binds,
            created,
            stale_config,
            capabilities: Vec::new(),
        }
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
        None
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
