//! [`LocalSandbox`]: the handle for one scope's local sandbox.

use std::sync::Arc;
use std::time::Duration;

use talon_fs_bridge::{FsBridge, MountBridge};
use talon_sandbox_core::{ProcessLauncher, SandboxError, SandboxHandle, ScriptOutput};

use crate::launcher::{LocalLauncher, Runner};

/// One scope's local sandbox: no process runs between commands; each
/// command is its own `bwrap` run over the same layout. Files go through
/// the host-side [`MountBridge`] over the same mount plan, exactly as with
/// Docker.
#[derive(Debug)]
pub struct LocalSandbox {
    launcher: Arc<LocalLauncher>,
    bridge: Arc<MountBridge>,
    capabilities: Vec<String>,
}

impl LocalSandbox {
    pub(crate) fn new(runner: Arc<Runner>, bridge: MountBridge) -> Self {
        LocalSandbox {
            launcher: Arc::new(LocalLauncher { runner }),
            bridge: Arc::new(bridge),
            capabilities: Vec::new(),
        }
    }

    /// The file bridge, typed.
    pub fn mount_bridge(&self) -> &MountBridge {
        &self.bridge
    }

    /// The `bwrap` arguments every command runs with (before `--chdir`
    /// and the command), for diagnostics and benchmarks.
    pub fn bwrap_args(&self) -> &[std::ffi::OsString] {
        &self.launcher.runner.layout_args
    }
}

#[async_trait::async_trait]
impl SandboxHandle for LocalSandbox {
    fn backend_id(&self) -> &str {
        "local"
    }

    fn name(&self) -> &str {
        &self.launcher.runner.name
    }

    fn workdir(&self) -> &str {
        &self.launcher.runner.workdir
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
            .runner
            .run_script(script, args, stdin, timeout)
            .await
    }
}
