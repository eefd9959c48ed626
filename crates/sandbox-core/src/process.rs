//! Launching a command somewhere (the host, a container, a remote host) and
//! controlling it: the contract between the `exec` / `process` tools and
//! whatever runs their commands.

use std::collections::BTreeMap;
use std::pin::Pin;

use serde::Serialize;
use tokio::io::{AsyncRead, AsyncWrite};

use crate::error::SandboxError;

/// One command to launch.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LaunchRequest {
    /// The shell command line (run by `/bin/sh -c` on the host, by
    /// `/bin/sh -lc` in a container).
    pub command: String,
    /// The working directory in the launcher's namespace (`None`: the
    /// launcher's default: the workspace on the host, `/workspace` in a
    /// container).
    pub workdir: Option<String>,
    /// Environment variables to set on top of the launcher's base
    /// environment. Already sanitised by the caller; a launcher never
    /// passes `PATH` through directly (a container gets it as a prepend).
    pub env: BTreeMap<String, String>,
    /// Run under a pseudo-terminal (stdout and stderr merged).
    pub pty: bool,
}

/// How a launched process ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "camelCase", tag = "kind", content = "value")]
pub enum ExitStatus {
    /// It exited with this code.
    Code(i32),
    /// It was killed by this signal.
    Signal(i32),
}

impl ExitStatus {
    /// Whether it exited with code 0.
    pub fn success(self) -> bool {
        self == ExitStatus::Code(0)
    }
}

/// A byte stream read from a launched process.
pub type ProcessOutput = Pin<Box<dyn AsyncRead + Send>>;
/// The stdin of a launched process.
pub type ProcessInput = Pin<Box<dyn AsyncWrite + Send>>;

/// Waiting for and killing one launched process.
#[async_trait::async_trait]
pub trait ProcessControl: Send + Sync + std::fmt::Debug {
    /// The process id in the launcher's namespace, when there is one.
    fn pid(&self) -> Option<u32>;

    /// Wait until the process ends (call once; later calls return the same
    /// status).
    async fn wait(&self) -> Result<ExitStatus, SandboxError>;

    /// Kill the process and every process it started (its whole process
    /// group or tree where it runs, not only a local client). Idempotent.
    async fn kill(&self) -> Result<(), SandboxError>;
}

/// A running process: its streams and its control handle.
pub struct LaunchedProcess {
    /// Its stdin (`None` when the launcher cannot write to it).
    pub stdin: Option<ProcessInput>,
    /// Its stdout (stdout and stderr merged when run under a PTY).
    pub stdout: ProcessOutput,
    /// Its stderr (`None` under a PTY).
    pub stderr: Option<ProcessOutput>,
    /// Wait / kill.
    pub control: Box<dyn ProcessControl>,
}

impl std::fmt::Debug for LaunchedProcess {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LaunchedProcess")
            .field("stdin", &self.stdin.is_some())
            .field("stderr", &self.stderr.is_some())
            .field("control", &self.control)
            .finish_non_exhaustive()
    }
}

/// Something that runs commands: the host, a container, a remote host.
#[async_trait::async_trait]
pub trait ProcessLauncher: Send + Sync + std::fmt::Debug {
    /// Where commands run (`host`, `docker`, `ssh`, ...), for results and
    /// logs.
    fn id(&self) -> &str;

    /// Start a command.
    async fn launch(&self, request: LaunchRequest) -> Result<LaunchedProcess, SandboxError>;

    /// For a launcher whose commands start on this host: the canonical
    /// directory a request's `workdir` resolves to, by the same resolution
    /// [`ProcessLauncher::launch`] uses (an exec approval is bound to it
    /// and checked against it right before the launch). `None` for a
    /// launcher whose commands start elsewhere (a container, a remote
    /// host).
    fn host_workdir(
        &self,
        workdir: Option<&str>,
    ) -> Option<Result<std::path::PathBuf, SandboxError>> {
        let _ = workdir;
        None
    }
}
