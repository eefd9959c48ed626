//! [`LocalSandbox`]: the handle for one scope's local sandbox.

use std::sync::Arc;
use std::time::Duration;

use talon_egress::EgressProxy;
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
    /// The guarded proxy of a sandbox with egress; it stops (and its
    /// socket goes) when the sandbox is dropped.
    egress: Option<Egress>,
}

/// A sandbox's egress proxy and the private directory of its socket.
#[derive(Debug)]
pub(crate) struct Egress {
    pub(crate) proxy: EgressProxy,
    /// Removed after the proxy (fields drop in order).
    pub(crate) _dir: tempfile::TempDir,
}

impl LocalSandbox {
    pub(crate) fn new(runner: Arc<Runner>, bridge: MountBridge, egress: Option<Egress>) -> Self {
        LocalSandbox {
            launcher: Arc::new(LocalLauncher { runner }),
            bridge: Arc::new(bridge),
            capabilities: Vec::new(),
            egress,
        }
    }

    /// The host side of the sandbox's egress proxy, when it has egress
    /// (`network: "bridge"`).
    pub fn egress_socket(&self) -> Option<&std::path::Path> {
        self.egress.as_ref().map(|e| e.proxy.socket_path())
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
