//! A throwaway `sshd` on a loopback port, for tests of code that drives the
//! SSH backend (the runtime's and the CLI's suites). Behind the
//! `test-sshd` feature; never part of a normal build.
//!
//! It generates a host key and a client key in `dir`, writes an
//! `authorized_keys`, a `known_hosts` with the host key, and an
//! `sshd_config` that allows only the current user, and runs Debian's
//! `/usr/sbin/sshd -D` until dropped. A missing `sshd` is an error naming
//! the fix (`cargo xtask sshd-install`); it never skips.

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A running throwaway sshd; killed when dropped.
#[derive(Debug)]
pub struct TestSshd {
    child: Child,
    /// The loopback port it listens on.
    pub port: u16,
    /// The user it lets in (the current one).
    pub user: String,
}

impl Drop for TestSshd {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn run(cmd: &mut Command, what: &str) -> Result<std::process::Output, String> {
    let out = cmd
        .output()
        .map_err(|e| format!("cannot run {what}: {e}"))?;
    if out.status.success() {
        Ok(out)
    } else {
        Err(format!("{what} failed ({})", out.status))
    }
}

impl TestSshd {
    /// Start one with its keys and config in `dir` (`dir/client` is the
    /// client key, `dir/known_hosts` the host-key file).
    pub fn start(dir: &Path) -> Result<TestSshd, String> {
        if !Path::new("/usr/sbin/sshd").exists() {
            return Err("/usr/sbin/sshd is missing: run `cargo xtask sshd-install`".into());
        }
        for key in ["host", "client"] {
            run(
                Command::new("ssh-keygen")
                    .args(["-q", "-t", "ed25519", "-N", "", "-f"])
                    .arg(dir.join(key)),
                "ssh-keygen",
            )?;
        }
        let io = |e: std::io::Error| format!("test sshd in {}: {e}", dir.display());
        std::fs::copy(dir.join("client.pub"), dir.join("authorized_keys")).map_err(io)?;
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map_err(io)?
            .port();
        let user = String::from_utf8_lossy(&run(Command::new("id").arg("-un"), "id -un")?.stdout)
            .trim()
            .to_owned();
        // Run as root, sshd wants its privilege-separation directory.
        let _ = std::fs::create_dir_all("/run/sshd");
        std::fs::write(
            dir.join("sshd_config"),
            format!(
                "ListenAddress 127.0.0.1\nPort {port}\nHostKey {d}/host\nPidFile {d}/sshd.pid\n\
                 AuthorizedKeysFile {d}/authorized_keys\nPasswordAuthentication no\nUsePAM no\n\
                 StrictModes no\nAllowUsers {user}\nPermitRootLogin prohibit-password\n\
                 Subsystem sftp internal-sftp\nSetEnv SHLVL=1\n",
                d = dir.display()
            ),
        )
        .map_err(io)?;
        let host_key = std::fs::read_to_string(dir.join("host.pub")).map_err(io)?;
        let mut parts = host_key.split_whitespace();
        let (Some(kind), Some(key)) = (parts.next(), parts.next()) else {
            return Err("ssh-keygen wrote an unreadable host.pub".into());
        };
        std::fs::write(
            dir.join("known_hosts"),
            format!("[127.0.0.1]:{port} {kind} {key}\n"),
        )
        .map_err(io)?;
        let child = Command::new("/usr/sbin/sshd")
            .args(["-D", "-e", "-f"])
            .arg(dir.join("sshd_config"))
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| format!("cannot start /usr/sbin/sshd: {e}"))?;
        let sshd = TestSshd { child, port, user };
        let deadline = Instant::now() + Duration::from_secs(10);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            if Instant::now() >= deadline {
                return Err(format!(
                    "sshd did not listen on 127.0.0.1:{port} within 10 s"
                ));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        Ok(sshd)
    }
}
