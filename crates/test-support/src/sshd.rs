//! A throwaway `sshd` on a loopback port, for every test that drives the
//! SSH sandbox backend (its own suite, the runtime's and the CLI's).
//!
//! [`Sshd::start`] generates a host key, a second host key (for
//! key-mismatch tests) and a client key in a short temp dir under `/tmp`
//! (control sockets live there too), writes `authorized_keys`, a
//! `known_hosts` with the host key and an `sshd_config` that lets in only
//! the current user, checks the config with `sshd -t`, and runs Debian's
//! `/usr/sbin/sshd -D` until dropped. The port is chosen by sshd's
//! configuration from a free one; a missing `sshd` is an error naming the
//! fix (`cargo xtask sshd-install`), never a skip.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context as _, Result, bail};

/// Debian's OpenSSH server.
pub const SSHD: &str = "/usr/sbin/sshd";

/// How long sshd may take to listen.
const LISTEN_LIMIT: Duration = Duration::from_secs(10);

/// A running throwaway sshd; killed, with its session processes, on drop.
#[derive(Debug)]
pub struct Sshd {
    dir: tempfile::TempDir,
    /// The loopback port it listens on.
    pub port: u16,
    /// The user it lets in (the current one).
    pub user: String,
    child: Option<Child>,
}

fn run(cmd: &mut Command) -> Result<std::process::Output> {
    let out = cmd
        .output()
        .with_context(|| format!("cannot run {:?}", cmd.get_program()))?;
    if !out.status.success() {
        bail!(
            "{cmd:?} failed ({}): {}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
    }
    Ok(out)
}

impl Sshd {
    /// Start one with fresh keys and config in its own temp dir.
    pub fn start() -> Result<Sshd> {
        if !Path::new(SSHD).exists() {
            bail!(
                "{SSHD} is missing: run `cargo xtask sshd-install` (installs Debian's \
                 openssh-server) and run the tests again"
            );
        }
        // Short path: ssh control sockets live under this dir too.
        let dir = tempfile::Builder::new()
            .prefix("tsshd")
            .tempdir_in("/tmp")
            .context("cannot create the sshd temp dir")?;
        let d = dir.path();
        for key in ["host_ed25519", "client_ed25519", "other_host_ed25519"] {
            run(Command::new("ssh-keygen")
                .args(["-q", "-t", "ed25519", "-N", "", "-C", "talon-test", "-f"])
                .arg(d.join(key)))?;
        }
        std::fs::copy(d.join("client_ed25519.pub"), d.join("authorized_keys"))
            .context("cannot write authorized_keys")?;
        let user = String::from_utf8_lossy(&run(Command::new("id").arg("-un"))?.stdout)
            .trim()
            .to_owned();
        let uid = String::from_utf8_lossy(&run(Command::new("id").arg("-u"))?.stdout)
            .trim()
            .to_owned();
        if uid == "0" {
            // sshd as root needs its privilege-separation directory.
            std::fs::create_dir_all("/run/sshd").context("cannot create /run/sshd")?;
        }
        let mut sshd = Sshd {
            dir,
            port: 0,
            user,
            child: None,
        };
        sshd.spawn_on_free_port()?;
        std::fs::write(
            sshd.known_hosts(),
            sshd.known_hosts_line("host_ed25519.pub")?,
        )
        .context("cannot write known_hosts")?;
        Ok(sshd)
    }

    /// The temp dir holding keys, config, log and `known_hosts`.
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// The client's private key (its public half is authorised).
    pub fn client_key(&self) -> PathBuf {
        self.dir().join("client_ed25519")
    }

    /// A `known_hosts` file holding the server's host key.
    pub fn known_hosts(&self) -> PathBuf {
        self.dir().join("known_hosts")
    }

    /// A `known_hosts` line for this server's port and the public key in
    /// `pub_file` (`host_ed25519.pub`, or `other_host_ed25519.pub` for a
    /// key that does not match).
    pub fn known_hosts_line(&self, pub_file: &str) -> Result<String> {
        let key = std::fs::read_to_string(self.dir().join(pub_file))
            .with_context(|| format!("cannot read {pub_file}"))?;
        let mut parts = key.split_whitespace();
        let (Some(kind), Some(key)) = (parts.next(), parts.next()) else {
            bail!("ssh-keygen wrote an unreadable {pub_file}");
        };
        Ok(format!("[127.0.0.1]:{} {kind} {key}\n", self.port))
    }

    /// What sshd logged (its stderr, `LogLevel VERBOSE`).
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir().join("sshd.log")).unwrap_or_default()
    }

    /// Kill the listener and every session process it forked.
    pub fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            for pid in crate::proc::descendants(child.id()) {
                let _ = crate::proc::signal(pid, 9);
            }
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Kill sshd (and its sessions) and start it again on the same port
    /// (the clients under test reconnect to the address they know).
    pub fn restart(&mut self) -> Result<()> {
        self.kill();
        self.spawn()
    }

    /// Pick a port and start; sshd has no "print the port I got", so a
    /// port taken between the pick and sshd's bind is retried with another.
    fn spawn_on_free_port(&mut self) -> Result<()> {
        let mut last = None;
        for _ in 0..5 {
            self.port = std::net::TcpListener::bind("127.0.0.1:0")
                .and_then(|l| l.local_addr())
                .context("cannot find a free loopback port")?
                .port();
            match self.spawn() {
                Ok(()) => return Ok(()),
                Err(e) => last = Some(e),
            }
        }
        Err(last.unwrap_or_else(|| anyhow::anyhow!("sshd did not start")))
    }

    fn write_config(&self) -> Result<()> {
        let d = self.dir();
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
        std::fs::write(d.join("sshd_config"), config).context("cannot write sshd_config")?;
        run(Command::new(SSHD)
            .arg("-t")
            .arg("-f")
            .arg(d.join("sshd_config")))?;
        Ok(())
    }

    fn spawn(&mut self) -> Result<()> {
        self.write_config()?;
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.dir().join("sshd.log"))
            .context("cannot open sshd.log")?;
        let child = Command::new(SSHD)
            .arg("-D")
            .arg("-e")
            .arg("-f")
            .arg(self.dir().join("sshd_config"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .with_context(|| format!("cannot start {SSHD}"))?;
        self.child = Some(child);
        let deadline = Instant::now() + LISTEN_LIMIT;
        while std::net::TcpStream::connect(("127.0.0.1", self.port)).is_err() {
            let exited = self
                .child
                .as_mut()
                .and_then(|c| c.try_wait().ok().flatten());
            if let Some(status) = exited {
                self.child = None;
                bail!("sshd exited ({status}) before listening: {}", self.log());
            }
            if Instant::now() >= deadline {
                self.kill();
                bail!(
                    "sshd did not listen on 127.0.0.1:{} within {LISTEN_LIMIT:?}: {}",
                    self.port,
                    self.log()
                );
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        Ok(())
    }
}

impl Drop for Sshd {
    fn drop(&mut self) {
        self.kill();
    }
}
