//! The shared throwaway sshd (`talon_test_support::sshd`) with this
//! crate's client-side views of it (target, connection, sandbox request),
//! and small helpers. Missing `/usr/sbin/sshd` fails the test with the
//! fix, never skips.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use talon_sandbox_core::{
    ResolvedSandboxConfig, SandboxConfig, SandboxInputs, SandboxMode, SandboxRequest, SshConfig,
    WorkspaceAccess,
};
use talon_sandbox_ssh::{SshConnection, SshTarget};

/// The shared throwaway sshd, with this crate's client-side views of it.
pub(crate) struct Sshd(talon_test_support::sshd::Sshd);

impl std::ops::Deref for Sshd {
    type Target = talon_test_support::sshd::Sshd;
    fn deref(&self) -> &Self::Target {
        &self.0
    }
}

impl std::ops::DerefMut for Sshd {
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut self.0
    }
}

impl Sshd {
    pub(crate) fn start() -> Sshd {
        Sshd(talon_test_support::sshd::Sshd::start().unwrap_or_else(|e| panic!("{e:#}")))
    }

    pub(crate) fn target(&self) -> SshTarget {
        let mut t = SshTarget::new("127.0.0.1", self.port, Some(self.user.clone()));
        t.identity_file = Some(self.client_key());
        t.known_hosts_file = Some(self.known_hosts());
        t.keepalive = Some(Duration::from_secs(2));
        t.command_timeout = Duration::from_secs(20);
        t.control_dir = self.dir().to_path_buf();
        t.workspace_root = self.remote_root();
        t
    }

    pub(crate) fn connection(&self) -> Arc<SshConnection> {
        Arc::new(SshConnection::new(self.target()))
    }

    pub(crate) fn remote_root(&self) -> String {
        format!("{}/remote", self.dir().display())
    }

    pub(crate) fn ssh_config(&self) -> SshConfig {
        SshConfig {
            host: Some("127.0.0.1".into()),
            port: Some(u32::from(self.port)),
            user: Some(self.user.clone()),
            identity_file: Some(self.client_key().display().to_string()),
            known_hosts_file: Some(self.known_hosts().display().to_string()),
            workspace_root: Some(self.remote_root()),
            keepalive_seconds: Some(2),
            command_timeout_seconds: Some(20),
            ..Default::default()
        }
    }

    /// A sandbox request for the ssh backend over this sshd.
    pub(crate) fn request(
        &self,
        access: WorkspaceAccess,
        agent_ws: &Path,
        state: &Path,
    ) -> SandboxRequest {
        let defaults = SandboxConfig {
            mode: Some(SandboxMode::All),
            backend: Some("ssh".into()),
            workspace_access: Some(access),
            ssh: Some(self.ssh_config()),
            ..Default::default()
        };
        let tools = talon_tool_policy::config::ToolsConfig::default();
        let resolved = ResolvedSandboxConfig::resolve(&SandboxInputs {
            agent_id: "main",
            defaults: Some(&defaults),
            agent: None,
            agent_key: None,
            state_dir: state,
            home: None,
            tools: &tools,
            agent_tools: None,
        });
        SandboxRequest::new(resolved, "agent:main:test:1", agent_ws, None)
    }
}

/// Processes whose command line contains `needle` (checked over a fresh
/// ssh connection, as the issue asks).
pub(crate) async fn remote_processes(sshd: &Sshd, needle: &str) -> Vec<String> {
    let conn = sshd.connection();
    let out = conn
        .run("ps -eo pid=,args=", &[], None, Duration::from_secs(10))
        .await
        .unwrap();
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| l.contains(needle) && !l.contains("ps -eo"))
        .map(str::to_owned)
        .collect()
}

pub(crate) fn unique(tag: &str) -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    format!("{tag}{}", nanos % 1_000_000_007)
}

pub(crate) fn path_str(p: &Path) -> String {
    p.display().to_string()
}

pub(crate) fn host_dir(base: &Path, name: &str) -> PathBuf {
    let p = base.join(name);
    std::fs::create_dir_all(&p).unwrap();
    p
}

/// The pid of the ControlMaster behind a control socket.
pub(crate) fn master_pid(conn_socket: &std::path::Path) -> u32 {
    let out = std::process::Command::new("ssh")
        .arg("-S")
        .arg(conn_socket)
        .args(["-O", "check", "placeholder"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stderr).to_string();
    text.split("pid=")
        .nth(1)
        .and_then(|s| s.split(')').next())
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no master pid in {text:?}"))
}
