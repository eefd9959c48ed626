//! A throwaway sshd on a loopback port: generated host and user keys and
//! config in a temp dir, killed (with every session process) on drop.
//! Missing `/usr/sbin/sshd` fails the test with the fix, never skips.
#![allow(dead_code)]

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use talon_sandbox_core::{
    ResolvedSandboxConfig, SandboxConfig, SandboxInputs, SandboxMode, SandboxRequest, SshConfig,
    WorkspaceAccess,
};
use talon_sandbox_ssh::{SshConnection, SshTarget};

pub(crate) const SSHD: &str = "/usr/sbin/sshd";

pub(crate) struct Sshd {
    pub(crate) dir: tempfile::TempDir,
    pub(crate) port: u16,
    pub(crate) user: String,
    child: Option<Child>,
}

fn run(cmd: &mut Command) {
    let out = cmd.output().expect("spawn helper");
    assert!(
        out.status.success(),
        "{cmd:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

impl Sshd {
    pub(crate) fn start() -> Sshd {
        assert!(
            Path::new(SSHD).exists(),
            "{SSHD} is missing: run `cargo xtask sshd-install` (installs Debian's openssh-server) \
             and run the tests again"
        );
        // Short path: control sockets live under the temp dir too.
        let dir = tempfile::Builder::new()
            .prefix("tsshd")
            .tempdir_in("/tmp")
            .unwrap();
        let d = dir.path();
        for key in ["host_ed25519", "client_ed25519", "other_host_ed25519"] {
            run(Command::new("ssh-keygen")
                .args(["-q", "-t", "ed25519", "-N", "", "-C", "talon-test", "-f"])
                .arg(d.join(key)));
        }
        std::fs::copy(d.join("client_ed25519.pub"), d.join("authorized_keys")).unwrap();
        let user = String::from_utf8(Command::new("id").arg("-un").output().unwrap().stdout)
            .unwrap()
            .trim()
            .to_owned();
        if rustix_is_root() {
            // sshd as root needs its privilege-separation directory.
            std::fs::create_dir_all("/run/sshd").unwrap();
        }
        let mut sshd = Sshd {
            dir,
            port: free_port(),
            user,
            child: None,
        };
        sshd.write_config();
        std::fs::write(
            sshd.dir.path().join("known_hosts"),
            sshd.known_hosts_line("host_ed25519.pub"),
        )
        .unwrap();
        sshd.spawn();
        sshd
    }

    fn write_config(&self) {
        let d = self.dir.path();
        // `SetEnv SHLVL=1`: Debian's bash sources ~/.bashrc for commands
        // run by sshd only at shell level 1; this machine's root bashrc
        // (pyenv init) costs ~200 ms per command, which would swamp every
        // measurement and slow every test.
        let config = format!(
            "ListenAddress 127.0.0.1\nPort {port}\nHostKey {d}/host_ed25519\nPidFile {d}/sshd.pid\n\
             AuthorizedKeysFile {d}/authorized_keys\nPubkeyAuthentication yes\n\
             PasswordAuthentication no\nKbdInteractiveAuthentication no\nUsePAM no\n\
             StrictModes no\nAllowUsers {user}\nPermitRootLogin prohibit-password\n\
             MaxSessions 64\nMaxStartups 64:30:128\nSubsystem sftp internal-sftp\n\
             SetEnv SHLVL=1\n\
             X11Forwarding no\nPrintMotd no\nLogLevel VERBOSE\n",
            port = self.port,
            d = d.display(),
            user = self.user
        );
        std::fs::write(d.join("sshd_config"), config).unwrap();
        run(Command::new(SSHD)
            .arg("-t")
            .arg("-f")
            .arg(d.join("sshd_config")));
    }

    pub(crate) fn known_hosts_line(&self, pub_file: &str) -> String {
        let key = std::fs::read_to_string(self.dir.path().join(pub_file)).unwrap();
        let mut parts = key.split_whitespace();
        format!(
            "[127.0.0.1]:{} {} {}\n",
            self.port,
            parts.next().unwrap(),
            parts.next().unwrap()
        )
    }

    fn spawn(&mut self) {
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.dir.path().join("sshd.log"))
            .unwrap();
        let child = Command::new(SSHD)
            .arg("-D")
            .arg("-e")
            .arg("-f")
            .arg(self.dir.path().join("sshd_config"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .unwrap();
        self.child = Some(child);
        let deadline = Instant::now() + Duration::from_secs(10);
        while std::net::TcpStream::connect(("127.0.0.1", self.port)).is_err() {
            assert!(
                Instant::now() < deadline,
                "sshd did not listen: {}",
                self.log()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    pub(crate) fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("sshd.log")).unwrap_or_default()
    }

    /// Kill the listener and every session process it forked.
    pub(crate) fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let pid = child.id();
            for p in descendants(pid) {
                let _ = Command::new("kill")
                    .arg("-9")
                    .arg(p.to_string())
                    .stderr(Stdio::null())
                    .status();
            }
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Kill sshd (and its sessions) and start it again on the same port.
    pub(crate) fn restart(&mut self) {
        self.kill();
        self.spawn();
    }

    pub(crate) fn target(&self) -> SshTarget {
        let mut t = SshTarget::new("127.0.0.1", self.port, Some(self.user.clone()));
        t.identity_file = Some(self.dir.path().join("client_ed25519"));
        t.known_hosts_file = Some(self.dir.path().join("known_hosts"));
        t.keepalive = Some(Duration::from_secs(2));
        t.command_timeout = Duration::from_secs(20);
        t.control_dir = self.dir.path().to_path_buf();
        t.workspace_root = self.remote_root();
        t
    }

    pub(crate) fn connection(&self) -> Arc<SshConnection> {
        Arc::new(SshConnection::new(self.target()))
    }

    pub(crate) fn remote_root(&self) -> String {
        format!("{}/remote", self.dir.path().display())
    }

    pub(crate) fn ssh_config(&self) -> SshConfig {
        SshConfig {
            host: Some("127.0.0.1".into()),
            port: Some(u32::from(self.port)),
            user: Some(self.user.clone()),
            identity_file: Some(self.dir.path().join("client_ed25519").display().to_string()),
            known_hosts_file: Some(self.dir.path().join("known_hosts").display().to_string()),
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

impl Drop for Sshd {
    fn drop(&mut self) {
        self.kill();
    }
}

fn rustix_is_root() -> bool {
    String::from_utf8(Command::new("id").arg("-u").output().unwrap().stdout)
        .unwrap()
        .trim()
        == "0"
}

/// Every process whose parent chain leads to `root` (from /proc).
pub(crate) fn descendants(root: u32) -> Vec<u32> {
    let mut parent_of: Vec<(u32, u32)> = Vec::new();
    if let Ok(entries) = std::fs::read_dir("/proc") {
        for e in entries.flatten() {
            let Ok(pid) = e.file_name().to_string_lossy().parse::<u32>() else {
                continue;
            };
            let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
                continue;
            };
            // pid (comm) state ppid ...
            let Some(after) = stat.rfind(')').map(|i| &stat[i + 2..]) else {
                continue;
            };
            let ppid = after
                .split_whitespace()
                .nth(1)
                .and_then(|p| p.parse::<u32>().ok())
                .unwrap_or(0);
            parent_of.push((pid, ppid));
        }
    }
    let mut out = vec![root];
    let mut i = 0;
    while i < out.len() {
        let p = out[i];
        for (pid, ppid) in &parent_of {
            if *ppid == p && !out.contains(pid) {
                out.push(*pid);
            }
        }
        i += 1;
    }
    out
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
