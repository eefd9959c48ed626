//! The handle a backend gives for one sandbox (one scope's container or
//! remote workspace).

use std::sync::Arc;
use std::time::Duration;

use talon_fs_bridge::FsBridge;

use crate::error::SandboxError;
use crate::process::{ExitStatus, ProcessLauncher};

/// What a script run in the sandbox printed and how it ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScriptOutput {
    /// Its stdout.
    pub stdout: Vec<u8>,
    /// Its stderr.
    pub stderr: Vec<u8>,
    /// How it ended.
    pub status: ExitStatus,
}

/// One ready sandbox.
#[async_trait::async_trait]
pub trait SandboxHandle: Send + Sync + std::fmt::Debug {
    /// The backend id (`docker`, `ssh`, ...).
    fn backend_id(&self) -> &str;

    /// The sandbox's name (container name, remote directory).
    fn name(&self) -> &str;

    /// The working directory commands start in (`/workspace`).
    fn workdir(&self) -> &str;

    /// What the sandbox offers beyond exec and files (`browser`, ...).
    fn capabilities(&self) -> &[String];

    /// Runs the `exec` / `process` tools' commands inside the sandbox.
    fn launcher(&self) -> Arc<dyn ProcessLauncher>;

    /// The file bridge for `read` / `write` / `edit` / `apply_patch`, when
    /// the backend has one.
    fn fs_bridge(&self) -> Option<Arc<dyn FsBridge>>;

    /// Run a POSIX shell script (`sh -c SCRIPT talon-sandbox ARGS...`) with
    /// optional stdin, killed (inside the sandbox) at `timeout`.
    async fn run_script(
        &self,
        script: &str,
        args: &[String],
        stdin: Option<Vec<u8>>,
        timeout: Duration,
    ) -> Result<ScriptOutput, SandboxError>;
}
