//! Shared setup for the local backend's tests: a temp tree with a state
//! dir, an agent workspace and a home with credentials, and a request for
//! it. The backend is the real one (real bubblewrap at /usr/bin/bwrap;
//! `cargo xtask test` installs it); a missing bwrap fails loudly.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use talon_sandbox_core::{
    DockerConfig, ExitStatus, ResolvedSandboxConfig, SandboxConfig, SandboxHandle, SandboxInputs,
    SandboxMode, SandboxRequest, WorkspaceAccess,
};
use talon_sandbox_local::LocalBackend;
use talon_tool_policy::config::ToolsConfig;

/// The helper binary of this package.
pub(crate) const SANDBOX_EXEC: &str = env!("CARGO_BIN_EXE_talon-sandbox-exec");

pub(crate) const QUICK: Duration = Duration::from_secs(20);

/// `<tmp>/home` (with `.ssh/id_ed25519`), `<tmp>/state` (with
/// `talon.db`), `<tmp>/state/workspace` (the agent workspace).
pub(crate) struct Tree {
    pub(crate) dir: tempfile::TempDir,
}

pub(crate) const SECRET: &str = "PRIVATE-KEY-MATERIAL-4711";

impl Tree {
    pub(crate) fn new() -> Tree {
        let dir = tempfile::tempdir().unwrap();
        let ssh = dir.path().join("home/.ssh");
        std::fs::create_dir_all(&ssh).unwrap();
        std::fs::write(ssh.join("id_ed25519"), SECRET).unwrap();
        std::fs::create_dir_all(dir.path().join("state/workspace")).unwrap();
        std::fs::write(dir.path().join("state/talon.db"), SECRET).unwrap();
        Tree { dir }
    }
    pub(crate) fn home(&self) -> PathBuf {
        self.dir.path().join("home")
    }
    pub(crate) fn state(&self) -> PathBuf {
        self.dir.path().join("state")
    }
    pub(crate) fn workspace(&self) -> PathBuf {
        self.state().join("workspace")
    }

    pub(crate) fn resolved(
        &self,
        access: WorkspaceAccess,
        docker: DockerConfig,
    ) -> ResolvedSandboxConfig {
        let defaults = SandboxConfig {
            mode: Some(SandboxMode::All),
            backend: Some("local".to_owned()),
            workspace_access: Some(access),
            docker: Some(docker),
            ..Default::default()
        };
        let tools = ToolsConfig::default();
        ResolvedSandboxConfig::resolve(&SandboxInputs {
            agent_id: "main",
            defaults: Some(&defaults),
            agent: None,
            agent_key: None,
            state_dir: &self.state(),
            home: Some(&self.home()),
            tools: &tools,
            agent_tools: None,
        })
    }

    pub(crate) fn request(&self, access: WorkspaceAccess, docker: DockerConfig) -> SandboxRequest {
        SandboxRequest::new(
            self.resolved(access, docker),
            "agent:main:main",
            &self.workspace(),
            None,
        )
    }

    /// The backend as Talon runs it: with the `talon-sandbox-exec`
    /// helper this package builds, so every command runs under Landlock.
    pub(crate) fn backend(&self) -> LocalBackend {
        self.backend_without_landlock()
            .with_sandbox_exec(SANDBOX_EXEC)
            .unwrap()
    }

    /// The backend with no helper: the mount namespace is the only file
    /// rule.
    pub(crate) fn backend_without_landlock(&self) -> LocalBackend {
        LocalBackend::new()
            .unwrap_or_else(|e| panic!("{e}\n(the local sandbox tests need /usr/bin/bwrap: `apt-get install bubblewrap`, or `cargo xtask test`)"))
            .with_home_dirs(vec![self.home()])
    }
}

/// Run `script` in the sandbox: (stdout, stderr, status).
pub(crate) async fn sh(handle: &dyn SandboxHandle, script: &str) -> (String, String, ExitStatus) {
    sh_args(handle, script, &[]).await
}

pub(crate) async fn sh_args(
    handle: &dyn SandboxHandle,
    script: &str,
    args: &[String],
) -> (String, String, ExitStatus) {
    let out = handle.run_script(script, args, None, QUICK).await.unwrap();
    (
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
        out.status,
    )
}

/// Host pids whose command line contains `marker`.
pub(crate) fn host_pids_with(marker: &str) -> Vec<u32> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(cmdline) = std::fs::read(format!("/proc/{pid}/cmdline")) else {
            continue;
        };
        let text = String::from_utf8_lossy(&cmdline).replace('\0', " ");
        if text.contains(marker) && !text.contains("-c") {
            out.push(pid);
        }
    }
    out
}

/// Poll `check` every 20 ms until it holds or `within` passes.
pub(crate) async fn eventually(within: Duration, mut check: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + within;
    loop {
        if check() {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

pub(crate) fn exists(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok()
}
