//! A throwaway IRC server (Debian's `ngircd`) on a loopback port, and a
//! raw line client to talk to it as a second user.
//!
//! [`Ngircd::start_in`] writes a config (loopback only, no DNS, ident or
//! PAM) into a fresh directory under the given base (the tests pass
//! `CARGO_TARGET_TMPDIR`, so it lives under `target/`), runs
//! `/usr/sbin/ngircd --nodaemon` until dropped, and waits until it
//! listens. A missing `ngircd` is an error naming the fix (`cargo xtask
//! ngircd-install`, which `cargo xtask test` runs), never a skip.

use std::io::{BufRead, BufReader, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context as _, Result, bail};

/// Debian's ngIRCd.
pub const NGIRCD: &str = "/usr/sbin/ngircd";

/// How long ngircd may take to listen.
const LISTEN_LIMIT: Duration = Duration::from_secs(10);

/// A running throwaway ngircd; killed on drop.
#[derive(Debug)]
pub struct Ngircd {
    dir: tempfile::TempDir,
    /// The loopback port it listens on.
    pub port: u16,
    child: Option<Child>,
}

impl Ngircd {
    /// Start one with a generated config in a new directory under `base`.
    pub fn start_in(base: &Path) -> Result<Ngircd> {
        if !Path::new(NGIRCD).exists() {
            bail!(
                "{NGIRCD} is missing: the IRC channel tests run a real IRC server; run \
                 `cargo xtask ngircd-install` (installs Debian's ngircd; `cargo xtask test` does \
                 it too) and run the tests again"
            );
        }
        std::fs::create_dir_all(base)
            .with_context(|| format!("cannot create {}", base.display()))?;
        let dir = tempfile::Builder::new()
            .prefix("ngircd")
            .tempdir_in(base)
            .context("cannot create the ngircd dir")?;
        let mut server = Ngircd {
            dir,
            port: 0,
            child: None,
        };
        let mut last = None;
        // ngircd cannot report the port it got: pick one, retry when it
        // was taken in between.
        for _ in 0..5 {
            server.port = std::net::TcpListener::bind("127.0.0.1:0")
                .and_then(|l| l.local_addr())
                .context("cannot find a free loopback port")?
                .port();
            match server.spawn() {
                Ok(()) => return Ok(server),
                Err(e) => last = Some(e),
            }
        }
        Err(last.unwrap_or_else(|| anyhow::anyhow!("ngircd did not start")))
    }

    /// The directory holding the config and log.
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// What ngircd logged.
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir().join("ngircd.log")).unwrap_or_default()
    }

    fn spawn(&mut self) -> Result<()> {
        let d = self.dir.path();
        let config = format!(
            "[Global]\n  Name = irc.talon.test\n  Info = Talon test server\n  Listen = 127.0.0.1\n  \
             Ports = {port}\n  PidFile = {d}/ngircd.pid\n  MotdPhrase = talon test\n\
             [Limits]\n  MaxConnectionsIP = 0\n  PingTimeout = 120\n  PongTimeout = 60\n\
             [Options]\n  DNS = no\n  Ident = no\n  PAM = no\n  RequireAuthPing = no\n",
            port = self.port,
            d = d.display()
        );
        let conf = d.join("ngircd.conf");
        std::fs::write(&conf, config).context("cannot write ngircd.conf")?;
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(d.join("ngircd.log"))
            .context("cannot open ngircd.log")?;
        let child = Command::new(NGIRCD)
            .arg("--nodaemon")
            .arg("--config")
            .arg(&conf)
            .stdin(Stdio::null())
            .stdout(log.try_clone().context("cannot share ngircd.log")?)
            .stderr(log)
            .spawn()
            .with_context(|| format!("cannot start {NGIRCD}"))?;
        self.child = Some(child);
        let deadline = Instant::now() + LISTEN_LIMIT;
        while TcpStream::connect(("127.0.0.1", self.port)).is_err() {
            let exited = self
                .child
                .as_mut()
                .and_then(|c| c.try_wait().ok().flatten());
            if let Some(status) = exited {
                self.child = None;
                bail!("ngircd exited ({status}) before listening: {}", self.log());
            }
            if Instant::now() >= deadline {
                self.kill();
                bail!(
                    "ngircd did not listen on 127.0.0.1:{} within {LISTEN_LIMIT:?}: {}",
                    self.port,
                    self.log()
                );
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        Ok(())
    }

    /// Kill the server.
    pub fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

impl Drop for Ngircd {
    fn drop(&mut self) {
        self.kill();
    }
}

/// A raw IRC client for tests: writes lines, reads lines, answers PING.
#[derive(Debug)]
pub struct RawIrcClient {
    reader: BufReader<TcpStream>,
    writer: TcpStream,
    /// Every line read so far.
    pub seen: Vec<String>,
}

impl RawIrcClient {
    /// Connect to `127.0.0.1:port`, register as `nick` and join `channels`
    /// (waits for the end of each channel's names list).
    pub fn connect(port: u16, nick: &str, channels: &[&str]) -> Result<RawIrcClient> {
        let stream = TcpStream::connect(("127.0.0.1", port)).context("cannot connect to ngircd")?;
        stream
            .set_read_timeout(Some(Duration::from_secs(10)))
            .context("cannot set a read timeout")?;
        let writer = stream.try_clone().context("cannot clone the stream")?;
        let mut client = RawIrcClient {
            reader: BufReader::new(stream),
            writer,
            seen: Vec::new(),
        };
        client.send(&format!("NICK {nick}"))?;
        client.send(&format!("USER {nick} 0 * :{nick}"))?;
        client.wait_for(|l| l.split(' ').nth(1) == Some("001"))?;
        for c in channels {
            client.send(&format!("JOIN {c}"))?;
            client.wait_for(|l| l.split(' ').nth(1) == Some("366"))?;
        }
        Ok(client)
    }

    /// Send one line (CR LF added).
    pub fn send(&mut self, line: &str) -> Result<()> {
        self.writer
            .write_all(format!("{line}\r\n").as_bytes())
            .context("cannot write to ngircd")
    }

    /// Read lines (answering PINGs) until one matches, and return it; an
    /// error after the read timeout.
    pub fn wait_for(&mut self, matches: impl Fn(&str) -> bool) -> Result<String> {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            if Instant::now() > deadline {
                bail!("no matching line within 10 s; seen: {:#?}", self.seen);
            }
            let mut line = String::new();
            let n = self
                .reader
                .read_line(&mut line)
                .with_context(|| format!("no matching line; seen: {:#?}", self.seen))?;
            if n == 0 {
                bail!("ngircd closed the connection; seen: {:#?}", self.seen);
            }
            let line = line.trim_end_matches(['\r', '\n']).to_owned();
            if let Some(token) = line.strip_prefix("PING ") {
                self.send(&format!("PONG {token}"))?;
            }
            self.seen.push(line.clone());
            if matches(&line) {
                return Ok(line);
            }
        }
    }
}
